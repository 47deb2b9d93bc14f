//go:build !unix || portable

package filesafe

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Lock is a held lock file: held while its file exists and records a live
// holder ("pid <pid>"). Portable (Windows; -tags portable elsewhere), so
// made of what every system has: the file is created exclusively
// (O_EXCL), removed by Unlock, and a file whose holder is no longer alive —
// it crashed — is taken over by the next locker (takeOver). Two Locks in
// one process exclude each other too. What it cannot tell (a reused pid
// keeps a crashed holder's lock until that process ends) is in
// docs/platforms.md#what-the-portable-build-does-not-catch.
type Lock struct {
	mu   sync.Mutex
	path string
	mine fs.FileInfo // the file this Lock created; nil once unlocked
}

// staleEmpty is how old a lock file must be whose holder has not written
// its pid yet (it is between the create and the write) before it counts
// as a crashed holder's.
const staleEmpty = 10 * time.Second

// TryLockFile takes the lock of the file at path without waiting; ok is
// false (with a nil error) when another holder has it.
func TryLockFile(path string) (l *Lock, ok bool, err error) {
	for range 2 {
		fi, err := createWithPid(path)
		if err == nil {
			return &Lock{path: path, mine: fi}, true, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, false, fmt.Errorf("lock %s: %w", path, err)
		}
		if !takeOver(path) {
			return nil, false, nil
		}
	}
	return nil, false, nil
}

// takeOver removes the lock file at path when its holder is gone, and
// reports whether it did. Only one process takes a stale lock over at a
// time — the one that made path+".takeover" — and it judges the file again
// once it holds that, then removes only the file it judged (removeJudged).
func takeOver(path string) bool {
	if _, stale := staleLock(path, ProcessAlive); !stale {
		return false
	}
	guard := path + ".takeover"
	if _, err := createWithPid(guard); err != nil {
		// A taker that was killed leaves its guard, holding its pid: it is
		// removed, and the next attempt takes over.
		if errors.Is(err, fs.ErrExist) {
			if judged, stale := staleLock(guard, ProcessAlive); stale {
				removeJudged(guard, judged)
			}
		}
		return false
	}
	defer os.Remove(guard)
	judged, stale := staleLock(path, ProcessAlive)
	return stale && removeJudged(path, judged)
}

// removeJudged removes the file at path if it is still judged, the file
// found stale. The name is moved aside first (a rename is atomic) and the
// file moved is compared: a name removed outright after the judgement
// could be a new holder's file by then. One that is not the judged file is
// linked back (a link fails on an existing name, so it never replaces one).
func removeJudged(path string, judged fs.FileInfo) bool {
	aside := fmt.Sprintf("%s.%d-%d.stale", path, os.Getpid(), rand.Uint64())
	if err := os.Rename(path, aside); err != nil {
		return false
	}
	defer os.Remove(aside)
	if fi, err := os.Lstat(aside); err == nil && sameLockFile(fi, judged) {
		return true
	}
	_ = os.Link(aside, path)
	return false
}

// createWithPid creates path holding "pid N" whole, or fails with an
// error wrapping fs.ErrExist when it exists. The content is written under
// a temp name and hard-linked into place (a link fails atomically on an
// existing name), so no file it makes is ever seen empty: a holder killed
// between a create and its write would leave a lock no one could judge
// but by its age (staleEmpty), longer than a hook waits.
func createWithPid(path string) (fs.FileInfo, error) {
	tmp := fmt.Sprintf("%s.%d-%d.tmp", path, os.Getpid(), rand.Uint64())
	if err := os.WriteFile(tmp, []byte("pid "+strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	err := os.Link(tmp, path)
	_ = os.Remove(tmp)
	if err != nil {
		return nil, err
	}
	return os.Lstat(path)
}

// staleLock reports whether the lock file at path records a holder that
// is not alive (alive is ProcessAlive but in tests), or none long after it
// was made, and returns the file it judged. The file is looked at again
// once its holder is found dead: a holder removes its file (Unlock) before
// it exits, so the same file still there was left by a crash, while a
// released one may have been replaced by a live locker's new file between
// the read and the verdict.
func staleLock(path string, alive func(pid int) bool) (fs.FileInfo, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	b, err := readRegular(path)
	if err != nil {
		return nil, false
	}
	s, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "pid ")
	pid, err := strconv.Atoi(s)
	if !ok || err != nil || pid <= 0 {
		if time.Since(fi.ModTime()) <= staleEmpty {
			return nil, false
		}
	} else if alive(pid) {
		return nil, false
	}
	if now, err := os.Lstat(path); err != nil || !sameLockFile(now, fi) {
		return nil, false
	}
	return fi, true
}

// sameLockFile: a and b are one file, not a new one that reused a removed
// one's number (its time would differ).
func sameLockFile(a, b fs.FileInfo) bool {
	return os.SameFile(a, b) && a.ModTime().Equal(b.ModTime())
}

// Unlock releases the lock: its file is removed, if it is still the one
// this Lock created. Unlocking twice is an error wrapping os.ErrClosed.
func (l *Lock) Unlock() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mine == nil {
		return fmt.Errorf("unlock %s: %w", l.path, os.ErrClosed)
	}
	mine := l.mine
	l.mine = nil
	if fi, err := os.Lstat(l.path); err != nil || !os.SameFile(fi, mine) {
		return nil // removed already (clean), or taken over by another
	}
	if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("unlock %s: %w", l.path, err)
	}
	return nil
}
