//go:build unix

// Package demo_test runs `make demo` (scripts/demo.sh) as a new user would.
package demo_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// Issue 33 points 7 and 11: the demo runs without an error line, prints
// text (no JSON events, no tab shown as \t), and leaves nothing behind in
// the user's cache dir.
func TestDemo(t *testing.T) {
	testkit.Bwrap(t) // the checks' and the agent's sandbox, as a run needs
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the demo skips its epic run")
	}
	bin := testkit.Binary(t)
	home := t.TempDir()
	var env []string
	for _, kv := range testkit.CleanEnv() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "HOME" && k != "XDG_CACHE_HOME" && k != "TERM" {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "TERM=dumb")
	cmd := exec.Command("bash", filepath.Join(testkit.ModuleRoot(t), "scripts", "demo.sh"), bin)
	cmd.Env = env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	for line := range strings.Lines(stderr.String()) {
		low := strings.ToLower(line)
		if strings.Contains(low, "fatal") || strings.Contains(low, "error") || strings.Contains(low, "warning") {
			t.Errorf("the demo prints on stderr: %s", line)
		}
	}
	out := stdout.String()
	for _, bad := range []string{`"event":`, `\t`, "(1 stories)", "(1 tasks)"} {
		if strings.Contains(out, bad) {
			t.Errorf("the demo prints %q:\n%s", bad, out)
		}
	}
	for _, want := range []string{"$ git log saga-dry/user-auth--api", "saga(user-auth--api): end, 5/5 tasks done", "✓ user-auth--login-page completed"} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo does not print %q:\n%s", want, out)
		}
	}
	var left []string
	filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if path != home {
			left = append(left, strings.TrimPrefix(path, home+"/"))
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("the demo left in HOME: %s", strings.Join(left, ", "))
	}
	if _, err := os.Stat(filepath.Join(home, ".cache")); err == nil {
		t.Error("the demo left ~/.cache")
	}
}
