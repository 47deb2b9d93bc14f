//go:build unix && !linux

package supervise

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Background lowers the CPU priority of the process, when it leads its
// session, to nice, with everything it starts after; a process that leads
// no session — one started by hand in a terminal — is left alone, and so is
// everything for a nice of 0 (docs/worker.md#priority).
func Background(nice int) error {
	if sid, err := unix.Getsid(0); nice <= 0 || err != nil || sid != unix.Getpid() {
		return nil
	}
	if prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0); err == nil && prio >= nice {
		return nil
	}
	if err := unix.Setpriority(unix.PRIO_PROCESS, 0, nice); err != nil {
		return fmt.Errorf("lowering the CPU priority: %w", err)
	}
	return nil
}
