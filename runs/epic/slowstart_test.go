//go:build unix

package epic_test

import (
	"context"
	"slices"
	"sync"
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
	o := f.runnerOptions(b, 2)
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

// gatedStarts is the tmux backend with each start waiting for a token on
// gate, or for free to close.
type gatedStarts struct {
	control.TmuxBackend
	gate, free chan struct{}
	asked      chan string
}

func (b gatedStarts) StartStory(ctx context.Context, o control.RunOptions) (*readmodel.Started, error) {
	b.asked <- o.Story
	select {
	case <-b.gate:
	case <-b.free:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return b.TmuxBackend.StartStory(ctx, o)
}

// TestStartToldWhenItsWorkerHoldsItsLock: a story's start is told (its
// story.start) as soon as its worker holds its lock, while the loop is
// busy — here held just after a step. The loop once told it when it next
// took the start's outcome in, a step's derivation later on loaded cores;
// and each start is told once.
func TestStartToldWhenItsWorkerHoldsItsLock(t *testing.T) {
	f := newEpicFixture(t, true)
	b := gatedStarts{gate: make(chan struct{}), free: make(chan struct{}), asked: make(chan string, 16)}
	stepped, resume := make(chan struct{}), make(chan struct{})
	resumed := sync.OnceFunc(func() { close(resume) })
	defer resumed() // a failure while the loop is held lets it go
	o := f.runnerOptions(b, 1)
	o = epic.WithStepped(o, func() {
		select {
		case stepped <- struct{}{}:
			<-resume
		default:
		}
	})
	code := make(chan int, 1)
	go func() { code <- epic.Run(t.Context(), o) }()
	var first string
	select {
	case first = <-b.asked:
	case c := <-code:
		t.Fatalf("the run ended (exit %d) before starting a story", c)
	}
	go func() {
		for range b.asked {
		}
	}()

	<-stepped // the loop is held until resume
	b.gate <- struct{}{}
	told := testkit.WaitUntil(2*time.Minute, func() bool { // a failure's bound
		return slices.ContainsFunc(f.events(), func(e runs.Event) bool { return e.Event == runs.KindStoryStart && e.Story == first })
	})
	resumed()
	if !told {
		t.Fatalf("%s's start was not told while the loop was busy\n%s", first, f.workerLogs())
	}

	close(b.free)
	if c := <-code; c != runs.ExitCompleted {
		t.Fatalf("the run ended with exit %d\n%s", c, f.workerLogs())
	}
	starts := map[string]int{}
	for _, e := range f.events() {
		if e.Event == runs.KindStoryStart {
			starts[e.Story]++
		}
	}
	if len(starts) != 5 {
		t.Errorf("starts told: %v", starts)
	}
	for id, n := range starts {
		if n != 1 {
			t.Errorf("%s's start told %d times", id, n)
		}
	}
}
