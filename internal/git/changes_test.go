package git_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestChangedFrom: the two-step comparison lists what `git diff
// --name-status <commit> -- paths` lists, whether a change is staged, only
// in the working file, or both, and nothing outside paths or untracked.
func TestChangedFrom(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteFiles(t, dir, map[string]string{
		"d/staged": "1", "d/worktree": "1", "d/both": "1", "d/gone": "1", "d/same": "1", "other/x": "1",
	})
	testkit.InitRepo(t, dir)
	commit := testkit.Git(t, dir, "rev-parse", "HEAD")
	write := func(rel, s string) {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("d/staged", "2")
	write("d/both", "2")
	write("d/new-staged", "1")
	write("d/new-then-gone", "1")
	write("d/untracked", "1")
	write("other/x", "2")
	testkit.Git(t, dir, "add", "d/staged", "d/both", "d/new-staged", "d/new-then-gone")
	write("d/both", "3")
	write("d/worktree", "2")
	os.Remove(filepath.Join(dir, "d/gone"))
	os.Remove(filepath.Join(dir, "d/new-then-gone"))

	got, err := git.Repo{Dir: dir}.ChangedFrom(context.Background(), commit, "d")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"d/staged": "M", "d/worktree": "M", "d/both": "M", "d/gone": "D", "d/new-staged": "A"}
	if !maps.Equal(got, want) {
		t.Errorf("ChangedFrom = %v, want %v", got, want)
	}
	// git's one-step form agrees (on this small index it is quick).
	plain := map[string]string{}
	for line := range strings.Lines(testkit.Git(t, dir, "diff", "--no-renames", "--name-status", commit, "--", "d")) {
		st, p, _ := strings.Cut(strings.TrimSpace(line), "\t")
		plain[p] = st
	}
	if !maps.Equal(got, plain) {
		t.Errorf("ChangedFrom = %v, git diff = %v", got, plain)
	}
}
