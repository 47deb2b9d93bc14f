//go:build unix

package chaos_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
)

// answerTimeout is how long a request may take before the server counts as
// no longer answering (a hung or dead server, never a slow one).
const answerTimeout = 20 * time.Second

// message is one JSON-RPC message from the server.
type message = lspclient.Message

// server is the saga-lsp binary run as an editor runs it, spoken to through
// the tests' LSP client (lspclient) with raw JSON params.
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	lc     *lspclient.Client
	root   string
	mu     sync.Mutex
	stderr bytes.Buffer  // all of it: a panic is looked for anywhere
	exited chan struct{} // closed once the process is waited for
}

// startServer runs `saga-lsp serve` and, when root is set, initializes it
// on root and waits for the workspace to load.
func startServer(t *testing.T, root string) *server {
	t.Helper()
	s := &server{t: t, root: root, exited: make(chan struct{})}
	s.cmd = exec.Command(testkit.Binary(t), "serve")
	s.cmd.Dir = t.TempDir()
	s.cmd.Stderr = lockedWriter{&s.mu, &s.stderr}
	lc, err := lspclient.Start(s.cmd, lspclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.lc = lc
	go func() {
		<-lc.Done()
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.lc.Close()
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

// writeRaw writes bytes as they are.
func (s *server) writeRaw(b string) {
	_, _ = s.lc.Write([]byte(b)) // a dead server shows in the next wait
}

func (s *server) notify(method, params string) {
	_ = s.lc.NotifyRaw(method, []byte(params))
}

// request sends a request and returns its id.
func (s *server) request(method, params string) string {
	s.t.Helper()
	id, err := s.lc.RequestRaw(method, []byte(params))
	if err != nil {
		s.fail(method, err)
	}
	return id
}

// wait returns the answer to request id; a server that stops answering or
// dies fails the test.
func (s *server) wait(id, what string) message {
	s.t.Helper()
	m, err := s.lc.Response(id, answerTimeout)
	if err != nil {
		s.fail(what, err)
	}
	return m
}

// fail stops the test: the server died, or said nothing for answerTimeout,
// after what.
func (s *server) fail(what string, err error) {
	s.t.Helper()
	s.mu.Lock()
	log := s.stderr.String()
	s.mu.Unlock()
	if s.lc.Err() != nil {
		s.t.Fatalf("the server died after %s (%v); stderr:\n%s", what, err, tail(log))
	}
	s.t.Fatalf("the server stopped answering after %s (%v); stderr:\n%s", what, err, tail(log))
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
	m := s.call("initialize", fmt.Sprintf(`{"processId":null,"rootUri":%q,"capabilities":{"textDocument":{"documentSymbol":{"hierarchicalDocumentSymbolSupport":true},"publishDiagnostics":{"versionSupport":true}},"workspace":{"workspaceEdit":{"documentChanges":true,"resourceOperations":["create","rename"]}}}}`, lspclient.FileURI(root)))
	if m.Error != nil {
		s.t.Fatalf("initialize: %s", m.Error.Message)
	}
	s.notify("initialized", `{}`)
	s.waitNote(0, "window/logMessage", func(p json.RawMessage) bool { return strings.Contains(string(p), "saga-lsp: loaded") })
}

// waitNote waits for a notification after index from matching pred.
func (s *server) waitNote(from int, method string, pred func(json.RawMessage) bool) message {
	s.t.Helper()
	m, _, err := s.lc.Next(from, time.Now().Add(answerTimeout), func(m message) bool {
		return m.Method == method && (pred == nil || pred(m.Params))
	})
	if err != nil {
		s.fail("waiting for "+method, err)
	}
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

func (s *server) uri(rel string) string { return lspclient.FileURI(filepath.Join(s.root, rel)) }

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
