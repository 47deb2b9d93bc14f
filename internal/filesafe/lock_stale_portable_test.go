//go:build !unix || portable

package filesafe

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReleasedLockNotJudgedStale reproduces a race the concurrent hooks hit
// under load: a taker reads the holder's pid, the holder unlocks and exits,
// a new locker links its own file, and only then is the old pid found
// dead. The verdict must be "not stale", or the taker removes the new
// holder's file under it (its next look at its own lock: "no such file").
func TestReleasedLockNotJudgedStale(t *testing.T) {
	path := filepath.Join(t.TempDir(), "story-a.lock")
	if _, err := createWithPid(path); err != nil {
		t.Fatal(err)
	}
	var newHolder os.FileInfo
	releasedAndRetaken := func(int) bool {
		// The holder's Unlock, then another process's lock.
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		fi, err := createWithPid(path)
		if err != nil {
			t.Fatal(err)
		}
		newHolder = fi
		return false
	}
	if _, stale := staleLock(path, releasedAndRetaken); stale {
		t.Fatal("a lock released and taken again was judged stale")
	}
	if fi, err := os.Lstat(path); err != nil || !os.SameFile(fi, newHolder) {
		t.Fatalf("the new holder's lock file is gone or replaced: %v", err)
	}

	// A holder that crashed leaves its file: that one is stale, and only
	// that one is removed.
	crashed := func(int) bool { return false }
	judged, stale := staleLock(path, crashed)
	if !stale {
		t.Fatal("a dead holder's lock file was not judged stale")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := createWithPid(path); err != nil {
		t.Fatal(err)
	}
	if removeJudged(path, judged) {
		t.Fatal("removeJudged removed a file other than the one judged")
	}
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the live holder's lock file was not put back: %v", err)
	}
	judged, _ = staleLock(path, crashed)
	if !removeJudged(path, judged) {
		t.Fatal("removeJudged kept the file it judged")
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("the judged file is still there: %v", err)
	}
}
