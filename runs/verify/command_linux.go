package verify

import (
	"os"
	"os/exec"
	"time"

	"github.com/saga-ai/saga-lsp/store"
)

// viewsMounted: bubblewrap mounts a protected run's view over the worktree
// at its own path (view.go); elsewhere the view is a whole mirror.
const viewsMounted = true

// confined is a check's process under bubblewrap, which reports its first
// process on info and holds it at the gate (--block-fd) until release has
// set its limits; with the view v mounted over the worktree when not nil.
func (r *Runner) confined(command string, src []string, gateR, gate *os.File, _ store.CheckLimits, _ time.Duration, v *mounted) (cmd *exec.Cmd, info, _ *os.File, err error) {
	info, infoW, err := os.Pipe()
	if err != nil {
		gateR.Close()
		gate.Close()
		return nil, nil, nil, err
	}
	var view []string
	if v != nil {
		view = v.args
	}
	args := append(r.sandboxArgs(envMap(src), view), "--info-fd", "3", "--block-fd", "4", "--", "/bin/sh", "-c", command)
	cmd = exec.Command(r.bwrap, args...)
	cmd.Dir, cmd.Env, cmd.ExtraFiles = r.Dir, checkEnv(src, r.Cache, r.Warm, true), []*os.File{infoW, gateR}
	return cmd, info, gate, nil
}
