package lsp

// live.go makes the language server the SAGA dashboard: it follows story
// workers (design.md §5, §6) from what they leave on disk, and turns that
// into work-done progress, saga/workerProgress and saga/taskStatus
// notifications, code-lens refreshes, and the two LSP-only diagnostics
// (stale-task, story-blocked).
//
// Sources, all read, never written:
//   - the session dir ($SAGA_SESSION_DIR): each worker's events file
//     saga-story-<story>-<ms>.log.events.jsonl, followed line by line;
//   - each story's worktree copy, .saga/worktrees/<story>/.saga/stories/<story>/,
//     where a running worker and its hooks write statuses and the journal;
//   - the hydrated task list of a running worker (Claude Code's own store,
//     <CLAUDE_CONFIG_DIR>/tasks/saga__<story>__<ms>/), named by the worker's
//     hydrate event;
//   - the worker's pid (from worker.start) and the story's worker lock, for
//     liveness: a worker killed with SIGKILL writes nothing more.
//
// These are watched with the server's own fsnotify watcher whatever the
// client offers: the session dir and the task lists lie outside the
// workspace, and a run changes them many times a second, faster than
// clients' debounced file events. One goroutine (run) owns the state;
// readers (code lens, the diagnostics publisher) take mu. Notifications
// are sent in order, outside mu.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.lsp.dev/protocol"
	"golang.org/x/sys/unix"

	"github.com/saga-ai/saga-lsp/commands"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/claudetasks"
)

// Worker states of saga/workerProgress: starting and running while the
// worker lives, then the worker.end status (completed, failed, timeout,
// blocked, stopped). A worker that dies without a worker.end (killed) is
// failed.
const (
	stateStarting = "starting"
	stateRunning  = "running"
	stateFailed   = "failed"
)

// Timing of the live watcher.
const (
	liveSettle     = 5 * time.Millisecond   // quiet time before a batch of file events is read
	liveMaxDelay   = 30 * time.Millisecond  // a busy run never holds a batch back longer than this
	liveTickBusy   = 250 * time.Millisecond // liveness and events polling while a worker runs
	liveTickIdle   = time.Second            // session dir polling otherwise
	liveStartGrace = 30 * time.Second       // a run with no worker.start after this is taken as dead
	liveLockTTL    = 3 * time.Second        // how long a worker-lock lookup is trusted
	maxEventsLine  = 1 << 20                // a longer events line is dropped
	maxEventsRead  = 8 << 20                // bytes of an events file read per pass
)

// workerProgressParams is the saga/workerProgress notification.
type workerProgressParams struct {
	Story      string `json:"story"`
	Session    string `json:"session"`
	State      string `json:"state"`
	Step       string `json:"step"`
	Cycle      int    `json:"cycle"`
	Done       int    `json:"done"`
	Total      int    `json:"total"`
	Message    string `json:"message"`
	OutputFile string `json:"outputFile"`
}

// taskStatusParams is the saga/taskStatus notification.
type taskStatusParams struct {
	Story   string `json:"story"`
	Task    string `json:"task"`
	Subject string `json:"subject"`
	From    string `json:"from"`
	To      string `json:"to"`
	Source  string `json:"source"` // hook | worktree | claude
}

// liveEvent is the part of a worker event (worker/events.go) the server
// reads.
type liveEvent struct {
	Story      string `json:"story"`
	Session    string `json:"session"`
	Event      string `json:"event"`
	Step       string `json:"step"`
	Message    string `json:"message"`
	Level      string `json:"level"`
	Cycle      int    `json:"cycle"`
	Task       string `json:"task"`
	From       string `json:"from"`
	To         string `json:"to"`
	Source     string `json:"source"`
	Status     string `json:"status"`
	ExitCode   *int   `json:"exitCode"`
	Done       *int   `json:"done"`
	Total      *int   `json:"total"`
	Worktree   string `json:"worktree"`
	TaskList   string `json:"taskList"`
	OutputFile string `json:"outputFile"`
	PID        int    `json:"pid"`
}

// liveRun is one worker run, known from its events file.
type liveRun struct {
	story, session         string
	eventsFile, outputFile string
	ms                     int64 // from the session name: runs of a story are ordered by it
	pid                    int
	ours                   bool // started by this server's runStory: it belongs to this workspace
	verified               bool // checked to belong to this workspace
	offset                 int64
	partial                []byte
	state, step, message   string
	cycle                  int
	evDone, evTotal        int
	listID, listDir        string
	worktree               string
	ended                  bool
	exitCode               *int
	followedAt             time.Time
	events                 map[string]string // task → status, from task.status events
	list                   map[string]string // task → status, from the hydrated task list
	sent                   *workerProgressParams
	prog                   *progress
	token                  string
	cancelling             bool
}

// liveStory is what the server knows of one story beyond its main copy.
type liveStory struct {
	id      string
	base    map[string]string // statuses of the main copy, used while there is no worktree copy
	subject map[string]string
	wt      map[string]string      // statuses of the worktree copy; nil when there is none
	wtFiles map[string]*store.File // worktree copy files by root-relative rel
	wtBlock journalState           // the worktree copy's journal
	view    map[string]string      // the statuses shown: worktree (or main) merged with a running worker's sources
}

// journalState is what a journal.md says: blocked and the blocker's text.
type journalState struct {
	blocked bool
	text    string
	size    int64
	mtime   time.Time
}

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
	bell   chan struct{} // code lens refresh requests
	wg     sync.WaitGroup
	once   sync.Once

	mu       sync.Mutex
	started  bool
	scanned  bool
	closed   bool
	runs     map[string]*liveRun   // by session
	stories  map[string]*liveStory // by story id
	tokens   map[string]*liveRun   // progress token → run
	skip     map[string]bool       // events files of other workspaces, or ended before we came
	locks    map[string]lockCheck  // story → worker lock holder
	journals map[string]journalState
	watched  map[string]bool
	lists    map[string]string // task list dir → session
}

