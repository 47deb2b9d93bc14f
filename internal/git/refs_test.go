package git_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestListRefs: one listing answers what rev-parse --verify would, for
// every ref, HEAD's among them: the first line listed keeps its blanks
// (HEAD on a branch that sorts after the others, so that the first line
// is not HEAD's), and a detached HEAD names no branch.
func TestListRefs(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.InitRepo(t, root)
	testkit.Git(t, root, "branch", "story/a")
	testkit.Git(t, root, "checkout", "-q", "-b", "work")
	g := git.Repo{Dir: root}
	head := testkit.Git(t, root, "rev-parse", "HEAD")

	refs, err := g.ListRefs(ctx, "refs/heads/")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"refs/heads/main", "refs/heads/story/a", "refs/heads/work"} {
		if !refs.Has(ref) || refs.Tips[ref] != head {
			t.Errorf("%s: listed %v, tip %q, want %q", ref, refs.Has(ref), refs.Tips[ref], head)
		}
		if g.OK(ctx, "rev-parse", "--verify", "--quiet", ref) != refs.Has(ref) {
			t.Errorf("%s: the listing and rev-parse disagree", ref)
		}
	}
	if refs.Has("refs/heads/story/b") || refs.Has("refs/heads/story") {
		t.Errorf("refs not made are listed: %v", refs.Tips)
	}
	if refs.HeadBranch() != "work" {
		t.Errorf("HEAD's branch %q, want work", refs.HeadBranch())
	}

	testkit.Git(t, root, "checkout", "-q", "--detach")
	if refs, err = g.ListRefs(ctx, "refs/heads/"); err != nil || refs.HeadBranch() != "" || len(refs.Tips) != 3 {
		t.Errorf("detached: HEAD's branch %q, %d refs, err %v", refs.HeadBranch(), len(refs.Tips), err)
	}
	if _, err := (git.Repo{Dir: t.TempDir()}).ListRefs(ctx, "refs/heads/"); err == nil {
		t.Error("no repository: no error")
	}
}
