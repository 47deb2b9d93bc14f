package supervise

import (
	"syscall"
	"time"
)

// CPUUsed is the CPU time (user and kernel) this process has used so far
// (its children's are not counted here). 0 when it cannot be read.
func CPUUsed() time.Duration {
	self, err := syscall.GetCurrentProcess()
	if err != nil {
		return 0
	}
	var creation, exit, kernel, user syscall.Filetime
	if syscall.GetProcessTimes(self, &creation, &exit, &kernel, &user) != nil {
		return 0
	}
	// A FILETIME counts 100 ns intervals.
	ticks := func(f syscall.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration((ticks(kernel) + ticks(user)) * 100)
}
