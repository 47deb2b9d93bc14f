package readmodel

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	tw "github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// A worker holds its story's lock a moment past its worker.end: the
// story is its run's end from then on, not running — as the live watcher
// judges it (watch.State.Alive) — while a lock held by another process
// (a new worker, reset) still is.
func TestEndedRunsLockDoesNotRun(t *testing.T) {
	root, sessionDir, l := storyRun(t, map[string]string{
		".saga/stories/s/story.json": `{"id": "s", "title": "S", "description": "d"}` + "\n",
		".saga/stories/s/t.json":     `{"id": "t", "subject": "T", "description": "d", "status": "pending", "blockedBy": []}` + "\n",
	})
	l.Emit(runs.Event{Event: runs.KindWorkerStart, PID: os.Getpid(), Root: root}, "")
	l.Emit(runs.Event{Event: runs.KindWorkerEnd, Status: runs.StatusFailed, Message: "its checks failed"}, "")
	l.Close()
	lock, ok, err := filesafe.TryLock(root, runs.WorkerLockName("s")) // recorded as this process's: the ended worker's pid
	if err != nil || !ok {
		t.Fatalf("TryLock: %v %v", ok, err)
	}
	defer lock.Unlock()
	p, ws := tw.Parser(t), tw.Load(t, root)
	ev := NewEvidence(context.Background(), root, sessionDir, p)
	if st := ev.Story(context.Background(), ws, "s"); st.State != runs.StatusFailed {
		t.Errorf("ended run, its worker's lock still held: %s, want failed", st.State)
	}
	// The same lock, the run not ended: running.
	session2 := runs.KindSessionName(runs.KindStory, "s", time.Now().Add(time.Second))
	l2, err := runs.OpenLog(runs.OutputFile(sessionDir, session2), "s", "", session2, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	l2.Emit(runs.Event{Event: runs.KindWorkerStart, PID: os.Getpid(), Root: root}, "")
	l2.Close()
	ev = NewEvidence(context.Background(), root, sessionDir, p)
	if st := ev.Story(context.Background(), ws, "s"); st.State != EpicRunning {
		t.Errorf("a live run holding the lock: %s, want running", st.State)
	}
}

// isAncestor answers from the story branches' unmerged history where it
// can: a blocker's tip that only got into HEAD is found where the story's
// branch left HEAD's history, with no git process (an epic's status asked
// git once per such story); deeper in HEAD's history, git decides.
func TestIsAncestorFromTheUnmergedHistory(t *testing.T) {
	root := testkit.GitRepo(t, "")
	commit := func(msg string) string {
		testkit.Git(t, root, "commit", "-q", "--allow-empty", "-m", msg)
		return testkit.Git(t, root, "rev-parse", "HEAD")
	}
	c0 := testkit.Git(t, root, "rev-parse", "HEAD")
	c1 := commit("c1")
	testkit.Git(t, root, "branch", runs.StoryBranch("a"), c1) // the blocker's, in HEAD
	testkit.Git(t, root, "switch", "-q", "-c", runs.StoryBranch("b"), c1)
	b1 := commit("b1") // the story's, stacked on a's tip
	testkit.Git(t, root, "switch", "-q", "-c", runs.StoryBranch("c"), c0)
	cc := commit("c")
	testkit.Git(t, root, "switch", "-q", "main")
	c2 := commit("c2")

	ctx := context.Background()
	ev := NewEvidence(ctx, root, t.TempDir(), nil)
	for _, q := range []struct {
		name string
		a, b string
		want bool
	}{
		{"deeper in HEAD", c0, b1, true},
		{"HEAD's tip, after the branch left it", c2, b1, false},
		{"another branch's unmerged commit", b1, cc, false},
	} {
		if got := ev.isAncestor(ctx, q.a, q.b); got != q.want {
			t.Errorf("%s: isAncestor = %v, want %v", q.name, got, q.want)
		}
	}
	// With git out of reach, what the history read above decides still
	// stands.
	ev.Root = filepath.Join(t.TempDir(), "no-repository")
	for _, q := range []struct {
		name string
		a, b string
	}{
		{"the blocker's tip where the branch left HEAD", c1, b1},
		{"the commit itself", c1, c1},
		{"the story's own commit", b1, b1},
	} {
		if !ev.isAncestor(ctx, q.a, q.b) {
			t.Errorf("%s: not an ancestor without git", q.name)
		}
	}
}

// Evidence judges a story by its runs as gathered (Settle), before the
// workspace is read: a worker that ends between the two reads is seen
// running, its files read newer — never its end with the statuses it
// wrote before it unread ("completed (0/1 tasks)" in the runner's log,
// which loaded the files first). LoadEpicState reads in that order.
func TestRunsGatheredBeforeTheFiles(t *testing.T) {
	task := func(status string) map[string]string {
		return map[string]string{".saga/stories/s/t.json": `{"id": "t", "subject": "T", "description": "d", "status": "` + status + `", "blockedBy": []}` + "\n"}
	}
	files := task("pending")
	files[".saga/epics/e.json"] = `{"id": "e", "title": "E", "description": "d", "children": [{"id": "s", "blockedBy": []}]}` + "\n"
	files[".saga/stories/s/story.json"] = `{"id": "s", "title": "S", "description": "d", "epic": "e"}` + "\n"
	root, sessionDir, l := storyRun(t, files)
	defer l.Close()
	// A process that passes for the story's worker (supervise.LooksLike).
	worker := exec.Command("sh", "-c", "read x; :", "worker", "s")
	stdin, err := worker.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	defer worker.Wait()
	defer stdin.Close()
	l.Emit(runs.Event{Event: runs.KindWorkerStart, PID: worker.Process.Pid, Root: root}, "")
	p, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	env := func(k string) string { return map[string]string{runs.EnvSessionDir: sessionDir}[k] }
	ctx := context.Background()
	ev, err := Gathered(ctx, root, sessionDir, env, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The worker finishes: its statuses, then its end.
	testkit.WriteFiles(t, root, task("completed"))
	l.Emit(runs.Event{Event: runs.KindWorkerEnd, Status: runs.StatusCompleted}, "")
	ws, err := p.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if st := ev.Story(ctx, ws, "s"); st.State != EpicRunning || st.Done != 1 || st.Total != 1 {
		t.Errorf("the run gathered before its end, its files after: %s %d/%d, want running 1/1", st.State, st.Done, st.Total)
	}
	_, st, err := LoadEpicState(ctx, ViewQuery(root, "e", env, p))
	if err != nil {
		t.Fatal(err)
	}
	if s := st.Stories[0]; s.State != runs.StatusCompleted || s.Done != 1 || s.Total != 1 {
		t.Errorf("the epic's story once ended: %s %d/%d, want completed 1/1", s.State, s.Done, s.Total)
	}
}

// storyRun writes files into a new repository folder and opens the events
// of a run of story s in a new session dir.
func storyRun(t *testing.T, files map[string]string) (root, sessionDir string, l *runs.Log) {
	t.Helper()
	root, sessionDir = t.TempDir(), t.TempDir()
	testkit.WriteFiles(t, root, files)
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	session := runs.KindSessionName(runs.KindStory, "s", time.Now())
	l, err := runs.OpenLog(runs.OutputFile(sessionDir, session), "s", "", session, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	return root, sessionDir, l
}

// A completed run whose work is nowhere any more — its branch deleted here
// and on origin, no PR, its tasks pending in the checkout — is to run
// again: status said "completed, 0/1 tasks done" and run refused it. With
// its branch there, or a PR holding its work, it stays completed.
func TestCompletedRunWhoseBranchIsGone(t *testing.T) {
	root, sessionDir, l := storyRun(t, map[string]string{
		".saga/stories/s/story.json": `{"id": "s", "title": "S", "description": "d"}` + "\n",
		".saga/stories/s/t.json":     `{"id": "t", "subject": "T", "description": "d", "status": "pending", "blockedBy": []}` + "\n",
	})
	if err := os.RemoveAll(filepath.Join(root, ".git")); err != nil {
		t.Fatal(err)
	}
	testkit.InitRepo(t, root)
	l.Emit(runs.Event{Event: runs.KindWorkerStart, PID: os.Getpid(), Root: root}, "")
	l.Emit(runs.Event{Event: runs.KindWorkerEnd, Status: runs.StatusCompleted}, "")
	l.Close()
	rec := runs.Record{Story: "s", Status: runs.StatusCompleted, Ended: time.Now(), Branch: runs.StoryBranch("s"), Base: "main"}
	if err := runs.WriteRecord(root, rec); err != nil {
		t.Fatal(err)
	}
	p, ws := tw.Parser(t), tw.Load(t, root)
	state := func() StoryState {
		return NewEvidence(context.Background(), root, sessionDir, p).Story(context.Background(), ws, "s")
	}
	if st := state(); st.State != StoryPending || st.Next().Action != NextRun {
		t.Errorf("its branch gone: %s, next %+v; want pending, to run", st.State, st.Next())
	}
	testkit.Git(t, root, "branch", runs.StoryBranch("s"))
	if st := state(); st.State != runs.StatusCompleted || st.Branch != runs.StoryBranch("s") {
		t.Errorf("its branch there: %s on %q, want completed on story/s", st.State, st.Branch)
	}
	testkit.Git(t, root, "branch", "-D", runs.StoryBranch("s"))
	rec.PR = "https://github.com/acme/shop/pull/7"
	if err := runs.WriteRecord(root, rec); err != nil {
		t.Fatal(err)
	}
	if st := state(); st.State != runs.StatusCompleted || st.PR != rec.PR {
		t.Errorf("its PR recorded: %s, PR %q; want completed with its PR", st.State, st.PR)
	}
}
