package watch

import (
	"maps"
	"slices"

	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// Sink is told what changed. Its methods are called in the order things
// happened, from the watcher's goroutines (and from EpicStatus's caller),
// after the State that shows the change is published. They must not call
// the Watcher's waiting methods (Scan, FollowStory, FollowEpic): the loop
// waits for them.
type Sink interface {
	// WorkerProgress: what a followed worker's run shows changed.
	WorkerProgress(WorkerProgress)
	// TaskStatus: a task's status moved in its story's live view.
	TaskStatus(TaskStatus)
	// EpicProgress: what an announced epic run shows changed.
	EpicProgress(EpicProgress)
	// FilesChanged: the run-dependent state of these files (root-relative
	// slash paths: a story's files in either copy, an epic's definitions)
	// may have changed; a language server republishes their diagnostics.
	FilesChanged(rels []string)
	// Refresh: what views of runs show (code lenses) may have changed.
	Refresh()
}

// WorkerProgress is a followed worker's run as it shows now.
type WorkerProgress struct {
	Story, Session, State, Step string
	Cycle, Done, Total          int // Done/Total from the story's live view
	Message, OutputFile         string

	First bool // the run's first report (a face begins its progress, unless Ended)
	Ended bool // the run ended: its last report
}

// TaskStatus is a task whose status moved in its story's live view; Source
// says where it was seen first (runs.SourceHook, SourceWorktree,
// SourceClaude).
type TaskStatus struct {
	Story, Task, Subject, From, To, Source string
}

// EpicProgress is an announced epic run's derived state, with the live task
// counts of its running stories. Slices are never nil.
type EpicProgress struct {
	Epic, Session, State string
	Running              []string
	Done, Total          int
	Held, Failed         []string
	Cost                 float64
	Stories              []EpicStoryProgress
	// DryRun: the run is a dry run; its counts and its stories' states
	// are the simulated ones, never the stories' own
	// (docs/worker.md#dry-runs).
	DryRun bool

	First bool // the run's first report
	Ended bool // the run ended (its state is no longer running): its last report
}

// EpicStoryProgress is one story of EpicProgress.
type EpicStoryProgress struct {
	ID, State   string
	HeldBy      []string
	Done, Total int
	Actions     *readmodel.ActionsRun // its GitHub Actions run, when it runs or ran there
}

// effects are what a step collects for the Sink, sent in order once the
// step's State is published and mu released.
type effects struct {
	actions []func(Sink)
	rels    map[string]bool
	refresh bool
}

func newEffects() *effects { return &effects{rels: map[string]bool{}} }

func (ef *effects) add(f func(Sink)) { ef.actions = append(ef.actions, f) }

// flush sends what was collected; mu must not be held.
func (ef *effects) flush(s Sink) {
	for _, f := range ef.actions {
		f(s)
	}
	if len(ef.rels) > 0 {
		s.FilesChanged(slices.Sorted(maps.Keys(ef.rels)))
	}
	if ef.refresh {
		s.Refresh()
	}
}
