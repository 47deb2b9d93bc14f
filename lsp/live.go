package lsp

// The language server as the SAGA dashboard: it follows story workers
// (docs/protocol-extensions.md#live-worker-state) and epic runners (docs/protocol-extensions.md#epic-runs, live_epic*.go) from what they
// leave on disk and turns that into
// work-done progress, saga/workerProgress and saga/taskStatus
// notifications, code-lens refreshes, and the two LSP-only diagnostics
// (stale-task, story-blocked). What a run is comes from runs (the one
// fold of an events file); this layer only adapts it to LSP.
//
// Sources, all read, never written:
//   - the session dir (runs.SessionDir): each worker's events file,
//     followed line by line (live_events.go, live_discovery.go);
//   - each story's worktree copy (store.WorktreeDir),
//     where a running worker and its hooks write statuses and the journal
//     (live_worktree.go);
//   - the hydrated task list of a running worker (Claude Code's own store),
//     named by the worker's hydrate event;
//   - the worker's pid and the story's worker lock, for liveness: a worker
//     killed with SIGKILL writes nothing more.
//
// These are watched with the server's own fsnotify watcher whatever the
// client offers (live_watch.go): the session dir and the task lists lie
// outside the workspace, and a run changes them many times a second, faster
// than clients' debounced file events. One goroutine (run) owns the state;
// readers (code lens, the diagnostics publisher) take mu. Notifications are
// sent in order, outside mu (effects).

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// Timing of the live watcher.
const (
	liveSettle     = 5 * time.Millisecond   // quiet time before a batch of file events is read
	liveMaxDelay   = 30 * time.Millisecond  // a busy run never holds a batch back longer than this
	liveTickBusy   = 250 * time.Millisecond // liveness and events polling while a worker runs
	liveTickIdle   = time.Second            // session dir polling otherwise
	liveStartGrace = 30 * time.Second       // a run with no worker.start after this is taken as dead
	liveLockTTL    = 3 * time.Second        // how long a worker-lock lookup is trusted
)

type lockCheck struct {
	pid int
	at  time.Time
}

// live follows the workers of one workspace.
type live struct {
	s   *Server
	env func(string) string

	root, realRoot string
	sessionDir     string
	configDir      string

	ctx    context.Context
	cancel context.CancelFunc
	fsw    *fsnotify.Watcher
	ops    chan func()
	done   chan struct{}
	bell   bell // code lens refresh requests
	wg     sync.WaitGroup
	once   sync.Once

	mu       sync.Mutex
	started  bool
	scanned  bool
	closed   bool
	runs     map[string]*liveRun   // by session
	stories  map[string]*liveStory // by story id
	tokens   map[string]stoppable  // progress token → the run it stops
	skip     map[string]bool       // events files of other workspaces, or ended before we came
	locks    map[string]lockCheck  // story → worker lock holder
	journals map[string]journalState
	watched  map[string]bool
	lists    map[string]string // task list dir → session

	epics    map[string]*liveEpic // by epic id (live_epic.go)
	epicBell bell                 // an epic's state may have moved
}

func newLive(s *Server, env func(string) string) *live {
	if env == nil {
		env = os.Getenv
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &live{s: s, env: env, ctx: ctx, cancel: cancel, ops: make(chan func(), 64),
		done: make(chan struct{}), bell: newBell(),
		runs: map[string]*liveRun{}, stories: map[string]*liveStory{}, tokens: map[string]stoppable{},
		skip: map[string]bool{}, locks: map[string]lockCheck{}, journals: map[string]journalState{},
		watched: map[string]bool{}, lists: map[string]string{},
		epics: map[string]*liveEpic{}, epicBell: newBell()}
}

// start begins watching root's workers. It does not scan: scan does, once
// the workspace is loaded.
func (l *live) start(root string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started || l.closed || root == "" {
		return
	}
	l.started = true
	l.root = root
	l.realRoot = root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		l.realRoot = r
	}
	l.sessionDir = runs.SessionDir(l.env)
	if d, err := claudecode.ConfigDir(l.env); err == nil {
		l.configDir = d
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		l.s.log.Warn("live: file watching unavailable; polling worker state instead", "err", err)
	} else {
		l.fsw = fsw
	}
	l.watchLocked(filepath.Join(root, ".saga"))
	l.watchLocked(filepath.Join(root, filepath.FromSlash(store.WorktreesRel)))
	l.watchLocked(l.sessionDir)
	l.wg.Add(3)
	go l.run()
	go l.refresher()
	go l.epicLoop()
}

// close stops the goroutines and the watcher, and waits for them.
func (l *live) close() {
	l.once.Do(func() {
		l.mu.Lock()
		l.closed = true
		started := l.started
		l.mu.Unlock()
		l.cancel()
		close(l.done)
		if l.fsw != nil {
			l.fsw.Close()
		}
		if started {
			l.wg.Wait()
		}
	})
}

