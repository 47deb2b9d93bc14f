//go:build unix

package watch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/watch"
	"github.com/saga-ai/saga-lsp/store"
)

// The tests drive a watcher with real files in temporary folders (a
// workspace, a session dir) and real processes: events appended line by
// line, a fake worker (a process whose command line names "worker" and the
// story, working in the workspace), a lock taken and released. They wait
// for what the Sink is told, never for time.

const story = "ship-it"

// call is one Sink call, with the State the watcher had published when it
// was made.
type call struct {
	v  any // watch.WorkerProgress, watch.TaskStatus, watch.EpicProgress, filesChanged or refresh
	st *watch.State
}

type (
	filesChanged []string
	refresh      struct{}
)

// recorder is a Sink that hands every call to the test, in order.
type recorder struct {
	w  atomic.Pointer[watch.Watcher]
	ch chan call
}

func (r *recorder) record(v any) { r.ch <- call{v: v, st: r.w.Load().State()} }

func (r *recorder) WorkerProgress(p watch.WorkerProgress) { r.record(p) }
func (r *recorder) TaskStatus(c watch.TaskStatus)         { r.record(c) }
func (r *recorder) EpicProgress(p watch.EpicProgress)     { r.record(p) }
func (r *recorder) FilesChanged(rels []string)            { r.record(filesChanged(rels)) }
func (r *recorder) Refresh()                              { r.record(refresh{}) }

// next returns the first call from now on that matches pred, failing the
// test when none comes in time.
func (r *recorder) next(t *testing.T, what string, pred func(call) bool) call {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case c := <-r.ch:
			if pred(c) {
				return c
			}
		case <-deadline:
			t.Fatalf("no %s", what)
		}
	}
}

// progress waits for a WorkerProgress matching pred.
func (r *recorder) progress(t *testing.T, what string, pred func(watch.WorkerProgress) bool) (watch.WorkerProgress, *watch.State) {
	t.Helper()
	c := r.next(t, "WorkerProgress: "+what, func(c call) bool {
		p, ok := c.v.(watch.WorkerProgress)
		return ok && pred(p)
	})
	return c.v.(watch.WorkerProgress), c.st
}

// filesChanged waits for a FilesChanged naming rel whose State satisfies
// pred.
func (r *recorder) filesChanged(t *testing.T, rel, what string, pred func(*watch.State) bool) *watch.State {
	t.Helper()
	return r.next(t, "FilesChanged of "+rel+" with "+what, func(c call) bool {
		rels, ok := c.v.(filesChanged)
		return ok && slices.Contains(rels, rel) && pred(c.st)
	}).st
}

type fixture struct {
	root, sessions string
	w              *watch.Watcher
	rec            *recorder
}

// start makes a workspace with story ship-it (two tasks; files overrides
// or adds some), starts a watcher on it and scans.
func start(t *testing.T, files map[string]string) *fixture {
	t.Helper()
	root, sessions, config := t.TempDir(), t.TempDir(), t.TempDir()
	// A .git folder: the lock dir (filesafe.LockDir) is then inside the test's.
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	all := map[string]string{
		".saga/stories/ship-it/story.json":  `{"id": "ship-it", "title": "Ship it", "description": ""}`,
		".saga/stories/ship-it/build.json":  `{"id": "build", "subject": "Build the release", "description": "", "status": "pending", "blockedBy": []}`,
		".saga/stories/ship-it/deploy.json": `{"id": "deploy", "subject": "Deploy", "description": "", "status": "pending", "blockedBy": ["build"]}`,
	}
	for rel, text := range files {
		all[rel] = text
	}
	testkit.WriteFiles(t, root, all)
	parser, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	ws, err := parser.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{runs.EnvSessionDir: sessions, claudecode.EnvConfigDir: config}
	rec := &recorder{ch: make(chan call, 1024)}
	w := watch.Start(watch.Options{Root: root, Env: func(k string) string { return env[k] }, Parser: parser,
		Workspace: func() *store.Workspace { return ws }, Sink: rec})
	rec.w.Store(w)
	t.Cleanup(w.Close)
	if w.State().Ready {
		t.Error("the State is ready before the scan")
	}
	w.Scan()
	if !w.State().Ready {
		t.Error("the State is not ready after the scan")
	}
	return &fixture{root: root, sessions: sessions, w: w, rec: rec}
}

