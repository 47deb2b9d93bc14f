package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/uri"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
	"github.com/saga-ai/saga-lsp/store"
)

// client drives a real server over pipes as an editor would, on the tests'
// LSP client (lspclient) with raw JSON params.
type client struct {
	t    testing.TB
	lc   *lspclient.Client
	in   io.WriteCloser // the server's input
	exit chan int
	root string

	mu sync.Mutex
	// onRequest answers server→client requests (registerCapability,
	// workDoneProgress/create, …); nil answers null.
	onRequest func(method string, params json.RawMessage) any
	server    chan *Server // the server in this process, once it started
}

// message is one JSON-RPC message from the server.
type message = lspclient.Message

// start runs a server on pipes.
func start(t testing.TB) *client {
	t.Helper()
	return startWith(t, Options{})
}

// startOn runs a server on pipes, initialized on root with capabilities
// (initialize).
func startOn(t testing.TB, root, capabilities string) *client {
	t.Helper()
	c := start(t)
	c.initialize(root, capabilities)
	return c
}

// startWith runs a server with options (e.g. a request hook).
func startWith(t testing.TB, opts Options) *client {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	cr, sw := io.Pipe() // server → client
	sr, cw := io.Pipe() // client → server
	c := &client{t: t, in: cw, exit: make(chan int, 1), server: make(chan *Server, 1)}
	c.lc = lspclient.New(cr, cw, lspclient.Options{Answer: func(method string, params json.RawMessage) (any, error) {
		c.mu.Lock()
		h := c.onRequest
		c.mu.Unlock()
		if h == nil {
			return nil, nil
		}
		return h(method, params), nil
	}})
	opts.onServe = func(s *Server) { c.server <- s }
	go func() {
		c.exit <- Serve(context.Background(), sr, sw, opts)
		sw.Close()
	}()
	t.Cleanup(func() {
		cw.Close()
		select {
		case <-c.exit:
		case <-time.After(10 * time.Second):
			t.Error("server did not exit after its input closed")
		}
	})
	return c
}

// serverText returns the server's copy of an open buffer, once every
// message sent before has been handled (a request is answered after the
// notifications before it).
func (c *client) serverText(rel string) (string, bool) {
	c.t.Helper()
	c.call("workspace/symbol", `{"query":"\u0000"}`) // a barrier: notifications are applied in order
	s := <-c.server
	c.server <- s
	d := s.current().Docs[uri.URI(c.uri(rel))]
	if d == nil {
		return "", false
	}
	return string(d.Text), true
}

// sendRaw writes one frame with the given body, byte for byte.
func (c *client) sendRaw(body string) {
	_ = c.lc.Send([]byte(body))
}

// notify sends a notification; params is raw JSON.
func (c *client) notify(method, params string) {
	_ = c.lc.NotifyRaw(method, []byte(params))
}

// call sends a request (params raw JSON) and waits for its response body.
func (c *client) call(method, params string) message {
	c.t.Helper()
	id := c.send(method, params)
	return c.wait(id)
}

// send sends a request and returns its id without waiting.
func (c *client) send(method, params string) string {
	c.t.Helper()
	id, err := c.lc.RequestRaw(method, []byte(params))
	if err != nil {
		c.t.Fatal(err)
	}
	return id
}

func (c *client) wait(id string) message {
	c.t.Helper()
	m, err := c.lc.Response(id, 20*time.Second)
	if err != nil {
		c.t.Fatalf("no response to request %s: %v", id, err)
	}
	return m
}

// result calls and decodes a successful result into v.
func (c *client) result(method, params string, v any) {
	c.t.Helper()
	m := c.call(method, params)
	if m.Error != nil {
		c.t.Fatalf("%s: error %d %s", method, m.Error.Code, m.Error.Message)
	}
	if v != nil {
		if err := json.Unmarshal(m.Result, v); err != nil {
			c.t.Fatalf("%s: decode %s: %v", method, m.Result, err)
		}
	}
}

// waitFor waits until a server notification (or request) matching method
// and pred arrives after index from, and returns it with its index.
func (c *client) waitFor(from int, method string, pred func(params json.RawMessage) bool) (message, int) {
	c.t.Helper()
	return c.waitForWithin(20*time.Second, from, method, pred)
}

// runBound bounds the wait for a run's end: a whole worker or epic run
// (an epic's stories one after the other), which a loaded machine
// stretches well past the 20 s a single reaction is given.
const runBound = 2 * time.Minute

// waitForWithin is waitFor with its own bound; a timeout says what of
// method last arrived, the state the wait stopped at.
func (c *client) waitForWithin(bound time.Duration, from int, method string, pred func(params json.RawMessage) bool) (message, int) {
	c.t.Helper()
	m, i, err := c.lc.Next(from, time.Now().Add(bound), func(m message) bool {
		return m.Method == method && (pred == nil || pred(m.Params))
	})
	if err != nil {
		last := "none"
		for _, n := range c.lc.Notes(from) {
			if n.Method == method {
				last = string(n.Params)
			}
		}
		c.t.Fatalf("no matching %s arrived in %s: %v (last %s: %s)", method, bound, err, method, last)
	}
	return m, i
}

