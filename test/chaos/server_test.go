//go:build unix

package chaos_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
	"github.com/saga-ai/saga-lsp/test/chaos"
)

// The language server under chaos: whatever arrives, it never dies, never
// stops answering, never panics (even recovered), and a final well-formed
// request is answered.

const (
	taskRel  = ".saga/stories/add-logout-button/write-tests.json"
	storyRel = ".saga/stories/add-logout-button/story.json"
	epicRel  = ".saga/epics/user-auth/epic.json"
)

// TestChaosFrames: framing garbage of every kind between well-formed
// messages.
func TestChaosFrames(t *testing.T) {
	r, deadline := chaos.Start(t, 0.1)
	s := startServer(t, testkit.CopyExample(t, "workspace"))
	for n := 0; n == 0 || time.Now().Before(deadline); n++ {
		var g strings.Builder
		for range 1 + r.IntN(3) {
			g.WriteString(chaos.Garbage(r))
		}
		s.writeRaw(g.String())
		s.probe(fmt.Sprintf("garbage %.200q", g.String()))
	}
	s.finish()
}

// TestChaosParams: every method with malformed and hostile params — wrong
// types, out-of-range numbers, huge and deep values, missing and extra
// members, hostile URIs. Requests get a result or an error, never an
// internal error from a broken handler; notifications are survived.
func TestChaosParams(t *testing.T) {
	r, deadline := chaos.Start(t, 0.2)
	root := testkit.CopyExample(t, "workspace")
	s := startServer(t, root)
	text, err := os.ReadFile(filepath.Join(root, taskRel))
	if err != nil {
		t.Fatal(err)
	}
	templates := chaos.ParamsTemplates(s.uri(taskRel), string(text))
	methods := chaos.Methods(templates)
	for n := 0; n < len(methods) || time.Now().Before(deadline); n++ {
		method := methods[n%len(methods)]
		if n >= len(methods) {
			method = methods[r.IntN(len(methods))]
		}
		var v any
		if err := json.Unmarshal([]byte(templates[method]), &v); err != nil {
			t.Fatalf("template of %s: %v", method, err)
		}
		params := chaos.Mutate(r, v)
		what := fmt.Sprintf("%s with params %.300s", method, params)
		if slices.Contains(chaos.Notifications, method) {
			s.notify(method, params)
			s.probe(what)
			continue
		}
		m := s.wait(s.request(method, params), what)
		if m.Error != nil && strings.HasPrefix(m.Error.Message, "internal error in") {
			t.Fatalf("%s: a handler broke: %s", what, m.Error.Message)
		}
	}
	s.finish()
}

// lifecycleOp is one step of a session's lifecycle.
type lifecycleOp int

const (
	opInitialize lifecycleOp = iota
	opInitialized
	opRequest
	opNotification
	opShutdown
	opExit
	opEOF
)

// TestChaosLifecycle: random sequences of initialize, initialized,
// requests, notifications, shutdown, exit and end of input, each checked
// against the protocol: requests before initialize get -32002, a second
// initialize and anything after shutdown -32600; exit ends the process
// with 0 after shutdown and 1 otherwise, as does the end of input.
func TestChaosLifecycle(t *testing.T) {
	r, deadline := chaos.Start(t, 0.1)
	root := testkit.CopyExample(t, "workspace")
	for n := 0; n < 3 || time.Now().Before(deadline); n++ {
		var ops []lifecycleOp
		for range 1 + r.IntN(7) {
			ops = append(ops, lifecycleOp(r.IntN(int(opExit))))
		}
		ops = append(ops, []lifecycleOp{opExit, opEOF}[r.IntN(2)])
		runLifecycle(t, root, ops)
	}
}

