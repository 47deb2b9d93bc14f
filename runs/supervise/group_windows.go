package supervise

import (
	"errors"
	"os"
	"syscall"
)

// Windows has no process groups to signal nor a parent-death signal: the
// faces that supervise processes (run, worker, the epic runner) refuse to
// start here (docs/platforms.md#windows), so these only keep the shared
// code building and, where it is reached, end the one process they name.

// ChildGroup starts a process in a console process group of its own.
func ChildGroup() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// AwaitExit cannot wait without reaping here: callers kill after cmd.Wait.
func AwaitExit(pid int) bool { return false }

// KillGroup ends the process pgid (not what it started: Windows has no
// process group to kill).
func KillGroup(pgid int) {
	if p, err := os.FindProcess(pgid); err == nil {
		_ = p.Kill()
		_ = p.Release()
	}
}

// Interrupt ends the process pid: Windows cannot send another process ^C.
func Interrupt(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer p.Release()
	return p.Kill()
}

// ExitStatus is a finished process's exit code.
func ExitStatus(ps *os.ProcessState) int { return ps.ExitCode() }

// TerminateSignal is what Go delivers when the console closes or the
// user logs off.
func TerminateSignal() os.Signal { return syscall.SIGTERM }

// Supervised says why runs cannot be supervised here: run, stop's targets,
// the worker and the epic runner need tmux, process groups and a sandbox
// for the agent's Bash and the checks.
func Supervised() error {
	return errors.New("running stories (run, worker, epic-runner) needs tmux and a sandbox for the agent and its checks, which Windows does not have: run saga-lsp in WSL, where the Linux build works (docs/platforms.md#windows)")
}

// OwnGroup starts a process in a console process group of its own.
func OwnGroup() *syscall.SysProcAttr { return ChildGroup() }
