//go:build unix

package supervise

import (
	"os"
	"syscall"
)

// KillGroup ends the process group pgid and everything in it (see
// AwaitExit for when that is safe).
func KillGroup(pgid int) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// Interrupt asks the process pid to stop (SIGINT), as a terminal's ^C does.
func Interrupt(pid int) error { return syscall.Kill(pid, syscall.SIGINT) }

// ExitStatus is a finished process's exit code, 128+n for one killed by
// signal n (as a shell reports it).
func ExitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// TerminateSignal is the signal that asks a process to end (kill's,
// tmux's, systemd's).
func TerminateSignal() os.Signal { return syscall.SIGTERM }

// Supervised says why runs cannot be supervised here: nil, they can.
func Supervised() error { return nil }

// OwnGroup starts a process in a process group of its own (KillGroup ends
// it and what it started), without ChildGroup's parent-death signal.
func OwnGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
