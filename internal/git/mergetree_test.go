package git_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestMergeConflicts: two sibling branches from one commit, merged in
// memory (git merge-tree --write-tree): the files both changed apart are
// named, each once (a file with a delete/modify conflict too); a file only
// one changed is not; a clean pair names none; nothing is written — no
// ref, no worktree change, no index change.
func TestMergeConflicts(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("api/users.go", "package api\n\nfunc Users() {}\n")
	write("api/old.go", "package api\n")
	write("README.md", "shop\n")
	testkit.InitRepo(t, root)
	testkit.Git(t, root, "branch", "story/b")
	testkit.Git(t, root, "branch", "story/c")
	testkit.Git(t, root, "checkout", "-q", "-b", "story/a")
	write("api/users.go", "package api\n\nfunc Users() { a() }\n")
	write("api/old.go", "package api\n\n// a keeps it\n")
	write("docs/a.md", "a\n")
	testkit.Git(t, root, "add", "-A")
	testkit.Git(t, root, "commit", "-qm", "a")
	testkit.Git(t, root, "checkout", "-q", "story/b")
	write("api/users.go", "package api\n\nfunc Users() { b() }\n")
	testkit.Git(t, root, "rm", "-q", "api/old.go")
	testkit.Git(t, root, "commit", "-qam", "b")
	testkit.Git(t, root, "checkout", "-q", "story/c")
	write("README.md", "shop, c\n")
	testkit.Git(t, root, "commit", "-qam", "c")
	head := testkit.Git(t, root, "rev-parse", "HEAD")
	refs := testkit.Git(t, root, "for-each-ref")

	ctx := context.Background()
	g := git.Repo{Dir: root}
	files, err := g.MergeConflicts(ctx, "refs/heads/story/a", "refs/heads/story/b")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(files, []string{"api/old.go", "api/users.go"}) {
		t.Errorf("a with b conflicts in %q, want api/old.go and api/users.go, each once", files)
	}
	if files, err := g.MergeConflicts(ctx, "refs/heads/story/a", "refs/heads/story/c"); err != nil || len(files) != 0 {
		t.Errorf("a with c = %q, %v: want clean", files, err)
	}
	if _, err := g.MergeConflicts(ctx, "refs/heads/story/a", "refs/heads/story/none"); err == nil {
		t.Error("a missing branch: want git's error")
	}
	if testkit.Git(t, root, "rev-parse", "HEAD") != head || testkit.Git(t, root, "for-each-ref") != refs || testkit.Git(t, root, "status", "--porcelain") != "" {
		t.Error("merge-tree changed the repository")
	}
}
