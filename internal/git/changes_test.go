package git_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
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

// TestChangesFrom: one status and the comparison with the index list what
// `git diff --name-status <commit>` and the two `ls-files --others` walks
// (untracked; ignored, a wholly ignored folder as one entry) list.
func TestChangesFrom(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteFiles(t, dir, map[string]string{
		".gitignore": "*.log\nbuild/\n", "d/staged": "1", "d/worktree": "1", "d/both": "1", "d/gone": "1", "d/same": "1",
		".saga/x": "1",
	})
	testkit.InitRepo(t, dir)
	commit := testkit.Git(t, dir, "rev-parse", "HEAD")
	testkit.WriteFiles(t, dir, map[string]string{
		"d/staged": "2", "d/both": "2", "d/new-staged": "1", "d/new-then-gone": "1",
		"d/untracked": "1", "new dir/a b": "1", "d/x.log": "1", "build/out/o": "1", "build/p": "1", ".saga/y": "1",
	})
	testkit.Git(t, dir, "add", "d/staged", "d/both", "d/new-staged", "d/new-then-gone")
	testkit.WriteFiles(t, dir, map[string]string{"d/both": "3", "d/worktree": "2"})
	os.Remove(filepath.Join(dir, "d/gone"))
	os.Remove(filepath.Join(dir, "d/new-then-gone"))

	spec := []string{".", ":(exclude).saga"}
	got, err := git.Repo{Dir: dir}.ChangesFrom(context.Background(), commit, spec...)
	if err != nil {
		t.Fatal(err)
	}
	plain := map[string]string{}
	for line := range strings.Lines(testkit.Git(t, dir, "diff", "--no-renames", "--name-status", commit, "--", ".", ":(exclude).saga")) {
		st, p, _ := strings.Cut(strings.TrimSpace(line), "\t")
		plain[p] = st
	}
	want := map[string]string{"d/staged": "M", "d/worktree": "M", "d/both": "M", "d/gone": "D", "d/new-staged": "A"}
	if !maps.Equal(got.Tracked, want) || !maps.Equal(got.Tracked, plain) {
		t.Errorf("Tracked = %v, want %v (git diff: %v)", got.Tracked, want, plain)
	}
	if want := []string{"d/both", "d/gone", "d/new-staged", "d/staged", "d/worktree"}; !slices.Equal(got.TrackedPaths(), want) {
		t.Errorf("TrackedPaths = %v, want %v", got.TrackedPaths(), want)
	}
	list := func(args ...string) []string {
		out := strings.Split(strings.TrimRight(testkit.Git(t, dir, append(args, "-z", "--", ".", ":(exclude).saga")...), "\x00"), "\x00")
		slices.Sort(out)
		return out
	}
	slices.Sort(got.Untracked)
	slices.Sort(got.Ignored)
	if want := list("ls-files", "--others", "--exclude-standard"); !slices.Equal(got.Untracked, want) {
		t.Errorf("Untracked = %q, ls-files = %q", got.Untracked, want)
	}
	if want := list("ls-files", "--others", "--ignored", "--exclude-standard", "--directory"); !slices.Equal(got.Ignored, want) {
		t.Errorf("Ignored = %q, ls-files = %q", got.Ignored, want)
	}
	if !slices.Equal(got.Ignored, []string{"build/", "d/x.log"}) {
		t.Errorf("Ignored = %q, want build/ as one entry and d/x.log", got.Ignored)
	}
}

// TestStatusEntries: each kind of entry of a v2 status, names with spaces
// and arrows kept whole.
func TestStatusEntries(t *testing.T) {
	out := "# branch.oid abc\x00" +
		"1 .M N... 100644 100644 100644 aaaa bbbb a b -> c\x00" +
		"u UU N... 100644 100644 100644 100644 aaaa bbbb cccc conflict me\x00" +
		"? new file\x00! ignored/\x00"
	want := []git.StatusEntry{{Kind: '1', XY: ".M", Path: "a b -> c"}, {Kind: 'u', XY: "UU", Path: "conflict me"},
		{Kind: '?', Path: "new file"}, {Kind: '!', Path: "ignored/"}}
	if got := git.StatusEntries(out); !slices.Equal(got, want) {
		t.Errorf("StatusEntries = %q, want %q", got, want)
	}
}

// TestAddWorktreeSplitsTheIndex: a worktree saga-lsp adds has a split
// index (a shared index beside a small one), kept split by later writes,
// and git reads it as any other: an add and write-tree stage and record
// the change.
func TestAddWorktreeSplitsTheIndex(t *testing.T) {
	repo := t.TempDir()
	testkit.WriteFiles(t, repo, map[string]string{"a": "1", "d/b": "1"})
	testkit.InitRepo(t, repo)
	wt := filepath.Join(repo, ".saga", "worktrees", "s")
	g := git.Repo{Dir: repo}
	if _, err := g.AddWorktree(context.Background(), "-q", "--no-track", "-b", "story/s", wt, "HEAD"); err != nil {
		t.Fatal(err)
	}
	shared := func() []string {
		gitDir := testkit.Git(t, wt, "rev-parse", "--absolute-git-dir")
		m, _ := filepath.Glob(filepath.Join(gitDir, "sharedindex.*"))
		return m
	}
	if len(shared()) == 0 {
		t.Fatal("the new worktree's index is not split: no sharedindex file in its git dir")
	}
	testkit.WriteFiles(t, wt, map[string]string{"d/b": "2"})
	testkit.Git(t, wt, "add", "d/b")
	tree := testkit.Git(t, wt, "write-tree")
	if got := testkit.Git(t, wt, "rev-parse", tree+":d/b"); got != testkit.Git(t, wt, "hash-object", "d/b") {
		t.Errorf("the tree written holds d/b as %s", got)
	}
	if len(shared()) == 0 {
		t.Error("the index was unsplit by a later write")
	}
	if st := testkit.Git(t, wt, "status", "--porcelain"); st != "M  d/b" {
		t.Errorf("status = %q, want the staged change only", st)
	}
}
