package claudecode_test

import (
	"encoding/json"
	"fmt"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// claudeOffline is the real Claude Code CLI, offline (../shared/tools,
// or $SAGA_CLAUDE_OFFLINE), or the test is skipped.
func claudeOffline(t *testing.T) string {
	t.Helper()
	p := os.Getenv("SAGA_CLAUDE_OFFLINE")
	if p == "" {
		p = filepath.Join(testkit.ModuleRoot(t), "..", "shared", "tools", "claude-offline")
	}
	if _, err := os.Stat(p); err != nil {
		testkit.Needs(t, fmt.Sprintf("the real Claude Code CLI wrapper is absent (%s; set SAGA_CLAUDE_OFFLINE to it)", p))
	}
	for _, prog := range []string{"git", "python3", "npm"} {
		testkit.NeedsTool(t, prog, "")
	}
	return p
}

// serveGit serves the bare repositories under root over HTTP on 127.0.0.1
// (git's smart protocol, by git http-backend), as a forge would.
func serveGit(t *testing.T, root string) string {
	t.Helper()
	git := testkit.NeedsTool(t, "git", "")
	srv := httptest.NewServer(&cgi.Handler{Path: git, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	t.Cleanup(srv.Close)
	return srv.URL
}

// copyRepository copies what a user gets from the repository — its
// marketplace file, this plugin and the script that stamps its version, as
// they are in the working tree — into checkout.
func copyRepository(t *testing.T, checkout string) {
	t.Helper()
	testkit.CopyInto(t, filepath.Join(repoRoot(), ".claude-plugin"), filepath.Join(checkout, ".claude-plugin"))
	testkit.CopyInto(t, pluginDir(), filepath.Join(checkout, "editors", "claude-code"))
	tests, _ := filepath.Glob(filepath.Join(checkout, "editors", "claude-code", "*_test.go"))
	for _, f := range tests {
		os.Remove(f)
	}
	if err := os.MkdirAll(filepath.Join(checkout, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(repoRoot(), "scripts", "set-plugin-version.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(checkout, "scripts", "set-plugin-version.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
}

// publish commits checkout and pushes it to the bare repository the server serves.
func publish(t *testing.T, checkout, bare, message string) {
	t.Helper()
	testkit.Git(t, checkout, "add", "-A")
	testkit.Git(t, checkout, "commit", "-qm", message)
	testkit.Git(t, checkout, "push", "-q", bare, "HEAD:main")
}

// The plugin installs the way its README says, with the real CLI: the
// repository (served as a git URL on 127.0.0.1) added as a marketplace, the
// plugin installed from it, `claude plugin validate` content with it. In a
// session, its hooks and its language server run through bin/saga-lsp-run
// with saga-lsp only in ~/go/bin (not on PATH): the SessionStart context
// and saga-lsp's diagnostics after an edit reach the model. A release that
// stamps a new version (scripts/set-plugin-version.sh) reaches the user with
// `claude plugin update`.
func TestRealCLIInstallsFromRepository(t *testing.T) {
	claude := claudeOffline(t)
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	gobin := filepath.Join(home, "go", "bin")
	if err := os.MkdirAll(gobin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testkit.Binary(t), filepath.Join(gobin, "saga-lsp")); err != nil {
		t.Fatal(err)
	}
	// A PATH without saga-lsp: the system's directories only.
	path := "/usr/local/bin:/usr/bin:/bin"
	if p, err := exec.LookPath("npm"); err == nil {
		path = filepath.Dir(p) + ":" + path
	}
	for _, d := range filepath.SplitList(path) {
		if _, err := os.Stat(filepath.Join(d, "saga-lsp")); err == nil {
			testkit.Needs(t, fmt.Sprintf("no saga-lsp in the system's PATH (%s/saga-lsp exists: the test could not tell how the plugin found its binary)", d))
		}
	}
	// claude-offline keeps its install of Claude Code under the user's
	// home, which this test replaces: name the real one.
	toolsCache := os.Getenv("SAGA_TOOLS_CACHE")
	if toolsCache == "" {
		if h, err := os.UserHomeDir(); err == nil {
			toolsCache = filepath.Join(h, ".cache", "saga-tools")
		}
	}
	apiLog := filepath.Join(tmp, "api.jsonl")
	env := []string{"HOME=" + home, "PATH=" + path, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"CLAUDE_OFFLINE_LOG=" + apiLog, "SAGA_TOOLS_CACHE=" + toolsCache, "SAGA_SESSION_DIR=" + filepath.Join(tmp, "sessions"), "TMPDIR=" + os.TempDir(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid"}
	run := func(dir string, args ...string) testkit.Result {
		t.Helper()
		r := testkit.Run(t, dir, env, "", claude, args...)
		if r.Code != 0 {
			t.Fatalf("claude %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
		return r
	}

	// What `claude plugin validate` says of the plugin (with the plugin
	// directory's profile: a licence, an icon, a README) and of the marketplace.
	run(tmp, "plugin", "validate", "--profile", "directory", "--strict", pluginDir())
	run(tmp, "plugin", "validate", "--strict", repoRoot())

	served := filepath.Join(tmp, "served")
	bare := filepath.Join(served, "saga-lsp.git")
	testkit.Git(t, tmp, "init", "-q", "--bare", "-b", "main", bare)
	checkout := filepath.Join(tmp, "checkout")
	testkit.Git(t, tmp, "init", "-q", "-b", "main", checkout)
	copyRepository(t, checkout)
	publish(t, checkout, bare, "the plugin as it is")
	url := serveGit(t, served) + "/saga-lsp.git"

	run(tmp, "plugin", "marketplace", "add", url)
	run(tmp, "plugin", "install", "saga-lsp@saga-ai")
	version := readManifest(t).Version
	if out := run(tmp, "plugin", "list").Stdout; !strings.Contains(out, "saga-lsp@saga-ai") || !strings.Contains(out, "Version: "+version) {
		t.Fatalf("claude plugin list after the install:\n%s\nwant saga-lsp@saga-ai, version %s", out, version)
	}

	// A session in a SAGA workspace: one edit breaks a dependency.
	ws := testkit.CopyExample(t, "workspace")
	task := filepath.Join(ws, ".saga", "stories", "user-auth--api", "logout-endpoint.json")
	prompt := "FAKEAPI edit " + task + ` '["login-endpoint"]' '["logn-endpoint"]'` + "\n" +
		"FAKEAPI read " + task + " wait=5\n" + // time for the diagnostics to arrive
		"FAKEAPI notasks\n"
	r := run(ws, "-p", prompt, "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits")
	var loaded bool
	for _, line := range strings.Split(r.Stdout, "\n") {
		var m struct {
			Type, Subtype string
			Plugins       []struct{ Name, Path, Source string }
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Type == "system" && m.Subtype == "init" {
			for _, p := range m.Plugins {
				if p.Source == "saga-lsp@saga-ai" && strings.HasPrefix(p.Path, filepath.Join(home, ".claude", "plugins", "cache")) {
					loaded = true
				}
			}
		}
	}
	if !loaded {
		t.Errorf("the session did not load the installed saga-lsp@saga-ai from the plugin cache:\n%s", r.Stdout)
	}
	seen := testkit.ReadFile(t, apiLog) // everything the model was sent
	if !strings.Contains(seen, "SAGA workspace") {
		t.Error("the model never got the SessionStart hook's context (bin/saga-lsp-run hook found no saga-lsp?)")
	}
	if !strings.Contains(seen, "unknown-dependency") || !strings.Contains(seen, "logn-endpoint") {
		t.Error("the model never got saga-lsp's unknown-dependency diagnostic after the edit (.lsp.json's bin/saga-lsp-run serve found no saga-lsp?)")
	}

	// A release: the version stamped, committed, published; the user updates.
	next := "99.1.0"
	stamp := testkit.Run(t, checkout, nil, "", filepath.Join(checkout, "scripts", "set-plugin-version.sh"), "v"+next)
	if stamp.Code != 0 {
		t.Fatalf("set-plugin-version.sh: exit %d: %s", stamp.Code, stamp.Stderr)
	}
	if diff := testkit.Git(t, checkout, "diff", "--numstat"); strings.TrimSpace(diff) != "1\t1\teditors/claude-code/.claude-plugin/plugin.json" {
		t.Errorf("set-plugin-version.sh changed %q, want one line of plugin.json", diff)
	}
	if bad := testkit.Run(t, checkout, nil, "", filepath.Join(checkout, "scripts", "set-plugin-version.sh"), "1.2"); bad.Code == 0 {
		t.Error("set-plugin-version.sh accepted version 1.2")
	}
	publish(t, checkout, bare, "release "+next)
	run(tmp, "plugin", "marketplace", "update", "saga-ai")
	run(tmp, "plugin", "update", "saga-lsp@saga-ai")
	if out := run(tmp, "plugin", "list").Stdout; !strings.Contains(out, "Version: "+next) {
		t.Errorf("claude plugin list after the release:\n%s\nwant version %s", out, next)
	}
}