// mark returns the current notification count, to wait for later ones.
func (c *client) mark() int { return c.lc.Mark() }

// initialize performs initialize + initialized for root with the given
// client capabilities (raw JSON) and waits for the workspace to load.
func (c *client) initialize(root, capabilities string) json.RawMessage {
	c.t.Helper()
	c.root = root
	if capabilities == "" {
		capabilities = "{}"
	}
	var res json.RawMessage
	c.result("initialize", fmt.Sprintf(`{"processId":null,"rootUri":%q,"capabilities":%s}`, string(uri.File(root)), capabilities), &res)
	c.notify("initialized", `{}`)
	c.waitLoaded()
	return res
}

// waitLoaded waits for the server's "loaded" log message, sent when the
// disk scan is done, before its diagnostics are published.
func (c *client) waitLoaded() {
	c.t.Helper()
	c.waitFor(0, "window/logMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "saga-lsp: loaded")
	})
}

// open sends didOpen for a file under the root with its disk content.
func (c *client) open(rel string) string {
	c.t.Helper()
	data, err := os.ReadFile(filepath.Join(c.root, rel))
	if err != nil {
		c.t.Fatal(err)
	}
	c.openText(rel, string(data), 1)
	return string(data)
}

func (c *client) openText(rel, text string, version int) {
	c.notify("textDocument/didOpen", fmt.Sprintf(`{"textDocument":{"uri":%q,"languageId":"json","version":%d,"text":%s}}`,
		c.uri(rel), version, jsonString(text)))
}

// didChange sends didChange for rel with its content changes (JSON: change,
// wholeText).
func (c *client) didChange(rel string, version int, changes ...string) {
	c.notify("textDocument/didChange", fmt.Sprintf(`{"textDocument":{"uri":%q,"version":%d},"contentChanges":[%s]}`,
		c.uri(rel), version, strings.Join(changes, ",")))
}

// wholeText is a content change replacing the whole text.
func wholeText(text string) string { return fmt.Sprintf(`{"text":%s}`, jsonString(text)) }

func (c *client) uri(rel string) string {
	return string(uri.File(filepath.Join(c.root, filepath.FromSlash(rel))))
}

// diagnostics waits for a publishDiagnostics for rel after index from that
// satisfies pred, and returns it.
func (c *client) diagnostics(from int, rel string, pred func(publishedDiagnostics) bool) (publishedDiagnostics, int) {
	c.t.Helper()
	want := c.uri(rel)
	var got publishedDiagnostics
	_, i := c.waitFor(from, "textDocument/publishDiagnostics", func(p json.RawMessage) bool {
		var pd publishedDiagnostics
		if json.Unmarshal(p, &pd) != nil || pd.URI != want {
			return false
		}
		if pred != nil && !pred(pd) {
			return false
		}
		got = pd
		return true
	})
	return got, i
}

type publishedDiagnostics struct {
	URI         string     `json:"uri"`
	Version     *int       `json:"version"`
	Diagnostics []diagJSON `json:"diagnostics"`
}

// diagJSON is an LSP diagnostic as the server sends it.
type diagJSON struct {
	Range    lspRange        `json:"range"`
	Severity int             `json:"severity"`
	Code     string          `json:"code"`
	Source   string          `json:"source"`
	Message  string          `json:"message"`
	Data     json.RawMessage `json:"data"`
}

func (p publishedDiagnostics) codes() []string {
	var out []string
	for _, d := range p.Diagnostics {
		out = append(out, d.Code)
	}
	return out
}

// LSP's positions and ranges, as the server has them.
type (
	lspPosition = store.Position
	lspRange    = store.Range
)

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// copyTestdata copies lsp/testdata/<name> into a temp dir.
func copyTestdata(t testing.TB, name string) string {
	t.Helper()
	return testkit.CopyTree(t, filepath.Join("testdata", name))
}

// at returns the position of the n-th (0-based) occurrence of needle in
// text, plus offset bytes into it, as an LSP position JSON (UTF-16 columns).
func at(t *testing.T, text, needle string, n, offset int) string {
	t.Helper()
	p := lspclient.PositionAt(text, needleAt(t, text, needle, n)+offset)
	return fmt.Sprintf(`{"line":%d,"character":%d}`, p.Line, p.Character)
}

// spanOf is the range of the n-th (0-based) occurrence of needle in text.
func spanOf(t *testing.T, text, needle string, n int) lspRange {
	t.Helper()
	off := needleAt(t, text, needle, n)
	return lspRange{Start: lspclient.PositionAt(text, off), End: lspclient.PositionAt(text, off+len(needle))}
}

// needleAt is the byte offset of the n-th (0-based) occurrence of needle in
// text.
func needleAt(t *testing.T, text, needle string, n int) int {
	t.Helper()
	idx := -1
	for i := 0; i <= n; i++ {
		j := strings.Index(text[idx+1:], needle)
		if j < 0 {
			t.Fatalf("%q not found %d times", needle, n+1)
		}
		idx += 1 + j
	}
	return idx
}
