package bench

import (
	"os/exec"
	"syscall"
)

// ownSession starts cmd in a session of its own, as a user's processes
// are: the editor that runs the language server, the terminal that runs
// `status`, the browser, the tmux session `epic run` starts the runner in.
// Linux shares the CPU between sessions first (autogroup), so in the
// benchmark's own session they were one group with the runner, its git
// processes and chromium — a share of the cores no user's face gets
// (docs/architecture.md#an-epic-of-200-stories).
func ownSession(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
}

// browserSession is ownSession for chromium, killed with the benchmark as
// chromedp's own start does (Pdeathsig), which this replaces.
func browserSession(cmd *exec.Cmd) {
	ownSession(cmd)
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
