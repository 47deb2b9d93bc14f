package runs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
)

// WorkerLocks, listing the lock folder once, tells what WorkerLock tells
// for each story: held by its holder while held, free before and after.
func TestWorkerLocksAgreeWithWorkerLock(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	probe := func(when string) {
		t.Helper()
		wl := WorkerLocks{Root: root}
		for _, story := range []string{"a", "b"} {
			pid, held, err := wl.Probe(story)
			wpid, wheld, werr := WorkerLock(root, story, false)
			if pid != wpid || held != wheld || (err == nil) != (werr == nil) {
				t.Errorf("%s, %s: WorkerLocks.Probe = %d %v %v, WorkerLock = %d %v %v", when, story, pid, held, err, wpid, wheld, werr)
			}
			if want := when == "held" && story == "a"; held != want {
				t.Errorf("%s, %s: held = %v", when, story, held)
			}
		}
	}
	probe("never taken")
	l, ok, err := filesafe.TryLock(root, WorkerLockName("a"))
	if err != nil || !ok {
		t.Fatalf("TryLock: %v %v", ok, err)
	}
	probe("held")
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	probe("released")
}
