package worker

import (
	"fmt"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/runs"
)

// How Bash runs in a headless run (docs/worker.md#bash-confined-to-the-worktree): a story's tasks need
// tests, builds and commits, so Bash must work, confined to the worktree by
// Claude Code's own sandbox (bubblewrap and socat on Linux). Without them
// Bash is off unless the user opted into unconfined Bash. The modes are the
// run protocol's (runs.BashSandboxed, …): the TaskCompleted hook confines
// the task's checks the same way.

// bashMode decides how Bash runs, and why when it is not sandboxed.
func (r *run) bashMode() (mode, why string) {
	var missing []string
	for _, p := range []string{"bwrap", "socat"} {
		if lookPath(p) == "" {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return runs.BashSandboxed, ""
	}
	why = fmt.Sprintf("Claude Code's Bash sandbox needs %v on PATH (apt-get install bubblewrap socat)", missing)
	if r.o.AllowUnsandboxedBash {
		return runs.BashUnsandboxed, why + "; Bash runs UNCONFINED (--allow-unsandboxed-bash)"
	}
	return runs.BashOff, why + "; Bash is off for this run (--allow-unsandboxed-bash runs it unconfined)"
}

// sandboxSettings are the --settings members confining Bash: sandboxed
// commands are allowed without asking, nothing may escape the sandbox, and
// the build caches are writable.
func sandboxSettings(cache string) map[string]any {
	return map[string]any{"sandbox": map[string]any{
		"enabled":                  true,
		"autoAllowBashIfSandboxed": true,
		"allowUnsandboxedCommands": false,
		"filesystem":               map[string]any{"allowWrite": []string{cache}},
	}}
}

// runEnv is the environment of a headless run beyond the story context:
// the Task tools on and offered as ordinary tools (not deferred behind a
// ToolSearch turn), and the build caches.
func runEnv(cache string) []string {
	env := []string{claudecode.EnvEnableTasks + "=true", claudecode.EnvToolSearch + "=false"}
	if cache != "" {
		env = append(env, runs.CacheEnv(cache)...)
	}
	return env
}