func runLifecycle(t *testing.T, root string, ops []lifecycleOp) {
	t.Helper()
	s := startServer(t, "")
	const (
		fresh = iota
		running
		shut
	)
	phase := fresh
	expect := func(m message, code int, what string) {
		t.Helper()
		got := 0
		if m.Error != nil {
			got = m.Error.Code
		}
		if got != code {
			t.Fatalf("%v: %s got code %d (%+v), want %d", ops, what, got, m.Error, code)
		}
	}
	for _, op := range ops {
		switch op {
		case opInitialize:
			m := s.call("initialize", fmt.Sprintf(`{"processId":null,"rootUri":%q,"capabilities":{}}`, lspclient.FileURI(root)))
			if phase == fresh {
				expect(m, 0, "initialize")
				phase = running
			} else {
				expect(m, -32600, "a second initialize")
			}
		case opInitialized:
			s.notify("initialized", `{}`)
		case opRequest:
			m := s.call("workspace/symbol", `{"query":"x"}`)
			expect(m, map[int]int{fresh: -32002, running: 0, shut: -32600}[phase], "a request")
		case opNotification:
			s.notify("textDocument/didOpen", fmt.Sprintf(`{"textDocument":{"uri":%q,"languageId":"json","version":1,"text":"{}"}}`, lspclient.FileURI(filepath.Join(root, taskRel))))
		case opShutdown:
			m := s.call("shutdown", `null`)
			expect(m, map[int]int{fresh: -32002, running: 0, shut: -32600}[phase], "shutdown")
			if phase == running {
				phase = shut
			}
		case opExit, opEOF:
			if op == opExit {
				s.notify("exit", `null`)
			} else {
				s.lc.Close()
			}
			select {
			case <-s.exited:
			case <-time.After(answerTimeout):
				t.Fatalf("%v: no exit", ops)
			}
			want := 1
			if op == opExit && phase == shut {
				want = 0
			}
			if ws, ok := s.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.ExitStatus() != want {
				t.Fatalf("%v: exit status %v, want %d", ops, s.cmd.ProcessState, want)
			}
			s.checkLog()
			return
		}
	}
}

// TestChaosEdits: random incremental edits, valid and invalid, several per
// didChange; after each burst the server's view of the buffer — its
// document symbols and diagnostics — equals what a fresh open of the
// client's text gives.
func TestChaosEdits(t *testing.T) {
	r, deadline := chaos.Start(t, 0.2)
	root := testkit.CopyExample(t, "workspace")
	s := startServer(t, root)
	data, err := os.ReadFile(filepath.Join(root, taskRel))
	if err != nil {
		t.Fatal(err)
	}
	text, version, uri := string(data), 1, s.uri(taskRel)
	s.notify("textDocument/didOpen", fmt.Sprintf(`{"textDocument":{"uri":%q,"languageId":"json","version":1,"text":%s}}`, uri, jsonString(text)))
	var history []string
	for n := 0; n < 3 || time.Now().Before(deadline); n++ {
		for range 1 + r.IntN(5) {
			var changes []string
			for range 1 + r.IntN(4) {
				c, next, _ := chaos.Edit(r, text)
				changes, text = append(changes, c), next
			}
			version++
			history = append(history, strings.Join(changes, ","))
			s.notify("textDocument/didChange", fmt.Sprintf(`{"textDocument":{"uri":%q,"version":%d},"contentChanges":[%s]}`, uri, version, strings.Join(changes, ",")))
		}
		if len(text) > 64<<10 {
			text = text[:chaos.Boundary(text, 32<<10)]
			version++
			s.notify("textDocument/didChange", fmt.Sprintf(`{"textDocument":{"uri":%q,"version":%d},"contentChanges":[{"text":%s}]}`, uri, version, jsonString(text)))
		}
		edited := s.view(uri, version)
		version++
		s.notify("textDocument/didClose", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, uri))
		s.notify("textDocument/didOpen", fmt.Sprintf(`{"textDocument":{"uri":%q,"languageId":"json","version":%d,"text":%s}}`, uri, version, jsonString(text)))
		if fresh := s.view(uri, version); fresh != edited {
			t.Fatalf("after edits the server's buffer differs from the editor's\nedited: %.2000s\nfresh:  %.2000s\nlast changes: %.2000s", edited, fresh, history[len(history)-1])
		}
	}
	s.finish()
}

// view is what the server shows of a buffer at a version: its document
// symbols and its diagnostics.
func (s *server) view(uri string, version int) string {
	s.t.Helper()
	symbols := s.call("textDocument/documentSymbol", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, uri))
	if symbols.Error != nil {
		s.t.Fatalf("documentSymbol: %s", symbols.Error.Message)
	}
	diags := s.waitNote(0, "textDocument/publishDiagnostics", func(p json.RawMessage) bool {
		var pd struct {
			URI     string `json:"uri"`
			Version *int   `json:"version"`
		}
		return json.Unmarshal(p, &pd) == nil && pd.URI == uri && pd.Version != nil && *pd.Version == version
	})
	var pd struct {
		Diagnostics json.RawMessage `json:"diagnostics"`
	}
	_ = json.Unmarshal(diags.Params, &pd)
	return string(symbols.Result) + "\n" + string(pd.Diagnostics)
}

