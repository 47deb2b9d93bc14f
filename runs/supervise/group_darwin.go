package supervise

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// ChildGroup starts a supervised process in its own process group. There
// is no parent-death signal here: an agent whose worker was killed is
// ended by the next worker of its story, and only where its start time was
// recorded (Linux).
func ChildGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// AwaitExit blocks until pid, a child of this process, has exited, without
// reaping it (kqueue's NOTE_EXIT comes before the wait), so that KillGroup
// is safe until cmd.Wait. It reports whether it could tell.
func AwaitExit(pid int) bool {
	kq, err := unix.Kqueue()
	if err != nil {
		return false
	}
	defer unix.Close(kq)
	ev := []unix.Kevent_t{{Ident: uint64(pid), Filter: unix.EVFILT_PROC, Flags: unix.EV_ADD | unix.EV_ONESHOT, Fflags: unix.NOTE_EXIT}}
	out := make([]unix.Kevent_t, 1)
	for {
		n, err := unix.Kevent(kq, ev, out, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			ev = nil // registered already
			continue
		case errors.Is(err, unix.ESRCH):
			return true // exited before it was watched (a zombie is still watched)
		case err != nil:
			return false
		}
		if n > 0 {
			return true
		}
	}
}
