package git

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/store"
)

// Worktrees added while other programs of the repository prune and add all
// register: every change to the registry holds its lock, so no prune
// removes another's half-made entry (without the lock git fails such an
// add with "could not open '.git/worktrees/<name>/locked'").
func TestAddWorktreeConcurrent(t *testing.T) {
	repo := t.TempDir()
	testkit.InitRepo(t, repo)
	g := Repo{Dir: repo}
	ctx := context.Background()
	const n = 8
	var pruners sync.WaitGroup
	for range 2 {
		pruners.Go(func() {
			for range 2 * n {
				g.Worktree(ctx, "prune")
			}
		})
	}
	errs := make([]error, n)
	var adders sync.WaitGroup
	for i := range n {
		adders.Go(func() {
			name := fmt.Sprintf("s%d", i)
			_, errs[i] = g.AddWorktree(ctx, "-q", "--no-track", "-b", "story/"+name, filepath.Join(repo, ".saga", "worktrees", name), "HEAD")
		})
	}
	adders.Wait()
	pruners.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("worktree s%d: %v", i, err)
		}
	}
	list, err := g.Worktrees(ctx)
	if err != nil || len(list) != n+1 {
		t.Fatalf("git lists %d worktrees (%v), want %d: %+v", len(list), err, n+1, list)
	}
}

// While another program holds the registry lock, AddWorktree waits for it
// and runs no git command.
func TestAddWorktreeWaitsForTheRegistryLock(t *testing.T) {
	repo := t.TempDir()
	testkit.InitRepo(t, repo)
	held, ok, err := store.TryLock(repo, worktreesLock)
	if err != nil || !ok {
		t.Fatalf("take the registry lock: %v %v", ok, err)
	}
	locks, err := store.LockDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	waiting := testkit.Opened(t, filepath.Join(locks, worktreesLock+".lock"))
	wt := filepath.Join(repo, "wt")
	done := make(chan error, 1)
	go func() {
		_, err := Repo{Dir: repo}.AddWorktree(context.Background(), "-q", "-b", "story/wt", wt)
		done <- err
	}()
	<-waiting
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("the worktree was added while the registry lock was held: %v", err)
	}
	if err := held.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("after the lock was released: %v", err)
	}
	if _, err := os.Stat(filepath.Join(wt, ".git")); err != nil {
		t.Fatalf("no worktree: %v", err)
	}
}
