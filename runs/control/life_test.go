//go:build unix

package control_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// The life of a story run (docs/commands.md#the-life-of-a-story-run), over
// real git, tmux, a bare origin, the stand-in claude and gh: once a
// completed story's worktree is cleaned away, plan, status and run still
// say it is completed; run --again runs it again on its open PR; reset
// discards the attempt — locally, then with --remote its pushed branch and
// PR — and everything says pending again.
func TestStoryLifeAgreesAfterCleanAgainAndReset(t *testing.T) {
	h := newCleanEnv(t)
	testkit.BareOrigin(t, h.root)
	state := filepath.Join(t.TempDir(), "gh.json")
	h.env = append(h.env, "SAGA_GH="+testkit.Build(t, "./testdata/standin/gh"), "GH_STANDIN_STATE="+state, "GH_STANDIN_REPO=acme/shop")
	h.run(t, story)
	h.clean(t, 0, "--yes")
	if exists(store.WorktreeDir(h.root, story)) {
		t.Fatal("clean left the completed, pushed story's worktree")
	}

	type line struct {
		State, Status string
		Done, Total   int
		PR, Branch    string
		Tasks         []struct{ ID, Status string }
	}
	statusOf := func() line {
		t.Helper()
		r := h.saga(t, nil, "status", story, "--format", "json")
		var st struct{ Stories []line }
		if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || len(st.Stories) != 1 {
			t.Fatalf("status: %v\n%s%s", err, r.Stdout, r.Stderr)
		}
		return st.Stories[0]
	}
	planOf := func() (completed, ready []string) {
		t.Helper()
		r := h.saga(t, nil, "plan", story, "--format", "json")
		var p struct{ Completed, Ready []string }
		if err := json.Unmarshal([]byte(r.Stdout), &p); err != nil {
			t.Fatalf("plan: %v\n%s%s", err, r.Stdout, r.Stderr)
		}
		return p.Completed, p.Ready
	}

	// After clean: completed everywhere, read from the branch.
	s := statusOf()
	if s.State != "completed" || s.Status != "completed" || s.Done != 2 || s.Total != 2 || s.PR == "" || s.Branch != "story/"+story {
		t.Errorf("status after clean: %+v", s)
	}
	if done, ready := planOf(); len(done) != 2 || len(ready) != 0 {
		t.Errorf("plan after clean: completed %v, ready %v", done, ready)
	}
	r := h.saga(t, nil, "run", story)
	if r.Code != 0 || !strings.Contains(r.Stdout, "story "+story+" is already completed (2/2 tasks") || exists(store.WorktreeDir(h.root, story)) {
		t.Errorf("run of a completed story: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	pr := s.PR
	old := strings.TrimSpace(testkit.Git(t, h.root, "rev-parse", "refs/remotes/origin/story/"+story))

	// run --again: a new attempt from the base's tip, on the same PR.
	ev := h.run(t, story, "--again")
	out := testkit.FileText(runs.OutputOfEvents(ev))
	if !strings.Contains(out, "created .saga/worktrees/"+story+" on new branch story/"+story) || !strings.Contains(out, "replaces origin's story/"+story) ||
		!strings.Contains(out, "pull request exists: "+pr) || !strings.Contains(out, "a new attempt: "+pr+" is a draft again") {
		t.Errorf("run --again output:\n%s", out)
	}
	if now := strings.TrimSpace(testkit.Git(t, h.root, "ls-remote", "origin", "refs/heads/story/"+story)); strings.HasPrefix(now, old) || now == "" {
		t.Errorf("origin's branch after --again: %q (was %s)", now, old)
	}
	if s := statusOf(); s.State != "completed" || s.PR != pr {
		t.Errorf("status after --again: %+v", s)
	}

	// reset lists without --yes (no terminal), then discards the local
	// attempt; origin's branch and the PR stay.
	r = h.saga(t, nil, "reset", story)
	if r.Code != 0 || !strings.Contains(r.Stdout, "would remove worktree .saga/worktrees/"+story) ||
		!strings.Contains(r.Stdout, "would remove branch story/"+story) || strings.Count(r.Stdout, "run again with --yes") != 1 ||
		!exists(store.WorktreeDir(h.root, story)) {
		t.Errorf("reset without --yes: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = h.saga(t, nil, "reset", story, "--yes", "--format", "json")
	var res cleanResult
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 || res.DryRun {
		t.Fatalf("reset --yes: exit %d, %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	kinds := strings.Join(h.kinds(res.Items), "\n")
	for _, want := range []string{"worktree .saga/worktrees/" + story, "branch story/" + story, "run-record", "run-files"} {
		if !strings.Contains(kinds, want) {
			t.Errorf("reset --yes removed no %s:\n%s", want, kinds)
		}
	}
	if exists(store.WorktreeDir(h.root, story)) || h.branchExists(t, "story/"+story) {
		t.Error("reset left the worktree or the branch")
	}
	if _, ok := runs.ReadRecord(h.root, story); ok {
		t.Error("reset left the run record")
	}
	// Origin still has the attempt: its statuses are what is known.
	if s := statusOf(); s.State != "completed" {
		t.Errorf("status after a local reset (origin keeps the branch): %+v", s)
	}

	// --remote: the pushed branch goes and the PR is closed; the story is
	// pending everywhere, its files on main untouched.
	mainBefore := testkit.FileText(filepath.Join(h.root, ".saga", "stories", story, "write-tests.json"))
	r = h.saga(t, nil, "reset", story, "--yes", "--remote")
	if r.Code != 0 || !strings.Contains(r.Stdout, "removed remote branch origin/story/"+story) || !strings.Contains(r.Stdout, "removed pull request "+pr) {
		t.Errorf("reset --remote --yes: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if out := testkit.Git(t, h.root, "ls-remote", "origin", "refs/heads/story/"+story); strings.TrimSpace(out) != "" {
		t.Errorf("origin keeps the branch: %s", out)
	}
	if data, _ := os.ReadFile(state); !strings.Contains(string(data), `"CLOSED"`) {
		t.Errorf("the PR is not closed: %s", data)
	}
	testkit.Git(t, h.root, "fetch", "-q", "--prune", "origin")
	if s := statusOf(); s.State != "pending" || s.Status != "pending" || s.Done != 0 {
		t.Errorf("status after reset --remote: %+v", s)
	}
	if done, ready := planOf(); len(done) != 0 || len(ready) == 0 {
		t.Errorf("plan after reset: completed %v, ready %v", done, ready)
	}
	if now := testkit.FileText(filepath.Join(h.root, ".saga", "stories", story, "write-tests.json")); now != mainBefore {
		t.Error("reset changed the story's files on main")
	}
}

// reset refuses while a dependent's branch is built on the story's, and
// for an unknown name suggests the closest.
func TestResetRefusesUnderADependent(t *testing.T) {
	h := newCleanEnv(t)
	// user-auth--api's branch stacked on user-auth--setup-db's.
	testkit.Git(t, h.root, "branch", "story/user-auth--setup-db")
	wt := t.TempDir()
	testkit.Git(t, h.root, "worktree", "add", "-q", wt, "story/user-auth--setup-db")
	os.WriteFile(filepath.Join(wt, "db.sql"), []byte("create table users;\n"), 0o644)
	testkit.Git(t, wt, "add", "db.sql")
	testkit.Git(t, wt, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "db")
	testkit.Git(t, h.root, "branch", "story/user-auth--api", "story/user-auth--setup-db")

	r := h.saga(t, nil, "reset", "user-auth--setup-db", "--yes")
	if r.Code != 1 || !strings.Contains(r.Stderr, "story/user-auth--api is built on story/user-auth--setup-db: reset user-auth--api first") {
		t.Errorf("reset under a dependent: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if !h.branchExists(t, "story/user-auth--setup-db") {
		t.Error("a refused reset removed the branch")
	}
	r = h.saga(t, nil, "reset", "user-auth--setpu-db")
	if r.Code != 2 || !strings.Contains(r.Stderr, `did you mean "user-auth--setup-db"?`) {
		t.Errorf("reset of a typo: exit %d\n%s", r.Code, r.Stderr)
	}
	// The dependent itself resets; then its blocker can.
	if r := h.saga(t, nil, "reset", "user-auth--api", "--yes"); r.Code != 0 || h.branchExists(t, "story/user-auth--api") {
		t.Errorf("reset of the dependent: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	testkit.Git(t, h.root, "worktree", "remove", "--force", wt)
	if r := h.saga(t, nil, "reset", "user-auth--setup-db", "--yes"); r.Code != 0 || h.branchExists(t, "story/user-auth--setup-db") {
		t.Errorf("reset after the dependent: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// A run stopped before its worktree step names its repository but no
// worktree: reset discards its files too, so that the story is pending
// again where status reads it (the read model counts every run of the
// repository, runs.Run.In) — it stayed "stopped" after reset before.
func TestResetDiscardsARunStoppedBeforeItsWorktree(t *testing.T) {
	h := newTmuxEnv(t)
	session := runs.KindSessionName(runs.KindStory, story, time.Now())
	l, err := runs.OpenLog(filepath.Join(h.sessionDir, session+".log"), story, "", session, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Emit(runs.Event{Event: runs.KindWorkerStart, Root: h.root, PID: 1}, "worker")
	l.Emit(runs.Event{Event: runs.KindWorkerEnd, Status: runs.StatusStopped, ExitCode: runs.Int(1)}, "worker stopped")
	l.Close()
	stateOf := func() string {
		t.Helper()
		r := h.saga(t, nil, "status", story, "--format", "json")
		var st struct{ Stories []struct{ State string } }
		if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || len(st.Stories) != 1 {
			t.Fatalf("status: %v\n%s%s", err, r.Stdout, r.Stderr)
		}
		return st.Stories[0].State
	}
	if s := stateOf(); s != runs.StatusStopped {
		t.Fatalf("before reset: %s", s)
	}
	if r := h.saga(t, nil, "reset", story, "--yes"); r.Code != 0 {
		t.Fatalf("reset: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if s := stateOf(); s != readmodel.StoryPending {
		t.Errorf("after reset: %s, want pending", s)
	}
}
