//go:build unix

package testkit

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// waitExitPolling is waitExit where no event tells: kill(pid, 0) is polled
// until the process is gone.
func waitExitPolling(pid int, timeout time.Duration) bool {
	return WaitUntil(timeout, func() bool { return errors.Is(unix.Kill(pid, 0), unix.ESRCH) })
}