func newLive(s *Server, env func(string) string) *live {
	if env == nil {
		env = os.Getenv
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &live{s: s, env: env, ctx: ctx, cancel: cancel, ops: make(chan func(), 64),
		done: make(chan struct{}), bell: make(chan struct{}, 1),
		runs: map[string]*liveRun{}, stories: map[string]*liveStory{}, tokens: map[string]*liveRun{},
		skip: map[string]bool{}, locks: map[string]lockCheck{}, journals: map[string]journalState{},
		watched: map[string]bool{}, lists: map[string]string{}}
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
	l.sessionDir = commands.SessionDir(l.env)
	if d, err := claudetasks.ConfigDir(); err == nil {
		l.configDir = d
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		l.s.log.Warn("live: file watching unavailable; polling worker state instead", "err", err)
	} else {
		l.fsw = fsw
	}
	l.watchLocked(filepath.Join(root, ".saga"))
	l.watchLocked(filepath.Join(root, ".saga", "worktrees"))
	l.watchLocked(l.sessionDir)
	l.wg.Add(2)
	go l.run()
	go l.refresher()
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

// ---------------------------------------------------------------------------
// the loop

// batch is what a burst of file events asks to re-read.
type liveBatch struct {
	session   map[string]bool // events files
	lists     map[string]bool // sessions whose task list changed
	worktrees map[string]bool // stories whose worktree copy changed
	rescanWT  bool            // .saga/worktrees appeared
}

func newBatch() *liveBatch {
	return &liveBatch{session: map[string]bool{}, lists: map[string]bool{}, worktrees: map[string]bool{}}
}

func (b *liveBatch) empty() bool {
	return len(b.session) == 0 && len(b.lists) == 0 && len(b.worktrees) == 0 && !b.rescanWT
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
		if !r.ended {
			return liveTickBusy
		}
	}
	return liveTickIdle
}

// classify files one fsnotify event into the batch.
func (l *live) classify(ev fsnotify.Event, b *liveBatch) {
	name := filepath.Clean(ev.Name)
	dir := filepath.Dir(name)
	l.mu.Lock()
	defer l.mu.Unlock()
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		// A watched folder that goes away takes its watch with it; it is
		// watched again when it comes back (the tick polls the session dir).
		delete(l.watched, name)
	}
	switch {
	case dir == l.sessionDir || name == l.sessionDir:
		if strings.HasSuffix(name, commands.EventsSuffix) {
			b.session[name] = true
		}
		return
	case l.lists[dir] != "":
		b.lists[l.lists[dir]] = true
		return
	case l.lists[name] != "":
		b.lists[l.lists[name]] = true
		return
	}
	rel, err := filepath.Rel(l.root, name)
	if err != nil {
		return
	}
	rel = filepath.ToSlash(rel)
	switch {
	case rel == ".saga/worktrees":
		b.rescanWT = true
	case strings.HasPrefix(rel, ".saga/worktrees/"):
		story, rest, _ := strings.Cut(strings.TrimPrefix(rel, ".saga/worktrees/"), "/")
		if store.ValidCanonical(story) && (rest == "" || rest == ".saga" || strings.HasPrefix(rest, ".saga/")) {
			b.worktrees[story] = true
		}
	}
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
		ef.l.ringRefresh()
	}
}

// process reads what a batch of file events names.
func (l *live) process(b *liveBatch) {
	l.step(func(snap *Snapshot, ef *effects) { l.processLocked(snap, b, ef) })
}

func (l *live) processLocked(snap *Snapshot, b *liveBatch, ef *effects) {
	if b.rescanWT {
		l.watchLocked(filepath.Join(l.root, ".saga", "worktrees"))
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
		if r.ended {
			continue
		}
		l.readEvents(r, ef)
		if r.ended {
			continue
		}
		if l.fsw == nil {
			l.readList(r, ef)
		}
		l.checkAlive(r, ef)
	}
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

// ---------------------------------------------------------------------------
// discovery

// scan is the start-up discovery: the worktree copies there are, and the
// workers of the session dir that are still alive (a terminal's `saga-lsp
// run` is followed like the editor's own). It runs once the workspace is
// loaded, before its diagnostics are published.
func (l *live) scan() {
	l.do(func() {
		l.step(func(snap *Snapshot, ef *effects) {
			for _, id := range l.worktreeDirs() {
				l.loadWorktree(snap, id, true, ef)
			}
			l.rescanSession(snap, ef)
			l.scanned = true
		})
	})
}

// worktreeDirs lists the story worktrees under .saga/worktrees.
func (l *live) worktreeDirs() []string {
	des, err := os.ReadDir(filepath.Join(l.root, ".saga", "worktrees"))
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		if store.ValidCanonical(de.Name()) {
			if fi, err := os.Stat(filepath.Join(l.root, ".saga", "worktrees", de.Name())); err == nil && fi.IsDir() {
				out = append(out, de.Name())
			}
		}
	}
	return out
}

// rescanSession looks at every events file of the session dir not yet
// known: the newest few per story are read; live workers of this workspace
// are followed, and the newest finished run is remembered for the lenses.
func (l *live) rescanSession(snap *Snapshot, ef *effects) {
	des, err := os.ReadDir(l.sessionDir)
	if err != nil {
		return
	}
	type cand struct {
		path, session string
		ms            int64
	}
	by := map[string][]cand{}
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".log"+commands.EventsSuffix)
		if !ok || de.IsDir() {
			continue
		}
		story, ms, ok := commands.ParseSessionName(name)
		if !ok {
			continue
		}
		path := filepath.Join(l.sessionDir, de.Name())
		if l.skip[path] || l.runs[name] != nil {
			continue
		}
		by[story] = append(by[story], cand{path, name, ms})
	}
	for _, story := range slices.Sorted(maps.Keys(by)) {
		cs := by[story]
		slices.SortFunc(cs, func(a, b cand) int { return cmp.Compare(b.ms, a.ms) }) // newest first
		for i, c := range cs {
			if i >= 3 {
				l.skip[c.path] = true
				continue
			}
			l.discover(snap, c.path, c.session, story, c.ms, ef)
		}
	}
}