// holdWorkerLock takes the story's worker lock in a process whose command
// line is `… <command> <story>` (a worker's, or a reset's), and returns its
// pid and the release.
func (f *fixture) holdWorkerLock(t *testing.T, command, id string) (int, func()) {
	t.Helper()
	cmd := testkit.HelperCmd("hold-worker-lock", command, id, f.root)
	stdin, stderr, err := testkit.StartHelper(cmd, "held")
	if err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("the lock holder: %v\n%s", err, stderr)
			}
		}
	}
	t.Cleanup(release)
	return cmd.Process.Pid, release
}

func TestMain(m *testing.M) {
	testkit.RunHelper(map[string]func(args []string) error{
		// hold-worker-lock: -- <command> <story> <root>: hold the story's
		// worker lock until stdin closes.
		"hold-worker-lock": func(args []string) error {
			lock, err := filesafe.AcquireLock(context.Background(), args[2], runs.WorkerLockName(args[1]))
			if err != nil {
				return err
			}
			defer lock.Unlock()
			fmt.Println("held")
			_, err = io.Copy(io.Discard, os.Stdin)
			return err
		},
	})
	os.Exit(m.Run())
}

// fakeWorker starts a process that passes for the story's worker and
// returns it.
func (f *fixture) fakeWorker(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", "sleep 60; :", "worker", story)
	cmd.Dir = f.root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return cmd
}

// events opens a new run's events file in the session dir.
func (f *fixture) events(t *testing.T) (*runs.Writer, string) {
	t.Helper()
	session := runs.KindSessionName(runs.KindStory, story, time.Now())
	ew, err := runs.OpenWriter(runs.EventsFile(runs.OutputFile(f.sessions, session)), story, "", session, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ew.Close() })
	return ew, session
}

// TestEventsFollowed: a worker's events file, appended line by line, is
// reported as the run's progress and its tasks' statuses; the State shows
// each change by the time the Sink is told, and a State once returned
// never changes.
func TestEventsFollowed(t *testing.T) {
	f := start(t, nil)
	worker := f.fakeWorker(t)
	ew, session := f.events(t)

	ew.Emit(runs.Event{Event: runs.KindWorkerStart, PID: worker.Process.Pid})
	p, first := f.rec.progress(t, "the first", func(p watch.WorkerProgress) bool { return p.First })
	if p.Story != story || p.Session != session || p.State != runs.StateStarting || p.Ended || p.Total != 2 {
		t.Errorf("first progress %+v", p)
	}
	if s := first.Story(story); s == nil || !s.Running || s.Run == nil || s.Run.Session != session || !first.Alive(story) {
		t.Fatalf("the State when the run was reported: %+v", s)
	}

	ew.Emit(runs.Event{Event: runs.KindStep, Step: runs.StepLock, Message: "holding the worker lock"})
	f.rec.progress(t, "running", func(p watch.WorkerProgress) bool { return p.State == runs.StateRunning && p.Step == runs.StepLock })

	ew.Emit(runs.Event{Event: runs.KindTaskStatus, Task: "build", From: "pending", To: "in_progress", Source: runs.SourceClaude})
	c := f.rec.next(t, "TaskStatus", func(c call) bool { _, ok := c.v.(watch.TaskStatus); return ok })
	if ts := c.v.(watch.TaskStatus); ts != (watch.TaskStatus{Story: story, Task: "build", Subject: "Build the release",
		From: "pending", To: "in_progress", Source: runs.SourceClaude}) {
		t.Errorf("TaskStatus %+v", ts)
	}
	if v := c.st.Story(story).View; v["build"] != "in_progress" || v["deploy"] != "pending" {
		t.Errorf("view when the status was reported: %v", v)
	}

	ew.Emit(runs.Event{Event: runs.KindTaskStatus, Task: "build", From: "in_progress", To: "completed", Source: runs.SourceClaude})
	p, st := f.rec.progress(t, "a task done", func(p watch.WorkerProgress) bool { return p.Done == 1 })
	if p.Total != 2 || st.Story(story).Run.Done != 1 {
		t.Errorf("after build completed: %+v, the State's run %+v", p, st.Story(story).Run)
	}

	ew.Emit(runs.Event{Event: runs.KindWorkerEnd, Status: runs.StatusCompleted, ExitCode: runs.Int(0)})
	p, end := f.rec.progress(t, "the end", func(p watch.WorkerProgress) bool { return p.Ended })
	if p.State != runs.StatusCompleted || p.First {
		t.Errorf("last progress %+v", p)
	}
	if s := end.Story(story); s.Running || s.Run.Running || s.Run.State != runs.StatusCompleted {
		t.Errorf("the State after the end: %+v %+v", s, s.Run)
	}
	if end.Alive(story) {
		t.Error("the story is alive after its worker's end")
	}
	// The first State is as it was.
	if s := first.Story(story); !s.Running || s.Run.State != runs.StateStarting || s.View["build"] != "pending" {
		t.Errorf("a published State changed: %+v %+v", s, s.Run)
	}
}

