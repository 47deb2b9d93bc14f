package testkit

import (
	"os"
	"time"
)

// waitExitPolling is waitExit where no event tells: the process is looked
// up until it is gone (Windows opens a process only while it exists).
func waitExitPolling(pid int, timeout time.Duration) bool {
	return WaitUntil(timeout, func() bool {
		p, err := os.FindProcess(pid)
		if err == nil {
			p.Release()
		}
		return err != nil
	})
}
