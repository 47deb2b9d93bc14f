//go:build unix

package epic_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

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
	getenv := f.getenv()
	q := readmodel.ViewQuery(f.root, "shop", getenv, nil)
	sock := readmodel.EpicSocket(f.sessionDir, f.root, "shop")

	// A dead runner's socket: nobody answers on it.
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, ok := readmodel.AskRunner(t.Context(), q, false); ok {
		t.Fatal("a dead runner's socket answered")
	}

	b := heldStarts{asked: make(chan string, 16)}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	o := f.runnerOptions(b, 1)
	code := make(chan int, 1)
	go func() { code <- epic.Run(ctx, o) }()
	select {
	case <-b.asked: // the runner is in its loop, its one slot held
	case c := <-code:
		t.Fatalf("the run ended (exit %d) before starting a story", c)
	}

	servedText, okText := readmodel.AskRunner(t.Context(), q, false)
	servedJSON, okJSON := readmodel.AskRunner(t.Context(), q, true)
	if !okText || !okJSON {
		t.Fatal("the live runner did not answer")
	}
	text, js := derivedForms(t, q)
	if string(servedText) != text.String() || string(servedJSON) != js.String() {
		t.Errorf("the runner's answer differs from the state derived:\n%s\n%s\nwant:\n%s\n%s", servedText, servedJSON, text.String(), js.String())
	}

	// The command prints the state derived, whoever derived it.
	if r := f.saga(nil, "status", "shop"); r.Code != 0 || r.Stdout != text.String() {
		t.Errorf("status: exit %d\n%s%s\nwant:\n%s", r.Code, r.Stdout, r.Stderr, text.String())
	}
	if r := f.saga(nil, "status", "shop", "--format", "json"); r.Code != 0 || r.Stdout != js.String() {
		t.Errorf("status --format json: exit %d\n%s%s\nwant:\n%s", r.Code, r.Stdout, r.Stderr, js.String())
	}

	// A caller that asks for something else is sent away.
	odd, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(odd, "yaml\n"); err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(odd); len(b) != 0 {
		t.Errorf("answered a request for yaml: %q", b)
	}
	odd.Close()

	stop()
	if c := <-code; c != runs.ExitFailed {
		t.Errorf("the stopped run ended with exit %d", c)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket outlived its runner: %v", err)
	}
	if _, ok := readmodel.AskRunner(t.Context(), q, false); ok {
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
	if _, ok := readmodel.AskRunner(t.Context(), q, false); ok {
		t.Error("answered on a socket that is not the runner's")
	}
	stop2()
	<-code
	if b, err := os.ReadFile(sock); err != nil || string(b) != "mine" {
		t.Errorf("the file where the socket goes: %q, %v", b, err)
	}
}

// TestStatusFollowedIsAnsweredFromTheStep: once a caller has asked, the
// runner derives the view at each step from the step's own reads and
// answers the callers that follow from it, beside its loop — here while
// the loop is held just after a step — the same state a new process
// derives (docs/architecture.md#status-asks-the-live-runner).
func TestStatusFollowedIsAnsweredFromTheStep(t *testing.T) {
	f := newEpicFixture(t, false)
	getenv := f.getenv()
	q := readmodel.ViewQuery(f.root, "shop", getenv, nil)

	stepped, resume := make(chan struct{}), make(chan struct{})
	resumed := sync.OnceFunc(func() { close(resume) })
	defer resumed() // a failure while the loop is held lets it go
	b := heldStarts{asked: make(chan string, 16)}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	o := f.runnerOptions(b, 1)
	o = epic.WithStepped(o, func() {
		select {
		case stepped <- struct{}{}: // the test holds the loop here
			<-resume
		default:
		}
	})
	code := make(chan int, 1)
	go func() { code <- epic.Run(ctx, o) }()
	select {
	case <-b.asked:
	case c := <-code:
		t.Fatalf("the run ended (exit %d) before starting a story", c)
	}
	if _, ok := readmodel.AskRunner(t.Context(), q, false); !ok { // the loop answers: nobody asked before
		t.Fatal("the live runner did not answer")
	}

	<-stepped // the next step, after the ask: the loop is held until resume
	servedText, okText := readmodel.AskRunner(t.Context(), q, false)
	servedJSON, okJSON := readmodel.AskRunner(t.Context(), q, true)
	text, js := derivedForms(t, q)
	resumed()
	if !okText || !okJSON {
		t.Fatal("a caller following the run was not answered while the loop was busy")
	}
	if string(servedText) != text.String() || string(servedJSON) != js.String() {
		t.Errorf("the step's view differs from the state derived:\n%s\n%s\nwant:\n%s\n%s", servedText, servedJSON, text.String(), js.String())
	}
	stop()
	<-code
}

// derivedForms is the run's state as a new process derives it, in
// status's text and JSON.
func derivedForms(t *testing.T, q readmodel.EpicQuery) (text, js bytes.Buffer) {
	t.Helper()
	ws, derived, err := readmodel.LoadEpicState(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	if derived.Session != "saga-epic-shop-1" { // (this process is no runner's command line: "died")
		t.Fatalf("the state derived is not the run's: %+v", derived)
	}
	if err := derived.WriteText(&text, ws.Epic("shop").Title); err != nil {
		t.Fatal(err)
	}
	if err := derived.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	return text, js
}
