package testkit

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Opened returns a channel closed when the file or directory at path is
// next opened, by any process: how a test sees that another process, or a
// goroutine of its own, has reached a lock it waits for (the waiter opens
// the lock to try it) without sleeping in the hope that it has. The watch
// ends with the test.
func Opened(tb testing.TB, path string) <-chan struct{} {
	tb.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		tb.Fatalf("inotify: %v", err)
	}
	// Non-blocking, so Go's poller waits for it and Close ends a pending
	// Read.
	f := os.NewFile(uintptr(fd), "inotify")
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_OPEN); err != nil {
		f.Close()
		tb.Fatalf("watch %s: %v", path, err)
	}
	opened := make(chan struct{})
	go func() {
		if _, err := f.Read(make([]byte, 4096)); err == nil {
			close(opened)
		}
	}()
	tb.Cleanup(func() { f.Close() })
	return opened
}
