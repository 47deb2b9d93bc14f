//go:build unix

package hook_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/hook"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
)

// installEnv has HOME in a temp dir and no CLAUDE_CONFIG_DIR, so the user
// scope never touches the real ~/.claude; the hook command is the built
// binary unless SAGA_LSP_BIN is added.
func installEnv(t *testing.T) (home string, env []string) {
	t.Helper()
	home = t.TempDir()
	for _, kv := range testkit.CleanEnv() {
		if !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return home, append(env, "HOME="+home)
}

// project makes a project folder, with .claude/settings.json copied from
// testdata/install/<fixture> unless fixture is "".
func project(t *testing.T, fixture string) (dir, settings string) {
	t.Helper()
	dir = t.TempDir()
	settings = filepath.Join(dir, ".claude", "settings.json")
	if fixture != "" {
		data, err := os.ReadFile(filepath.Join("testdata", "install", fixture))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(settings, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, settings
}

func TestMain(m *testing.M) { testkit.Main(m) }

func install(t *testing.T, dir string, env []string, args ...string) testkit.Result {
	t.Helper()
	return testkit.Run(t, dir, env, "", testkit.Binary(t), append([]string{"install"}, args...)...)
}

// settingsGolden compares a settings file with testdata/install/<name>, the
// binary's path written as @BIN@.
func settingsGolden(t *testing.T, path, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, filepath.Join("testdata", "install", name), strings.ReplaceAll(string(data), testkit.Binary(t), "@BIN@"))
	return data
}

// installTwice checks the second install changes nothing, not even mtime.
func installTwice(t *testing.T, dir string, env []string, settings string, args ...string) {
	t.Helper()
	before, _ := os.ReadFile(settings)
	// Backdated, so a rewrite, however soon, shows in the mtime.
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(settings, old, old); err != nil {
		t.Fatal(err)
	}
	r := install(t, dir, env, args...)
	after, _ := os.ReadFile(settings)
	fi, _ := os.Stat(settings)
	if r.Code != 0 || !strings.Contains(r.Stdout, "already up to date") || string(before) != string(after) ||
		!fi.ModTime().Equal(old) {
		t.Errorf("second install: exit %d, changed %v\n%s%s", r.Code, string(before) != string(after), r.Stdout, r.Stderr)
	}
}

// installOver installs into a project holding testdata/install/<fixture>
// (failing on an exit code other than 0), compares the settings with
// <golden>, checks that a second install changes nothing, and returns the
// output and the settings before and after.
func installOver(t *testing.T, fixture, golden string) (r testkit.Result, before, after []byte) {
	t.Helper()
	_, env := installEnv(t)
	dir, settings := project(t, fixture)
	before, _ = os.ReadFile(settings)
	if r = install(t, dir, env); r.Code != 0 {
		t.Fatalf("install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	after = settingsGolden(t, settings, golden)
	installTwice(t, dir, env, settings)
	return r, before, after
}

func TestInstallEmptyProject(t *testing.T) {
	_, env := installEnv(t)
	dir, settings := project(t, "")
	r := install(t, dir, env, "--root", dir)
	if r.Code != 0 {
		t.Fatalf("install: exit %d\n%s", r.Code, r.Stderr)
	}
	settingsGolden(t, settings, "empty.golden")
	for _, want := range []string{"created " + filepath.Join(".claude", "settings.json"),
		"hooks SessionStart, PreToolUse (Write|Edit|MultiEdit|NotebookEdit), PostToolUse (TaskUpdate), TaskCompleted run `" + hookProgram(t) + " hook`",
		"VS Code", "code --install-extension", "Neovim", "editors/nvim", "Claude Code", "claude plugin install"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("install output lacks %q:\n%s", want, r.Stdout)
		}
	}
	installTwice(t, dir, env, settings)
}

// Without --root, the project is the enclosing .saga workspace (or git
// checkout), not the subfolder install runs in.
func TestInstallFindsProject(t *testing.T) {
	_, env := installEnv(t)
	root := testkit.CopyTree(t, "../examples/workspace")
	sub := filepath.Join(root, ".saga", "stories")
	if r := install(t, sub, env); r.Code != 0 {
		t.Fatalf("install: exit %d\n%s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(root, ".claude", "settings.json")); err != nil {
		t.Errorf("settings not in the workspace root: %v", err)
	}
}

func TestInstallKeepsExistingSettings(t *testing.T) {
	r, orig, got := installOver(t, "existing.json", "existing.golden")
	if !strings.Contains(r.Stdout, "updated "+filepath.Join(".claude", "settings.json")) {
		t.Errorf("install output:\n%s", r.Stdout)
	}
	// Everything that was there is still there: every key, every hook.
	var before, after map[string]any
	if err := json.Unmarshal(orig, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &after); err != nil {
		t.Fatalf("result is not JSON: %v", err)
	}
	for k, v := range before {
		if k == "hooks" {
			continue
		}
		if !reflect.DeepEqual(after[k], v) {
			t.Errorf("%s changed: %v → %v", k, v, after[k])
		}
	}
	bh, ah := before["hooks"].(map[string]any), after["hooks"].(map[string]any)
	for event, groups := range bh {
		for _, g := range groups.([]any) {
			found := false
			for _, ag := range ah[event].([]any) {
				found = found || reflect.DeepEqual(ag, g)
			}
			if !found {
				t.Errorf("%s hook group lost: %v", event, g)
			}
		}
	}
	// The untouched top of the file is byte for byte the same.
	head := strings.Index(string(orig), `"hooks"`)
	if string(got[:head]) != string(orig[:head]) {
		t.Errorf("the part before hooks changed:\n%s", got[:head])
	}
}

func TestInstallUpdatesOurEntries(t *testing.T) {
	_, _, after := installOver(t, "stale.json", "stale.golden")
	got := string(after)
	if strings.Count(got, hookProgram(t)+" hook") != len(claudecode.Hooks) || strings.Contains(got, "/old/place") || strings.Contains(got, "/usr/local/bin/saga-lsp") ||
		!strings.Contains(got, "~/bin/lint-on-write.sh") {
		t.Errorf("stale entries not updated in place:\n%s", got)
	}
}

func TestInstallCompactSettings(t *testing.T) {
	_, _, got := installOver(t, "compact.json", "compact.golden")
	if !json.Valid(got) || !strings.HasPrefix(string(got), `{"model":"sonnet","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"echo hi"}]},{"matcher":"Write|Edit|MultiEdit|NotebookEdit",`) {
		t.Errorf("compact settings:\n%s", got)
	}
}

func TestInstallRefusesInvalidJSON(t *testing.T) {
	_, env := installEnv(t)
	for fixture, want := range map[string]string{
		"invalid.json":     "not valid JSON: trailing comma at line 3, column 14",
		"hooks-array.json": `"hooks" is an array, not an object`,
	} {
		dir, settings := project(t, fixture)
		orig, _ := os.ReadFile(settings)
		r := install(t, dir, env)
		after, _ := os.ReadFile(settings)
		if r.Code != 2 || !strings.Contains(r.Stderr, settings) || !strings.Contains(r.Stderr, want) ||
			!strings.Contains(r.Stderr, "left untouched") || string(after) != string(orig) {
			t.Errorf("%s: exit %d, changed %v\n%s", fixture, r.Code, string(after) != string(orig), r.Stderr)
		}
		entries, _ := os.ReadDir(filepath.Dir(settings))
		if len(entries) != 1 {
			t.Errorf("%s: stray files next to settings.json: %v", fixture, entries)
		}
	}
}

func TestInstallUserScope(t *testing.T) {
	home, env := installEnv(t)
	dir, settings := project(t, "")
	r := install(t, dir, env, "--claude-settings", "user")
	if r.Code != 0 {
		t.Fatalf("install: exit %d\n%s", r.Code, r.Stderr)
	}
	user := filepath.Join(home, ".claude", "settings.json")
	data, err := os.ReadFile(user)
	if err != nil || !strings.Contains(string(data), hookProgram(t)+" hook") || !strings.Contains(r.Stdout, "created "+user) {
		t.Errorf("user settings (%v):\n%s\n%s", err, data, r.Stdout)
	}
	if _, err := os.Stat(settings); err == nil {
		t.Error("the project's settings were written too")
	}
	installTwice(t, dir, env, user, "--claude-settings", "user")
	// CLAUDE_CONFIG_DIR moves Claude Code's user settings.
	cfg := t.TempDir()
	if r := install(t, dir, append(env, "CLAUDE_CONFIG_DIR="+cfg), "--claude-settings", "user"); r.Code != 0 {
		t.Fatalf("install: exit %d\n%s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(cfg, "settings.json")); err != nil {
		t.Errorf("CLAUDE_CONFIG_DIR ignored: %v", err)
	}
	if r := install(t, dir, env, "--claude-settings", "global"); r.Code != 2 {
		t.Errorf("--claude-settings global: exit %d", r.Code)
	}
}

func TestInstallDryRun(t *testing.T) {
	_, env := installEnv(t)
	dir, settings := project(t, "existing.json")
	orig, _ := os.ReadFile(settings)
	r := install(t, dir, env, "--dry-run")
	after, _ := os.ReadFile(settings)
	if r.Code != 0 || string(after) != string(orig) || !strings.Contains(r.Stderr, "was not written") {
		t.Fatalf("dry run: exit %d, changed %v\n%s", r.Code, string(after) != string(orig), r.Stderr)
	}
	want, _ := os.ReadFile(filepath.Join("testdata", "install", "existing.golden"))
	if got := strings.ReplaceAll(r.Stdout, testkit.Binary(t), "@BIN@"); got != string(want) {
		t.Errorf("dry run output:\n%s", got)
	}
}

// A binary path with a space is shell-quoted, and recognised as ours again.
func TestInstallQuotedPath(t *testing.T) {
	_, env := installEnv(t)
	dir, settings := project(t, "")
	bin := filepath.Join(t.TempDir(), "my tools", "saga-lsp")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testkit.Binary(t), bin); err != nil {
		t.Fatal(err)
	}
	env = append(env, "SAGA_LSP_BIN="+bin)
	if r := install(t, dir, env); r.Code != 0 {
		t.Fatalf("install: exit %d\n%s", r.Code, r.Stderr)
	}
	var s struct {
		Hooks map[string][]struct {
			Matcher string
			Hooks   []struct {
				Type, Command string
				Timeout       int
			}
		}
	}
	data, _ := os.ReadFile(settings)
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	want := "'" + bin + "' hook"
	for _, h := range claudecode.Hooks {
		g := s.Hooks[h.Event]
		if len(g) != 1 || g[0].Matcher != h.Matcher || len(g[0].Hooks) != 1 || g[0].Hooks[0].Command != want ||
			g[0].Hooks[0].Type != "command" || g[0].Hooks[0].Timeout != h.Timeout() {
			t.Errorf("%s: %+v", h.Event, g)
		}
	}
	installTwice(t, dir, env, settings)
}

func TestIsSagaHookCommand(t *testing.T) {
	for cmd, want := range map[string]bool{
		"saga-lsp hook":                             true,
		"/usr/local/bin/saga-lsp hook":              true,
		"'/opt/my tools/saga-lsp' hook":             true,
		`"/opt/my tools/saga-lsp" hook`:             true,
		`/opt/my\ tools/saga-lsp hook`:              true,
		`"${CLAUDE_PLUGIN_ROOT}"/bin/saga-lsp hook`: true,
		"  saga-lsp   hook  ":                       true,
		"saga-lsp hooks":                            false,
		"saga-lsp check":                            false,
		"/bin/other hook":                           false,
		"saga-lsp-dev hook":                         false,
		"/usr/local/bin/saga-lsp-hook hook":         true,
		"saga-lsp-hook.exe hook":                    true,
		"'unterminated saga-lsp hook":               false,
		"echo saga-lsp hook | sh":                   false,
	} {
		if got := hook.IsSagaHookCommand(cmd); got != want {
			t.Errorf("IsSagaHookCommand(%q) = %v, want %v", cmd, got, want)
		}
	}
}

// Merging is idempotent on every fixture, and keeps the result valid JSON.
func TestMergeHooksIdempotent(t *testing.T) {
	for _, f := range []string{"existing.json", "stale.json", "compact.json"} {
		src, err := os.ReadFile(filepath.Join("testdata", "install", f))
		if err != nil {
			t.Fatal(err)
		}
		once, err := hook.MergeHooks(src, "/x/saga-lsp hook")
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		twice, err := hook.MergeHooks(once, "/x/saga-lsp hook")
		if err != nil || string(twice) != string(once) || !json.Valid(once) {
			t.Errorf("%s: second merge changed the result (%v):\n%s\n---\n%s", f, err, once, twice)
		}
		// A new binary path replaces ours in place: same shape, new path.
		moved, err := hook.MergeHooks(once, "/y/saga-lsp hook")
		if err != nil || strings.ReplaceAll(string(moved), "/y/", "/x/") != string(once) {
			t.Errorf("%s: moving the binary:\n%s", f, moved)
		}
	}
	for _, src := range []string{"", "[]", `{"hooks":{"PreToolUse":{}}}`, `{"a":1,}`} {
		if _, err := hook.MergeHooks([]byte(src), "saga-lsp hook"); err == nil {
			t.Errorf("MergeHooks(%q) accepted it", src)
		}
	}
}

// Project settings are shared: with saga-lsp and its saga-lsp-hook on PATH
// they name `saga-lsp-hook hook`, not one machine's path; user settings keep
// the absolute path; off PATH the absolute path comes with a note. (Without
// a saga-lsp-hook beside it, saga-lsp's own: TestInstallQuotedPath.)
func TestInstallNamesHookOnPath(t *testing.T) {
	_, env := installEnv(t)
	bin := testkit.Binary(t)
	var onPath []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			onPath = append(onPath, kv)
		}
	}
	onPath = append(onPath, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))

	dir, settings := project(t, "")
	r := install(t, dir, onPath)
	data, _ := os.ReadFile(settings)
	if r.Code != 0 || strings.Contains(string(data), bin) || strings.Count(string(data), `"command": "saga-lsp-hook hook"`) != len(claudecode.Hooks) || strings.Contains(r.Stdout, "note:") {
		t.Errorf("on PATH: exit %d\n%s\n%s", r.Code, data, r.Stdout)
	}
	r = install(t, dir, onPath, "--claude-settings", "user")
	if r.Code != 0 || !strings.Contains(r.Stdout, "run `"+hookProgram(t)+" hook`") {
		t.Errorf("user scope: exit %d\n%s", r.Code, r.Stdout)
	}
	dir2, _ := project(t, "")
	r = install(t, dir2, env)
	if r.Code != 0 || !strings.Contains(r.Stdout, "note: saga-lsp is not on PATH") {
		t.Errorf("off PATH: exit %d\n%s", r.Code, r.Stdout)
	}
}

// A settings file that is a FIFO, a link to /dev/zero or a folder is
// refused at once, untouched: reading it would hang install for ever or
// grow its memory without bound (attack 15). The command runs with a
// deadline and an address-space limit, so a regression fails the test
// instead of hanging it or exhausting the machine.
func TestInstallRefusesSpecialSettings(t *testing.T) {
	_, env := installEnv(t)
	for _, c := range []struct {
		name, says string
		make       func(settings string) error
	}{
		{"FIFO", "a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"link to /dev/zero", "a character device", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"folder", "a folder", func(p string) error { return os.Mkdir(p, 0o755) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, settings := project(t, "")
			if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := c.make(settings); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Lstat(settings)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "sh", "-c", `ulimit -v 2097152 && exec "$0" install`, testkit.Binary(t))
			cmd.Dir, cmd.Env = dir, env
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("install still running after 30 s: it blocked on the %s", c.name)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), settings) ||
				!strings.Contains(stderr.String(), c.says) || !strings.Contains(stderr.String(), "left untouched") {
				t.Fatalf("install: %v\n%s%s", err, stdout.String(), stderr.String())
			}
			after, err := os.Lstat(settings)
			if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
				t.Errorf("the settings entry was replaced: %v, %v", after, err)
			}
		})
	}
}

