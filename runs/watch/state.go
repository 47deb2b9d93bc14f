package watch

import (
	"maps"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// State is what the watcher knows at one moment. It is never modified once
// published (maps and files included): readers share it without a lock.
// Its methods work on a nil State (before the watcher started) as on an
// empty one.
type State struct {
	// Ready: the start-up scan is done. Before it, the runs found on disk
	// are not known yet, so no finding may rest on their absence.
	Ready bool
	// Stories are the stories with a run or a worktree copy, by id.
	Stories map[string]*Story
	// Locked are the stories whose worker lock is held, with the holder's
	// pid: a worker counts as alive by it even when its events file is out
	// of sight (another session dir) — unless the holder is the story's
	// followed worker after its end (Alive).
	Locked map[string]int
	// MainJournals are the main checkout's journals that end in an
	// unresolved blocker, by story.
	MainJournals map[string]Journal
	// Epics are the epics with a run or a derived state, by id.
	Epics map[string]*Epic
	// EpicLocked are the epics whose runner lock is held, with the holder's
	// pid.
	EpicLocked map[string]int
}

// Story is one story's live state.
type Story struct {
	ID      string
	Running bool // a followed worker of the story has not ended
	// Run is the running worker's run, else the newest run seen; nil when
	// none.
	Run *Run
	// View is each task's status as shown: the worktree copy (else the main
	// copy) raised by a running worker's task list and events.
	View map[string]string
	// Worktree is the story's worktree copy; nil when there is none.
	Worktree *Worktree
}

// Run is a worker run as the faces show it.
type Run struct {
	Session, State, Step, OutputFile, Message string
	Cycle, Done, Total                        int // Done/Total from the live view when there is one
	PID                                       int // the worker's, once its worker.start is read
	Running                                   bool
	Cost                                      float64 // USD the run's headless runs reported
	PR                                        string  // the pull request it opened
	// DryRun: the simulated agent's run, in the story's dry-run worktree
	// (docs/worker.md#dry-runs): what it did is never the story's.
	DryRun bool
	// Checks is each task's last check result in this run.
	Checks map[string]runs.CheckResult
	// Protected are the protected files the story changed that keep its
	// PR a draft, as this run last compared them.
	Protected []runs.ProtectedFile
	// Actions is the GitHub Actions run it dispatched (the watcher never
	// asks GitHub: as recorded), nil for a run on this machine.
	Actions *readmodel.ActionsRun
}

// Worktree is a story's worktree copy as last read.
type Worktree struct {
	// Files are the copy's story and task files by root-relative rel
	// (<worktrees>/<story>/.saga/stories/<story>/<file>), parsed as
	// main-copy files.
	Files   map[string]*store.File
	Journal Journal // the copy's journal.md
}

// Journal is what a journal.md says of blockers.
type Journal struct {
	Blocked bool
	Text    string // the blocker's text; may be empty when blocked
}

// Epic is one epic's live state.
type Epic struct {
	ID    string
	Alive bool // the newest run's runner lives
	PID   int  // the newest run's runner, once known
	// Status is the epic's state as last derived (readmodel.EpicState); nil
	// before the first derivation.
	Status *readmodel.EpicStatus
}

// Story is the story's live state, or nil.
func (s *State) Story(id string) *Story {
	if s == nil {
		return nil
	}
	return s.Stories[id]
}

// Epic is the epic's live state, or nil.
func (s *State) Epic(id string) *Epic {
	if s == nil {
		return nil
	}
	return s.Epics[id]
}

// Alive tells whether a worker of the story is alive: a followed run that
// has not ended, or a holder of the story's worker lock. A followed worker
// holds its lock a moment past its worker.end (and the locks are probed at
// ticks): once its run ended, a lock naming its pid does not count.
func (s *State) Alive(story string) bool {
	if s == nil {
		return false
	}
	st := s.Stories[story]
	if st != nil && st.Running {
		return true
	}
	pid := s.Locked[story]
	return pid > 0 && (st == nil || st.Run == nil || st.Run.PID != pid)
}

// EpicRunning tells whether the epic's runner lives: a followed run, else
// its lock (unless held by the followed runner, which ended).
func (s *State) EpicRunning(id string) bool {
	if s == nil {
		return false
	}
	e := s.Epics[id]
	if e != nil && e.Alive {
		return true
	}
	pid := s.EpicLocked[id]
	return pid > 0 && (e == nil || e.PID != pid)
}

// MainJournal is the main checkout's journal state of the story.
func (s *State) MainJournal(story string) Journal {
	if s == nil {
		return Journal{}
	}
	return s.MainJournals[story]
}

// publishLocked rebuilds the State from the watcher's records and publishes
// it (mu held). The records' maps that are replaced rather than modified
// (views, worktree files, locks, journals, derived epic states) are shared;
// what runs.Run modifies in place is copied.
func (w *Watcher) publishLocked() {
	if w.closed {
		return
	}
	active, last := map[string]*run{}, map[string]*run{}
	for _, r := range w.runs {
		if !r.verified {
			continue
		}
		if b := last[r.Story]; b == nil || r.ms > b.ms {
			last[r.Story] = r
		}
		if b := active[r.Story]; !r.Ended && (b == nil || r.ms > b.ms) {
			active[r.Story] = r
		}
	}
	st := &State{Ready: w.scanned, Stories: make(map[string]*Story, len(w.stories)), Locked: w.workerLocks,
		MainJournals: w.journals, Epics: make(map[string]*Epic, len(w.epics)), EpicLocked: w.epicLocks}
	for id, s := range w.stories {
		ss := &Story{ID: id, View: s.view}
		r := active[id]
		ss.Running = r != nil
		if r == nil {
			r = last[id]
		}
		if r != nil {
			done, total := w.counts(r)
			ss.Run = &Run{Session: r.Session, State: r.State, Step: r.Step, OutputFile: r.OutputFile, Message: r.Message,
				Cycle: r.Cycle, Done: done, Total: total, PID: r.PID, Running: !r.Ended, Checks: maps.Clone(r.Checks),
				Cost: r.Cost, PR: r.PR, DryRun: r.DryRun, Protected: r.ProtectedBlocking(), Actions: readmodel.Dispatched(r.Run)}
		}
		if s.wt != nil {
			ss.Worktree = &Worktree{Files: s.wtFiles, Journal: s.wtBlock}
		}
		st.Stories[id] = ss
	}
	for id, e := range w.epics {
		ep := &Epic{ID: id, Alive: e.alive, Status: e.status}
		if e.run != nil {
			ep.PID = e.run.PID
		}
		st.Epics[id] = ep
	}
	w.state.Store(st)
}
