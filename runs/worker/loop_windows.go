package worker

import (
	"os/exec"
)

// terminate ends the agent (Windows has no group to interrupt; the worker
// refuses to start here anyway: supervise.Supervised).
func terminate(cmd *exec.Cmd, _ <-chan struct{}) { _ = cmd.Process.Kill() }