// sessionFile handles a file event of the session dir.
func (l *live) sessionFile(snap *Snapshot, path string, ef *effects) {
	name := strings.TrimSuffix(filepath.Base(path), ".log"+commands.EventsSuffix)
	if r := l.runs[name]; r != nil {
		if !r.ended {
			l.readEvents(r, ef)
		}
		return
	}
	if l.skip[path] {
		return
	}
	story, ms, ok := commands.ParseSessionName(name)
	if !ok || !strings.HasSuffix(path, ".log"+commands.EventsSuffix) {
		return
	}
	// A new events file: a worker starting now. It is read like a followed
	// run, line by line with notifications, and verified to belong here
	// when its worker.start names the pid (readEvents).
	r := newRun(path, name, story, ms)
	l.runs[name] = r
	l.readEvents(r, ef)
}

// newRun is a run known by its events file, not yet read.
func newRun(path, session, story string, ms int64) *liveRun {
	return &liveRun{story: story, session: session, eventsFile: path, ms: ms,
		outputFile: strings.TrimSuffix(path, commands.EventsSuffix), state: stateStarting,
		followedAt: time.Now(), evDone: -1, evTotal: -1, events: map[string]string{}}
}

// discover reads an events file found by a scan (at start-up, or when the
// session dir appears): its history is replayed silently. A run whose
// worker is alive and belongs to this workspace is then followed (its
// current state announced once); one that ended is kept as its story's
// last run; others are skipped for good.
func (l *live) discover(snap *Snapshot, path, session, story string, ms int64, ef *effects) {
	r := newRun(path, session, story, ms)
	l.replay(r)
	switch {
	case r.pid == 0 && !r.ended:
		// Nothing readable yet (the worker is writing its first line), or a
		// worker that never started: give it the start grace.
		if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > liveStartGrace {
			l.skip[path] = true
			return
		}
	case !l.belongs(r):
		l.skip[path] = true
		return
	case r.ended:
		if last := l.lastRun(story); last != nil && last.ms > r.ms {
			l.skip[path] = true
			return
		}
	case !processAlive(r.pid):
		// Died without a worker.end: remembered as its story's last run.
		r.ended, r.state = true, stateFailed
		r.message = fmt.Sprintf("the worker (pid %d) ended without reporting a result (killed?)", r.pid)
		if last := l.lastRun(story); last != nil && last.ms > r.ms {
			l.skip[path] = true
			return
		}
	}
	l.runs[session] = r
	if r.pid == 0 && !r.ended {
		return // verified when its worker.start arrives (readEvents)
	}
	r.verified = true
	st := l.ensureStory(snap, story)
	if r.ended {
		return
	}
	// A live worker: follow it from here on, as if it had just started.
	l.watchList(r, ef)
	l.restatus(st, "claude", ef)
	l.progressUpdate(r, ef)
	l.storyRels(snap, story, ef)
	ef.refresh = true
}

// replay reads an events file from its start without notifying anyone.
func (l *live) replay(r *liveRun) {
	for {
		at := r.offset
		l.readLines(r, func(e liveEvent) { l.apply(r, e) })
		if r.offset == at {
			return
		}
	}
}

// followStarted records a run this server just started with runStory.
func (l *live) followStarted(st *commands.Started) {
	l.do(func() { l.step(func(snap *Snapshot, ef *effects) { l.followStartedLocked(snap, st, ef) }) })
}

func (l *live) followStartedLocked(snap *Snapshot, st *commands.Started, ef *effects) {
	l.watchLocked(l.sessionDir)
	r := l.runs[st.Session]
	if r == nil {
		_, ms, _ := commands.ParseSessionName(st.Session)
		r = newRun(st.EventsFile, st.Session, st.Story, ms)
		r.outputFile = st.OutputFile
		l.runs[st.Session] = r
		delete(l.skip, st.EventsFile)
	}
	r.ours, r.verified = true, true
	if r.pid == 0 {
		r.pid = st.PID
	}
	stl := l.ensureStory(snap, st.Story)
	l.readEvents(r, ef)
	l.restatus(stl, "claude", ef)
	l.progressUpdate(r, ef)
	l.storyRels(snap, st.Story, ef)
	ef.refresh = true
}

// belongs tells whether a run is a worker of this workspace: started here,
// or its worktree (from its events) is this workspace's, or its process
// works inside this workspace.
func (l *live) belongs(r *liveRun) bool {
	if r.ours {
		return true
	}
	want := filepath.Join(l.realRoot, ".saga", "worktrees", r.story)
	if r.worktree != "" {
		return sameFile(r.worktree, want)
	}
	if r.ended || r.pid <= 0 {
		return false
	}
	if !looksLikeWorker(r.pid, r.story) {
		return false
	}
	cwd, err := os.Readlink("/proc/" + strconv.Itoa(r.pid) + "/cwd")
	if err != nil {
		// No /proc: trust the name when the story is ours.
		_, err := os.Stat(filepath.Join(l.root, filepath.FromSlash(store.StoryFileRel(r.story))))
		return err == nil
	}
	return within(l.realRoot, cwd)
}

