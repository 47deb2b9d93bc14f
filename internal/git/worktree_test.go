//go:build unix

package git

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit"
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
	held, ok, err := filesafe.TryLock(repo, worktreesLock)
	if err != nil || !ok {
		t.Fatalf("take the registry lock: %v %v", ok, err)
	}
	locks, err := filesafe.LockDir(repo)
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

// An add killed during its checkout leaves its entry "locked initializing"
// and the folder half checked out: RemoveDeadWorktree removes that entry —
// not a worktree locked for another reason, nor a finished one — and the
// worktree is then added again from its branch.
func TestRemoveDeadWorktree(t *testing.T) {
	repo := t.TempDir()
	testkit.InitRepo(t, repo)
	ctx := context.Background()
	g := Repo{Dir: repo}
	// A file whose checkout blocks: its smudge filter opens ready (the
	// test's signal that the checkout is under way), then waits on a FIFO
	// no one writes.
	dir := t.TempDir()
	ready, fifo := filepath.Join(dir, "ready"), filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	testkit.WriteFiles(t, repo, map[string]string{".gitattributes": "slow.txt filter=slow\n", "slow.txt": "slow\n"})
	if err := os.WriteFile(ready, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	testkit.Git(t, repo, "add", "-A")
	testkit.Git(t, repo, "commit", "-qm", "a file with a filter")
	testkit.Git(t, repo, "config", "filter.slow.smudge", "cat "+ready+" >/dev/null; cat "+fifo+" >/dev/null; cat")

	dead := filepath.Join(repo, ".saga", "worktrees", "dead")
	opened := testkit.Opened(t, ready)
	add := exec.Command("git", "worktree", "add", "-q", "-b", "story/dead", dead)
	add.Dir = repo
	add.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := add.Start(); err != nil {
		t.Fatal(err)
	}
	<-opened
	syscall.Kill(-add.Process.Pid, syscall.SIGKILL)
	add.Wait()
	testkit.Git(t, repo, "config", "--unset", "filter.slow.smudge")

	kept := filepath.Join(repo, ".saga", "worktrees", "kept")
	testkit.Git(t, repo, "worktree", "add", "-q", "-b", "story/kept", kept)
	testkit.Git(t, repo, "worktree", "lock", "--reason", "on a USB disk", kept)
	done := filepath.Join(repo, ".saga", "worktrees", "done")
	testkit.Git(t, repo, "worktree", "add", "-q", "-b", "story/done", done)

	for _, wt := range []string{kept, done} {
		if removed, err := g.RemoveDeadWorktree(ctx, wt); err != nil || removed {
			t.Errorf("%s: removed %v, %v", filepath.Base(wt), removed, err)
		}
	}
	if removed, err := g.RemoveDeadWorktree(ctx, dead); err != nil || !removed {
		t.Fatalf("the interrupted add's worktree: removed %v, %v", removed, err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("its folder is still there: %v", err)
	}
	if _, err := g.AddWorktree(ctx, dead, "story/dead"); err != nil {
		t.Fatalf("added again from its branch: %v", err)
	}
	if got := testkit.ReadFile(t, filepath.Join(dead, "slow.txt")); got != "slow\n" {
		t.Errorf("slow.txt checked out as %q", got)
	}
	for _, wt := range []string{kept, done} {
		if _, err := os.Stat(filepath.Join(wt, ".git")); err != nil {
			t.Errorf("%s is gone: %v", filepath.Base(wt), err)
		}
	}
}
