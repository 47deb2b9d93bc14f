//go:build unix

package lsp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
)

// ---------------------------------------------------------------------------
// without tmux: a faked worker

// fakeWorker starts a process that passes for story's worker (its command
// line names "worker" and the story; it works in root) and returns its pid.
func fakeWorker(t *testing.T, root, story string) int {
	t.Helper()
	cmd := fakeWorkerCmd(root, story)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	return cmd.Process.Pid
}

// fakeWorkerCmd is `sh -c 'sleep 60; :' worker <story>` in root, in its own
// process group (killGroup ends the shell and its sleep).
func fakeWorkerCmd(root, story string) *exec.Cmd {
	cmd := exec.Command("sh", "-c", "sleep 60; :", "worker", story)
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

func killGroup(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
}

// eventsWriter appends lines to a fake run's events file.
type eventsWriter struct {
	t       *testing.T
	path    string
	session string
	story   string
}

func newEventsWriter(t *testing.T, dir, story string) *eventsWriter {
	session := fmt.Sprintf("saga-story-%s-%d", story, time.Now().UnixMilli())
	return &eventsWriter{t: t, path: filepath.Join(dir, session+".log.events.jsonl"), session: session, story: story}
}

func (w *eventsWriter) raw(line string) {
	w.t.Helper()
	fh, err := os.OpenFile(w.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		w.t.Fatal(err)
	}
	defer fh.Close()
	fh.WriteString(line)
}

func (w *eventsWriter) event(fields string) { w.raw(w.line(fields)) }

// line is an event line of the run with fields.
func (w *eventsWriter) line(fields string) string {
	return fmt.Sprintf(`{"time":"2026-11-21T10:00:00Z","story":%q,"session":%q,%s}`+"\n", w.story, w.session, fields)
}

func liveTestdata(t *testing.T) string {
	t.Helper()
	return copyTestdata(t, "live")
}

// liveSessions is liveTestdata with a session dir of its own for the
// server to find workers in.
func liveSessions(t *testing.T) (root, sessions string) {
	t.Helper()
	sessions = t.TempDir()
	t.Setenv("SAGA_SESSION_DIR", sessions)
	return liveTestdata(t), sessions
}

// TestLiveEventsRobust: a worker found in the session dir is followed from
// its events file; garbage lines, a half-written line and an overlong one
// are skipped, and the server keeps answering; worker.end ends it.
func TestLiveEventsRobust(t *testing.T) {
	root, sessions := liveSessions(t)
	pid := fakeWorker(t, root, "ship-it")
	w := newEventsWriter(t, sessions, "ship-it")
	w.event(fmt.Sprintf(`"event":"worker.start","pid":%d,"outputFile":%q`, pid, strings.TrimSuffix(w.path, ".events.jsonl")))
	w.event(`"event":"step","step":"lock","message":"holding the worker lock for ship-it"`)

	c := startLive(t, root)
	p, _ := waitProgress(c, 0, func(p workerProgressParams) bool { return p.State == runs.StateRunning })
	if p.Story != "ship-it" || p.Session != w.session || p.Total != 2 || p.Done != 0 {
		t.Errorf("discovered %+v", p)
	}
	from := c.mark()
	w.raw("not json at all\n{\"event\": 12}\n[1,2,3]\n")
	w.raw(`{"story":"ship-it","event":"step","step":"hydr` + strings.Repeat("x", 2<<20) + "\n")
	// run.start and half a line in one write: once the server has read the
	// run.start it has read the half line too, and the rest comes later.
	w.raw(w.line(`"event":"run.start","cycle":1,"pid":1`) +
		`{"time":"2026-11-21T10:00:00Z","story":"ship-it","session":"` + w.session + `","event":"task.status","task":"build","from":"pending",`)
	waitProgress(c, from, func(p workerProgressParams) bool { return p.Cycle == 1 })
	w.raw(`"to":"completed","source":"claude"}` + "\n")
	s, _ := c.waitFor(from, "saga/taskStatus", nil)
	var ts taskStatusParams
	json.Unmarshal(s.Params, &ts)
	if ts != (taskStatusParams{Story: "ship-it", Task: "build", Subject: "Build the release", From: "pending", To: "completed", Source: "claude"}) {
		t.Errorf("taskStatus %+v", ts)
	}
	p, _ = waitProgress(c, from, func(p workerProgressParams) bool { return p.Done == 1 })
	if p.Cycle != 1 || p.State != runs.StateRunning {
		t.Errorf("after the task: %+v", p)
	}
	// The server still answers.
	if got := lensTitles(codeLenses(c, ".saga/stories/ship-it/story.json")); len(got) == 0 || got[0] != "■ Stop" {
		t.Errorf("lenses: %q", got)
	}
	w.event(`"event":"worker.end","status":"completed","exitCode":0,"done":2,"total":2`)
	final, _ := waitProgress(c, from, ended)
	if final.State != "completed" {
		t.Errorf("final %+v", final)
	}
}

// TestLiveWorkerDies: a followed worker that dies without a worker.end is
// failed; an in_progress task of its worktree copy becomes stale-task, and
// a client that did not opt in gets no saga/* notifications.
func TestLiveWorkerDies(t *testing.T) {
	root, sessions := liveSessions(t)
	// The worktree copy, with build in progress.
	wt := filepath.Join(root, ".saga", "worktrees", "ship-it", ".saga", "stories", "ship-it")
	testkit.CopyInto(t, filepath.Join(root, ".saga", "stories", "ship-it"), wt)
	os.Remove(filepath.Join(wt, "journal.md"))
	setStatus(t, filepath.Join(wt, "build.json"), "pending", "in_progress")

	cmd := fakeWorkerCmd(root, "ship-it")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	w := newEventsWriter(t, sessions, "ship-it")
	w.event(fmt.Sprintf(`"event":"worker.start","pid":%d`, cmd.Process.Pid))
	w.event(`"event":"step","step":"lock","message":"holding the worker lock for ship-it"`)

	c := startLive(t, root)
	quiet := start(t)
	quiet.initialize(root, liveCapabilities)
	waitProgress(c, 0, func(p workerProgressParams) bool { return p.State == runs.StateRunning })
	rel := ".saga/worktrees/ship-it/.saga/stories/ship-it/build.json"
	from := c.mark()
	// While it lives, no stale-task.
	c.open(rel)
	d, _ := c.diagnostics(from, rel, nil)
	if slices.Contains(d.codes(), "stale-task") || d.Version == nil {
		t.Errorf("while the worker lives: %+v", d)
	}
	killGroup(cmd)
	p, _ := waitProgress(c, from, ended)
	if p.State != runs.StatusFailed {
		t.Errorf("after the death: %+v", p)
	}
	d, _ = c.diagnostics(from, rel, func(p publishedDiagnostics) bool { return slices.Contains(p.codes(), "stale-task") })
	if d.Version == nil || *d.Version != 1 {
		t.Errorf("the open worktree file's publication has no version: %+v", d)
	}
	if n := len(quiet.notesOf(0, "saga/workerProgress")) + len(quiet.notesOf(0, "saga/taskStatus")); n != 0 {
		t.Errorf("a client that did not opt in got %d saga/* notifications", n)
	}
	// The quiet client still gets the diagnostic (it is not opt-in).
	quiet.diagnostics(0, rel, func(p publishedDiagnostics) bool { return slices.Contains(p.codes(), "stale-task") })
}

// TestWorktreeStatusChange: a status written into a worktree copy (as the
// PostToolUse hook does) is announced as saga/taskStatus; with a live
// worker its source is hook, and the worker's progress counts it.
func TestWorktreeStatusChange(t *testing.T) {
	root, sessions := liveSessions(t)
	c := startLive(t, root)
	// A worktree copy appears (the worker's worktree step) …
	wt := filepath.Join(root, ".saga", "worktrees", "ship-it", ".saga", "stories", "ship-it")
	pid := fakeWorker(t, root, "ship-it")
	w := newEventsWriter(t, sessions, "ship-it")
	w.event(fmt.Sprintf(`"event":"worker.start","pid":%d`, pid))
	w.event(`"event":"step","step":"lock","message":"holding the worker lock for ship-it"`)
	waitProgress(c, 0, func(p workerProgressParams) bool { return p.State == runs.StateRunning })
	// The copy appears whole (renamed into place), so whenever the server
	// reads it, it finds every task: the status written next is a change
	// from what it showed, seen at once or on the following read.
	staged := filepath.Join(t.TempDir(), "ship-it")
	testkit.CopyInto(t, filepath.Join(root, ".saga", "stories", "ship-it"), filepath.Join(staged, ".saga", "stories", "ship-it"))
	if err := os.MkdirAll(filepath.Join(root, ".saga", "worktrees"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(staged, filepath.Join(root, ".saga", "worktrees", "ship-it")); err != nil {
		t.Fatal(err)
	}
	from := c.mark()
	// … and the hook writes a status into it.
	setStatus(t, filepath.Join(wt, "build.json"), "pending", "in_progress")
	s, _ := c.waitFor(from, "saga/taskStatus", nil)
	var ts taskStatusParams
	json.Unmarshal(s.Params, &ts)
	if ts != (taskStatusParams{Story: "ship-it", Task: "build", Subject: "Build the release", From: "pending", To: "in_progress", Source: "hook"}) {
		t.Errorf("taskStatus %+v", ts)
	}
	setStatus(t, filepath.Join(wt, "build.json"), "in_progress", "completed")
	p, _ := waitProgress(c, from, func(p workerProgressParams) bool { return p.Done == 1 })
	if p.Total != 2 {
		t.Errorf("progress %+v", p)
	}
	if got := lensTitles(codeLenses(c, ".saga/stories/ship-it/build.json")); len(got) != 1 || got[0] != "status: pending · wave 1/2 · worktree: completed" {
		t.Errorf("task lens %q", got)
	}
}

// TestStoryBlocked: story-blocked (info) on story.json's id while the live
// journal ends in an unresolved blocker — the main copy's, or the worktree
// copy's once there is one; a resolution clears it.
func TestStoryBlocked(t *testing.T) {
	root := liveTestdata(t)
	c := startOn(t, root, "")
	rel := ".saga/stories/ship-it/story.json"
	text := testkit.FileText(filepath.Join(root, rel))
	d, _ := c.diagnostics(0, rel, func(p publishedDiagnostics) bool { return slices.Contains(p.codes(), "story-blocked") })
	if len(d.Diagnostics) != 1 || d.Diagnostics[0].Severity != 3 || d.Diagnostics[0].Range != spanOf(t, text, `"ship-it"`, 0) ||
		!strings.Contains(d.Diagnostics[0].Message, "Production credentials are missing") {
		t.Errorf("story-blocked %+v", d.Diagnostics)
	}
	from := c.mark()
	journal := filepath.Join(root, ".saga", "stories", "ship-it", "journal.md")
	appendFile(t, journal, "\n## 2026-11-20T12:00:00Z resolution\nCredentials added.\n")
	c.diagnostics(from, rel, func(p publishedDiagnostics) bool { return len(p.Diagnostics) == 0 })

	// A worktree copy whose journal is blocked: both story.json files say so.
	from = c.mark()
	wt := filepath.Join(root, ".saga", "worktrees", "ship-it", ".saga", "stories", "ship-it")
	testkit.CopyInto(t, filepath.Join(root, ".saga", "stories", "ship-it"), wt)
	appendFile(t, filepath.Join(wt, "journal.md"), "\n## 2026-11-21T09:00:00Z blocker\nThe deploy key expired.\n")
	wtRel := ".saga/worktrees/ship-it/.saga/stories/ship-it/story.json"
	// The copy writes its files in place: a publish may come while
	// story.json is still empty (json-syntax); the copy's is the one after.
	d, _ = c.diagnostics(from, wtRel, func(p publishedDiagnostics) bool {
		return slices.Contains(p.codes(), "story-blocked") && !slices.Contains(p.codes(), "json-syntax")
	})
	if !strings.Contains(d.Diagnostics[0].Message, "The deploy key expired") || !strings.Contains(d.Diagnostics[0].Message, "worktree") {
		t.Errorf("worktree story-blocked %+v", d.Diagnostics)
	}
	d, _ = c.diagnostics(from, rel, func(p publishedDiagnostics) bool { return slices.Contains(p.codes(), "story-blocked") })
	if !strings.Contains(d.Diagnostics[0].Message, "The deploy key expired") {
		t.Errorf("main story-blocked from the worktree journal %+v", d.Diagnostics)
	}
}

// TestStaleTaskMainCopy: a task in_progress in the main checkout with no
// worker alive is stale-task (warning) on its status value.
func TestStaleTaskMainCopy(t *testing.T) {
	c := start(t)
	c.initialize(testkit.CopyExample(t, "workspace"), "")
	rel := ".saga/stories/user-auth--api/signup-endpoint.json"
	d, _ := c.diagnostics(0, rel, nil)
	text := testkit.FileText(filepath.Join(c.root, rel))
	if len(d.Diagnostics) != 1 || d.Diagnostics[0].Code != "stale-task" || d.Diagnostics[0].Severity != 2 ||
		d.Diagnostics[0].Range != spanOf(t, text, `"in_progress"`, 0) {
		t.Errorf("signup-endpoint: %+v", d.Diagnostics)
	}
	// Editing it to completed clears it (status-inconsistent may appear:
	// its blockers are not done).
	from := c.mark()
	c.openText(rel, strings.Replace(text, `"in_progress"`, `"pending"`, 1), 1)
	c.diagnostics(from, rel, func(p publishedDiagnostics) bool {
		return p.Version != nil && !slices.Contains(p.codes(), "stale-task")
	})
}

// ---------------------------------------------------------------------------

func setStatus(t *testing.T, path, from, to string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := fmt.Sprintf(`"status": %q`, from)
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s has no %s", path, old)
	}
	data = bytes.Replace(data, []byte(old), []byte(fmt.Sprintf(`"status": %q`, to)), 1)
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	fh.WriteString(text)
}

// serverGoroutines counts the goroutines of servers and their test
// clients: those running a method of the package or of its run watcher,
// Serve, the JSON-RPC connection or a file watcher.
func serverGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "saga-lsp/lsp.(*") || strings.Contains(g, "saga-lsp/lsp.Serve") || strings.Contains(g, "saga-lsp/runs/watch.(*") ||
			strings.Contains(g, "sourcegraph/jsonrpc2") || strings.Contains(g, "fsnotify") {
			count++
		}
	}
	return count
}