func sameFile(a, b string) bool {
	if ra, err := filepath.EvalSymlinks(a); err == nil {
		a = ra
	}
	if rb, err := filepath.EvalSymlinks(b); err == nil {
		b = rb
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

func within(root, path string) bool {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ensureStory returns the story's live record, creating it with the main
// copy's statuses as its base.
func (l *live) ensureStory(snap *Snapshot, id string) *liveStory {
	st := l.stories[id]
	if st == nil {
		st = &liveStory{id: id, subject: map[string]string{}}
		l.stories[id] = st
	}
	if st.base == nil {
		st.base = map[string]string{}
		if s := snap.WS.Story(id); s != nil {
			for _, t := range s.Tasks {
				st.base[t.ID] = symbolStatus(t.Status)
				st.subject[t.ID] = t.Subject
			}
		}
	}
	if st.view == nil {
		st.view = l.computeView(st)
	}
	return st
}

// ---------------------------------------------------------------------------
// events files

// readEvents reads the lines appended to a run's events file since the
// last pass and applies them, notifying as it goes.
func (l *live) readEvents(r *liveRun, ef *effects) {
	st := l.stories[r.story]
	dropped := false
	l.readLines(r, func(e liveEvent) {
		if dropped {
			return
		}
		was := r.ended
		l.apply(r, e)
		if !r.verified {
			if r.pid == 0 && !r.ended {
				return
			}
			if !l.belongs(r) {
				// Another workspace's worker of a story with the same name.
				dropped = true
				delete(l.runs, r.session)
				l.skip[r.eventsFile] = true
				return
			}
			r.verified = true
			snap := l.s.current()
			st = l.ensureStory(snap, r.story)
			l.restatus(st, "claude", ef)
			l.storyRels(snap, r.story, ef)
		}
		if st != nil && e.Event == "task.status" && e.Task != "" {
			l.restatus(st, cmp.Or(e.Source, "claude"), ef)
		}
		if e.Event == "step" && e.Step == "hydrate" {
			l.watchList(r, ef)
		}
		if r.ended && !was {
			l.finish(r, ef)
			return
		}
		l.progressUpdate(r, ef)
	})
}

// readLines reads complete lines from r.offset on and hands each decoded
// event to f. Lines that do not decode (a partial write, garbage) are
// logged and skipped; a truncated file is read again from its start.
func (l *live) readLines(r *liveRun, f func(liveEvent)) {
	file, err := os.Open(r.eventsFile)
	if err != nil {
		return
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	if fi.Size() < r.offset {
		l.s.log.Warn("live: events file shrank; reading it again", "file", r.eventsFile)
		r.offset, r.partial = 0, nil
	}
	if fi.Size() == r.offset {
		return
	}
	if _, err := file.Seek(r.offset, io.SeekStart); err != nil {
		return
	}
	buf, err := io.ReadAll(io.LimitReader(file, maxEventsRead))
	if err != nil && len(buf) == 0 {
		return
	}
	r.offset += int64(len(buf))
	data := append(r.partial, buf...)
	r.partial = nil
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if len(data) > maxEventsLine {
				l.s.log.Warn("live: events line too long; dropped", "file", r.eventsFile, "bytes", len(data))
			} else {
				r.partial = slices.Clone(data)
			}
			break
		}
		line := bytes.TrimSpace(data[:i])
		data = data[i+1:]
		if len(line) == 0 {
			continue
		}
		if len(line) > maxEventsLine {
			l.s.log.Warn("live: events line too long; dropped", "file", r.eventsFile, "bytes", len(line))
			continue
		}
		var e liveEvent
		if err := json.Unmarshal(line, &e); err != nil || e.Event == "" {
			l.s.log.Warn("live: unreadable events line skipped", "file", r.eventsFile, "line", clipText(string(line), 200))
			continue
		}
		if e.Story != "" && e.Story != r.story {
			continue
		}
		f(e)
	}
}

// apply folds one event into the run's state.
func (l *live) apply(r *liveRun, e liveEvent) {
	if r.ended {
		return
	}
	if e.Cycle > r.cycle {
		r.cycle = e.Cycle
	}
	if e.Done != nil {
		r.evDone = *e.Done
	}
	if e.Total != nil {
		r.evTotal = *e.Total
	}
	switch e.Event {
	case "worker.start":
		if e.PID > 0 {
			r.pid = e.PID
		}
		if e.OutputFile != "" {
			r.outputFile = e.OutputFile
		}
		r.state, r.step, r.message = stateStarting, "start", "worker started"
	case "step":
		r.step = e.Step
		if e.Message != "" {
			r.message = e.Message
		}
		if e.Worktree != "" {
			r.worktree = e.Worktree
		}
		if e.TaskList != "" {
			r.listID = e.TaskList
			r.listDir = l.listDirOf(e)
		}
		if r.state == stateStarting && !(e.Step == "lock" && e.Level == "warn") && e.Step != "start" {
			r.state = stateRunning
		}
	case "run.start":
		r.state, r.step = stateRunning, "loop"
		r.message = fmt.Sprintf("run %d started", e.Cycle)
		if e.TaskList != "" && r.listID == "" {
			r.listID = e.TaskList
			r.listDir = l.listDirOf(e)
		}
	case "run.end":
		r.state, r.step = stateRunning, "loop"
		code := 0
		if e.ExitCode != nil {
			code = *e.ExitCode
		}
		r.message = fmt.Sprintf("run %d ended with exit code %d", e.Cycle, code)
	case "task.status":
		if e.Task != "" && e.To != "" {
			r.events[e.Task] = e.To
		}
		if r.state == stateStarting {
			r.state = stateRunning
		}
	case "worker.end":
		r.ended, r.exitCode = true, e.ExitCode
		r.state = cmp.Or(e.Status, stateFailed)
		r.step = "end"
		done, total := r.evDone, r.evTotal
		r.message = fmt.Sprintf("worker %s: %d/%d tasks, %d run(s)", r.state, max(done, 0), max(total, 0), r.cycle)
	}
}

// listDirOf finds the hydrated task list of an event naming one: in the
// server's Claude config dir, else the path the hydrate step reports.
func (l *live) listDirOf(e liveEvent) string {
	id := e.TaskList
	if l.configDir != "" {
		d := claudetasks.ListDir(l.configDir, id)
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	if _, p, ok := strings.Cut(e.Message, " written to "); ok && filepath.IsAbs(p) && filepath.Base(p) == claudetasks.Sanitize(id) {
		return filepath.Clean(p)
	}
	if l.configDir != "" {
		return claudetasks.ListDir(l.configDir, id)
	}
	return ""
}

// watchList watches and reads a running worker's hydrated task list.
func (l *live) watchList(r *liveRun, ef *effects) {
	if r.listDir == "" || r.ended {
		return
	}
	l.lists[r.listDir] = r.session
	l.watchLocked(r.listDir)
	l.readList(r, ef)
}

// readList reads the task list's statuses (Claude Code's TaskUpdate writes
// there first).
func (l *live) readList(r *liveRun, ef *effects) {
	if r.listDir == "" || r.ended {
		return
	}
	tasks, err := claudetasks.Read(r.listDir)
	if err != nil {
		return
	}
	list := make(map[string]string, len(tasks))
	for id, t := range tasks {
		list[id] = t.Status
	}
	if maps.Equal(list, r.list) {
		return
	}
	r.list = list
	if st := l.stories[r.story]; st != nil {
		l.restatus(st, "claude", ef)
		l.progressUpdate(r, ef)
	}
}

// checkAlive notices a worker that died without a worker.end (SIGKILL, a
// crash of the worker itself).
func (l *live) checkAlive(r *liveRun, ef *effects) {
	if r.ended {
		return
	}
	dead := false
	switch {
	case r.pid > 0:
		dead = !processAlive(r.pid) || !looksLikeWorker(r.pid, r.story) // a reused pid is no worker
	default:
		dead = time.Since(r.followedAt) > liveStartGrace
	}
	if !dead {
		return
	}
	l.readEvents(r, ef) // it may have written its end just before exiting
	if r.ended || l.runs[r.session] != r {
		return
	}
	if !r.verified {
		delete(l.runs, r.session)
		l.skip[r.eventsFile] = true
		return
	}
	r.ended, r.state, r.step = true, stateFailed, "end"
	if r.pid > 0 {
		r.message = fmt.Sprintf("the worker (pid %d) ended without reporting a result (killed?)", r.pid)
	} else {
		r.message = "the worker never reported: see its output file"
	}
	l.finish(r, ef)
}

// finish is a run's end: its sources stop counting, its progress ends, the
// story's diagnostics and lenses are refreshed.
func (l *live) finish(r *liveRun, ef *effects) {
	if r.listDir != "" {
		delete(l.lists, r.listDir)
		l.unwatchLocked(r.listDir)
	}
	snap := l.s.current()
	if st := l.stories[r.story]; st != nil {
		l.loadWorktree(snap, r.story, false, ef)
		l.restatus(st, "worktree", ef)
	}
	l.progressUpdate(r, ef)
	l.storyRels(snap, r.story, ef)
	ef.refresh = true
	// Older ended runs of the story are of no use any more.
	for session, o := range l.runs {
		if o.story == r.story && o.ended && o.ms < r.ms {
			delete(l.runs, session)
			l.skip[o.eventsFile] = true
		}
	}
}

// ---------------------------------------------------------------------------
// worktree copies

// loadWorktree reads a story's worktree copy and reports what changed.
func (l *live) loadWorktree(snap *Snapshot, id string, initial bool, ef *effects) {
	if !store.ValidCanonical(id) {
		return
	}
	wtRoot := filepath.Join(l.root, ".saga", "worktrees", id)
	storyDir := filepath.Join(wtRoot, ".saga", "stories", id)
	for _, d := range []string{wtRoot, filepath.Join(wtRoot, ".saga"), filepath.Join(wtRoot, ".saga", "stories"), storyDir} {
		if !l.watchLocked(d) {
			break
		}
	}
	st := l.stories[id]
	fi, err := os.Stat(storyDir)
	if err != nil || !fi.IsDir() {
		if st == nil || st.wt == nil {
			return
		}
		// The worktree went away (removed after a merge).
		for rel := range st.wtFiles {
			ef.rels[rel] = true
		}
		st.wt, st.wtFiles, st.wtBlock = nil, nil, journalState{}
		l.restatus(st, "worktree", ef)
		return
	}
	if st == nil {
		st = l.ensureStory(snap, id)
	}
	s, err := l.s.parser.LoadStory(wtRoot, id)
	if err != nil {
		return
	}
	prefix := ".saga/worktrees/" + id + "/"
	files := map[string]*store.File{}
	wt := map[string]string{}
	for _, f := range s.StoryFiles() {
		files[prefix+f.Rel] = f
	}
	for _, t := range s.Tasks {
		wt[t.ID] = symbolStatus(t.Status)
		if t.Subject != "" {
			st.subject[t.ID] = t.Subject
		}
	}
	block := readJournal(filepath.Join(storyDir, "journal.md"))
	for rel, f := range files {
		if old := st.wtFiles[rel]; old == nil || !bytes.Equal(old.Src, f.Src) {
			ef.rels[rel] = true
		}
	}
	for rel := range st.wtFiles {
		if files[rel] == nil {
			ef.rels[rel] = true
		}
	}
	if block.blocked != st.wtBlock.blocked || block.text != st.wtBlock.text {
		ef.rels[prefix+store.StoryFileRel(id)] = true
		ef.rels[store.StoryFileRel(id)] = true
		ef.refresh = true
	}
	st.wt, st.wtFiles, st.wtBlock = wt, files, block
	source := "worktree"
	if l.activeRun(id) != nil {
		source = "hook"
	}
	if initial {
		st.view = l.computeView(st)
		return
	}
	l.restatus(st, source, ef)
	if r := l.activeRun(id); r != nil {
		l.progressUpdate(r, ef)
	}
}

// readJournal reads a journal.md's blocker state ("" when none).
func readJournal(path string) journalState {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > store.MaxFileSize {
		return journalState{}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return journalState{}
	}
	blocked, text, _ := store.JournalBlocker(data)
	return journalState{blocked: blocked, text: text, size: fi.Size(), mtime: fi.ModTime()}
}

// mainJournal reads the main copy's journal, cached by size and time.
func (l *live) mainJournal(id string) journalState {
	path := filepath.Join(l.root, filepath.FromSlash(store.JournalFileRel(id)))
	fi, err := os.Stat(path)
	if err != nil {
		delete(l.journals, id)
		return journalState{}
	}
	if c, ok := l.journals[id]; ok && c.size == fi.Size() && c.mtime.Equal(fi.ModTime()) {
		return c
	}
	j := readJournal(path)
	l.journals[id] = j
	return j
}

// ---------------------------------------------------------------------------
// statuses

// statusRank orders statuses so that sources disagreeing during a run
// show the most advanced one until they agree (the worktree copy lags the
// task list by a hook's run).
func statusRank(s string) int {
	switch s {
	case store.StatusCompleted:
		return 2
	case store.StatusInProgress:
		return 1
	}
	return 0
}

// computeView merges a story's sources: the worktree copy (else the main
// copy), raised by a running worker's task list and events.
func (l *live) computeView(st *liveStory) map[string]string {
	src := st.wt
	if src == nil {
		src = st.base
	}
	view := maps.Clone(src)
	if view == nil {
		view = map[string]string{}
	}
	if r := l.activeRun(st.id); r != nil {
		for t, v := range view {
			for _, s := range []string{r.events[t], r.list[t]} {
				if statusRank(s) > statusRank(v) {
					v = s
				}
			}
			view[t] = v
		}
	}
	return view
}

// restatus recomputes the story's view and announces each task whose status
// moved, as coming from source.
func (l *live) restatus(st *liveStory, source string, ef *effects) {
	nv := l.computeView(st)
	old := st.view
	st.view = nv
	changed := false
	for _, t := range slices.Sorted(maps.Keys(nv)) {
		from, had := old[t]
		if !had || from == nv[t] {
			continue
		}
		changed = true
		p := &taskStatusParams{Story: st.id, Task: t, Subject: st.subject[t], From: from, To: nv[t], Source: source}
		ef.add(func() { l.notifySaga("saga/taskStatus", p) })
	}
	if changed {
		ef.refresh = true
	}
}

// activeRun is the story's newest run whose worker has not ended.
func (l *live) activeRun(story string) *liveRun {
	var best *liveRun
	for _, r := range l.runs {
		if r.story == story && r.verified && !r.ended && (best == nil || r.ms > best.ms) {
			best = r
		}
	}
	return best
}

// lastRun is the story's newest run (ended or not).
func (l *live) lastRun(story string) *liveRun {
	var best *liveRun
	for _, r := range l.runs {
		if r.story == story && r.verified && (best == nil || r.ms > best.ms) {
			best = r
		}
	}
	return best
}

func (l *live) sortedRuns() []*liveRun {
	rs := slices.Collect(maps.Values(l.runs))
	slices.SortFunc(rs, func(a, b *liveRun) int { return cmp.Or(cmp.Compare(a.ms, b.ms), strings.Compare(a.session, b.session)) })
	return rs
}

// counts is done/total as the story's view has them (else as the worker
// last reported).
func (l *live) counts(r *liveRun) (done, total int) {
	if st := l.stories[r.story]; st != nil && len(st.view) > 0 {
		for _, s := range st.view {
			if s == store.StatusCompleted {
				done++
			}
		}
		return done, len(st.view)
	}
	return max(r.evDone, 0), max(r.evTotal, 0)
}

// progressUpdate sends saga/workerProgress and the work-done progress when
// what a run shows has changed.
func (l *live) progressUpdate(r *liveRun, ef *effects) {
	if !r.verified {
		return
	}
	done, total := l.counts(r)
	p := &workerProgressParams{Story: r.story, Session: r.session, State: r.state, Step: r.step, Cycle: r.cycle,
		Done: done, Total: total, Message: r.message, OutputFile: r.outputFile}
	if r.sent != nil && *r.sent == *p {
		return
	}
	first := r.sent == nil
	r.sent = p
	ef.refresh = true
	ef.add(func() { l.notifySaga("saga/workerProgress", p) })
	text := progressText(p)
	pct := uint32(0)
	if total > 0 {
		pct = uint32(done * 100 / total)
	}
	switch {
	case first && !r.ended:
		ef.add(func() {
			pr := l.beginWorkerProgress(r.story, text, pct)
			l.mu.Lock()
			r.prog = pr
			if pr.s != nil {
				if tok, ok := pr.token.(protocol.String); ok {
					r.token = string(tok)
					l.tokens[r.token] = r
				}
			}
			l.mu.Unlock()
		})
	case r.ended:
		ef.add(func() {
			l.mu.Lock()
			pr := r.prog
			r.prog = nil
			delete(l.tokens, r.token)
			l.mu.Unlock()
			if pr != nil {
				pr.end(text)
			}
		})
	default:
		ef.add(func() {
			l.mu.Lock()
			pr := r.prog
			l.mu.Unlock()
			if pr != nil {
				pr.reportPercent(text, pct)
			}
		})
	}
}

// progressText is the work-done progress message: "3/7 tasks · cycle 2 · loop".
func progressText(p *workerProgressParams) string {
	parts := []string{fmt.Sprintf("%d/%d tasks", p.Done, p.Total)}
	if p.Cycle > 0 {
		parts = append(parts, "cycle "+strconv.Itoa(p.Cycle))
	}
	switch p.State {
	case stateStarting, stateRunning:
		if p.Step != "" {
			parts = append(parts, p.Step)
		}
	default:
		parts = append([]string{p.State}, parts...)
	}
	return strings.Join(parts, " · ")
}

func (l *live) notifySaga(method string, params any) {
	l.s.mu.Lock()
	ok := l.s.client.sagaNotifications
	l.s.mu.Unlock()
	if ok {
		l.s.notify(method, params)
	}
}

// beginWorkerProgress starts a cancellable work-done progress for a worker.
func (l *live) beginWorkerProgress(story, message string, pct uint32) *progress {
	s := l.s
	s.mu.Lock()
	ok := s.client.workDoneProgress
	s.mu.Unlock()
	if !ok {
		return &progress{}
	}
	token := protocol.String(fmt.Sprintf("saga-%d", s.nextToken.Add(1)))
	ctx, cancel := context.WithTimeout(l.ctx, 5*time.Second)
	defer cancel()
	if err := s.call(ctx, "window/workDoneProgress/create", &protocol.WorkDoneProgressCreateParams{Token: token}, nil); err != nil {
		s.log.Debug("workDoneProgress/create", "err", err)
		return &progress{}
	}
	yes := true
	begin := &protocol.WorkDoneProgressBegin{Kind: "begin", Title: "SAGA " + story, Cancellable: &yes, Message: &message, Percentage: &pct}
	s.notify("$/progress", &protocol.ProgressParams{Token: token, Value: mustRaw(begin)})
	return &progress{s: s, token: token}
}

func (p *progress) reportPercent(message string, pct uint32) {
	if p.s == nil {
		return
	}
	p.s.notify("$/progress", &protocol.ProgressParams{Token: p.token,
		Value: mustRaw(&protocol.WorkDoneProgressReport{Kind: "report", Message: &message, Percentage: &pct})})
}

// cancelProgress is window/workDoneProgress/cancel: cancelling a worker's
// progress stops the worker (commands.StopStory, as `saga-lsp stop`).
func workDoneProgressCancel(ctx context.Context, s *Server, params json.RawMessage) error {
	var p struct {
		Token json.RawMessage `json:"token"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return invalidParams(err)
	}
	var tok string
	if json.Unmarshal(p.Token, &tok) != nil {
		tok = string(p.Token) // an integer token
	}
	l := s.live
	l.mu.Lock()
	r := l.tokens[tok]
	if r == nil || r.ended || r.cancelling {
		l.mu.Unlock()
		return nil
	}
	r.cancelling = true
	story, root := r.story, l.root
	if !l.started || l.closed {
		l.mu.Unlock()
		return nil
	}
	l.wg.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.wg.Done()
		s.log.Info("live: progress cancelled; stopping the worker", "story", story)
		if _, err := commands.StopStory(l.ctx, commands.StopOptions{Root: root, Story: story, Env: l.env}); err != nil && l.ctx.Err() == nil {
			s.showMessage(protocol.MessageTypeWarning, "saga-lsp: stop "+story+": "+err.Error())
		}
		l.mu.Lock()
		r.cancelling = false
		l.mu.Unlock()
	}()
	return nil
}

// ringRefresh asks for a workspace/codeLens/refresh (coalesced).
func (l *live) ringRefresh() {
	select {
	case l.bell <- struct{}{}:
	default:
	}
}

// refresher sends workspace/codeLens/refresh when the bell rings, at most
// one at a time, to clients that support it.
func (l *live) refresher() {
	defer l.wg.Done()
	for {
		select {
		case <-l.done:
			return
		case <-l.bell:
		}
		l.s.mu.Lock()
		ok := l.s.client.codeLensRefresh
		l.s.mu.Unlock()
		if !ok {
			continue
		}
		ctx, cancel := context.WithTimeout(l.ctx, 5*time.Second)
		if err := l.s.call(ctx, "workspace/codeLens/refresh", nil, nil); err != nil {
			l.s.log.Debug("codeLens/refresh", "err", err)
		}
		cancel()
		select { // coalesce a burst
		case <-l.done:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ---------------------------------------------------------------------------
// watching

// watchLocked adds a watch on dir; it reports whether dir is watched.
func (l *live) watchLocked(dir string) bool {
	if l.watched[dir] {
		return true
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	if l.fsw != nil {
		if err := l.fsw.Add(dir); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				l.s.log.Warn("live: watch", "dir", dir, "err", err)
			}
			return false
		}
	}
	l.watched[dir] = true
	return true
}

func (l *live) unwatchLocked(dir string) {
	if !l.watched[dir] {
		return
	}
	delete(l.watched, dir)
	if l.fsw != nil {
		_ = l.fsw.Remove(dir)
	}
}

// clientChanged takes the client's file events for worktree copies (when it
// watches .saga/** for us): the same re-read as our own watcher's.
func (l *live) clientChanged(paths []string) {
	l.mu.Lock()
	ok := l.started && !l.closed
	l.mu.Unlock()
	if !ok {
		return
	}
	b := newBatch()
	for _, p := range paths {
		l.classify(fsnotify.Event{Name: p, Op: fsnotify.Write}, b)
	}
	if b.empty() {
		return
	}
	select {
	case l.ops <- func() { l.process(b) }:
	default: // busy: our own watcher sees the same change
	}
}

// ---------------------------------------------------------------------------
// what others read: liveness, lenses, diagnostics

// aliveLocked tells whether a worker of the story is alive: a followed run
// that has not ended, or a holder of the story's worker lock (a worker
// whose events this server cannot see).
func (l *live) aliveLocked(story string) bool {
	if l.activeRun(story) != nil {
		return true
	}
	return l.lockAliveLocked(story)
}

func (l *live) lockAliveLocked(story string) bool {
	if c, ok := l.locks[story]; ok && time.Since(c.at) < liveLockTTL {
		return c.pid > 0
	}
	pid, err := store.LockHolder(l.root, "worker-"+story)
	if err != nil {
		pid = 0
	}
	l.locks[story] = lockCheck{pid: pid, at: time.Now()}
	return pid > 0
}

// storyRels queues the story's files (main copy and worktree copy) for
// republication: their LSP-only diagnostics depend on the worker.
func (l *live) storyRels(snap *Snapshot, story string, ef *effects) {
	if s := snap.WS.Story(story); s != nil {
		for _, f := range s.StoryFiles() {
			ef.rels[f.Rel] = true
		}
	}
	ef.rels[store.StoryFileRel(story)] = true
	if st := l.stories[story]; st != nil {
		for rel := range st.wtFiles {
			ef.rels[rel] = true
		}
	}
}

// liveRunInfo is a run as the lenses and commands see it.
type liveRunInfo struct {
	Session, State, Step, OutputFile, Message string
	Cycle, Done, Total                        int
	Running                                   bool
}

// liveStoryInfo is a story's live state for lenses.
type liveStoryInfo struct {
	Running bool
	Run     *liveRunInfo      // the running worker, else the last run seen (nil when none)
	View    map[string]string // task statuses of the live view; nil without one
	HasWT   bool              // a worktree copy exists
}

func (l *live) storyInfo(story string) liveStoryInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	var info liveStoryInfo
	if l.closed || !l.started {
		return info
	}
	r := l.activeRun(story)
	if r == nil {
		r = l.lastRun(story)
	}
	if r != nil {
		done, total := l.counts(r)
		info.Run = &liveRunInfo{Session: r.session, State: r.state, Step: r.step, OutputFile: r.outputFile,
			Message: r.message, Cycle: r.cycle, Done: done, Total: total, Running: !r.ended}
		info.Running = !r.ended
	}
	if !info.Running && l.lockAliveLocked(story) {
		info.Running = true
	}
	if st := l.stories[story]; st != nil {
		info.HasWT = st.wt != nil
		if info.Running || info.HasWT {
			info.View = maps.Clone(st.view)
		}
	}
	return info
}

// isWorktreeRel tells whether rel is a file of a story's worktree copy
// (.saga/worktrees/<story>/.saga/stories/<story>/<file>); it returns the
// story and the main copy's rel of the same file.
func isWorktreeRel(rel string) (story, mainRel string, ok bool) {
	rest, ok := strings.CutPrefix(rel, ".saga/worktrees/")
	if !ok {
		return "", "", false
	}
	story, inner, ok := strings.Cut(rest, "/")
	if !ok || !store.ValidCanonical(story) {
		return "", "", false
	}
	kind, owner, _ := store.Classify(inner)
	if owner != story || (kind != store.KindTask && kind != store.KindStory) {
		return "", "", false
	}
	return story, inner, true
}

// diagnostics returns the LSP-only diagnostics of one file: a task of the
// main copy or a file of a worktree copy (the open buffer when there is
// one).
func (l *live) diagnostics(snap *Snapshot, rel string) []store.Diagnostic {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.scanned || l.closed {
		return nil
	}
	if story, mainRel, ok := isWorktreeRel(rel); ok {
		st := l.stories[story]
		if st == nil {
			return nil
		}
		f := st.wtFiles[rel]
		if d := snap.DocByRel(rel); d != nil {
			f = l.s.parser.Parse(mainRel, d.Text, d.Version)
		}
		if f == nil {
			return nil
		}
		return l.fileDiagnostics(rel, f, story, st.wtBlock, "the worktree copy")
	}
	kind, owner, _ := store.Classify(rel)
	if kind != store.KindTask && kind != store.KindStory {
		return nil
	}
	f := snap.WS.File(rel)
	if f == nil {
		return nil
	}
	return l.fileDiagnostics(rel, f, owner, l.liveJournal(snap, owner), "")
}

// allDiagnostics returns every file's LSP-only diagnostics.
func (l *live) allDiagnostics(snap *Snapshot) []store.Diagnostic {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.scanned || l.closed {
		return nil
	}
	var out []store.Diagnostic
	for _, id := range snap.WS.SortedStoryIDs() {
		s := snap.WS.Story(id)
		if s.File != nil {
			out = append(out, l.fileDiagnostics(s.File.Rel, s.File, id, l.liveJournal(snap, id), "")...)
		}
		for _, t := range s.Tasks {
			if t.Status == store.StatusInProgress && t.File != nil {
				out = append(out, l.fileDiagnostics(t.File.Rel, t.File, id, journalState{}, "")...)
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(l.stories)) {
		st := l.stories[id]
		for _, rel := range slices.Sorted(maps.Keys(st.wtFiles)) {
			f := st.wtFiles[rel]
			if d := snap.DocByRel(rel); d != nil {
				_, mainRel, _ := isWorktreeRel(rel)
				f = l.s.parser.Parse(mainRel, d.Text, d.Version)
			}
			out = append(out, l.fileDiagnostics(rel, f, id, st.wtBlock, "the worktree copy")...)
		}
	}
	return out
}

// liveJournal is the journal that decides story-blocked on the main
// story.json: the worktree copy's while the story has one (a running or
// unmerged worker writes there), else the main copy's.
func (l *live) liveJournal(snap *Snapshot, story string) journalState {
	if st := l.stories[story]; st != nil && st.wt != nil {
		j := st.wtBlock
		if j.blocked {
			j.text = "(worktree journal) " + j.text
		}
		return j
	}
	if s := snap.WS.Story(story); s == nil || s.Journal == nil {
		return journalState{}
	}
	return l.mainJournal(story)
}

// fileDiagnostics checks one parsed file: stale-task on a task's status,
// story-blocked on story.json's id. where names the copy in messages.
func (l *live) fileDiagnostics(rel string, f *store.File, story string, journal journalState, where string) []store.Diagnostic {
	obj := f.Root()
	if obj == nil {
		return nil
	}
	in := ""
	if where != "" {
		in = " in " + where
	}
	switch {
	case f.Kind == store.KindTask && f.Task != nil && f.Task.Status == store.StatusInProgress:
		if l.aliveLocked(story) {
			return nil
		}
		n := obj.Get("status")
		if n == nil {
			return nil
		}
		msg := fmt.Sprintf("task %s is in_progress%s, but no worker is running story %s: a worker stopped without finishing it. Run the story again (the worker resets it to pending) or set the status yourself",
			f.Name, in, story)
		return []store.Diagnostic{liveDiagnostic(rel, f, n.Start, n.End, store.CodeStaleTask, msg)}
	case f.Kind == store.KindStory && journal.blocked:
		n := obj.Get("id")
		start, end := obj.Start, obj.Start+1
		if n != nil {
			start, end = n.Start, n.End
		}
		text := journal.text
		if text == "" {
			text = "a blocker was recorded"
		}
		msg := fmt.Sprintf("story %s is blocked%s: %s — resolve it, add a \"## <time> resolution\" entry to journal.md, then run the story again",
			story, in, text)
		return []store.Diagnostic{liveDiagnostic(rel, f, start, end, store.CodeStoryBlocked, msg)}
	}
	return nil
}

func liveDiagnostic(rel string, f *store.File, start, end int, code store.Code, msg string) store.Diagnostic {
	return store.Diagnostic{File: rel, Range: store.SpanRange(f.Doc, start, end), Start: start, End: end,
		Severity: store.SeverityOf(code), Code: code, Message: msg}
}

// ---------------------------------------------------------------------------
// processes

// processAlive reports whether pid is a live (not zombie) process.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
		return false
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'Z' {
			return false
		}
	}
	return true
}

// looksLikeWorker checks, where /proc exists, that pid runs a worker for
// the story: a pid read from an old events file may have been reused.
func looksLikeWorker(pid int, story string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		_, statErr := os.Stat("/proc/self/cmdline")
		return statErr != nil // no /proc: cannot tell
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	return slices.Contains(args, story) && (slices.Contains(args, "worker") || slices.Contains(args, "--worker"))
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
