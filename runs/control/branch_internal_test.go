//go:build unix

package control

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/store"
)

// shopWithTwoBlockers is a repository whose story shop--d is blocked by
// shop--a and shop--b, each with a branch of its own work (b's files are
// work's).
func shopWithTwoBlockers(t *testing.T, work map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{".saga/epics/shop/epic.json": `{"id": "shop", "title": "Shop", "description": "", "children": [
  {"id": "shop--a", "blockedBy": []}, {"id": "shop--b", "blockedBy": []}, {"id": "shop--d", "blockedBy": ["shop--a", "shop--b"]}]}`}
	for _, s := range []string{"a", "b", "d"} {
		files[".saga/stories/shop--"+s+"/story.json"] = fmt.Sprintf(`{"id": "shop--%s", "title": "Story %s", "description": ""}`, s, s)
	}
	testkit.WriteFiles(t, root, files)
	testkit.InitRepo(t, root)
	for s, work := range map[string]map[string]string{"a": {"a.txt": "a\n"}, "b": work} {
		testkit.Git(t, root, "checkout", "-q", "-b", "story/shop--"+s, "main")
		testkit.WriteFiles(t, root, work)
		testkit.Git(t, root, "add", "-A")
		testkit.Git(t, root, "commit", "-q", "-m", "work of "+s)
	}
	testkit.Git(t, root, "checkout", "-q", "main")
	return root
}

// A story on a merge of several blockers' branches gets its branch with
// their merges, made without a worktree: not the repository's worktree
// lock — which the running workers' worktree steps hold in turn, for
// seconds under load (a dependent's start waited up to 12.6 s for it:
// docs/architecture.md#an-epic-of-200-stories) — and no checkout. Here
// the lock is held all along, and a file of b's has a smudge filter that
// fails: neither is in the way.
func TestStoryBranchMergesWithoutAWorktree(t *testing.T) {
	root := shopWithTwoBlockers(t, map[string]string{".gitattributes": "b.txt filter=broken\n", "b.txt": "b\n"})
	testkit.Git(t, root, "config", "filter.broken.smudge", "false")
	testkit.Git(t, root, "config", "filter.broken.required", "true")
	lock, err := filesafe.AcquireLock(t.Context(), root, "git-worktrees")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	bound, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a failure's bound: waiting for the lock
	defer cancel()
	base, err := storyBranch(bound, root, workspace.Load(t, root), localBranches(t, root), "shop--d", "main", false)
	if err != nil || base != "main" {
		t.Fatalf("storyBranch: %q, %v", base, err)
	}
	if _, err := os.Stat(store.WorktreeDir(root, "shop--d")); !os.IsNotExist(err) {
		t.Errorf("a worktree was made: %v", err)
	}
	log := testkit.Git(t, root, "log", "--format=%P %s", "main..story/shop--d")
	a, b, main := testkit.Git(t, root, "rev-parse", "story/shop--a"), testkit.Git(t, root, "rev-parse", "story/shop--b"), testkit.Git(t, root, "rev-parse", "main")
	for _, want := range []string{main + " " + a + " saga(shop--d): build on story/shop--a", " " + b + " saga(shop--d): build on story/shop--b"} {
		if !strings.Contains(log, want) {
			t.Errorf("the branch's history lacks %q:\n%s", want, log)
		}
	}
	if files := testkit.Git(t, root, "ls-tree", "--name-only", "story/shop--d"); !strings.Contains(files, "a.txt") || !strings.Contains(files, "b.txt") {
		t.Errorf("the branch's files: %s", files)
	}

	// The branch is there now: the next start resumes on it.
	if base, err := storyBranch(t.Context(), root, workspace.Load(t, root), localBranches(t, root), "shop--d", "main", false); err != nil || base != "main" {
		t.Errorf("storyBranch again: %q, %v", base, err)
	}
}

// Blockers whose branches conflict: the story is refused with the files,
// and nothing is left behind.
func TestStoryBranchConflictLeavesNothing(t *testing.T) {
	root := shopWithTwoBlockers(t, map[string]string{"a.txt": "not a\n"})
	_, err := storyBranch(t.Context(), root, workspace.Load(t, root), localBranches(t, root), "shop--d", "main", false)
	var ce *ConflictError
	if !errors.As(err, &ce) || !slices.Equal(ce.Files, []string{"a.txt"}) || !slices.Equal(ce.Blockers, []string{"shop--a", "shop--b"}) {
		t.Fatalf("storyBranch: %v", err)
	}
	if r := testkit.Run(t, root, nil, "", "git", "rev-parse", "--verify", "--quiet", "refs/heads/story/shop--d"); r.Code == 0 {
		t.Error("story/shop--d is left without its blockers' work")
	}
	if _, err := os.Stat(store.WorktreeDir(root, "shop--d")); !os.IsNotExist(err) {
		t.Errorf("a worktree is left: %v", err)
	}
}

// When run is interrupted during the merges, the story's branch is not
// made: the next run makes it whole instead of resuming on a branch
// without its blockers' work. The interruption comes while git makes the
// first merge's commit (a git on PATH that waits there for the test).
func TestStoryBranchInterruptedMergeLeavesNothing(t *testing.T) {
	root := shopWithTwoBlockers(t, map[string]string{"b.txt": "b\n"})
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir, bin := t.TempDir(), t.TempDir()
	ready, fifo := filepath.Join(dir, "ready"), filepath.Join(dir, "fifo")
	if err := os.WriteFile(ready, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	wrapper := "#!/bin/sh\ncase \"$*\" in *commit-tree*) cat '" + ready + "' >/dev/null; cat '" + fifo + "' >/dev/null;; esac\nexec '" + realGit + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	// The waiting git outlives the cancel: let it go at the end.
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	opened := testkit.Opened(t, ready)
	go func() {
		<-opened
		cancel()
	}()
	if _, err := storyBranch(ctx, root, workspace.Load(t, root), localBranches(t, root), "shop--d", "main", false); err == nil {
		t.Fatal("the interrupted merges succeeded")
	}
	if r := testkit.Run(t, root, nil, "", realGit, "rev-parse", "--verify", "--quiet", "refs/heads/story/shop--d"); r.Code == 0 {
		t.Error("story/shop--d is left without its blockers' work")
	}
	if _, err := os.Stat(store.WorktreeDir(root, "shop--d")); !os.IsNotExist(err) {
		t.Errorf("a worktree is left: %v", err)
	}
}

// A story started from HEAD's branch (no --base) while HEAD is detached is
// refused with what to do.
func TestStoryBranchDetachedHEAD(t *testing.T) {
	root := shopWithTwoBlockers(t, map[string]string{"b.txt": "b\n"})
	testkit.Git(t, root, "checkout", "-q", "--detach")
	_, err := storyBranch(t.Context(), root, workspace.Load(t, root), localBranches(t, root), "shop--d", "", false)
	if err == nil || !strings.Contains(err.Error(), "no current branch to start from: pass --base") {
		t.Fatalf("storyBranch on a detached HEAD: %v", err)
	}
	testkit.Git(t, root, "checkout", "-q", "main")
	if base, err := storyBranch(t.Context(), root, workspace.Load(t, root), localBranches(t, root), "shop--d", "", false); err != nil || base != "main" {
		t.Errorf("storyBranch from main: %q, %v", base, err)
	}
}

// localBranches lists the repository's branches as StartStory does.
func localBranches(t *testing.T, root string) git.Refs {
	t.Helper()
	refs, err := git.Repo{Dir: root}.ListRefs(t.Context(), "refs/heads/")
	if err != nil {
		t.Fatal(err)
	}
	return refs
}
