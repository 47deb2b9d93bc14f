//go:build unix

package epic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/epic"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// heldStarts is the tmux backend with every start held until its context
// ends: the run stays where it is, alive, every story as it was.
type heldStarts struct {
	control.TmuxBackend
	asked chan string
}

func (b heldStarts) StartStory(ctx context.Context, o control.RunOptions) (*readmodel.Started, error) {
	b.asked <- o.Story
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestStatusAskedOfTheLiveRunner: while an epic runs, `status <epic>` is
// the runner's answer (docs/architecture.md#status-asks-the-live-runner),
// the same state a new process derives, in text and JSON; a dead runner's
// socket answers nothing, and the next runner replaces it; a file that
// is not a socket is never removed for it; the socket goes with the run.
func TestStatusAskedOfTheLiveRunner(t *testing.T) {
	f := newEpicFixture(t, false)
	env := map[string]string{}
	for _, kv := range f.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	getenv := func(k string) string { return env[k] }
	q := readmodel.ViewQuery(f.root, "shop", getenv, nil)
	sock := readmodel.EpicSocket(f.sessionDir, f.root, "shop")

	// A dead runner's socket: nobody answers on it.
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, _, ok := readmodel.AskRunner(t.Context(), q); ok {
		t.Fatal("a dead runner's socket answered")
	}

	b := heldStarts{asked: make(chan string, 16)}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	o := epic.Options{Epic: "shop", Dir: f.root, EpicFlags: runs.EpicFlags{MaxParallel: 1}, Worker: runs.WorkerFlags{}.WithDefaults(),
		Process: runs.Process{OutputFile: filepath.Join(f.sessionDir, "saga-epic-shop-1.log"), Session: "saga-epic-shop-1",
			Stdout: io.Discard, Env: getenv},
		Self: testkit.Binary(t), Backend: b}
	code := make(chan int, 1)
	go func() { code <- epic.Run(ctx, o) }()
	select {
	case <-b.asked: // the runner is in its loop, its one slot held
	case c := <-code:
		t.Fatalf("the run ended (exit %d) before starting a story", c)
	}

	title, served, ok := readmodel.AskRunner(t.Context(), q)
	if !ok {
		t.Fatal("the live runner did not answer")
	}
	_, derived, err := readmodel.LoadEpicState(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	if derived.Session != "saga-epic-shop-1" { // (this process is no runner's command line: "died")
		t.Fatalf("the state derived is not the run's: %s", asJSON(t, derived))
	}
	if title != "Shop" || !sameJSON(t, served, derived) {
		t.Errorf("the runner's answer differs from the state derived:\n%q %s\n%s", title, asJSON(t, served), asJSON(t, derived))
	}

	// The command prints the state derived, whoever derived it.
	var want bytes.Buffer
	if err := derived.WriteText(&want, "Shop"); err != nil {
		t.Fatal(err)
	}
	if r := f.saga(nil, "status", "shop"); r.Code != 0 || r.Stdout != want.String() {
		t.Errorf("status: exit %d\n%s%s\nwant:\n%s", r.Code, r.Stdout, r.Stderr, want.String())
	}
	if st := f.status(); !sameJSON(t, &st, derived) {
		t.Errorf("status --format json:\n%s\nwant:\n%s", asJSON(t, &st), asJSON(t, derived))
	}

	stop()
	if c := <-code; c != runs.ExitFailed {
		t.Errorf("the stopped run ended with exit %d", c)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket outlived its runner: %v", err)
	}
	if _, _, ok := readmodel.AskRunner(t.Context(), q); ok {
		t.Error("an ended run answered")
	}

	// A file that is not a socket where the socket goes: left as it is,
	// and the run goes on without answering.
	if err := os.WriteFile(sock, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx2, stop2 := context.WithCancel(t.Context())
	defer stop2()
	o.Process.OutputFile, o.Process.Session = filepath.Join(f.sessionDir, "saga-epic-shop-2.log"), "saga-epic-shop-2"
	go func() { code <- epic.Run(ctx2, o) }()
	select {
	case <-b.asked:
	case c := <-code:
		t.Fatalf("the run ended (exit %d) before starting a story", c)
	}
	if _, _, ok := readmodel.AskRunner(t.Context(), q); ok {
		t.Error("answered on a socket that is not the runner's")
	}
	stop2()
	<-code
	if b, err := os.ReadFile(sock); err != nil || string(b) != "mine" {
		t.Errorf("the file where the socket goes: %q, %v", b, err)
	}
}

func asJSON(t *testing.T, st *readmodel.EpicStatus) []byte {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sameJSON(t *testing.T, a, b *readmodel.EpicStatus) bool {
	return bytes.Equal(asJSON(t, a), asJSON(t, b))
}
