//go:build unix

package control

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/store"
)

// A story on a merge of several blockers' branches: when run is interrupted
// during the merges, the new branch and its worktree are taken away again,
// so the next run makes them whole instead of resuming on a branch without
// its blockers' work. The interruption comes while git checks out a merged
// file: its smudge filter opens ready (the test's signal) and then waits.
func TestStoryBranchInterruptedMergeLeavesNothing(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{".saga/epics/shop/epic.json": `{"id": "shop", "title": "Shop", "description": "", "children": [
  {"id": "shop--a", "blockedBy": []}, {"id": "shop--b", "blockedBy": []}, {"id": "shop--d", "blockedBy": ["shop--a", "shop--b"]}]}`}
	for _, s := range []string{"a", "b", "d"} {
		files[".saga/stories/shop--"+s+"/story.json"] = fmt.Sprintf(`{"id": "shop--%s", "title": "Story %s", "description": ""}`, s, s)
	}
	testkit.WriteFiles(t, root, files)
	testkit.InitRepo(t, root)
	for s, work := range map[string]map[string]string{
		"a": {"a.txt": "a\n"},
		"b": {".gitattributes": "slow.txt filter=slow\n", "slow.txt": "slow\n"},
	} {
		testkit.Git(t, root, "checkout", "-q", "-b", "story/shop--"+s, "main")
		testkit.WriteFiles(t, root, work)
		testkit.Git(t, root, "add", "-A")
		testkit.Git(t, root, "commit", "-q", "-m", "work of "+s)
	}
	testkit.Git(t, root, "checkout", "-q", "main")

	dir := t.TempDir()
	ready, fifo := filepath.Join(dir, "ready"), filepath.Join(dir, "fifo")
	if err := os.WriteFile(ready, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	testkit.Git(t, root, "config", "filter.slow.smudge", "cat "+ready+" >/dev/null; cat "+fifo+" >/dev/null; cat")
	// The filter outlives the git that is killed: let it go at the end.
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	opened := testkit.Opened(t, ready)
	go func() {
		<-opened
		testkit.Git(t, root, "config", "--unset", "filter.slow.smudge")
		cancel()
	}()
	if _, err := storyBranch(ctx, root, workspace.Load(t, root), "shop--d", "main", false); err == nil {
		t.Fatal("the interrupted merges succeeded")
	}
	if r := testkit.Run(t, root, nil, "", "git", "rev-parse", "--verify", "--quiet", "refs/heads/story/shop--d"); r.Code == 0 {
		t.Error("story/shop--d is left without its blockers' work")
	}
	if _, err := os.Stat(store.WorktreeDir(root, "shop--d")); !os.IsNotExist(err) {
		t.Errorf("its worktree is left: %v", err)
	}
}
