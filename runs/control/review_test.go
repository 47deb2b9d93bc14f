package control_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/store"
)

// ReviewStory lists what a story's branch changed since it left its base,
// in a real repository: added, modified, deleted and renamed files; not
// what the base did meanwhile; for a stacked story (its run record names
// its blocker's branch as base) only its own work.
func TestReviewStory(t *testing.T) {
	root := t.TempDir()
	write := func(dir, rel, text string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(root, ".saga/stories/s1/story.json", `{"id": "s1", "title": "S1", "description": ""}`+"\n")
	write(root, "a.txt", "a\n")
	write(root, "b.txt", "b\n")
	write(root, "c.txt", "a file long enough to be recognised as renamed\n")
	testkit.InitRepo(t, root)
	wt := testkit.Worktree(t, root, ".saga/worktrees/s1", "story/s1")
	write(wt, "a.txt", "a changed\n")
	write(wt, "new dir/new.txt", "new\n")
	testkit.Git(t, wt, "rm", "-q", "b.txt")
	testkit.Git(t, wt, "mv", "c.txt", "d.txt")
	testkit.Git(t, wt, "add", "-A")
	testkit.Git(t, wt, "commit", "-q", "-m", "s1's work")
	// The base moves on: not the story's change.
	write(root, "z.txt", "z\n")
	testkit.Git(t, root, "add", "z.txt")
	testkit.Git(t, root, "commit", "-q", "-m", "meanwhile on main")

	ctx := context.Background()
	sessions := t.TempDir()
	got, err := control.ReviewStory(ctx, control.ReviewOptions{Root: root, Story: "s1", SessionDir: sessions})
	if err != nil {
		t.Fatal(err)
	}
	top, _ := filepath.EvalSymlinks(root)
	want := &control.Review{Story: "s1", Branch: "story/s1", Base: "main", Repo: top, Worktree: wt, Files: []control.ChangedFile{
		{Path: "a.txt", Status: "modified"},
		{Path: "b.txt", Status: "deleted"},
		{Path: "d.txt", Status: "renamed", OldPath: "c.txt"},
		{Path: "new dir/new.txt", Status: "added"},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("review s1:\n got %+v\nwant %+v", got, want)
	}

	// s2 stacked on s1 (its run record says so): only its own file; no worktree.
	wt2 := filepath.Join(t.TempDir(), "s2")
	testkit.Git(t, root, "worktree", "add", "-q", "-b", "story/s2", wt2, "story/s1")
	write(wt2, "s2.txt", "s2\n")
	testkit.Git(t, wt2, "add", "-A")
	testkit.Git(t, wt2, "commit", "-q", "-m", "s2's work")
	if err := runs.WriteRecord(root, runs.Record{Story: "s2", Status: runs.StatusCompleted, Branch: "story/s2", Base: "story/s1"}); err != nil {
		t.Fatal(err)
	}
	got, err = control.ReviewStory(ctx, control.ReviewOptions{Root: root, Story: "s2", SessionDir: sessions})
	if err != nil {
		t.Fatal(err)
	}
	if got.Base != "story/s1" || got.Worktree != "" || !reflect.DeepEqual(got.Files, []control.ChangedFile{{Path: "s2.txt", Status: "added"}}) {
		t.Errorf("review s2: %+v", got)
	}

	// A story that never ran has nothing to review: a usage error saying so.
	_, err = control.ReviewStory(ctx, control.ReviewOptions{Root: root, Story: "s3", SessionDir: sessions})
	var ue *store.UsageError
	if !errors.As(err, &ue) || ue.Msg == "" {
		t.Errorf("review s3: %v, want a usage error", err)
	}
	t.Logf("s3: %v", err)
}
