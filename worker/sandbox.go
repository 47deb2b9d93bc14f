package worker

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/saga-ai/saga-lsp/store/claudetasks"
	"github.com/saga-ai/saga-lsp/store/runs"
)

// How Bash runs in a headless run (design.md §6.1): a story's tasks need
// tests, builds and commits, so Bash must work, confined to the worktree by
// Claude Code's own sandbox (bubblewrap and socat on Linux). Without them
// Bash is off unless the user opted into unconfined Bash.
const (
	BashSandboxed   = "sandboxed"
	BashUnsandboxed = "unsandboxed"
	BashOff         = "off"
)

// bashMode decides how Bash runs, and why when it is not sandboxed.
func (r *run) bashMode() (mode, why string) {
	var missing []string
	for _, p := range []string{"bwrap", "socat"} {
		if lookPath(p) == "" {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return BashSandboxed, ""
	}
	why = fmt.Sprintf("Claude Code's Bash sandbox needs %v on PATH (apt-get install bubblewrap socat)", missing)
	if r.o.AllowUnsandboxedBash {
		return BashUnsandboxed, why + "; Bash runs UNCONFINED (--allow-unsandboxed-bash)"
	}
	return BashOff, why + "; Bash is off for this run (--allow-unsandboxed-bash runs it unconfined)"
}

// cacheDir is the story's build caches (Go, npm, pip, XDG): writable inside
// the sandbox, where /tmp and $HOME/.cache are read-only, and kept out of
// the worktree so they are never committed. It lives beside the locks, in
// the repository's git dir.
func (r *run) cacheDir() (string, error) {
	dir, err := runs.CacheDir(r.root, r.o.Story)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create the build cache %s: %w", dir, err)
	}
	return dir, nil
}

// cacheEnv points the common toolchains' caches into dir.
func cacheEnv(dir string) []string {
	return []string{
		"GOCACHE=" + filepath.Join(dir, "go-build"),
		"npm_config_cache=" + filepath.Join(dir, "npm"),
		"PIP_CACHE_DIR=" + filepath.Join(dir, "pip"),
		"XDG_CACHE_HOME=" + dir,
	}
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
	env := []string{claudetasks.EnvEnableTasks + "=true", claudetasks.EnvToolSearch + "=false"}
	if cache != "" {
		env = append(env, cacheEnv(cache)...)
	}
	return env
}