// TestWorkerDies: a followed worker killed without a worker.end ends
// failed, and its story is no longer alive.
func TestWorkerDies(t *testing.T) {
	f := start(t, nil)
	worker := f.fakeWorker(t)
	ew, _ := f.events(t)
	ew.Emit(runs.Event{Event: runs.KindWorkerStart, PID: worker.Process.Pid})
	ew.Emit(runs.Event{Event: runs.KindStep, Step: runs.StepLock})
	f.rec.progress(t, "running", func(p watch.WorkerProgress) bool { return p.State == runs.StateRunning })

	syscall.Kill(-worker.Process.Pid, syscall.SIGKILL)
	p, st := f.rec.progress(t, "the end", func(p watch.WorkerProgress) bool { return p.Ended })
	if p.State != runs.StatusFailed || st.Alive(story) || st.Story(story).Run.State != runs.StatusFailed {
		t.Errorf("after the kill: %+v, alive %v", p, st.Alive(story))
	}
}

// TestWorkerLock: a worker the watcher has no events of counts as alive
// while it holds the story's worker lock; when the lock is released the
// story is reported (its files) and is no longer alive. Twice: the first
// lock makes the lock folder, which the watcher then watches; the second
// is seen in the watched folder (listed again when a lock's file changes,
// not at every tick).
func TestWorkerLock(t *testing.T) {
	f := start(t, nil)
	rel := store.StoryFileRel(story)
	if f.w.State().Alive(story) {
		t.Fatal("alive before any lock")
	}
	for _, when := range []string{"first", "again"} {
		holder, release := f.holdWorkerLock(t, "worker", story)
		st := f.rec.filesChanged(t, rel, "the lock held "+when, func(st *watch.State) bool { return st.Alive(story) })
		if st.Locked[story] != holder || st.Story(story) != nil {
			t.Errorf("%s: locked %v, story %+v", when, st.Locked, st.Story(story))
		}
		release()
		f.rec.filesChanged(t, rel, "the lock released "+when, func(st *watch.State) bool { return !st.Alive(story) })
		if pid := f.w.State().Locked[story]; pid != 0 {
			t.Errorf("%s: the lock is still held by %d in the State", when, pid)
		}
	}
}

// TestResetHoldsNoWorker: reset and clean hold a story's worker lock while
// they remove its run; a holder that is not a worker is no live worker (it
// showed the story running for up to a tick after a reset:
// BenchmarkFacesFollow).
func TestResetHoldsNoWorker(t *testing.T) {
	f := start(t, map[string]string{
		".saga/stories/other/story.json": `{"id": "other", "title": "Other", "description": ""}`,
	})
	_, releaseReset := f.holdWorkerLock(t, "reset", story)
	defer releaseReset()
	// A worker of another story, whose lock is seen in the same probe.
	_, release := f.holdWorkerLock(t, "worker", "other")
	defer release()
	st := f.rec.filesChanged(t, store.StoryFileRel("other"), "the other story's worker lock held", func(st *watch.State) bool { return st.Alive("other") })
	if st.Alive(story) || st.Locked[story] != 0 {
		t.Errorf("a reset's lock counts as a live worker: locked %v", st.Locked)
	}
}

