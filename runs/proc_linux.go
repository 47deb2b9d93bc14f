//go:build linux

package runs

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// procStartKnown says that ProcStart works on this system.
const procStartKnown = true

// ProcStart is when pid started, in clock ticks after boot (field 22 of
// /proc/<pid>/stat): with the pid it names one process for good, where a
// pid alone may have been reused. ok is false when pid is gone.
func ProcStart(pid int) (start uint64, ok bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces and parentheses:
	// the fields after the last ')' start with field 3.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return 0, false
	}
	start, err = strconv.ParseUint(fields[19], 10, 64)
	return start, err == nil
}

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
