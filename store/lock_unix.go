//go:build unix && !portable

package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"time"

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

// AcquireLock blocks until the named lock of the repository containing root
// is held. Names match [a-zA-Z0-9._-]+ (e.g. "story-<id>", "worker-<id>").
// When ctx ends first it returns ctx.Err() and holds nothing.
//
// Waiting polls with LOCK_NB and a 1ms→20ms backoff rather than blocking in
// flock: a blocked flock cannot be cancelled, and one that completes after
// the caller gave up would leave the lock held.
func AcquireLock(ctx context.Context, root, name string) (*Lock, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, path, err := openLockFile(root, name)
	if err != nil {
		return nil, err
	}
	delay := time.Millisecond
	for {
		err := flock(f, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// Jitter keeps many waiting hook processes from polling in lockstep.
		t := time.NewTimer(delay/2 + rand.N(delay/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			_ = f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, 20*time.Millisecond)
	}
	return newLock(f, path), nil
}

// TryLock takes the named lock without waiting; ok is false (with a nil
// error) when another holder has it.
func TryLock(root, name string) (l *Lock, ok bool, err error) {
	f, path, err := openLockFile(root, name)
	if err != nil {
		return nil, false, err
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

func openLockFile(root, name string) (*os.File, string, error) {
	dir, path, err := lockPath(root, name)
	if err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", fmt.Errorf("lock %s: %w", path, err)
	}
	// os.OpenFile sets O_CLOEXEC, so children (claude, git) never inherit
	// the descriptor and with it the lock.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, "", fmt.Errorf("lock %s: %w", path, err)
	}
	return f, path, nil
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
