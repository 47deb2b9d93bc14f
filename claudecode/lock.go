package claudecode

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Claude Code's lock parameters (proper-lockfile as it configures it).
const (
	staleAfter   = 10 * time.Second // a lock whose mtime is older is abandoned
	refreshEvery = 5 * time.Second  // the holder touches its lock this often
	minBackoff   = 5 * time.Millisecond
	maxBackoff   = 100 * time.Millisecond
)

// ListLockFile is the empty file Claude Code keeps in a list directory; its
// lock is ListLockFile + ".lock".
const ListLockFile = ".lock"

// lockTiming lets tests shorten the stale and refresh periods.
type lockTiming struct {
	stale, refresh time.Duration
}

func claudeTiming() lockTiming { return lockTiming{stale: staleAfter, refresh: refreshEvery} }

func acquireListLock(ctx context.Context, dir string, tm lockTiming) (func(), error) {
	anchor := filepath.Join(dir, ListLockFile)
	f, err := os.OpenFile(anchor, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock task list %s: %w", dir, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("lock task list %s: %w", dir, err)
	}
	return acquireDirLock(ctx, anchor+".lock", tm)
}

func acquireTaskLock(ctx context.Context, dir, id string, tm lockTiming) (func(), error) {
	if id == "" {
		return nil, fmt.Errorf("lock task in %s: empty task id", dir)
	}
	return acquireDirLock(ctx, taskPath(dir, id)+".lock", tm)
}

// acquireDirLock takes the mkdir lock at path, interoperating with Claude
// Code's proper-lockfile locks: mkdir wins the lock; a lock directory whose
// mtime is over tm.stale old is abandoned and taken over; otherwise it waits
// with a jittered 5 ms → 100 ms backoff until ctx ends (then it returns an
// error wrapping ctx.Err() and holds nothing).
//
// While held, a goroutine touches the directory every tm.refresh so nobody
// takes it over. release stops that and removes the directory, unless it is
// no longer ours (taken over after we stalled for longer than tm.stale);
// it may be called more than once.
func acquireDirLock(ctx context.Context, path string, tm lockTiming) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	delay := minBackoff
	for {
		won, err := tryDirLock(path, tm.stale)
		if err != nil {
			return nil, err
		}
		if won {
			return holdDirLock(path, tm.refresh)
		}
		// Jitter keeps waiters (ours and Claude Code's) from polling in lockstep.
		t := time.NewTimer(delay/2 + rand.N(delay/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-t.C:
		}
		delay = min(2*delay, maxBackoff)
	}
}

// tryDirLock makes one attempt: won is true when path was created by us.
func tryDirLock(path string, stale time.Duration) (won bool, err error) {
	for range 2 { // a second mkdir right after taking over a stale lock
		err := os.Mkdir(path, 0o755)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return false, fmt.Errorf("lock %s: %w", path, err)
		}
		// Judged through an open descriptor: while it is open the inode
		// cannot be freed and reused by a new lock, so breakStale's identity
		// check cannot be fooled.
		d, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released between our mkdir and open
		}
		if err != nil {
			return false, fmt.Errorf("lock %s: %w", path, err)
		}
		fi, err := d.Stat()
		if err != nil {
			_ = d.Close()
			return false, fmt.Errorf("lock %s: %w", path, err)
		}
		broken := time.Since(fi.ModTime()) > stale && breakStale(path, fi)
		_ = d.Close()
		if !broken {
			return false, nil
		}
	}
	return false, nil
}

// breakStale removes the abandoned lock fi found at path (fi is from a
// descriptor the caller keeps open). It first renames the lock aside (of
// racing waiters only one can), then checks it moved the very directory it
// judged stale: if a fresh lock was taken in between, that one is put back
// when its name is still free, and breakStale reports false. The aside name
// does not end in .json, so Claude Code never reads it.
func breakStale(path string, fi fs.FileInfo) bool {
	aside := fmt.Sprintf("%s.stale.%08x", path, rand.Uint32())
	if err := os.Rename(path, aside); err != nil {
		return false
	}
	if afi, err := os.Lstat(aside); err == nil && !os.SameFile(fi, afi) {
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			if os.Rename(aside, path) == nil {
				return false
			}
		}
	}
	_ = os.RemoveAll(aside)
	return true
}

// holdDirLock starts refreshing the lock we just created at path. The lock
// directory is kept open while held: its inode then stays ours even if the
// lock is taken over and removed, so "is path still our lock?" is a sound
// os.SameFile test (a new lock can never get the same inode number).
func holdDirLock(path string, refresh time.Duration) (func(), error) {
	d, err := os.Open(path)
	if err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	mine, err := d.Stat()
	if err != nil {
		_ = d.Close()
		_ = os.Remove(path)
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	ours := func() bool {
		fi, err := os.Lstat(path)
		return err == nil && os.SameFile(mine, fi)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(refresh)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if !ours() {
					return // taken over: touching it would keep someone else's lock alive
				}
				now := time.Now()
				_ = os.Chtimes(path, now, now)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-done
			if ours() {
				_ = os.Remove(path)
			}
			_ = d.Close()
		})
	}, nil
}