// TestLiveShutdownNoLeak: a server following a worker leaves no goroutine
// behind after shutdown and exit (the watcher, the live loop, the lens
// refresher, the progress reporting all end).
func TestLiveShutdownNoLeak(t *testing.T) {
	root, sessions := liveSessions(t)
	pid := fakeWorker(t, root, "ship-it")
	w := newEventsWriter(t, sessions, "ship-it")
	w.event(fmt.Sprintf(`"event":"worker.start","pid":%d`, pid))
	w.event(`"event":"step","step":"lock","message":"holding the worker lock for ship-it"`)
	// Earlier tests' servers wind down first.
	if !testkit.WaitUntil(10*time.Second, func() bool { return serverGoroutines() == 0 }) {
		t.Logf("goroutines of earlier servers still run")
	}
	before := runtime.NumGoroutine()

	c := startLive(t, root)
	waitProgress(c, 0, func(p workerProgressParams) bool { return p.State == runs.StateRunning })
	c.open(".saga/stories/ship-it/story.json")
	codeLenses(c, ".saga/stories/ship-it/story.json")
	c.result("shutdown", `null`, nil)
	c.notify("exit", `null`)
	select {
	case code := <-c.exit:
		c.exit <- code
	case <-time.After(10 * time.Second):
		t.Fatal("no exit")
	}
	c.in.Close()
	if !testkit.WaitUntil(5*time.Second, func() bool { return runtime.NumGoroutine() <= before }) {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after exit, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
	}
}

