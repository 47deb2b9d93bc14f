package claudecode_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestHookWrapperRunsHookProgram: for `hook`, bin/saga-lsp-run runs the
// saga-lsp-hook of the same build beside the saga-lsp it found
// (docs/hooks.md#the-hook-program), as the worker and `saga-lsp install`
// do; one from another build, never. Which one ran shows in `hook --help`:
// saga-lsp prints hook's usage, saga-lsp-hook says it ignores the
// arguments. The answer is cached; a saga-lsp-hook installed since is
// asked about again.
func TestHookWrapperRunsHookProgram(t *testing.T) {
	root := t.TempDir()
	plugin := filepath.Join(root, "plugin")
	testkit.CopyInto(t, pluginDir(), plugin)
	wrapper := filepath.Join(plugin, "bin", "saga-lsp-run")
	built := testkit.Binary(t) // saga-lsp-hook of the same build beside it
	install := func(dir string) string {
		t.Helper()
		for _, name := range []string{"saga-lsp", "saga-lsp-hook"} {
			data, err := os.ReadFile(filepath.Join(filepath.Dir(built), name))
			if err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(dir, 0o755)
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return filepath.Join(dir, "saga-lsp")
	}
	cache := filepath.Join(root, "cache")
	ran := func(env ...string) string {
		t.Helper()
		r := testkit.Run(t, root, append([]string{"HOME=" + filepath.Join(root, "home"), "XDG_CACHE_HOME=" + cache,
			"CLAUDE_PLUGIN_ROOT=" + plugin}, env...), "", wrapper, "hook", "--help")
		switch {
		case strings.HasPrefix(r.Stdout, "usage: saga-lsp hook"):
			return "saga-lsp"
		case strings.HasPrefix(r.Stderr, "saga-lsp-hook: "):
			return "saga-lsp-hook"
		}
		t.Fatalf("neither program ran: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		return ""
	}
	path := "/usr/bin:/bin"

	// On PATH, found by $SAGA_LSP_BIN, in Go's install dir: each time its
	// saga-lsp-hook.
	onPath := install(filepath.Join(root, "onpath"))
	if got := ran("PATH=" + filepath.Dir(onPath) + ":" + path); got != "saga-lsp-hook" {
		t.Errorf("saga-lsp on PATH: the hook ran %s, want saga-lsp-hook beside it", got)
	}
	explicit := install(filepath.Join(root, "explicit"))
	if got := ran("PATH="+path, "SAGA_LSP_BIN="+explicit); got != "saga-lsp-hook" {
		t.Errorf("$SAGA_LSP_BIN: the hook ran %s, want saga-lsp-hook", got)
	}
	gobin := install(filepath.Join(root, "gobin"))
	if got := ran("PATH="+path, "GOBIN="+filepath.Dir(gobin)); got != "saga-lsp-hook" {
		t.Errorf("$GOBIN: the hook ran %s, want saga-lsp-hook", got)
	}
	// Other commands run saga-lsp itself.
	r := testkit.Run(t, root, []string{"PATH=" + filepath.Dir(onPath) + ":" + path, "XDG_CACHE_HOME=" + cache, "CLAUDE_PLUGIN_ROOT=" + plugin},
		"", wrapper, "version")
	if !strings.HasPrefix(r.Stdout, "saga-lsp ") {
		t.Errorf("saga-lsp-run version: %q %q", r.Stdout, r.Stderr)
	}

	// A saga-lsp-hook of another build, installed since the answer was
	// cached: saga-lsp runs the hook.
	other := filepath.Join(filepath.Dir(onPath), "saga-lsp-hook")
	cmd := exec.Command("go", "build", "-ldflags", "-X github.com/saga-ai/saga-lsp/cli.Version=v0.0.1-other", "-o", other, "./cmd/saga-lsp-hook")
	cmd.Dir, cmd.Env = testkit.ModuleRoot(t), append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// Newer than the cache whatever the file system's clock resolution.
	later := time.Now().Add(time.Minute)
	os.Chtimes(other, later, later)
	if got := ran("PATH=" + filepath.Dir(onPath) + ":" + path); got != "saga-lsp" {
		t.Errorf("saga-lsp-hook of another build: the hook ran %s, want saga-lsp", got)
	}
	// Its own real hook: an event outside any story is allowed silently.
	r = testkit.Run(t, root, []string{"PATH=" + filepath.Dir(explicit) + ":" + path, "XDG_CACHE_HOME=" + cache, "CLAUDE_PLUGIN_ROOT=" + plugin},
		`{"session_id":"s","transcript_path":"/dev/null","cwd":"`+root+
			`","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/etc/x","content":""},"tool_use_id":"toolu_1"}`+"\n",
		wrapper, "hook")
	if r.Code != 0 || r.Stdout+r.Stderr != "" {
		t.Errorf("saga-lsp-hook through the wrapper outside a story: exit %d, output %q", r.Code, r.Stdout+r.Stderr)
	}
}
