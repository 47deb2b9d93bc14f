package epic

// When the runner steps: at once on a write that moves the schedule, else
// at its tick, which rests in proportion to the step's cost.

import (
	"path/filepath"
	"time"

	"github.com/saga-ai/saga-lsp/fswatch"
	"github.com/saga-ai/saga-lsp/runs"
)

// stepRestFactor: after a step whose state took d to derive, the runner
// waits at least stepRestFactor·d (and its Tick) before a step nothing
// woke. A step loads the workspace and derives every story's state (at
// 200 stories ≈ 100 ms of CPU and a few git processes, several times that
// on cores busy with eight agents); at every tick and every write of a
// worker's events, the runner stepped without pause and was a third of a
// core (docs/architecture.md#an-epic-of-200-stories).
const stepRestFactor = 3

// restAfter is how long the loop waits for a wake after a step whose
// state took took.
func (r *runner) restAfter(took time.Duration) time.Duration {
	return max(r.o.Tick, stepRestFactor*took)
}

// watch wakes the loop when a worker's events file gains an event that
// moves the schedule (scheduleWake) — a story's end is seen in
// milliseconds, not at the next tick — and not for the rest of what
// workers write (their progress, their agents' output: most of it).
func (r *runner) watch() (<-chan struct{}, func()) {
	_ = runs.MakeSessionDir(r.o.SessionDir)
	sw := &scheduleWake{own: runs.EventsFile(r.o.OutputFile)}
	wake, stop, err := fswatch.Wake([]string{r.o.SessionDir}, func(ev fswatch.Event) bool { return sw.keep(ev.Path) })
	if err != nil {
		r.log.Warn(stepEpic, "file watching unavailable (%v); polling every %s", err, r.o.Tick)
		return make(chan struct{}), func() {}
	}
	return wake, stop
}

// scheduleWake reads what each events file of the session dir gained
// since its last write; one goroutine (the file watcher's) calls keep.
type scheduleWake struct {
	own   string // the runner's own events file: its writes wake nobody
	tails map[string]*runs.Tail
}

// keep tells whether the write to path appended an event that moves the
// schedule (scheduleEvent), or could not be read (a step looks).
func (sw *scheduleWake) keep(path string) bool {
	if !runs.IsEventsFile(filepath.Base(path)) || path == sw.own {
		return false
	}
	t := sw.tails[path]
	if t == nil {
		if sw.tails == nil {
			sw.tails = map[string]*runs.Tail{}
		}
		t = &runs.Tail{Path: path}
		sw.tails[path] = t
	}
	moved := false
	for {
		n, err := t.Read(func(e runs.Event) { moved = moved || scheduleEvent(e.Event) })
		if n == 0 || err != nil {
			return moved || err != nil
		}
	}
}

// scheduleEvent tells whether a worker's event can move the epic's
// schedule: its end (its dependents may be ready), a headless run's end
// (its cost, against --max-cost) or a dispatch. Not a worker's start: the
// runner's own starts reach it as their outcomes (settle), and a story
// started by hand elsewhere is seen at the next tick (it was a step for
// nothing at every start the runner made).
func scheduleEvent(kind string) bool {
	switch kind {
	case runs.KindWorkerEnd, runs.KindRunEnd, runs.KindDispatch:
		return true
	}
	return false
}
