package testkit

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// waitExit polls a pidfd of pid, which becomes readable when it exits.
func waitExit(pid int, timeout time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true
	}
	if err != nil {
		return waitExitPolling(pid, timeout)
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds())+1)
		if err == nil {
			return n > 0
		}
		if !errors.Is(err, unix.EINTR) {
			return waitExitPolling(pid, time.Until(deadline))
		}
	}
}
