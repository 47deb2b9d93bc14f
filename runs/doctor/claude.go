package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs"
)

const installClaude = "install Claude Code (npm install -g @anthropic-ai/claude-code, or its installer)"

// claude is Claude Code and its login; on GitHub Actions the workflow
// installs and logs in its own.
func (c checker) claude(ctx context.Context) []Check {
	if c.o.github() {
		return []Check{{Name: "claude", Level: OK, Detail: "not needed here: the workflow installs Claude Code on the runner"}}
	}
	out := c.claudeProgram(ctx)
	return append(out, c.claudeLogin(ctx))
}

// claudeProgram finds claude ($SAGA_CLAUDE or PATH) and asks its version:
// one older than claudecode.MinVersion lets a failing hook through, so a
// run refuses it.
func (c checker) claudeProgram(ctx context.Context) []Check {
	name := runs.Program(c.o.Env, runs.ProgramClaude)
	p, err := runs.LookProgram(c.o.Env, runs.ProgramClaude)
	if err != nil {
		where := "on PATH"
		if name != runs.ProgramClaude {
			where = "($" + runs.EnvClaude + ")"
		}
		return []Check{{Name: "claude", Level: Error, Detail: fmt.Sprintf("%s is not installed %s", name, where),
			Fix: fmt.Sprintf("%s, set %s to it, or try a run with --dry-run (a simulated agent)", installClaude, runs.EnvClaude)}}
	}
	// Read as the worker reads it before its run (claudecode), under
	// doctor's bound.
	ctx, cancel := context.WithTimeout(ctx, c.o.timeout())
	defer cancel()
	v, err := claudecode.InstalledVersion(ctx, p)
	switch {
	case err != nil:
		return []Check{{Name: "claude", Level: Warning, Detail: fmt.Sprintf("%s: `claude --version` did not tell its version (%s)", p, termtext.Escape(err.Error())),
			Fix: fmt.Sprintf("make sure it is Claude Code %s or later", claudecode.MinVersion)}}
	case v.Less(claudecode.MinimumVersion()):
		return []Check{{Name: "claude", Level: Error, Detail: fmt.Sprintf("Claude Code %s (%s) is too old: %s or later makes a failing hook refuse, not let the work through", v, p, claudecode.MinVersion),
			Fix: "update it: claude update (or npm install -g @anthropic-ai/claude-code@latest)"}}
	}
	return []Check{{Name: "claude", Level: OK, Detail: fmt.Sprintf("Claude Code %s (%s)", v, p)}}
}

// The environment variables Claude Code logs in with, and those that send
// it to a cloud provider whose credentials it takes from there.
var (
	claudeKeyEnv   = []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"}
	claudeCloudEnv = []string{"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"}
)

// keychainService is the macOS Keychain item Claude Code keeps its login
// in for the default configuration directory.
const keychainService = "Claude Code-credentials"

// claudeLogin finds where Claude Code would take its login from, never
// reading a secret out: a key in the environment, a cloud provider, the
// credentials file in its configuration directory (Linux, Windows), the
// macOS Keychain, an apiKeyHelper or a stored API key. It cannot tell a
// login that expired: that needs Claude Code's servers.
func (c checker) claudeLogin(ctx context.Context) Check {
	const name = "claude login"
	for _, k := range claudeKeyEnv {
		if c.env(k) != "" {
			return Check{Name: name, Level: OK, Detail: "$" + k + " is set"}
		}
	}
	for _, k := range claudeCloudEnv {
		if v := c.env(k); v != "" && v != "0" && v != "false" {
			return Check{Name: name, Level: OK, Detail: "$" + k + " is set: Claude Code takes the cloud provider's credentials (not checked here)"}
		}
	}
	dir, err := claudecode.ConfigDir(c.o.Env)
	if err != nil {
		return Check{Name: name, Level: Unchecked, Detail: "not checked: " + err.Error()}
	}
	creds := filepath.Join(dir, ".credentials.json")
	if hasKey(creds, "claudeAiOauth") {
		return Check{Name: name, Level: OK, Detail: "logged in (" + creds + ")"}
	}
	if hasKey(filepath.Join(dir, "settings.json"), "apiKeyHelper") {
		return Check{Name: name, Level: OK, Detail: "an apiKeyHelper in " + filepath.Join(dir, "settings.json")}
	}
	// Claude Code keeps its global state, an API key approved at login
	// among it, beside the default config dir or inside a chosen one.
	state := filepath.Join(filepath.Dir(dir), ".claude.json")
	if c.env(claudecode.EnvConfigDir) != "" {
		state = filepath.Join(dir, ".claude.json")
	}
	if hasKey(state, "primaryApiKey") {
		return Check{Name: name, Level: OK, Detail: "an API key stored at login (" + state + ")"}
	}
	fix := "run `claude` once and log in (/login), or set ANTHROPIC_API_KEY"
	if runtime.GOOS == "darwin" {
		sec, err := exec.LookPath("security")
		if err == nil {
			_, err = c.output(ctx, func(ctx context.Context) *exec.Cmd {
				// Without -w: the item's attributes, never its secret.
				return exec.CommandContext(ctx, sec, "find-generic-password", "-s", keychainService)
			})
			if err == nil {
				return Check{Name: name, Level: OK, Detail: "logged in (the login Keychain's " + keychainService + ")"}
			}
		}
		if c.env(claudecode.EnvConfigDir) != "" {
			// Its Keychain item for another config dir has a name of its
			// own, not looked for here.
			return Check{Name: name, Level: Unchecked, Detail: "no login found for $" + claudecode.EnvConfigDir + " (" + dir + ") in the files, and its Keychain item is not looked for",
				Fix: "if `claude` asks you to log in, " + fix}
		}
	}
	return Check{Name: name, Level: Error, Detail: "Claude Code is not logged in (no credentials in " + dir + ", no key in the environment)", Fix: fix}
}

// hasKey: the JSON file at path is an object with a non-empty member key.
// Only that is decoded: the value, a secret, is never kept.
func hasKey(path, key string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return false
	}
	v, ok := obj[key]
	s := string(v)
	return ok && s != "null" && s != `""` && s != "{}" && s != "[]"
}