// TestMainJournal: the main checkout's journal is read by the scan; when
// the face reports it changed, the new blocker state is read and the main
// story.json named.
func TestMainJournal(t *testing.T) {
	journal := "# Journal: ship-it\n\n## 2026-11-20T11:00:00Z blocker\nProduction credentials are missing.\n"
	f := start(t, map[string]string{store.JournalFileRel(story): journal})
	if j := f.w.State().MainJournal(story); !j.Blocked || j.Text != "Production credentials are missing." {
		t.Errorf("after the scan: %+v", j)
	}
	path := filepath.Join(f.root, filepath.FromSlash(store.JournalFileRel(story)))
	journal += "\n## 2026-11-20T12:00:00Z resolution\nCredentials added.\n"
	if err := os.WriteFile(path, []byte(journal), 0o644); err != nil {
		t.Fatal(err)
	}
	f.w.DiskChanged([]string{path})
	f.rec.filesChanged(t, store.StoryFileRel(story), "the blocker resolved", func(st *watch.State) bool { return !st.MainJournal(story).Blocked })
}

// TestEndedWorkerHoldsLock: a followed worker holds its lock a moment past
// its worker.end; that lock does not make its story alive.
func TestEndedWorkerHoldsLock(t *testing.T) {
	f := start(t, nil)
	real, err := filepath.EvalSymlinks(f.root)
	if err != nil {
		t.Fatal(err)
	}
	// The worker is a process that passes for one and holds the lock.
	pid, release := f.holdWorkerLock(t, "worker", story)
	defer release()
	session := runs.KindSessionName(runs.KindStory, story, time.Now())
	var lines []byte
	for _, e := range []runs.Event{
		// Its worktree says it belongs to the workspace.
		{Event: runs.KindWorkerStart, PID: pid, Worktree: store.WorktreeDir(real, story)},
		{Event: runs.KindWorkerEnd, Status: runs.StatusCompleted, ExitCode: runs.Int(0)},
	} {
		e.Time, e.Story, e.Session = time.Now().UTC(), story, session
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(append(lines, b...), '\n')
	}
	// One write: the watcher never sees the run alive without its end.
	if err := os.WriteFile(runs.EventsFile(runs.OutputFile(f.sessions, session)), lines, 0o644); err != nil {
		t.Fatal(err)
	}
	// Whichever the watcher sees last, the lock or the end, names the story.
	st := f.rec.filesChanged(t, store.StoryFileRel(story), "the lock held and the run ended", func(st *watch.State) bool {
		s := st.Story(story)
		return st.Locked[story] > 0 && s != nil && s.Run != nil && !s.Running
	})
	if st.Alive(story) || st.Story(story).Run.PID != pid {
		t.Errorf("alive by the lock of its ended worker: %+v", st.Story(story).Run)
	}
}

// A run record written alone — a watcher's read of a review, a restack —
// refreshes the faces: what the read model derives from it changed.
func TestRecordWrittenRefreshes(t *testing.T) {
	f := start(t, nil)
	isRefresh := func(c call) bool { _, ok := c.v.(refresh); return ok }
	if err := runs.WriteRecord(f.root, runs.Record{Story: story, Session: "s", Status: runs.StatusCompleted, Ended: time.Now().UTC(), PR: "https://github.com/acme/shop/pull/1"}); err != nil {
		t.Fatal(err)
	}
	f.rec.next(t, "Refresh when the records' folder came", isRefresh)
	for range len(f.rec.ch) {
		<-f.rec.ch
	}
	if err := runs.UpdateReview(f.root, story, func(r *runs.ReviewRecord) { r.ChangesRequested, r.Requests = 1, 1 }); err != nil {
		t.Fatal(err)
	}
	f.rec.next(t, "Refresh after the review's read was recorded", isRefresh)
}