// TestChaosDocuments: hostile documents — huge, deep, binary, invalid
// UTF-8, long lines, many keys, line breaks of every kind — opened as
// SAGA files and as other JSON, each asked every request at random
// places; and hostile files on disk while the workspace loads.
func TestChaosDocuments(t *testing.T) {
	r, _ := chaos.Start(t, 0) // a fixed set of documents, random places
	root := testkit.CopyExample(t, "workspace")
	story := filepath.Join(root, ".saga/stories/add-logout-button")
	if err := syscall.Mkfifo(filepath.Join(story, "fifo.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Symlink("loop.json", filepath.Join(story, "loop.json"))
	_ = os.Mkdir(filepath.Join(story, "folder.json"), 0o755)
	big, _ := os.Create(filepath.Join(story, "big.json"))
	_ = big.Truncate(5 << 20)
	big.Close()
	s := startServer(t, root) // initialize waits for the load: nothing on disk may block it

	keys := make([]string, 20000)
	for i := range keys {
		keys[i] = fmt.Sprintf(`"k%d": %d`, i, i)
	}
	docs := map[string]string{
		"empty":         "",
		"BOM":           "\xef\xbb\xbf{}",
		"binary":        "{\"id\": \"\x00\x01\x02\"}\x00",
		"invalid UTF-8": "{\"id\": \"\xff\xfe\", \"subject\": \"\xc3\"}",
		"deep":          strings.Repeat("[", 100000),
		"deep objects":  strings.Repeat(`{"a":`, 50000),
		"long line":     `{"description": "` + strings.Repeat("é😀a", 150000) + `"}`,
		"many keys":     "{" + strings.Join(keys, ",") + "}",
		"line breaks":   "{\r\n\"id\":\r\"a\",\n\"subject\":\u2028\"b\"\r\n}",
		"over 4 MB":     `{"description": "` + strings.Repeat("a", 4<<20+10) + `"}`,
		"surrogates":    `{"id": "\ud800", "subject": "\udfff\ud83d\ude00"}`,
		"not an object": `[1, "two", {"three": 3}]`,
	}
	names := make([]string, 0, len(docs))
	for name := range docs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		text := docs[name]
		for _, rel := range []string{".saga/stories/add-logout-button/hostile.json", "notes/hostile.json"} {
			uri := s.uri(rel)
			s.notify("textDocument/didOpen", fmt.Sprintf(`{"textDocument":{"uri":%q,"languageId":"json","version":1,"text":%s}}`, uri, jsonString(text)))
			for range 2 {
				l, c := chaos.EditorPos(text, chaos.Boundary(text, r.IntN(len(text)+1)))
				pos := fmt.Sprintf(`{"line":%d,"character":%d}`, l, c)
				doc := fmt.Sprintf(`{"uri":%q}`, uri)
				for _, q := range [][2]string{
					{"textDocument/hover", fmt.Sprintf(`{"textDocument":%s,"position":%s}`, doc, pos)},
					{"textDocument/completion", fmt.Sprintf(`{"textDocument":%s,"position":%s}`, doc, pos)},
					{"textDocument/definition", fmt.Sprintf(`{"textDocument":%s,"position":%s}`, doc, pos)},
					{"textDocument/references", fmt.Sprintf(`{"textDocument":%s,"position":%s,"context":{"includeDeclaration":true}}`, doc, pos)},
					{"textDocument/prepareRename", fmt.Sprintf(`{"textDocument":%s,"position":%s}`, doc, pos)},
					{"textDocument/documentSymbol", fmt.Sprintf(`{"textDocument":%s}`, doc)},
					{"textDocument/codeLens", fmt.Sprintf(`{"textDocument":%s}`, doc)},
					{"textDocument/codeAction", fmt.Sprintf(`{"textDocument":%s,"range":{"start":{"line":0,"character":0},"end":%s},"context":{"diagnostics":[]}}`, doc, pos)},
				} {
					m := s.call(q[0], q[1])
					if m.Error != nil && strings.HasPrefix(m.Error.Message, "internal error in") {
						t.Fatalf("%s on the %s document: %s", q[0], name, m.Error.Message)
					}
				}
			}
			// An edit at its end, then closed.
			l, c := chaos.EditorPos(text, len(text))
			s.notify("textDocument/didChange", fmt.Sprintf(`{"textDocument":{"uri":%q,"version":2},"contentChanges":[{"range":{"start":{"line":%d,"character":%d},"end":{"line":%d,"character":%d}},"text":"}"}]}`, uri, l, c, l, c))
			s.probe(fmt.Sprintf("the %s document at %s", name, rel))
			s.notify("textDocument/didClose", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, uri))
		}
	}
	s.finish()
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
