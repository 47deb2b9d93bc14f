//go:build unix

package worker_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/review"
	"github.com/saga-ai/saga-lsp/runs/worker"
	"github.com/saga-ai/saga-lsp/store"
)

// A review comment made in an editor while the story had no worktree is
// written in the checkout; the next round takes it onto the branch (and out
// of the checkout), a read of the PR never cancels it, the agent completes
// it, and no reply goes to GitHub for it (it has no thread there).
func TestEditorCommentJoinsTheRound(t *testing.T) {
	f := newFixture(t, true)
	const story = "add-logout-button"
	if code, out := f.run(story, "all", nil); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	f.git("worktree", "remove", "--force", filepath.Join(f.root, ".saga/worktrees", story))
	p, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	res, err := review.FromEditor(context.Background(), p, f.root, review.EditorComment{Story: story, Path: "README.md", Line: 1, Body: "Say what the button does.", Author: "me"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if res.Root != f.root {
		t.Fatalf("without a worktree the comment goes to the checkout, got %s", res.Root)
	}
	id := review.TaskID(review.EditorKey(review.EditorComment{Story: story, Path: "README.md", Line: 1, Body: "Say what the button does.", Author: "me"}))
	rel := filepath.Join(".saga", "stories", story, id+".json")
	if _, err := os.Stat(filepath.Join(f.root, rel)); err != nil {
		t.Fatalf("the editor's task: %v", err)
	}

	code, out := f.run(story, "all", func(o *worker.Options) { o.Review = true })
	if code != 0 {
		t.Fatalf("review round: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(f.root, rel)); err == nil {
		t.Errorf("the editor's task is still in the checkout")
	}
	if st := f.worktreeStatuses(story); st[id] != store.StatusCompleted {
		t.Errorf("the editor's task on the branch: %v\n%s", st, out)
	}
	if !strings.Contains(f.git("log", "--format=%s", "story/"+story), "review round 1") {
		t.Errorf("no review round commit:\n%s", f.git("log", "--format=%s", "story/"+story))
	}
	if strings.Contains(out, "replied on") {
		t.Errorf("an editor's task was answered on GitHub:\n%s", out)
	}
	rec, ok := runs.ReadRecord(f.root, story)
	if !ok || rec.Review == nil || rec.Review.Rounds != 1 || rec.Review.NeedsYou != "" {
		t.Errorf("record: %+v", rec.Review)
	}
}

// A round whose agent completes nothing needs its person; once the
// reviewer resolves the thread, the next read cancels its task — committed
// and pushed, no round counted, no agent.
func TestWithdrawnRequestCancelsItsTask(t *testing.T) {
	f := newFixture(t, true)
	const story = "add-logout-button"
	if code, out := f.run(story, "all", nil); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	setThread := func(resolved bool) {
		t.Helper()
		var st map[string]any
		data, _ := os.ReadFile(f.ghState)
		if err := json.Unmarshal(data, &st); err != nil {
			t.Fatal(err)
		}
		st["prs"].([]any)[0].(map[string]any)["reviewThreads"] = []any{map[string]any{"id": "PRRT_x", "path": "README.md", "line": 1, "resolved": resolved,
			"comments": []any{map[string]any{"id": "PRRC_x", "author": "alice", "body": "Rename it.", "updatedAt": "2026-11-28T10:00:00Z"}}}}
		st["collaborators"] = map[string]string{"alice": "write"}
		data, _ = json.Marshal(st)
		os.WriteFile(f.ghState, data, 0o644)
	}
	setThread(false)
	id := review.TaskID("PRRT_x")
	code, out := f.run(story, "idle", func(o *worker.Options) { o.Review = true })
	if code == 0 || !strings.Contains(out, "ended without progress") {
		t.Fatalf("a round without progress: exit %d\n%s", code, out)
	}
	if rec, _ := runs.ReadRecord(f.root, story); rec.Review == nil || rec.Review.Rounds != 1 || rec.Review.NeedsYou == "" {
		t.Fatalf("record: %+v", rec.Review)
	}
	setThread(true)
	code, out = f.run(story, "all", func(o *worker.Options) { o.Review = true })
	if !strings.Contains(out, "cancelled 1 task(s) whose request is gone") || strings.Contains(out, "run 1:") {
		t.Fatalf("the withdrawn request: exit %d\n%s", code, out)
	}
	if _, ok := f.worktreeStatuses(story)[id]; ok {
		t.Errorf("the cancelled task %s is still on the branch", id)
	}
	if files := testkit.Git(t, f.origin, "ls-tree", "-r", "--name-only", "story/"+story); strings.Contains(files, id) {
		t.Errorf("origin's branch still has %s", id)
	}
	if rec, _ := runs.ReadRecord(f.root, story); rec.Review.Rounds != 1 {
		t.Errorf("a cancellation counted as a round: %d", rec.Review.Rounds)
	}
}
