package watch

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/fswatch"
	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// Timing of the watcher.
const (
	settleDelay = 5 * time.Millisecond   // quiet time before a batch of file events is read
	maxDelay    = 30 * time.Millisecond  // a busy run never holds a batch back longer than this
	tickBusy    = 250 * time.Millisecond // liveness, locks and events polling while a worker or runner lives
	tickIdle    = time.Second            // the same, and session dir polling, otherwise
	startGrace  = 30 * time.Second       // a run with no worker.start after this is taken as dead
)

// Options configure a Watcher.
type Options struct {
	Root   string              // the workspace root (holds .saga/)
	Env    func(string) string // the run protocol's variables (session dir, Claude's config dir); nil is os.Getenv
	Parser *store.Parser
	Log    *slog.Logger // nil discards
	// Workspace returns the workspace as the face sees it now (an editor's:
	// disk with its unsaved buffers laid over). The watcher reads the main
	// copies' statuses, which files a story has and the epics from it.
	Workspace func() *store.Workspace
	Sink      Sink
}

// Watcher follows the workers and epic runners of one workspace.
type Watcher struct {
	root, realRoot string
	sessionDir     string
	recordDir      string // the run records' (runs.RecordDir): a record written alone (a review read, a restack) changes what the faces show
	configDir      string
	env            func(string) string
	parser         *store.Parser
	folds          runs.RunCache           // the stories' events files, folded again only when changed (epic states)
	branchFolders  readmodel.BranchFolders // story folders on branches, read again only where a tip moved (epic states)
	log            *slog.Logger
	workspace      func() *store.Workspace
	sink           Sink

	ctx    context.Context
	cancel context.CancelFunc
	fsw    *fswatch.Watcher
	ops    chan func()
	done   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once

	// The face's file events (DiskChanged), for the loop's next batch.
	diskMu    sync.Mutex
	diskPaths []string
	diskBell  bell

	state atomic.Pointer[State]

	mu          sync.Mutex
	closed      bool
	scanned     bool
	runs        map[string]*run   // by session
	stories     map[string]*story // by story id
	skip        map[string]bool   // events files of other workspaces, or ended before we came
	workerLocks map[string]int    // held worker locks (replaced, never modified: the State shares it)
	epicLocks   map[string]int    // held runner locks (likewise)
	journals    map[string]Journal
	watched     map[string]bool
	lists       map[string]string // task list dir → session

	// The repository's lock folder (filesafe.LockDir, found once) and the
	// worker and runner locks there that record a holder: listed again when
	// a file event names one, else every lockRelist (locks.go).
	lockDir     string
	lockNames   []string
	locksListed time.Time
	locksDirty  bool

	epics    map[string]*epic // by epic id (epic.go)
	epicBell bell             // an epic's state may have moved
}

// Start begins watching the workers of opts.Root. It does not scan: Scan
// does, once the face's workspace is loaded.
func Start(opts Options) *Watcher {
	if opts.Env == nil {
		opts.Env = os.Getenv
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watcher{root: opts.Root, realRoot: opts.Root, env: opts.Env, parser: opts.Parser, log: opts.Log,
		workspace: opts.Workspace, sink: opts.Sink, ctx: ctx, cancel: cancel,
		ops: make(chan func(), 64), done: make(chan struct{}), diskBell: newBell(),
		runs: map[string]*run{}, stories: map[string]*story{}, skip: map[string]bool{},
		workerLocks: map[string]int{}, epicLocks: map[string]int{}, journals: map[string]Journal{},
		watched: map[string]bool{}, lists: map[string]string{},
		epics: map[string]*epic{}, epicBell: newBell()}
	if r, err := filepath.EvalSymlinks(opts.Root); err == nil {
		w.realRoot = r
	}
	w.sessionDir = runs.SessionDir(w.env)
	if d, err := runs.RecordDir(opts.Root); err == nil {
		w.recordDir = d
	}
	if d, err := filesafe.LockDir(opts.Root); err == nil {
		w.lockDir = d
	}
	if d, err := claudecode.ConfigDir(w.env); err == nil {
		w.configDir = d
	}
	if fsw, err := fswatch.New(fswatch.Options{}); err != nil {
		w.log.Warn("live: file watching unavailable; polling worker state instead", "err", err)
	} else {
		w.fsw = fsw
	}
	w.mu.Lock()
	w.watchLocked(filepath.Join(w.root, ".saga"))
	w.watchLocked(filepath.Join(w.root, filepath.FromSlash(store.WorktreesRel)))
	w.watchLocked(w.sessionDir)
	if w.recordDir != "" {
		w.watchLocked(w.recordDir)
	}
	if w.lockDir != "" {
		w.watchLocked(w.lockDir)
	}
	w.publishLocked()
	w.mu.Unlock()
	w.wg.Add(2)
	go w.loop()
	go w.epicLoop()
	return w
}

// State is what the watcher knows now; it never changes once returned.
func (w *Watcher) State() *State { return w.state.Load() }

// Close stops the goroutines and the file watcher, and waits for them.
// The State is then empty.
func (w *Watcher) Close() {
	w.once.Do(func() {
		w.mu.Lock()
		w.closed = true
		w.state.Store(&State{})
		w.mu.Unlock()
		w.cancel()
		close(w.done)
		if w.fsw != nil {
			w.fsw.Close()
		}
		w.wg.Wait()
	})
}

func (w *Watcher) isClosed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed
}

// do runs f on the loop and waits for it (false when closed).
func (w *Watcher) do(f func()) bool {
	if w.isClosed() {
		return false
	}
	finished := make(chan struct{})
	select {
	case w.ops <- func() { defer close(finished); f() }:
	case <-w.done:
		return false
	}
	select {
	case <-finished:
		return true
	case <-w.done:
		return false
	}
}

