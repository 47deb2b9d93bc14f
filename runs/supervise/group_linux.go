//go:build linux

package supervise

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// ChildGroup is how a process a run supervises (the agent, a check) is
// started: in its own process group, so that KillGroup reaches what it
// spawned, and killed by the kernel when its parent dies — even of SIGKILL
// or the OOM killer — so that it never goes on unsupervised.
func ChildGroup() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// AwaitExit blocks until pid, a child of this process, has exited, without
// reaping it: until its cmd.Wait its pid, and so its process group's id,
// cannot be reused, and KillGroup is safe. It reports whether it could
// tell.
func AwaitExit(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err == nil
		}
	}
}
