//go:build unix

package supervise

import (
	"syscall"
	"time"
)

// CPUUsed is the CPU time (user and system) this process and its children
// that have ended have used so far. A loop that paces itself by what a
// pass cost measures the pass with it: on a loaded machine a pass's wall
// time is mostly waiting for a core, and resting in proportion to that
// rested longest exactly when the pass's news mattered
// (docs/architecture.md#an-epic-of-200-stories). 0 when it cannot be read.
func CPUUsed() time.Duration {
	var self, children syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children) != nil {
		return 0
	}
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
}
