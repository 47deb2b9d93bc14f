package supervise

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Background lowers the CPU priority of the session this process leads to
// nice, with everything it starts after; a process that leads no session —
// one started by hand in a terminal — is left alone, and so is everything
// for a nice of 0 (docs/worker.md#priority). Linux shares the CPU between
// sessions first (autogroups), so the session's share is lowered, and then
// the process's own nice value. Linux keeps that per thread and a new
// thread takes its creator's, so every thread is lowered, again until a
// pass finds none left.
func Background(nice int) error {
	if sid, err := unix.Getsid(0); nice <= 0 || err != nil || sid != unix.Getpid() {
		return nil
	}
	var shareErr error
	err := os.WriteFile("/proc/self/autogroup", []byte(strconv.Itoa(nice)), 0)
	if err != nil && !errors.Is(err, os.ErrNotExist) { // no autogroups in this kernel
		shareErr = fmt.Errorf("lowering the session's CPU share: %w", err)
	}
	return errors.Join(shareErr, lowerThreads(nice))
}

// lowerThreads sets every thread of this process to nice at least.
func lowerThreads(nice int) error {
	for lowered := true; lowered; {
		lowered = false
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("lowering the CPU priority: %w", err)
		}
		for _, task := range tasks {
			tid, err := strconv.Atoi(task.Name())
			if err != nil {
				continue
			}
			// The system call answers 20 - nice (getpriority(2)).
			if prio, err := unix.Getpriority(unix.PRIO_PROCESS, tid); err != nil || 20-prio >= nice {
				continue // gone, or as low already
			}
			if err := unix.Setpriority(unix.PRIO_PROCESS, tid, nice); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("lowering the CPU priority: %w", err)
			}
			lowered = true
		}
	}
	return nil
}
