package filesafe

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestLockTakenOverOnce: the lock of a holder that was killed is taken by
// exactly one of many lockers racing for it — with flocks the kernel sees
// to it; with the portable lock files (-tags portable, Windows) the
// takeover guard and its second look do.
func TestLockTakenOverOnce(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	holder := testkit.HelperCmd("hold", root, "story-a")
	if _, _, err := testkit.StartHelper(holder, "locked"); err != nil {
		t.Fatal(err)
	}
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()

	for round := range 20 {
		var (
			mu    sync.Mutex
			held  []*Lock
			wg    sync.WaitGroup
			start = make(chan struct{})
		)
		for range 8 {
			wg.Go(func() {
				<-start
				l, ok, err := TryLock(root, "story-a")
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					held = append(held, l)
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		if len(held) != 1 {
			t.Fatalf("round %d: %d lockers hold the lock at once, want 1", round, len(held))
		}
		if !flocks {
			// Leave a crashed holder's lock for the next round: a pid that
			// is no process.
			if err := os.WriteFile(lockFileOf(t, root), []byte("pid 999999999\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if err := held[0].Unlock(); err != nil {
			t.Fatal(err)
		}
	}
}

func lockFileOf(t *testing.T, root string) string {
	t.Helper()
	_, path, err := lockPath(root, "story-a")
	if err != nil {
		t.Fatal(err)
	}
	return path
}