// TestLensDispatchedStory: a story dispatched to GitHub Actions from here
// shows its Actions run in its lens, as recorded (the server never asks
// GitHub): running while no end is recorded, then the end a `status` or
// the runner recorded from GitHub.
func TestLensDispatchedStory(t *testing.T) {
	root, sessions := liveSessions(t)
	w := newEventsWriter(t, sessions, "ship-it")
	w.event(fmt.Sprintf(`"event":"dispatch","backend":"github","base":"main","runName":"saga story ship-it run 1-a","root":%q`, root))
	w.event(fmt.Sprintf(`"event":"dispatch","backend":"github","base":"main","runName":"saga story ship-it run 1-a","root":%q,"actionsRun":42,"url":"https://github.com/acme/shop/actions/runs/42","status":"queued"`, root))
	c := startLive(t, root)
	lenses := func(want ...string) {
		t.Helper()
		var got []string
		if !testkit.WaitUntil(10*time.Second, func() bool {
			got = lensTitles(codeLenses(c, ".saga/stories/ship-it/story.json"))
			return slices.Equal(got, want)
		}) {
			t.Errorf("lenses %q, want %q", got, want)
		}
	}
	lenses("■ Stop", "Show output", "● GitHub Actions dispatched https://github.com/acme/shop/actions/runs/42")
	w.event(`"event":"worker.end","status":"stopped","conclusion":"cancelled","actionsRun":42,"message":"its Actions run was cancelled"`)
	lenses("▶ Run story", "Show output", "0/2 tasks done · status: pending · GitHub Actions cancelled https://github.com/acme/shop/actions/runs/42")
}