// do runs f on the live goroutine and waits for it (false when closed).
func (l *live) do(f func()) bool {
	l.mu.Lock()
	ok := l.started && !l.closed
	l.mu.Unlock()
	if !ok {
		return false
	}
	finished := make(chan struct{})
	select {
	case l.ops <- func() { defer close(finished); f() }:
	case <-l.done:
		return false
	}
	select {
	case <-finished:
		return true
	case <-l.done:
		return false
	}
}

func (l *live) run() {
	defer l.wg.Done()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if l.fsw != nil {
		events, errs = l.fsw.Events, l.fsw.Errors
	}
	batch := newBatch()
	var first time.Time
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	tick := time.NewTimer(liveTickIdle)
	defer tick.Stop()
	defer settle.Stop()
	for {
		select {
		case <-l.done:
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			l.classify(ev, batch)
			if batch.empty() {
				continue
			}
			now := time.Now()
			if first.IsZero() {
				first = now
			}
			wait := liveSettle
			if left := liveMaxDelay - now.Sub(first); left < wait {
				wait = max(left, 0)
			}
			settle.Reset(wait)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			l.s.log.Warn("live: file watcher", "err", err)
		case f := <-l.ops:
			l.guard("op", f)
		case <-settle.C:
			b := batch
			batch, first = newBatch(), time.Time{}
			l.guard("batch", func() { l.process(b) })
		case <-tick.C:
			l.guard("tick", l.tick)
			tick.Reset(l.tickInterval())
		}
	}
}

// guard runs f, logging a panic instead of losing the live goroutine: a bad
// events line or a strange file must never take the server down.
func (l *live) guard(what string, f func()) {
	defer func() {
		if p := recover(); p != nil {
			l.s.log.Error("live: panic", "in", what, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	f()
}

// step runs f with mu held (released even if f panics), then sends what f
// collected.
func (l *live) step(f func(snap *Snapshot, ef *effects)) {
	snap := l.s.current()
	ef := l.newEffects()
	func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		f(snap, ef)
	}()
	ef.flush()
}

func (l *live) tickInterval() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.runs {
		if !r.Ended {
			return liveTickBusy
		}
	}
	for _, e := range l.epics {
		if e.alive {
			return liveTickBusy
		}
	}
	return liveTickIdle
}

// effects are what a step of the loop sends, in order, once mu is released.
type effects struct {
	l       *live
	actions []func()
	rels    map[string]bool
	refresh bool
}

func (l *live) newEffects() *effects { return &effects{l: l, rels: map[string]bool{}} }

func (ef *effects) add(f func()) { ef.actions = append(ef.actions, f) }

// flush sends what was collected; mu must not be held.
func (ef *effects) flush() {
	for _, f := range ef.actions {
		f()
	}
	if len(ef.rels) > 0 {
		ef.l.s.pub.queue(slices.Sorted(maps.Keys(ef.rels)))
	}
	if ef.refresh {
		ef.l.bell.ring()
	}
}

// process reads what a batch of file events names.
func (l *live) process(b *liveBatch) {
	l.step(func(snap *Snapshot, ef *effects) { l.processLocked(snap, b, ef) })
}

func (l *live) processLocked(snap *Snapshot, b *liveBatch, ef *effects) {
	if b.rescanWT {
		l.watchLocked(filepath.Join(l.root, filepath.FromSlash(store.WorktreesRel)))
		for _, id := range l.worktreeDirs() {
			b.worktrees[id] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(b.session)) {
		l.sessionFile(snap, name, ef)
	}
	for _, session := range slices.Sorted(maps.Keys(b.lists)) {
		if r := l.runs[session]; r != nil {
			l.readList(r, ef)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b.worktrees)) {
		l.loadWorktree(snap, id, false, ef)
	}
}

// tick polls what file events may have missed: new events of running
// workers, their liveness, a session dir that appeared, workers seen only
// by their lock.
func (l *live) tick() {
	l.step(l.tickLocked)
}

func (l *live) tickLocked(snap *Snapshot, ef *effects) {
	if !l.watched[l.sessionDir] && l.watchLocked(l.sessionDir) {
		l.rescanSession(snap, ef)
	}
	for _, r := range l.sortedRuns() {
		if r.Ended {
			continue
		}
		l.readEvents(r, ef)
		if r.Ended {
			continue
		}
		if l.fsw == nil {
			l.readList(r, ef)
		}
		l.checkAlive(r, ef)
	}
	l.tickEpics()
	if l.fsw == nil {
		l.rescanSession(snap, ef)
		for id := range l.stories {
			l.loadWorktree(snap, id, false, ef)
		}
	}
	now := time.Now()
	for story, c := range l.locks {
		if c.pid > 0 && now.Sub(c.at) > liveLockTTL {
			delete(l.locks, story)
			if !l.lockAliveLocked(story) {
				l.storyRels(snap, story, ef)
				ef.refresh = true
			}
		}
	}
}
