package worker

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
)

// How Bash runs in a headless run (docs/worker.md#bash-confined-to-the-worktree): a story's tasks need
// tests, builds and commits, so Bash must work, confined to the worktree by
// Claude Code's own sandbox (bubblewrap and socat on Linux, Seatbelt's
// sandbox-exec on macOS: bashSandboxNeeds). Without them
// Bash is off unless the user opted into unconfined Bash. The modes are the
// run protocol's (runs.BashSandboxed, …): the TaskCompleted hook confines
// the task's checks the same way.

// bashMode decides how Bash runs, and why when it is not sandboxed.
func (r *run) bashMode() (mode, why string) {
	var missing []string
	programs, install := bashSandboxNeeds()
	for _, p := range programs {
		if lookPath(p) == "" {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return runs.BashSandboxed, ""
	}
	why = fmt.Sprintf("Claude Code's Bash sandbox needs %v on PATH (%s)", missing, install)
	if r.o.AllowUnsandboxedBash {
		return runs.BashUnsandboxed, why + "; Bash runs UNCONFINED (--allow-unsandboxed-bash)"
	}
	return runs.BashOff, why + "; Bash is off for this run (--allow-unsandboxed-bash runs it unconfined)"
}

// sandboxSettings are the --settings members confining Bash: sandboxed
// commands are allowed without asking, nothing may escape the sandbox, the
// story's build caches are writable and deny is not. Claude Code's
// sandbox makes the working directory writable and, for a git worktree,
// the repository's whole git dir too (so that the agent can commit);
// denyWrite takes it back, and wins over an allowWrite inside it
// (measured with 2.1.330): the build caches therefore live outside the
// git dir (buildcache.CacheDir).
func sandboxSettings(cache string, deny []string) map[string]any {
	fs := map[string]any{"allowWrite": []string{cache}}
	if len(deny) > 0 {
		fs["denyWrite"] = deny
	}
	return map[string]any{"sandbox": map[string]any{
		"enabled":                  true,
		"autoAllowBashIfSandboxed": true,
		"allowUnsandboxedCommands": false,
		"filesystem":               fs,
	}}
}

// denyWrite is what the agent's sandbox must not write although Claude
// Code's would let it (docs/security.md#the-agents-writes-and-saga-lsps-state):
// the repository's git dir — its refs, HEAD, index, packed-refs, config,
// info/ and objects/, the worktree's own HEAD and index, and saga-lsp's
// state kept there (run records, locks) — the worktree's .git file, and
// the session dir (events, the checks file). The worker commits the
// agent's work after every run; git stays readable.
func (r *run) denyWrite() []string {
	var deny []string
	for _, p := range []string{r.gitCommon, filepath.Join(r.wt, ".git"), r.o.SessionDir} {
		if _, err := os.Stat(p); p != "" && err == nil {
			deny = append(deny, p)
		}
	}
	return deny
}

// runEnv is the environment of a headless run beyond the story context:
// the Task tools on and offered as ordinary tools (not deferred behind a
// ToolSearch turn), and the build caches, warm from warm.
func runEnv(cache string, warm buildcache.Warm) []string {
	env := []string{claudecode.EnvEnableTasks + "=true", claudecode.EnvToolSearch + "=false"}
	if cache != "" {
		env = append(env, buildcache.CacheEnv(cache, warm)...)
	}
	return env
}
