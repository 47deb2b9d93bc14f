//go:build unix

package control_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/store"
)

// The clean tests make real leftovers: real workers (dry runs, or the
// stand-in claude and gh) started with `saga-lsp run` in a private tmux
// server, followed to their end, in a git repository (with a bare origin
// where pushing matters); then they drive `saga-lsp clean` and look at
// what is left on disk, in git and in tmux.

// helperHold: args root, name. Takes the lock, prints "locked", holds it
// until stdin closes (a live worker, as far as its lock tells).
func helperHold(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("want root name, got %q", args)
	}
	l, err := filesafe.AcquireLock(context.Background(), args[0], args[1])
	if err != nil {
		return err
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return l.Unlock()
}

// cleanEnv runs the real worker with the stand-in
// claude and gh.
type cleanEnv struct {
	*tmuxEnv
	cfg string // CLAUDE_CONFIG_DIR
}

func newCleanEnv(t *testing.T) *cleanEnv {
	t.Helper()
	h := newTmuxEnv(t)
	return &cleanEnv{tmuxEnv: h, cfg: h.realWorker(t)}
}

// runMerged runs each story to its end (the stand-in claude; --again: one
// completed on main is run all the same), then merges their branches into
// main.
func (h *cleanEnv) runMerged(t *testing.T, stories ...string) {
	t.Helper()
	args := []string{"merge", "-q", "--no-edit"}
	for _, s := range stories {
		h.run(t, s, "--again")
		args = append(args, "story/"+s)
	}
	testkit.Git(t, h.root, args...)
}

// run starts a story's worker and follows it to its end; it returns the
// events file. The story's build caches then exist, with a read-only
// folder as Go's module cache has (a run makes them when its Bash is
// sandboxed, which depends on the machine).
func (h *cleanEnv) run(t *testing.T, story string, args ...string) string {
	t.Helper()
	m := h.startJSON(t, nil, append([]string{story}, args...)...)
	if r := h.saga(t, nil, "follow", story, "--format", "json"); r.Code != 0 {
		t.Fatalf("follow %s: exit %d\n%s%s\noutput:\n%s", story, r.Code, r.Stdout, r.Stderr, testkit.FileText(m["outputFile"].(string)))
	}
	readOnly := filepath.Join(h.cache(t, story), "go-mod", "example.com@v1")
	if err := os.MkdirAll(readOnly, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(readOnly, "go.mod"), []byte("module example.com\n"), 0o444)
	os.Chmod(readOnly, 0o555)
	return m["eventsFile"].(string)
}

// cache is the story's build caches folder.
func (h *cleanEnv) cache(t *testing.T, story string) string {
	t.Helper()
	dir, err := buildcache.CachePath(h.root, story, nil)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

type cleanItem struct {
	Story, Epic, Kind, Path, Reason string
	Removed, Kept                   bool
}

type cleanResult struct {
	DryRun   bool
	Items    []cleanItem
	Left     []cleanItem
	Warnings []string
}

// clean runs `clean --format json` with args; it checks the exit code.
func (h *cleanEnv) clean(t *testing.T, code int, args ...string) cleanResult {
	t.Helper()
	r := h.saga(t, nil, append([]string{"clean", "--format", "json"}, args...)...)
	var res cleanResult
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != code {
		t.Fatalf("clean %v: exit %d (want %d), %v\n%s%s", args, r.Code, code, err, r.Stdout, r.Stderr)
	}
	if res.Items == nil || res.Left == nil || res.Warnings == nil {
		t.Errorf("clean %v: a null list\n%s", args, r.Stdout)
	}
	return res
}

// kinds lists the items as "kind path" (paths relative to the root, the
// session dir or the repository's folder of build caches), "kept " before
// the kept ones.
func (h *cleanEnv) kinds(items []cleanItem) []string {
	var out []string
	for _, it := range items {
		p := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(it.Path, h.root+"/"), h.sessionDir+"/"), h.cfg+"/")
		if cache, err := buildcache.CacheRoot(nil); err == nil {
			p = strings.TrimPrefix(p, cache+"/") // <repo>/agent/<story>
			if _, rest, ok := strings.Cut(p, "/agent/"); ok {
				p = "agent/" + rest
			}
		}
		s := it.Kind + " " + p
		if it.Kept {
			s = "kept " + s
		}
		out = append(out, s)
	}
	return out
}

