//go:build unix

package epic_test

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/epic"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// heldStart is the tmux backend with one story's start held until release
// is closed — a start that takes long, as on a loaded machine — and every
// start it is asked for told on asked.
type heldStart struct {
	control.TmuxBackend
	story   string
	release chan struct{}
	asked   chan string
}

func (b heldStart) StartStory(ctx context.Context, o control.RunOptions) (*readmodel.Started, error) {
	b.asked <- o.Story
	if o.Story == b.story {
		select {
		case <-b.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return b.TmuxBackend.StartStory(ctx, o)
}

// TestDependentStartsWhileAStartIsHeld: a story's end starts its
// dependents while another story's start is still under way. The runner
// once waited in a step for every start it made until its worker held
// its lock, and saw no end meanwhile: with e's start held, a's dependents
// never started.
func TestDependentStartsWhileAStartIsHeld(t *testing.T) {
	f := newEpicFixture(t, true)
	b := heldStart{story: "shop--e", release: make(chan struct{}), asked: make(chan string, 16)}
	o := epic.Options{Epic: "shop", Dir: f.root, EpicFlags: runs.EpicFlags{MaxParallel: 2}, Worker: runs.WorkerFlags{}.WithDefaults(),
		Process: runs.Process{OutputFile: filepath.Join(f.sessionDir, "saga-epic-shop-1.log"), Session: "saga-epic-shop-1",
			Stdout: io.Discard, Env: f.getenv()},
		Self: testkit.Binary(t), Backend: b}
	code := make(chan int, 1)
	go func() { code <- epic.Run(t.Context(), o) }()

	// a and e are free: both are asked for; b or c once a ended.
	var asked []string
	bound := time.NewTimer(3 * time.Minute) // a failure's bound, not a wait
	defer bound.Stop()
	for !slices.Contains(asked, "shop--b") && !slices.Contains(asked, "shop--c") {
		select {
		case id := <-b.asked:
			asked = append(asked, id)
		case c := <-code:
			t.Fatalf("the run ended (exit %d) with e's start held; starts asked: %v", c, asked)
		case <-bound.C:
			t.Fatalf("a's dependents were not started while e's start was held; starts asked: %v\n%s", asked, f.workerLogs())
		}
	}
	close(b.release)
	go func() {
		for range b.asked {
		}
	}()
	if c := <-code; c != runs.ExitCompleted {
		t.Fatalf("the run ended with exit %d\n%s", c, f.workerLogs())
	}
	ended := 0
	for _, e := range f.events() {
		if e.Event == runs.KindStoryEnd && e.Status == runs.StatusCompleted {
			ended++
		}
	}
	if ended != 5 {
		t.Fatalf("%d of 5 stories completed\n%s", ended, f.workerLogs())
	}
}
