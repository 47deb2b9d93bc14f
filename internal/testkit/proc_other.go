//go:build !linux

package testkit

import "time"

func waitExit(pid int, timeout time.Duration) bool { return waitExitPolling(pid, timeout) }
