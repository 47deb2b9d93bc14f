package lsp

// The LSP adapter of the live-run watcher (runs/watch): the watcher follows
// the workspace's story workers and epic runners from what they leave on
// disk (docs/protocol-extensions.md#live-worker-state, #epic-runs) and
// publishes an immutable watch.State; this adapter turns its changes into
// LSP — work-done progress (whose cancel stops the run), saga/workerProgress,
// saga/epicProgress and saga/taskStatus notifications, code-lens refreshes
// (live_progress.go), the LSP-only diagnostics stale-task, story-blocked
// (live_diagnostics.go), story-held (live_epic.go) and check-failed
// (check_failed.go) — and answers lenses and commands from the State.
//
// Reading run state costs one atomic load (watch.Watcher.State): the
// diagnostics publisher never waits for the watcher, probes a lock or reads
// a file.

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/watch"
	"github.com/saga-ai/saga-lsp/store"
)

// live is the server's adapter of the watcher: it implements watch.Sink.
type live struct {
	s   *Server
	env func(string) string
	w   atomic.Pointer[watch.Watcher] // set once by start

	ctx    context.Context // ends at close: progress creation and stops in flight give up
	cancel context.CancelFunc
	done   chan struct{}
	bell   bell // code lens refresh requests
	wg     sync.WaitGroup
	once   sync.Once

	mu      sync.Mutex
	started bool
	closed  bool
	root    string
	progs   map[string]*runProgress // by run: a worker's session, "epic <id>" for an epic's runs
	tokens  map[string]*runProgress // by progress token
}

func newLive(s *Server, env func(string) string) *live {
	ctx, cancel := context.WithCancel(context.Background())
	return &live{s: s, env: env, ctx: ctx, cancel: cancel, done: make(chan struct{}), bell: newBell(),
		progs: map[string]*runProgress{}, tokens: map[string]*runProgress{}}
}

// start begins watching root's workers. It does not scan: scan does, once
// the workspace is loaded.
func (l *live) start(root string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started || l.closed || root == "" {
		return
	}
	l.started, l.root = true, root
	l.w.Store(watch.Start(watch.Options{Root: root, Env: l.env, Parser: l.s.parser, Log: l.s.log,
		Workspace: func() *store.Workspace { return l.s.current().WS }, Sink: l}))
	l.wg.Add(1)
	go l.refresher()
}

// scan runs the watcher's start-up discovery; it returns once the State is
// ready, before the workspace's first diagnostics are published.
func (l *live) scan() {
	if w := l.w.Load(); w != nil {
		w.Scan()
	}
}

// close stops the watcher and the adapter's goroutines, and waits for them.
func (l *live) close() {
	l.once.Do(func() {
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		l.cancel() // a Sink call waiting for the client returns
		if w := l.w.Load(); w != nil {
			w.Close()
		}
		close(l.done)
		l.wg.Wait()
	})
}

// state is the watcher's State now (nil before start).
func (l *live) state() *watch.State {
	if w := l.w.Load(); w != nil {
		return w.State()
	}
	return nil
}

// diskChanged hands the watcher the file events the server gets (its own
// watcher's or the client's): worktree copies and main journals.
func (l *live) diskChanged(paths []string) {
	if w := l.w.Load(); w != nil {
		w.DiskChanged(paths)
	}
}

// followStarted follows a worker this server just started with runStory.
func (l *live) followStarted(st *readmodel.Started) {
	if w := l.w.Load(); w != nil {
		w.FollowStory(st)
	}
}

// followStartedEpic follows a runner this server just started with runEpic.
func (l *live) followStartedEpic(st *readmodel.Started) {
	if w := l.w.Load(); w != nil {
		w.FollowEpic(st)
	}
}

// liveStoryInfo is a story's live state for lenses and commands.
type liveStoryInfo struct {
	Running bool              // a worker of the story lives (watch.State.Alive)
	Run     *watch.Run        // the running worker, else the last run seen (nil when none)
	View    map[string]string // task statuses of the live view; nil without one
	HasWT   bool              // a worktree copy exists
	// Checks is each task's last check result in that run.
	Checks map[string]runs.CheckResult
	// Protected are the protected files the story changed that keep its
	// PR a draft, as that run last compared them.
	Protected []runs.ProtectedFile
}

func (l *live) storyInfo(story string) liveStoryInfo {
	st := l.state()
	info := liveStoryInfo{Running: st.Alive(story)}
	ss := st.Story(story)
	if ss != nil && ss.Run != nil {
		info.Run = ss.Run
		if !ss.Run.DryRun { // a dry run's checks judged the simulated agent's work
			info.Checks, info.Protected = ss.Run.Checks, ss.Run.Protected
		}
	}
	if ss != nil {
		info.HasWT = ss.Worktree != nil
		if info.Running || info.HasWT {
			info.View = ss.View
		}
	}
	return info
}

// epicStatus is the epic's state for lenses and showPlan (derived when
// something moved since: it may run git). nil when the workspace has no
// such epic.
func (l *live) epicStatus(ctx context.Context, snap *Snapshot, id string) *readmodel.EpicStatus {
	if w := l.w.Load(); w != nil {
		return w.EpicStatus(ctx, snap.WS, id)
	}
	if snap.WS.Epic(id) == nil {
		return nil
	}
	st, err := readmodel.EpicState(ctx, snap.WS, readmodel.ViewQuery(snap.Root, id, l.env, l.s.parser))
	if err != nil {
		return nil
	}
	return st
}

// epicStory is a story's state as the read model says it: in its epic as
// last derived (readmodel.EpicState) — not derived here, an epic's state is
// the watcher's to keep — and for a story outside any epic its own
// evidence (readmodel.Evidence.Story, what status and the dashboard render),
// never the watcher's last-seen run.
func (l *live) epicStory(ctx context.Context, snap *Snapshot, epic, story string) (readmodel.EpicStory, bool) {
	if epic == "" {
		ev := readmodel.NewEvidence(ctx, snap.Root, runs.SessionDir(l.env), l.s.parser)
		st := ev.Story(ctx, snap.WS, story)
		return readmodel.EpicStory{ID: st.ID, State: st.State, Done: st.Done, Total: st.Total, Branch: st.Branch,
			Base: st.Base, PR: st.PR, NoPR: st.NoPR, Review: st.Review, Cost: st.Cost, Session: st.Session, Why: st.Why, Dry: st.Dry, Actions: st.Actions,
			BaseMoved: st.BaseMoved, Land: st.Land, PRState: st.PRState, Conflict: st.Conflict}, true
	}
	if e := l.state().Epic(epic); e != nil && e.Status != nil {
		for _, es := range e.Status.Stories {
			if es.ID == story {
				return es, true
			}
		}
	}
	return readmodel.EpicStory{}, false
}

// epicRunning tells whether the epic's runner lives, as far as the watcher
// sees: a followed run, else its lock.
func (l *live) epicRunning(id string) bool { return l.state().EpicRunning(id) }
