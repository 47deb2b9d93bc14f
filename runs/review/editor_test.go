package review_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/review"
	"github.com/saga-ai/saga-lsp/store"
)

// An editor's comment is a review task of kind "editor", schema-valid; the
// same comment twice is one task, left as it was; the story's other review
// tasks stay; a comment on the story's worktree goes there.
func TestEditorCommentBecomesOneTask(t *testing.T) {
	root := t.TempDir()
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/cart/story.json": `{"id": "cart", "title": "Cart", "description": "A cart."}` + "\n",
		".saga/stories/cart/build.json": `{"id": "build", "subject": "Build", "description": "Build it.", "status": "completed", "blockedBy": []}` + "\n",
	})
	p, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// A thread's task, written by a round: an editor comment leaves it.
	gh := review.Request{Key: "PRRT_1", Kind: review.KindThread, URL: "https://github.com/acme/shop/pull/7#r1", Path: "cart.go", Line: 2,
		Quotes: []review.Quote{{Author: "alice", Body: "Rename it."}}, UpdatedAt: time.Date(2026, 11, 2, 0, 0, 1, 0, time.UTC)}
	if _, err := review.Apply(ctx, p, root, "cart", nil, review.Round{Requests: []review.Request{gh}, Open: map[string]bool{gh.Key: true}}); err != nil {
		t.Fatal(err)
	}
	c := review.EditorComment{Story: "cart", Path: "cart.go", Line: 3, Body: "Say why this loops twice.\ncheck: go vet ./...", Author: "bob"}
	first, err := review.FromEditor(ctx, p, root, c, time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if !first.Created || first.Root != root || first.File != store.TaskFileRel("cart", first.Task) {
		t.Errorf("first comment: %+v", first)
	}
	before := testkit.FileText(filepath.Join(root, filepath.FromSlash(first.File)))
	again, err := review.FromEditor(ctx, p, root, c, time.Date(2026, 11, 4, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if again.Created || again.Task != first.Task || testkit.FileText(filepath.Join(root, filepath.FromSlash(first.File))) != before {
		t.Errorf("the same comment again: %+v, file changed: %v", again, testkit.FileText(filepath.Join(root, filepath.FromSlash(first.File))) != before)
	}
	s, err := p.LoadStory(root, "cart")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, task := range s.Tasks {
		for _, d := range task.File.Local {
			t.Errorf("%s: %s %s", task.File.Rel, d.Code, d.Message)
		}
		if task.Review == nil {
			continue
		}
		kinds[task.Review.Kind]++
		if task.Review.Kind != review.KindEditor {
			continue
		}
		r := task.Review
		if task.ID != first.Task || r.Path != "cart.go" || r.Line != 3 || len(r.Authors) != 1 || r.Authors[0] != "bob" || r.UpdatedAt != "2026-11-03T00:00:00Z" ||
			task.Status != store.StatusPending || !strings.Contains(task.Description, "> Say why this loops twice.") || len(task.Checks) != 1 {
			t.Errorf("the editor's task: %+v %+v\n%s", task, r, task.Description)
		}
	}
	if kinds[review.KindEditor] != 1 || kinds[review.KindThread] != 1 {
		t.Errorf("review tasks by kind: %v", kinds)
	}

	// With a worktree holding the story, the comment goes there.
	wt := store.WorktreeDir(root, "cart")
	testkit.WriteFiles(t, wt, map[string]string{".saga/stories/cart/story.json": `{"id": "cart", "title": "Cart", "description": "A cart."}` + "\n"})
	in, err := review.FromEditor(ctx, p, root, review.EditorComment{Story: "cart", Body: "One more thing."}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(wt, filepath.FromSlash(in.File))); err != nil || in.Root != wt || !in.Created {
		t.Errorf("a comment with the worktree there: %+v (%v)", in, err)
	}

	for _, bad := range []review.EditorComment{
		{Story: "cart", Body: "  "},
		{Story: "Cart!", Body: "x"},
		{Story: "cart", Path: "../etc/passwd", Body: "x"},
		{Story: "cart", Line: -1, Body: "x"},
		{Story: "nope", Body: "x"},
	} {
		if _, err := review.FromEditor(ctx, p, root, bad, time.Now()); err == nil {
			t.Errorf("%+v: accepted", bad)
		}
	}
}