// remainOnExit starts the tmux server with env added to the test's (a
// session that stays) and turns remain-on-exit on: the panes of finished
// workers stay, dead.
func (h *cleanEnv) remainOnExit(t *testing.T, env ...string) {
	t.Helper()
	keep := exec.Command("tmux", "-L", h.socket, "new-session", "-d", "-s", "keep", "sleep", "600")
	keep.Env = append(slices.Clone(h.env), env...)
	if out, err := keep.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	if out, err := h.tmux("set-option", "-g", "remain-on-exit", "on"); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func (h *cleanEnv) branchExists(t *testing.T, b string) bool {
	return testkit.Git(t, h.root, "branch", "--list", b) != ""
}

func sessionOf(eventsFile string) string {
	s, _ := runs.SessionOfEvents(eventsFile)
	return s
}

// A merged story: without --yes its worktree, branch and run files are
// listed and stay; with --yes they go; a second clean finds nothing.
func TestCleanMergedStory(t *testing.T) {
	h := newCleanEnv(t)
	ev := h.run(t, story)
	wt := store.WorktreeDir(h.root, story)

	// Not merged yet: nothing to clean, and the named story says why.
	res := h.clean(t, 0)
	if len(res.Items) != 0 {
		t.Errorf("unmerged story: %v", h.kinds(res.Items))
	}
	r := h.saga(t, nil, "clean", story)
	want := "story " + story + ": nothing to clean\n" +
		"left worktree .saga/worktrees/" + story + ": story/" + story + " is not merged, and there is no origin to push it to\n" +
		"left branch story/" + story + ": story/" + story + " is not merged\n" +
		"left run files " + runs.OutputOfEvents(ev) + " and its .events.jsonl: the latest run of " + story + ", whose result status shows: it goes when the worktree goes\n"
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("clean %s: exit %d\n got:\n%s\nwant:\n%s%s", story, r.Code, r.Stdout, want, r.Stderr)
	}

	cache := h.cache(t, story)
	testkit.Git(t, h.root, "merge", "-q", "--no-edit", "story/"+story)
	r = h.saga(t, nil, "clean")
	sess := sessionOf(ev)
	want = "would remove worktree .saga/worktrees/" + story + " (everything on story/" + story + " is in main)\n" +
		"would remove build cache " + cache + " (the build caches of its runs; its worktree goes)\n" +
		"would remove branch story/" + story + " (everything on story/" + story + " is in main)\n" +
		"would remove run files " + h.sessionDir + "/" + sess + ".log and its .events.jsonl (a completed run, the latest, and its worktree goes too)\n" +
		"would remove 1 worktree, 1 build cache, 1 branch, 1 run's files — run again with --yes to remove them\n"
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("clean: exit %d\n got:\n%s\nwant:\n%s%s", r.Code, r.Stdout, want, r.Stderr)
	}
	if !exists(wt) || !h.branchExists(t, "story/"+story) || !exists(ev) {
		t.Fatal("clean without --yes removed something")
	}

	// Check results its TaskCompleted hooks shared: a finished one goes,
	// one a hook holds the lock of stays.
	done := runs.CheckShare(h.sessionDir, "s1", story, "t1")
	held := runs.CheckShare(h.sessionDir, "s2", story, "t2")
	other := runs.CheckShare(h.sessionDir, "s3", "x--"+story, "t3") // another story's
	for _, b := range []string{done, held, other} {
		os.MkdirAll(filepath.Dir(b), 0o755)
		os.WriteFile(b+".lock", nil, 0o600)
		os.WriteFile(b+".json", []byte(`{"passed":true}`), 0o600)
	}
	lock, err := os.Open(held + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	res = h.clean(t, 0, "--yes")
	if got := h.kinds(res.Items); !slices.Equal(got, []string{"worktree .saga/worktrees/" + story, "build-cache agent/" + story, "branch story/" + story, "check-shares checks", "run-files " + sess + ".log"}) {
		t.Errorf("clean --yes: %v", got)
	}
	if exists(done+".json") || exists(done+".lock") || !exists(held+".json") || !exists(other+".json") {
		t.Errorf("shared check results after clean: finished %v, held %v, another story's %v", exists(done+".json"), exists(held+".json"), exists(other+".json"))
	}
	lock.Close()
	os.Remove(held + ".lock")
	os.Remove(held + ".json")
	os.RemoveAll(filepath.Dir(other))
	for _, it := range res.Items {
		if !it.Removed || it.Kept {
			t.Errorf("not removed: %+v", it)
		}
	}
	if exists(wt) || h.branchExists(t, "story/"+story) || exists(ev) || exists(runs.OutputOfEvents(ev)) || exists(cache) {
		t.Errorf("left after clean --yes: worktree %v, branch %v, events %v", exists(wt), h.branchExists(t, "story/"+story), exists(ev))
	}
	if out := testkit.Git(t, h.root, "worktree", "list", "--porcelain"); strings.Contains(out, "worktrees") {
		t.Errorf("git still lists the worktree:\n%s", out)
	}
	if entries, _ := os.ReadDir(filepath.Join(h.root, ".saga", "worktrees")); len(entries) != 0 {
		t.Errorf(".saga/worktrees holds %v", entries)
	}

	// Twice is a no-op.
	if r := h.saga(t, nil, "clean", "--yes"); r.Code != 0 || r.Stdout != "nothing to clean\n" {
		t.Errorf("second clean --yes: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := h.saga(t, nil, "status", story); r.Code != 0 {
		t.Errorf("status after clean: exit %d\n%s", r.Code, r.Stderr)
	}
}

// Uncommitted changes keep the worktree (and the branch checked out in
// it): exit 1, with the reason.
func TestCleanKeepsUncommittedChanges(t *testing.T) {
	h := newCleanEnv(t)
	ev := h.run(t, story)
	testkit.Git(t, h.root, "merge", "-q", "--no-edit", "story/"+story)
	wt := store.WorktreeDir(h.root, story)
	if err := os.WriteFile(filepath.Join(wt, "notes.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := h.saga(t, nil, "clean", "--yes")
	want := "kept worktree .saga/worktrees/" + story + ": uncommitted changes: ?? notes.txt\n" +
		"kept branch story/" + story + ": checked out in .saga/worktrees/" + story + ", which stays\n" +
		"kept 2 that cannot safely go now (see above)\n" +
		"left run files " + runs.OutputOfEvents(ev) + " and its .events.jsonl: the latest run of " + story + ", whose result status shows: it goes when the worktree goes\n"
	if r.Code != 1 || r.Stdout != want {
		t.Errorf("clean --yes: exit %d\n got:\n%s\nwant:\n%s%s", r.Code, r.Stdout, want, r.Stderr)
	}
	if !exists(filepath.Join(wt, "notes.txt")) || !h.branchExists(t, "story/"+story) || !exists(ev) {
		t.Error("something of the kept worktree went")
	}
	// Committed, it goes.
	testkit.Git(t, wt, "add", "notes.txt")
	testkit.Git(t, wt, "commit", "-q", "-m", "notes")
	testkit.Git(t, h.root, "merge", "-q", "--no-edit", "story/"+story)
	h.clean(t, 0, "--yes")
	if exists(wt) || h.branchExists(t, "story/"+story) {
		t.Error("the committed and merged worktree stayed")
	}
}

// A live worker (its lock held) keeps everything of its story; other
// stories are cleaned.
func TestCleanKeepsLiveWorker(t *testing.T) {
	h := newCleanEnv(t)
	other := "user-auth--setup-db"
	h.runMerged(t, story, other)

	cmd := testkit.HelperCmd("hold", h.root, runs.WorkerLockName(story))
	stdin, _, err := testkit.StartHelper(cmd, "locked")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()

	res := h.clean(t, 1, "--yes")
	for _, it := range res.Items {
		switch {
		case it.Story == story && (!it.Kept || it.Removed || !strings.Contains(it.Reason, fmt.Sprintf("a worker of %s is running (pid %d)", story, cmd.Process.Pid))):
			t.Errorf("live story's item: %+v", it)
		case it.Story == other && (!it.Removed || it.Kept):
			t.Errorf("other story's item: %+v", it)
		}
	}
	if !exists(store.WorktreeDir(h.root, story)) || !h.branchExists(t, "story/"+story) {
		t.Error("the live story's worktree or branch went")
	}
	if exists(store.WorktreeDir(h.root, other)) || h.branchExists(t, "story/"+other) {
		t.Error("the other story was not cleaned")
	}
	if got := h.kinds(res.Items); len(got) != 6 { // kept worktree and branch; the other's worktree, cache, branch, run (the live story's run stays: its latest, with its worktree)
		t.Errorf("items: %v", got)
	}
}

// A killed worker leaves its task list, its tmux session (dead pane, kept
// by remain-on-exit) and its run files: the task list and the session go
// at once; its run files once a newer run exists.
func TestCleanDeadWorker(t *testing.T) {
	h := newCleanEnv(t)
	// The server keeps the environment it started with: the stand-in
	// claude pauses for a minute before its first turn.
	h.remainOnExit(t, "SAGA_STANDIN_SCRIPT=slow", "SAGA_STANDIN_DELAY_MS=60000")
	m := h.startJSON(t, nil, story)
	ev := m["eventsFile"].(string)
	var start event
	if !testkit.WaitUntil(30*time.Second, func() bool { start = findEvent(readEvents(t, ev), "run.start", ""); return start != nil }) {
		t.Fatalf("no run started:\n%s", testkit.FileText(m["outputFile"].(string)))
	}
	hydrate := findEvent(readEvents(t, ev), "step", "hydrate")
	list := hydrate["taskListDir"].(string)
	for _, pid := range []int{int(m["pid"].(float64)), int(start["pid"].(float64))} {
		syscall.Kill(pid, syscall.SIGKILL)
		if !testkit.WaitExit(pid, 10*time.Second) {
			t.Fatalf("pid %d lives on", pid)
		}
	}
	session := m["session"].(string)
	if !testkit.WaitUntil(30*time.Second, func() bool {
		out, _ := h.tmux("list-panes", "-t", "="+session, "-F", "#{pane_dead}")
		return strings.TrimSpace(out) == "1"
	}) {
		t.Fatal("the killed worker's pane is not kept dead")
	}
	if !exists(list) {
		t.Fatalf("no task list %s", list)
	}

	// The agent was killed before its work was committed: the worktree
	// (whose branch has nothing main lacks yet) stays.
	if err := os.WriteFile(filepath.Join(store.WorktreeDir(h.root, story), "work.txt"), []byte("unsaved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := h.clean(t, 1, "--yes")
	if got := h.kinds(res.Items); !slices.Equal(got, []string{"kept worktree .saga/worktrees/" + story, "kept branch story/" + story,
		"task-list tasks/" + filepath.Base(list), "tmux-session " + session}) || res.Items[0].Reason != "uncommitted changes: ?? work.txt" {
		t.Errorf("clean --yes: %v\n%+v", got, res.Items[0])
	}
	if exists(list) || h.hasSession(session) || !exists(ev) {
		t.Errorf("after clean: task list %v, session %v, events %v", exists(list), h.hasSession(session), exists(ev))
	}

	// A second run completes (the stand-in without its pause): the killed
	// run's files go, the latest stay (the worktree is not merged); so does
	// the new run's dead session.
	if out, err := h.tmux("set-environment", "-g", "SAGA_STANDIN_SCRIPT", "all"); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	ev2 := h.run(t, story)
	r := h.saga(t, nil, "clean", story)
	want := "would kill tmux session " + sessionOf(ev2) + " (its worker has exited; remain-on-exit keeps its dead pane)\n" +
		"would remove run files " + runs.OutputOfEvents(ev) + " and its .events.jsonl (a killed run, not the latest of " + story + ")\n"
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, want) || !strings.Contains(r.Stdout, "left run files "+runs.OutputOfEvents(ev2)) {
		t.Errorf("clean %s: exit %d\n got:\n%s\nwant first:\n%s%s", story, r.Code, r.Stdout, want, r.Stderr)
	}
	h.clean(t, 0, story, "--yes")
	if exists(ev) || exists(runs.OutputOfEvents(ev)) || !exists(ev2) || !exists(store.WorktreeDir(h.root, story)) {
		t.Errorf("after clean: old run %v, new run %v", exists(ev), exists(ev2))
	}
}

// A completed run whose branch is pushed: the worktree goes, the branch
// stays until its pull request merges; a squash-merged pull request (the
// branch is not in main) lets the branch go too.
func TestCleanCompletedAndPushed(t *testing.T) {
	h := newCleanEnv(t)
	testkit.BareOrigin(t, h.root)
	state := filepath.Join(t.TempDir(), "gh.json")
	h.env = append(h.env, "SAGA_GH="+testkit.Build(t, "./testdata/standin/gh"), "GH_STANDIN_STATE="+state, "GH_STANDIN_REPO=acme/shop")
	ev := h.run(t, story)
	wt := store.WorktreeDir(h.root, story)
	if rec, ok := runs.ReadRecord(h.root, story); !ok || rec.PR == "" || rec.PRState != runs.PROpen {
		t.Errorf("the worker's record of the PR it opened: %+v", rec)
	}

	r := h.saga(t, nil, "clean", "--yes")
	want := "removed worktree .saga/worktrees/" + story + " (its last run completed and story/" + story + " is pushed to origin)\n" +
		"removed build cache " + h.cache(t, story) + " (the build caches of its runs; its worktree goes)\n" +
		"removed run files " + runs.OutputOfEvents(ev) + " and its .events.jsonl (a completed run, the latest, and its worktree goes too)\n" +
		"removed 1 worktree, 1 build cache, 1 run's files\n" +
		// What stays is the branch, not the worktree just removed.
		"left branch story/" + story + ": story/" + story + " is not merged (its work is on origin until the pull request merges)\n"
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("clean --yes: exit %d\n got:\n%s\nwant:\n%s%s", r.Code, r.Stdout, want, r.Stderr)
	}
	if exists(wt) || !h.branchExists(t, "story/"+story) {
		t.Errorf("worktree %v, branch %v", exists(wt), h.branchExists(t, "story/"+story))
	}
	res := h.clean(t, 0, story)
	if l := res.Left; len(res.Items) != 0 || len(l) != 1 || l[0].Kind != "branch" ||
		l[0].Reason != "story/"+story+" is not merged (its work is on origin until the pull request merges)" {
		t.Errorf("items %v, left %+v", h.kinds(res.Items), l)
	}

	// Squash-merged on the forge.
	data, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	for _, pr := range st["prs"].([]any) {
		pr.(map[string]any)["state"] = "MERGED"
	}
	data, _ = json.Marshal(st)
	if err := os.WriteFile(state, data, 0o644); err != nil {
		t.Fatal(err)
	}
	res = h.clean(t, 0, story, "--yes")
	if got := h.kinds(res.Items); !slices.Contains(got, "branch story/"+story) ||
		res.Items[slices.Index(got, "branch story/"+story)].Reason != "the pull request of story/"+story+" is merged" {
		t.Errorf("squash-merged: %+v", res.Items)
	}
	if h.branchExists(t, "story/"+story) {
		t.Error("the branch of the merged pull request stayed")
	}
	// What gh said is recorded: status knows the PR merged without asking
	// (gh is gone now), and the story stays completed with its branch gone.
	if rec, ok := runs.ReadRecord(h.root, story); !ok || rec.PRState != runs.PRMerged || rec.PRStateAt.IsZero() {
		t.Errorf("run record after clean: %+v", rec)
	}
	noGH := []string{"SAGA_GH=" + filepath.Join(t.TempDir(), "no-gh")}
	if r := h.saga(t, noGH, "status", story); r.Code != 0 || !strings.Contains(r.Stdout, "(merged, as last seen)") {
		t.Errorf("status without gh: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// A named story is the only one cleaned; an unknown name is exit 2 with
// the closest name.
func TestCleanNamedAndUnknownStory(t *testing.T) {
	h := newCleanEnv(t)
	other := "user-auth--setup-db"
	h.runMerged(t, story, other)
	res := h.clean(t, 0, other, "--yes")
	for _, it := range res.Items {
		if it.Story != other {
			t.Errorf("item of another story: %+v", it)
		}
	}
	if exists(store.WorktreeDir(h.root, other)) || !exists(store.WorktreeDir(h.root, story)) {
		t.Error("clean <story> did not clean just that story")
	}
	if r := h.saga(t, nil, "clean", other); r.Code != 0 || r.Stdout != "story "+other+": nothing to clean\n" {
		t.Errorf("clean %s again: exit %d\n%s", other, r.Code, r.Stdout)
	}
	r := h.saga(t, nil, "clean", "add-logout-buton")
	if r.Code != 2 || !strings.Contains(r.Stderr, `no story "add-logout-buton"`) || !strings.Contains(r.Stderr, `did you mean "add-logout-button"?`) ||
		!strings.Contains(r.Stderr, "usage: saga-lsp clean") {
		t.Errorf("unknown story: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := h.saga(t, nil, "clean", "Bad_Name"); r.Code != 2 || !strings.Contains(r.Stderr, `invalid story name "Bad_Name"`) {
		t.Errorf("invalid name: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := h.saga(t, nil, "clean", "--format", "yaml"); r.Code != 2 {
		t.Errorf("bad format: exit %d\n%s", r.Code, r.Stderr)
	}
}

// Another clone of the repository shares the session dir, the task lists
// and the tmux server, and has the same story names: nothing of its runs
// is ever listed.
func TestCleanLeavesOtherCheckouts(t *testing.T) {
	h := newCleanEnv(t)
	h.remainOnExit(t)
	ev := h.run(t, story, "--keep-tasks")
	testkit.Git(t, h.root, "merge", "-q", "--no-edit", "story/"+story)
	other := testkit.GitRepo(t, "../../examples/workspace")
	r := sagaLSP(t, other, h.env, "clean", "--yes")
	if r.Code != 0 || r.Stdout != "nothing to clean\n" {
		t.Errorf("clean in the other clone: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := sagaLSP(t, other, h.env, "clean", story); r.Code != 0 || r.Stdout != "story "+story+": nothing to clean\n" {
		t.Errorf("clean %s in the other clone: exit %d\n%s%s", story, r.Code, r.Stdout, r.Stderr)
	}
	// Here, all of it goes, the kept task list too.
	list := findEvent(readEvents(t, ev), "step", "hydrate")["taskListDir"].(string)
	res := h.clean(t, 0, "--yes")
	if got := h.kinds(res.Items); !slices.Equal(got, []string{"worktree .saga/worktrees/" + story, "build-cache agent/" + story, "branch story/" + story,
		"task-list tasks/" + filepath.Base(list), "tmux-session " + sessionOf(ev), "run-files " + sessionOf(ev) + ".log"}) {
		t.Errorf("clean --yes: %v", got)
	}
	if exists(list) || exists(ev) || h.hasSession(sessionOf(ev)) {
		t.Error("something stayed")
	}
}

// An interrupted removal is finished by the next clean: a worktree moved
// aside and not yet deleted, and one git had begun deleting.
func TestCleanFinishesInterruptedRemoval(t *testing.T) {
	h := newCleanEnv(t)
	other := "user-auth--setup-db"
	h.runMerged(t, story, other)
	wts := filepath.Join(h.root, ".saga", "worktrees")
	// Moved aside (the first step of a removal).
	testkit.Git(t, h.root, "worktree", "move", filepath.Join(wts, story), filepath.Join(wts, ".removing-"+story))
	// Half deleted: git had removed its .git file and some of its files.
	half := filepath.Join(wts, ".removing-"+other)
	testkit.Git(t, h.root, "worktree", "move", filepath.Join(wts, other), half)
	if err := os.Remove(filepath.Join(half, ".git")); err != nil {
		t.Fatal(err)
	}

	res := h.clean(t, 0)
	if got := h.kinds(res.Items); !slices.Contains(got, "worktree .saga/worktrees/.removing-"+story) ||
		!slices.Contains(got, "worktree .saga/worktrees/.removing-"+other) || !slices.Contains(got, "branch story/"+other) {
		t.Errorf("clean: %v", got)
	}
	h.clean(t, 0, "--yes")
	if entries, _ := os.ReadDir(wts); len(entries) != 0 {
		t.Errorf(".saga/worktrees holds %v", entries)
	}
	if out := testkit.Git(t, h.root, "worktree", "list", "--porcelain"); strings.Contains(out, "worktrees") {
		t.Errorf("git still lists a worktree:\n%s", out)
	}
	if h.branchExists(t, "story/"+story) || h.branchExists(t, "story/"+other) {
		t.Error("a merged branch stayed")
	}
}

// An epic run: its stories' worktrees, branches and runs, and the
// runner's own run files, go once the stories are merged.
func TestCleanEpicRun(t *testing.T) {
	h := newCleanEnv(t)
	m := h.startJSON(t, nil, "user-auth", "--max-parallel", "1")
	if r := h.saga(t, nil, "follow", "user-auth", "--format", "json"); r.Code != 0 {
		t.Fatalf("follow: exit %d\n%s%s\n%s", r.Code, r.Stdout, r.Stderr, testkit.FileText(m["outputFile"].(string)))
	}
	epicEvents := m["eventsFile"].(string)
	// Before the merge, the runner's files stay with its stories' worktrees.
	res := h.clean(t, 0)
	if len(res.Items) != 0 {
		t.Errorf("unmerged epic: %v", h.kinds(res.Items))
	}
	testkit.Git(t, h.root, "merge", "-q", "--no-edit", "story/user-auth--login-page")
	res = h.clean(t, 0, "--yes")
	var epicItem *cleanItem
	n := map[string]int{}
	for i, it := range res.Items {
		n[it.Kind]++
		if it.Epic == "user-auth" {
			epicItem = &res.Items[i]
		}
	}
	// user-auth--setup-db is completed on main: the runner did not run it.
	if n["worktree"] != 2 || n["branch"] != 2 || n["run-files"] != 3 || epicItem == nil ||
		epicItem.Reason != "a completed run of epic user-auth, the latest, and the worktrees of its stories go too" {
		t.Errorf("clean --yes: %v\n%+v", h.kinds(res.Items), epicItem)
	}
	if exists(epicEvents) {
		t.Error("the runner's events file stayed")
	}
	if entries, _ := os.ReadDir(h.sessionDir); len(entries) != 0 {
		t.Errorf("session dir holds %v", entries)
	}
}
