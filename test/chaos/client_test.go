package chaos_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/test/chaos"
)

// answerTimeout is how long a request may take before the server counts as
// no longer answering (a hung or dead server, never a slow one).
const answerTimeout = 20 * time.Second

// message is one JSON-RPC message from the server.
type message = chaos.Message

// server is the saga-lsp binary run as an editor runs it.
type server struct {
	t    *testing.T
	cmd  *exec.Cmd
	in   io.WriteCloser
	root string
	wmu  sync.Mutex

	mu      sync.Mutex
	cond    *sync.Cond
	nextID  int
	answers map[string]message
	notes   []message
	stderr  bytes.Buffer
	closed  bool // its output ended
	exited  chan struct{}
}

// startServer runs `saga-lsp serve` and, when root is set, initializes it
// on root and waits for the workspace to load.
func startServer(t *testing.T, root string) *server {
	t.Helper()
	s := &server{t: t, root: root, answers: map[string]message{}, exited: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	s.cmd = exec.Command(testkit.Binary(t), "serve")
	s.cmd.Dir = t.TempDir()
	var err error
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stderr = lockedWriter{&s.mu, &s.stderr}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go s.read(bufio.NewReader(out))
	t.Cleanup(func() {
		s.in.Close()
		select {
		case <-s.exited:
		case <-time.After(answerTimeout):
			_ = s.cmd.Process.Kill()
			<-s.exited
			t.Error("the server did not exit after its input closed")
		}
	})
	if root != "" {
		s.initialize(root)
	}
	return s
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (s *server) read(r *bufio.Reader) {
	defer func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	for {
		body, err := chaos.ReadFrame(r)
		if err != nil {
			s.mu.Lock()
			s.closed = true
			s.cond.Broadcast()
			s.mu.Unlock()
			return
		}
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			s.t.Errorf("the server sent a frame that is not JSON: %.200q", body)
			continue
		}
		s.mu.Lock()
		switch {
		case m.Method != "" && m.ID != nil: // a request to the client: answer null
			s.notes = append(s.notes, m)
			go s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":null}`, m.ID))
		case m.Method != "":
			s.notes = append(s.notes, m)
		default:
			s.answers[string(m.ID)] = m
		}
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

// writeRaw writes bytes as they are.
func (s *server) writeRaw(b string) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, _ = io.WriteString(s.in, b) // a dead server shows in the next wait
}

// send frames a body.
func (s *server) send(body string) {
	s.writeRaw(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

func (s *server) notify(method, params string) {
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params))
}

// request sends a request and returns its id.
func (s *server) request(method, params string) string {
	s.mu.Lock()
	s.nextID++
	id := strconv.Itoa(s.nextID)
	s.mu.Unlock()
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params))
	return id
}

// wait returns the answer to request id; a server that stops answering or
// dies fails the test.
func (s *server) wait(id, what string) message {
	s.t.Helper()
	var m message
	s.waitUntil(what, func() bool {
		var ok bool
		if m, ok = s.answers[id]; ok {
			delete(s.answers, id)
		}
		return ok
	})
	return m
}

// waitUntil waits, holding s.mu, until found reports true; a server that
// dies or says nothing for answerTimeout fails the test.
func (s *server) waitUntil(what string, found func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(answerTimeout)
	timer := time.AfterFunc(answerTimeout, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for !found() {
		if s.closed {
			s.t.Fatalf("the server died after %s; stderr:\n%s", what, tail(s.stderr.String()))
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the server stopped answering after %s; stderr:\n%s", what, tail(s.stderr.String()))
		}
		s.cond.Wait()
	}
}

// call sends a request and waits for its answer.
func (s *server) call(method, params string) message {
	s.t.Helper()
	return s.wait(s.request(method, params), method+" "+short(params))
}

// probe checks the server still answers after what: a well-formed
// notification first (bytes before it may swallow one frame), then a
// request, which must be answered.
func (s *server) probe(what string) {
	s.t.Helper()
	s.notify("$/setTrace", `{"value":"off"}`)
	if m := s.wait(s.request("workspace/symbol", `{"query":"login"}`), what); m.Error != nil && m.Error.Code != -32002 && m.Error.Code != -32600 {
		s.t.Fatalf("probe after %s: error %d %s", what, m.Error.Code, m.Error.Message)
	}
}

func (s *server) initialize(root string) {
	s.t.Helper()
	m := s.call("initialize", fmt.Sprintf(`{"processId":null,"rootUri":%q,"capabilities":{"textDocument":{"documentSymbol":{"hierarchicalDocumentSymbolSupport":true},"publishDiagnostics":{"versionSupport":true}},"workspace":{"workspaceEdit":{"documentChanges":true,"resourceOperations":["create","rename"]}}}}`, fileURI(root)))
	if m.Error != nil {
		s.t.Fatalf("initialize: %s", m.Error.Message)
	}
	s.notify("initialized", `{}`)
	s.waitNote(0, "window/logMessage", func(p json.RawMessage) bool { return strings.Contains(string(p), "saga-lsp: loaded") })
}

// mark is the count of notifications so far, to wait for later ones.
func (s *server) mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.notes)
}

// waitNote waits for a notification after index from matching pred.
func (s *server) waitNote(from int, method string, pred func(json.RawMessage) bool) message {
	s.t.Helper()
	var m message
	s.waitUntil("waiting for "+method, func() bool {
		for ; from < len(s.notes); from++ {
			if n := s.notes[from]; n.Method == method && (pred == nil || pred(n.Params)) {
				m = n
				return true
			}
		}
		return false
	})
	return m
}

// finish ends the session as an editor does — shutdown, exit — and checks
// the server lived to the end, exited 0, and never recovered from a panic.
func (s *server) finish() {
	s.t.Helper()
	s.probe("the whole run")
	if m := s.call("shutdown", `null`); m.Error != nil {
		s.t.Fatalf("shutdown: %s", m.Error.Message)
	}
	s.notify("exit", `null`)
	select {
	case <-s.exited:
	case <-time.After(answerTimeout):
		s.t.Fatal("no exit after shutdown and exit")
	}
	if ws, ok := s.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.ExitStatus() != 0 {
		s.t.Errorf("exit status %v after shutdown and exit", s.cmd.ProcessState)
	}
	s.checkLog()
}

// checkLog fails on a panic the server recovered from: it answered, but a
// handler broke.
func (s *server) checkLog() {
	s.t.Helper()
	s.mu.Lock()
	log := s.stderr.String()
	s.mu.Unlock()
	for _, bad := range []string{"handler panic", "panic:", "fatal error:"} {
		if i := strings.Index(log, bad); i >= 0 {
			s.t.Errorf("the server logged %q:\n%s", bad, tail(log[i:]))
		}
	}
}

func (s *server) uri(rel string) string { return fileURI(filepath.Join(s.root, rel)) }

func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: path}).String()
}

func tail(s string) string {
	if len(s) > 3000 {
		return "…" + s[len(s)-3000:]
	}
	return s
}

func short(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
