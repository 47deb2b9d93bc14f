//go:build unix && !portable

package filesafe

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Lock is a held flock (LOCK_EX) on a file in LockDir. It is released by
// Unlock or by the death of the process, since the kernel drops flocks with
// the last descriptor, so a crash never leaves a stale lock. Lock files are
// never deleted: removing one could let a waiter and a newcomer lock two
// different inodes under one name.
//
// flock belongs to the open file, so two Locks in one process exclude each
// other too. Keep the *Lock reachable until Unlock: the os.File finalizer
// would otherwise close it and drop the lock.
type Lock struct {
	mu   sync.Mutex
	f    *os.File // nil once unlocked
	path string
}

// TryLockFile takes the lock of the file at path (created when missing,
// never through a symbolic link) without waiting; ok is false (with a nil
// error) when another holder has it.
func TryLockFile(path string) (l *Lock, ok bool, err error) {
	// os.OpenFile sets O_CLOEXEC, so children (claude, git) never inherit
	// the descriptor and with it the lock.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	return newLock(f, path), true, nil
}

// Unlock releases the lock. Unlocking twice is an error wrapping
// os.ErrClosed.
func (l *Lock) Unlock() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("unlock %s: %w", l.path, os.ErrClosed)
	}
	f := l.f
	l.f = nil
	// Clear the holder info while still holding, so LockHolder does not name
	// a process that has moved on. Best effort: it is informational only.
	_ = f.Truncate(0)
	unErr := flock(f, unix.LOCK_UN)
	// Closing drops the flock even if LOCK_UN failed.
	closeErr := f.Close()
	if err := errors.Join(unErr, closeErr); err != nil {
		return fmt.Errorf("unlock %s: %w", l.path, err)
	}
	return nil
}

func newLock(f *os.File, path string) *Lock {
	// Holder info is best effort: failing to record it must not cost us a
	// lock we already hold.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte("pid "+strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f, path: path}
}

// flock applies how to f's descriptor, retrying on EINTR (signals are
// frequent in Go programs).
func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), how)
			if !errors.Is(ferr, unix.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}
