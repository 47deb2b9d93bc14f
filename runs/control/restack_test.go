//go:build unix

package control_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/store"
)

// restackRepo is an epic run's end over real git: story shop--a done on
// story/shop--a, shop--b stacked on it and done on story/shop--b, both
// recorded as completed with the reference commit main's tip. shop--b's
// task checks that a.txt is still "a" and b.txt is "ok".
type restackRepo struct {
	root, sessions string
	main           string // main's tip, the reference commit
	env            map[string]string
}

func newRestackRepo(t *testing.T) *restackRepo {
	t.Helper()
	root := t.TempDir()
	testkit.WriteFiles(t, root, map[string]string{
		".saga/epics/shop/epic.json": `{"id": "shop", "title": "Shop", "description": "", "children": [
  {"id": "shop--a", "blockedBy": []}, {"id": "shop--b", "blockedBy": ["shop--a"]}]}`,
		".saga/stories/shop--a/story.json": `{"id": "shop--a", "title": "A", "description": ""}`,
		".saga/stories/shop--a/t1.json":    `{"id": "t1", "subject": "a", "description": "", "status": "pending", "blockedBy": []}`,
		".saga/stories/shop--b/story.json": `{"id": "shop--b", "title": "B", "description": ""}`,
		".saga/stories/shop--b/t1.json": `{"id": "t1", "subject": "b", "description": "", "status": "pending", "blockedBy": [],
  "checks": ["test \"$(cat a.txt)\" = a", "grep -q ok b.txt"]}`,
		"shared.txt": "base\n",
	})
	testkit.InitRepo(t, root)
	r := &restackRepo{root: root, sessions: t.TempDir(), main: testkit.Git(t, root, "rev-parse", "HEAD"), env: map[string]string{}}
	if err := os.Chmod(r.sessions, 0o700); err != nil {
		t.Fatal(err)
	}
	r.commitOn(t, "shop--a", "main", map[string]string{"a.txt": "a\n"})
	r.commitOn(t, "shop--b", "story/shop--a", map[string]string{"b.txt": "ok\n", "shared.txt": "b's\n"})
	for s, base := range map[string]string{"shop--a": "main", "shop--b": "story/shop--a"} {
		if err := runs.WriteRecord(root, runs.Record{Story: s, Session: "saga-" + s, Status: runs.StatusCompleted, Ended: time.Now().UTC(),
			Branch: "story/" + s, Base: base, Reference: r.main}); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// commitOn commits files on story/<story> (created from from when new) and
// the story's task as completed, leaving the checkout on main.
func (r *restackRepo) commitOn(t *testing.T, story, from string, files map[string]string) string {
	t.Helper()
	if r.tip(t, "story/"+story) == "" {
		testkit.Git(t, r.root, "checkout", "-q", "-b", "story/"+story, from)
	} else {
		testkit.Git(t, r.root, "checkout", "-q", "story/"+story)
	}
	task := filepath.Join(r.root, ".saga/stories", story, "t1.json")
	data, err := os.ReadFile(task)
	if err != nil {
		t.Fatal(err)
	}
	files[".saga/stories/"+story+"/t1.json"] = strings.Replace(string(data), `"pending"`, `"completed"`, 1)
	testkit.WriteFiles(t, r.root, files)
	testkit.Git(t, r.root, "add", "-A")
	testkit.Git(t, r.root, "commit", "-q", "-m", "work of "+story)
	tip := testkit.Git(t, r.root, "rev-parse", "HEAD")
	testkit.Git(t, r.root, "checkout", "-q", "main")
	return tip
}

func (r *restackRepo) tip(t *testing.T, branch string) string {
	t.Helper()
	res := testkit.Run(t, r.root, nil, "", "git", "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	return strings.TrimSpace(res.Stdout)
}

func (r *restackRepo) setup() control.Setup {
	return control.Setup{Root: r.root, SessionDir: r.sessions, Env: func(k string) string {
		if v, ok := r.env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}}
}

func (r *restackRepo) state(t *testing.T, story string) readmodel.StoryState {
	t.Helper()
	p, _ := store.NewParser()
	return readmodel.NewEvidence(context.Background(), r.root, r.sessions, p).Story(context.Background(), workspace.Load(t, r.root), story)
}

func (r *restackRepo) restack(t *testing.T, story string) *control.RestackResult {
	t.Helper()
	p, _ := store.NewParser()
	res, err := control.Restack(context.Background(), control.RestackOptions{Setup: r.setup(), Story: story, Workspace: workspace.Load(t, r.root),
		Parser: p, Policy: verify.Policy{AllowUnconfined: true}})
	if err != nil {
		t.Fatalf("restack %s: %v", story, err)
	}
	return res
}

func (r *restackRepo) statusText(t *testing.T, story string) string {
	t.Helper()
	st, err := control.GetStatus(context.Background(), control.StatusOptions{Setup: r.setup(), Story: story})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := st.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A review round pushes to the blocker: its dependent is base moved in the
// read model and in status, with restack as its next step; restack rebuilds
// it on the new tip in its own (clean) worktree, its checks pass there, the
// record keeps the new reference commit, the branch is pushed over its PR's
// with a lease, and the story is no longer base moved.
func TestRestackRebuildsOnTheMovedBase(t *testing.T) {
	r := newRestackRepo(t)
	testkit.BareOrigin(t, r.root)
	testkit.Git(t, r.root, "push", "-q", "origin", "story/shop--a", "story/shop--b")
	rec, _ := runs.ReadRecord(r.root, "shop--b")
	rec.PR = "https://github.com/acme/shop/pull/2"
	if err := runs.WriteRecord(r.root, rec); err != nil {
		t.Fatal(err)
	}
	testkit.Git(t, r.root, "worktree", "add", "-q", store.WorktreeDir(r.root, "shop--b"), "story/shop--b")
	old := r.tip(t, "story/shop--b")

	if st := r.state(t, "shop--b"); st.BaseMoved != nil || st.State != runs.StatusCompleted {
		t.Fatalf("before the blocker moved: %+v", st)
	}
	if res := r.restack(t, "shop--b"); res.Restacked || !strings.Contains(res.Why, "did not move") || r.tip(t, "story/shop--b") != old {
		t.Fatalf("restack of a story whose base did not move: %+v", res)
	}

	moved := r.commitOn(t, "shop--a", "", map[string]string{"a2.txt": "review fix\n"})
	st := r.state(t, "shop--b")
	if st.BaseMoved == nil || st.BaseMoved.Base != "story/shop--a" || st.BaseMoved.Tip != moved {
		t.Fatalf("after the blocker moved: base moved %+v", st.BaseMoved)
	}
	if next := st.Next(); !strings.Contains(next.Text, "`saga-lsp restack shop--b`") {
		t.Errorf("next step: %+v", next)
	}
	if text := r.statusText(t, "shop--b"); !strings.Contains(text, "base:     base moved: story/shop--a is at "+moved[:12]+" now — `saga-lsp restack shop--b`") {
		t.Errorf("status:\n%s", text)
	}
	if a := r.state(t, "shop--a"); a.BaseMoved != nil {
		t.Errorf("the blocker itself is base moved: %+v", a.BaseMoved)
	}

	res := r.restack(t, "shop--b")
	if !res.Restacked || !res.Passed || res.Replayed != 1 || res.Where != ".saga/worktrees/shop--b" || len(res.Checks) != 2 || !res.Pushed {
		t.Fatalf("restack: %+v", res)
	}
	now := r.tip(t, "story/shop--b")
	if now != res.New || now == old {
		t.Errorf("story/shop--b is at %s, the result says %s (was %s)", now, res.New, old)
	}
	testkit.Git(t, r.root, "merge-base", "--is-ancestor", moved, now)
	if got := testkit.Git(t, r.root, "show", now+":b.txt"); got != "ok" {
		t.Errorf("b.txt on the rebuilt branch: %q", got)
	}
	if head := testkit.Git(t, store.WorktreeDir(r.root, "shop--b"), "symbolic-ref", "--short", "HEAD"); head != "story/shop--b" {
		t.Errorf("the story's worktree is on %s", head)
	}
	if st := testkit.Git(t, store.WorktreeDir(r.root, "shop--b"), "status", "--porcelain"); st != "" {
		t.Errorf("the story's worktree is not clean:\n%s", st)
	}
	if got := testkit.Git(t, r.root, "ls-remote", "origin", "refs/heads/story/shop--b"); !strings.HasPrefix(got, now) {
		t.Errorf("origin's story/shop--b: %q, want %s", got, now)
	}
	rec, _ = runs.ReadRecord(r.root, "shop--b")
	if rec.Reference != r.main || rec.Restack != nil || rec.Base != "story/shop--a" {
		t.Errorf("record after restack: %+v", rec)
	}
	if st := r.state(t, "shop--b"); st.BaseMoved != nil || st.State != runs.StatusCompleted {
		t.Errorf("after restack: %+v", st)
	}
	if res := r.restack(t, "shop--b"); res.Restacked {
		t.Errorf("a second restack did something: %+v", res)
	}
}

// A check broken by the blocker's new commit: the rebuilt branch is kept,
// the failing check reported, its task back to pending on the branch, the
// story failed (not ready: its epic's count leaves it out) and its PR a
// draft again — told to gh (the stand-in). With no worktree of the story,
// the rebuild happens in a temporary one that is gone afterwards.
func TestRestackReportsACheckTheNewBaseBreaks(t *testing.T) {
	r := newRestackRepo(t)
	testkit.BareOrigin(t, r.root)
	testkit.Git(t, r.root, "push", "-q", "origin", "story/shop--a", "story/shop--b")
	state := filepath.Join(t.TempDir(), "gh.json")
	testkit.WriteFiles(t, filepath.Dir(state), map[string]string{"gh.json": `{"prs": [{"number": 2, "url": "https://github.com/acme/shop/pull/2",
  "headRefName": "story/shop--b", "baseRefName": "story/shop--a", "title": "Story: shop--b", "body": "", "isDraft": false, "state": "OPEN",
  "createdAt": "2025-01-01T00:00:00Z"}]}`})
	r.env["SAGA_GH"] = testkit.Build(t, "./testdata/standin/gh")
	t.Setenv("GH_STANDIN_STATE", state)
	t.Setenv("GH_STANDIN_REPO", "acme/shop")
	rec, _ := runs.ReadRecord(r.root, "shop--b")
	rec.PR = "https://github.com/acme/shop/pull/2"
	if err := runs.WriteRecord(r.root, rec); err != nil {
		t.Fatal(err)
	}
	r.commitOn(t, "shop--a", "", map[string]string{"a.txt": "A\n"})

	res := r.restack(t, "shop--b")
	if !res.Restacked || res.Passed || res.Where != "a temporary worktree" || !res.Draft || !res.Pushed || len(res.Reset) != 1 || res.Reset[0] != "t1" {
		t.Fatalf("restack: %+v", res)
	}
	failed := false
	for _, c := range res.Checks {
		failed = failed || (!c.Passed && strings.Contains(c.Command, "a.txt"))
	}
	if !failed {
		t.Errorf("no failed check of a.txt reported: %+v", res.Checks)
	}
	if got := testkit.Git(t, r.root, "show", "story/shop--b:.saga/stories/shop--b/t1.json"); !strings.Contains(got, `"pending"`) {
		t.Errorf("t1 on the rebuilt branch:\n%s", got)
	}
	st := r.state(t, "shop--b")
	if st.State != runs.StatusFailed || !strings.Contains(st.Why, "the final checks fail") || st.BaseMoved != nil {
		t.Errorf("after a failing restack: %+v", st)
	}
	p, _ := store.NewParser()
	ep, err := readmodel.EpicState(context.Background(), workspace.Load(t, r.root), readmodel.EpicQuery{Root: r.root, Epic: "shop", SessionDir: r.sessions, Parser: p, Env: r.setup().Env})
	if err != nil {
		t.Fatal(err)
	}
	if ep.Done != 1 {
		t.Errorf("the epic counts %d stories done, want 1 (shop--a): %+v", ep.Done, ep.Stories)
	}
	var gh struct{ PRs []struct{ IsDraft bool } }
	if data, err := os.ReadFile(state); err != nil || json.Unmarshal(data, &gh) != nil || len(gh.PRs) != 1 || !gh.PRs[0].IsDraft {
		t.Errorf("the PR after a failing restack: %+v (%v)", gh, err)
	}
	entries, _ := os.ReadDir(filepath.Join(testkit.Git(t, r.root, "rev-parse", "--absolute-git-dir"), "saga-lsp", "restack"))
	if len(entries) != 0 {
		t.Errorf("temporary worktrees left: %v", entries)
	}
	if wts := testkit.Git(t, r.root, "worktree", "list"); strings.Count(wts, "\n") != 0 {
		t.Errorf("worktrees left:\n%s", wts)
	}
}

// A conflicting change on the blocker: the rebuild is abandoned, the branch
// exactly as it was, a schema-valid task for the next run written into the
// story's folder in its worktree (added from its branch), and status says
// so; the epic restack does the same.
func TestRestackConflictWritesATask(t *testing.T) {
	r := newRestackRepo(t)
	moved := r.commitOn(t, "shop--a", "", map[string]string{"shared.txt": "a's\n"})
	old := r.tip(t, "story/shop--b")

	p, _ := store.NewParser()
	results, err := control.RestackEpic(context.Background(), control.RestackOptions{Setup: r.setup(), Story: "shop", Workspace: workspace.Load(t, r.root),
		Parser: p, Policy: verify.Policy{AllowUnconfined: true}})
	if err != nil || len(results) != 1 {
		t.Fatalf("restack of the epic: %v, %+v", err, results)
	}
	res := results[0]
	if res.Story != "shop--b" || !res.Restacked || res.New != "" || len(res.Conflicts) != 1 || res.Conflicts[0] != "shared.txt" || res.Task == "" {
		t.Fatalf("restack: %+v", res)
	}
	if now := r.tip(t, "story/shop--b"); now != old {
		t.Errorf("story/shop--b moved to %s (was %s)", now, old)
	}
	task := filepath.Join(r.root, filepath.FromSlash(res.Task))
	ws := workspace.Load(t, store.WorktreeDir(r.root, "shop--b"))
	s := ws.Story("shop--b")
	id := strings.TrimSuffix(filepath.Base(task), ".json")
	if s == nil || s.Task(id) == nil || s.Task(id).Status != store.StatusPending {
		t.Fatalf("the conflict task %s is not a pending task of the story in its worktree", res.Task)
	}
	if data, _ := os.ReadFile(task); !strings.Contains(string(data), "shared.txt") || !strings.Contains(string(data), moved[:12]) || !strings.Contains(string(data), old[:12]) {
		t.Errorf("the task names neither the file nor the two tips:\n%s", data)
	}
	if d := ws.Diagnostics(); len(d) > 0 {
		t.Errorf("the workspace with the task has findings: %v", d)
	}
	rec, _ := runs.ReadRecord(r.root, "shop--b")
	if rec.Restack == nil || rec.Restack.Task != id || rec.Restack.Head != old || rec.Restack.Digest == "" {
		t.Errorf("record: %+v", rec.Restack)
	}
	st := r.state(t, "shop--b")
	if st.State != runs.StatusFailed || st.BaseMoved == nil || len(st.BaseMoved.Conflicts) != 1 || st.BaseMoved.Task != id {
		t.Errorf("state after the conflict: %+v %+v", st, st.BaseMoved)
	}
	if text := r.statusText(t, "shop--b"); !strings.Contains(text, "conflicts in shared.txt — task "+id+" asks its next run to resolve it") {
		t.Errorf("status:\n%s", text)
	}
}