// A settings.json that is a link to a regular file (dotfile managers) is
// followed: its target gets the hooks, replaced atomically (a new inode,
// no temp file left), and the link stays a link to it.
func TestInstallFollowsLinkedSettings(t *testing.T) {
	home, env := installEnv(t)
	dotfiles := filepath.Join(home, "dotfiles", "claude")
	if err := os.MkdirAll(dotfiles, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dotfiles, "settings.json")
	data, err := os.ReadFile(filepath.Join("testdata", "install", "existing.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, data, 0o600); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	link := "../dotfiles/claude/settings.json"
	if err := os.Symlink(link, settings); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(target)
	dir, _ := project(t, "")
	if r := install(t, dir, env, "--claude-settings", "user"); r.Code != 0 {
		t.Fatalf("install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if got, err := os.Readlink(settings); err != nil || got != link {
		t.Errorf("settings.json is no longer the link: %q, %v", got, err)
	}
	after, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) {
		t.Error("the target was rewritten in place, not replaced by a rename")
	}
	if after.Mode().Perm() != 0o600 {
		t.Errorf("the target's mode is %v, want 0600 kept", after.Mode().Perm())
	}
	got, _ := os.ReadFile(target)
	if !strings.Contains(string(got), hookProgram(t)+" hook") || !strings.Contains(string(got), `"permissions"`) {
		t.Errorf("target:\n%s", got)
	}
	for _, d := range []string{dotfiles, filepath.Dir(settings)} {
		if entries, _ := os.ReadDir(d); len(entries) != 1 {
			t.Errorf("stray files in %s: %v", d, entries)
		}
	}
	installTwice(t, dir, env, target, "--claude-settings", "user")
}

// hookProgram is the hook program install registers for the test binary:
// the saga-lsp-hook built beside it.
func hookProgram(t *testing.T) string {
	t.Helper()
	bin := testkit.Binary(t)
	prog := runs.HookProgram(bin)
	if prog != filepath.Join(filepath.Dir(bin), runs.HookBinary) {
		t.Fatalf("the test binary's hook program is %s, not the saga-lsp-hook beside it", prog)
	}
	return prog
}
