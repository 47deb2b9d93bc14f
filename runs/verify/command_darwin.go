package verify

import (
	"os"
	"os/exec"
	"time"

	"github.com/saga-ai/saga-lsp/store"
)

// viewsMounted: Seatbelt cannot mount a protected run's view over the
// worktree; the protected run works in a whole mirror of it (view.go),
// as an unconfined one does (docs/platforms.md).
const viewsMounted = false

// confined is a check's process under Seatbelt: sandbox-exec with the
// check's profile (seatbelt.go) runs its first shell, which sets the
// limits (limitsScript) and waits at the gate like an unconfined one.
// Nothing reports on info: release starts no watchdog.
func (r *Runner) confined(command string, src []string, gateR, gate *os.File, limits store.CheckLimits, timeout time.Duration, v *mounted) (cmd *exec.Cmd, info, _ *os.File, err error) {
	cmd = exec.Command(r.bwrap, "-p", r.seatbeltProfile(envMap(src)), "/bin/sh", "-c", limitsScript(limits, timeout)+gated, "saga-check", command)
	cmd.Dir, cmd.Env, cmd.ExtraFiles = r.Dir, checkEnv(src, r.Cache, r.Warm, true), []*os.File{gateR}
	if v != nil {
		cmd.Dir = v.dir // a whole mirror: Seatbelt mounts nothing (viewsMounted)
	}
	return cmd, nil, gate, nil
}