// An epic's state is served as last derived: an edit of the epic's
// description keeps it, and a record written alone (a PR opened) has the
// epic loop derive it again and refresh the faces
// (docs/architecture.md#one-read-model-of-a-run).
func TestEpicStateServedAsDerived(t *testing.T) {
	epicJSON := func(desc string) string {
		return `{"id": "ship", "title": "Ship", "description": "` + desc + `", "status": "pending", "children": [{"id": "ship-it", "blockedBy": []}]}`
	}
	f := start(t, nil)
	f.w.Close() // a watcher of its own, whose workspace is the face's, as the language server's
	testkit.WriteFiles(t, f.root, map[string]string{
		".saga/stories/ship-it/story.json": `{"id": "ship-it", "title": "Ship it", "description": "", "epic": "ship"}`,
		".saga/epics/ship.json":            epicJSON("first"),
	})
	parser, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	var cur atomic.Pointer[store.Workspace]
	load := func() *store.Workspace {
		t.Helper()
		ws, err := parser.Load(f.root)
		if err != nil {
			t.Fatal(err)
		}
		cur.Store(ws)
		return ws
	}
	load()
	rec := &recorder{ch: make(chan call, 1024)}
	env := map[string]string{runs.EnvSessionDir: f.sessions, claudecode.EnvConfigDir: t.TempDir()}
	w := watch.Start(watch.Options{Root: f.root, Env: func(k string) string { return env[k] }, Parser: parser,
		Workspace: cur.Load, Sink: rec})
	rec.w.Store(w)
	t.Cleanup(w.Close)
	w.Scan()
	isRefresh := func(c call) bool { _, ok := c.v.(refresh); return ok }
	// The records' folder, there before the story's PR.
	if err := runs.WriteRecord(f.root, runs.Record{Story: "other", Session: "s", Status: runs.StatusCompleted, Ended: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	rec.next(t, "Refresh when the records' folder came", isRefresh)

	ctx := context.Background()
	first := w.EpicStatus(ctx, cur.Load(), "ship")
	if first == nil || len(first.Stories) != 1 || first.Stories[0].PR != "" {
		t.Fatalf("the epic's first state: %+v", first)
	}
	pr := "https://github.com/acme/shop/pull/7"
	if err := runs.WriteRecord(f.root, runs.Record{Story: story, Session: "s", Status: runs.StatusCompleted, Ended: time.Now().UTC(), PR: pr}); err != nil {
		t.Fatal(err)
	}
	var withPR *readmodel.EpicStatus
	for withPR == nil {
		rec.next(t, "Refresh with the PR in the epic's state", isRefresh)
		if st := w.EpicStatus(ctx, cur.Load(), "ship"); st != nil && st.Stories[0].PR == pr {
			withPR = st
		}
	}
	testkit.WriteFiles(t, f.root, map[string]string{".saga/epics/ship.json": epicJSON("second")})
	ws := load()
	if ws.Epic("ship").Description != "second" {
		t.Fatalf("the edit is not in the workspace: %+v", ws.Epic("ship"))
	}
	if again := w.EpicStatus(ctx, ws, "ship"); again != withPR {
		t.Errorf("an edit of the description moved the epic's state: %+v", again)
	}
}

// A worker the watcher has no events of, holding its story's lock, runs in
// the epic's state the watcher derives as it is alive in its State — the
// lock as the watcher probed it, one truth for both — and no longer runs
// in either once the lock is released.
func TestEpicStateAgreesOnALockedStory(t *testing.T) {
	f := start(t, map[string]string{
		".saga/stories/ship-it/story.json": `{"id": "ship-it", "title": "Ship it", "description": "", "epic": "ship"}`,
		".saga/epics/ship.json":            `{"id": "ship", "title": "Ship", "description": "", "status": "pending", "children": [{"id": "ship-it", "blockedBy": []}]}`,
	})
	parser, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	ws, err := parser.Load(f.root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	state := func() string {
		st := f.w.EpicStatus(ctx, ws, "ship")
		if st == nil || len(st.Stories) != 1 {
			t.Fatalf("the epic's state: %+v", st)
		}
		return st.Stories[0].State
	}
	if s := state(); s == readmodel.EpicRunning {
		t.Fatalf("ship-it runs before any lock: %s", s)
	}
	_, release := f.holdWorkerLock(t, "worker", story)
	f.rec.filesChanged(t, store.StoryFileRel(story), "the lock held", func(st *watch.State) bool { return st.Alive(story) })
	isRefresh := func(c call) bool { _, ok := c.v.(refresh); return ok }
	for state() != readmodel.EpicRunning {
		f.rec.next(t, "Refresh with ship-it running in the epic's state", isRefresh)
	}
	release()
	f.rec.filesChanged(t, store.StoryFileRel(story), "the lock released", func(st *watch.State) bool { return !st.Alive(story) })
	for state() == readmodel.EpicRunning {
		f.rec.next(t, "Refresh with ship-it no longer running in the epic's state", isRefresh)
	}
}
