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
// time — the one that made path+".takeover" (mkdir is atomic everywhere) —
// and it looks again once it holds that: a lock file is removed only by
// its live holder's Unlock or here, so the file it judged is the one it
// removes.
func takeOver(path string) bool {
	if !staleLock(path) {
		return false
	}
	guard := path + ".takeover"
	if _, err := createWithPid(guard); err != nil {
		// A taker that was killed leaves its guard, holding its pid: it is
		// removed, and the next attempt takes over.
		if errors.Is(err, fs.ErrExist) && staleLock(guard) {
			_ = os.Remove(guard)
		}
		return false
	}
	defer os.Remove(guard)
	return staleLock(path) && os.Remove(path) == nil
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

// staleLock: the lock file at path records a holder that is not alive, or
// none long after it was created.
func staleLock(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	b, err := readRegular(path)
	if err != nil {
		return false
	}
	s, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "pid ")
	pid, err := strconv.Atoi(s)
	if !ok || err != nil || pid <= 0 {
		return time.Since(fi.ModTime()) > staleEmpty
	}
	return !ProcessAlive(pid)
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