// DiskChanged takes the face's file events (its own watcher's, or its
// client's): worktree copies are read again as for the watcher's own
// events, and main-checkout journals, which only the face watches. It
// never blocks on the loop and never drops a path.
func (w *Watcher) DiskChanged(paths []string) {
	if len(paths) == 0 || w.isClosed() {
		return
	}
	w.diskMu.Lock()
	w.diskPaths = append(w.diskPaths, paths...)
	w.diskMu.Unlock()
	w.diskBell.ring()
}

func (w *Watcher) takeDiskPaths() []string {
	w.diskMu.Lock()
	defer w.diskMu.Unlock()
	p := w.diskPaths
	w.diskPaths = nil
	return p
}

// loop is the watcher's goroutine: file events batched, the face's events,
// operations (do), ticks.
func (w *Watcher) loop() {
	defer w.wg.Done()
	var events <-chan fswatch.Event
	var errs <-chan error
	if w.fsw != nil {
		events, errs = w.fsw.Events(), w.fsw.Errors()
	}
	b := newBatch()
	var first time.Time
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	tick := time.NewTimer(tickIdle)
	defer tick.Stop()
	defer settle.Stop()
	// arm schedules the batch's read: settleDelay after the last event, at
	// most maxDelay after its first.
	arm := func() {
		if b.empty() {
			return
		}
		now := time.Now()
		if first.IsZero() {
			first = now
		}
		wait := settleDelay
		if left := maxDelay - now.Sub(first); left < wait {
			wait = max(left, 0)
		}
		settle.Reset(wait)
	}
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.Has(fswatch.Overflow) { // the tick looks again
				w.log.Warn("live: file watcher: events lost (the system's queue overflowed)")
				continue
			}
			w.classify(ev, b)
			arm()
		case <-w.diskBell:
			for _, p := range w.takeDiskPaths() {
				w.classify(fswatch.Event{Path: p, Op: fswatch.Write}, b)
			}
			arm()
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			w.log.Warn("live: file watcher", "err", err)
		case f := <-w.ops:
			w.guard("op", f)
		case <-settle.C:
			read := b
			b, first = newBatch(), time.Time{}
			w.guard("batch", func() { w.process(read) })
		case <-tick.C:
			w.guard("tick", w.tick)
			tick.Reset(w.tickInterval())
		}
	}
}

// guard runs f, logging a panic instead of losing the goroutine: a bad
// events line or a strange file must never take the face down.
func (w *Watcher) guard(what string, f func()) {
	defer func() {
		if p := recover(); p != nil {
			w.log.Error("live: panic", "in", what, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	f()
}

// step runs f on the face's current workspace.
func (w *Watcher) step(f func(ws *store.Workspace, ef *effects)) {
	ws := w.workspace()
	w.stepOn(ws, func(ef *effects) { f(ws, ef) })
}

// stepOn runs f with mu held (released even if f panics), publishes the
// State it leaves, then sends what f collected: a reader that the Sink
// sends to the State finds the change there.
func (w *Watcher) stepOn(ws *store.Workspace, f func(ef *effects)) {
	ef := newEffects()
	func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		defer w.publishLocked()
		f(ef)
	}()
	ef.flush(w.sink)
}

func (w *Watcher) tickInterval() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.runs {
		if !r.Ended {
			return tickBusy
		}
	}
	for _, e := range w.epics {
		if e.alive {
			return tickBusy
		}
	}
	return tickIdle
}

// Scan is the start-up discovery: the worktree copies there are, the
// workers of the session dir (a terminal's `saga-lsp run` is followed like
// the face's own), the main journals, the locks held. It returns once the
// State is Ready: a face calls it before its first publication.
func (w *Watcher) Scan() {
	w.do(func() {
		w.step(func(ws *store.Workspace, ef *effects) {
			for _, id := range w.worktreeDirs() {
				w.loadWorktree(ws, id, true, ef)
			}
			w.rescanSession(ws, ef)
			w.readMainJournals(mainJournalStories(ws), true, ef)
			w.probeLocks(ws, ef)
			w.scanned = true
		})
	})
}

// process reads what a batch of file events names.
func (w *Watcher) process(b *batch) {
	w.step(func(ws *store.Workspace, ef *effects) { w.processLocked(ws, b, ef) })
}

// tick polls what file events may have missed: new events of running
// workers, their liveness, a session dir that appeared, the locks.
func (w *Watcher) tick() {
	w.step(w.tickLocked)
}

func (w *Watcher) tickLocked(ws *store.Workspace, ef *effects) {
	if !w.watched[w.sessionDir] && w.watchLocked(w.sessionDir) {
		w.rescanSession(ws, ef)
	}
	if w.recordDir != "" && !w.watched[w.recordDir] && w.watchLocked(w.recordDir) {
		ef.refresh = true // the first record came
	}
	if w.lockDir != "" && !w.watched[w.lockDir] && w.watchLocked(w.lockDir) {
		w.locksDirty = true // the first lock came
	}
	for _, r := range w.sortedRuns() {
		if r.Ended {
			continue
		}
		w.readEvents(ws, r, ef)
		if r.Ended {
			continue
		}
		if w.fsw == nil {
			w.readList(r, ef)
		}
		w.checkAlive(ws, r, ef)
	}
	w.tickEpics()
	if w.fsw == nil {
		w.rescanSession(ws, ef)
		for id := range w.stories {
			w.loadWorktree(ws, id, false, ef)
		}
	}
	w.probeLocks(ws, ef)
}

// bell wakes a loop: rings while one is pending fold into it.
type bell chan struct{}

func newBell() bell { return make(bell, 1) }

func (b bell) ring() {
	select {
	case b <- struct{}{}:
	default:
	}
}
