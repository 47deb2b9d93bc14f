//go:build unix

package worker

import (
	"os/exec"
	"syscall"
	"time"
)

func terminate(cmd *exec.Cmd, stopped <-chan struct{}) {
	pgid := -cmd.Process.Pid
	syscall.Kill(pgid, syscall.SIGINT)
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		syscall.Kill(pgid, syscall.SIGKILL)
	}
}
