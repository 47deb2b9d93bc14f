// Package claudecode_test checks the Claude Code plugin in this folder: its
// JSON files against the shapes Claude Code accepts, its hook wrapper, its
// language server entry, its skills' commands against the real CLI, and the
// plugin as a whole loaded by the stand-in claude.
package claudecode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// pluginDir is this folder (absolute).
func pluginDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// decodeStrict decodes one JSON document into v, refusing unknown keys and
// trailing data.
func decodeStrict(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("%s: data after the JSON value", path)
	}
}

// ---- .claude-plugin/plugin.json and marketplace.json ----

// Plugin names: kebab-case, as Claude Code's manifest schema and `claude
// plugin validate` want them.
var kebab = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

var semver = regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

type person struct {
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
	URL   string `json:"url,omitempty"`
}

// manifest is the metadata part of Claude Code's plugin manifest schema.
// Claude Code strips unknown top-level keys; we refuse them, so a typo (or a
// component field pointing at a default location, which would load it twice)
// cannot slip in. Components live in their standard places: hooks/hooks.json,
// .lsp.json, skills/<name>/SKILL.md.
type manifest struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Description string   `json:"description"`
	Author      *person  `json:"author"`
	Homepage    string   `json:"homepage"`
	Repository  string   `json:"repository"`
	License     string   `json:"license"`
	Keywords    []string `json:"keywords"`
}

func readManifest(t *testing.T) manifest {
	t.Helper()
	var m manifest
	decodeStrict(t, filepath.Join(pluginDir(), ".claude-plugin", "plugin.json"), &m)
	return m
}

func TestManifest(t *testing.T) {
	m := readManifest(t)
	if !kebab.MatchString(m.Name) || m.Name != "saga-lsp" {
		t.Errorf("name %q: want saga-lsp (kebab-case)", m.Name)
	}
	if !semver.MatchString(m.Version) {
		t.Errorf("version %q is not semver", m.Version)
	}
	if strings.TrimSpace(m.Description) == "" {
		t.Error("description is empty")
	}
	if m.Author == nil || m.Author.Name == "" {
		t.Error("author.name is required when author is given")
	}
	for _, u := range []string{m.Homepage, m.Repository} {
		if pu, err := url.Parse(u); u != "" && (err != nil || pu.Scheme != "https" || pu.Host == "") {
			t.Errorf("%q is not an https URL", u)
		}
	}
	// Everything a plugin loads from its standard layout is there, and the
	// licence `claude plugin validate` looks for.
	for _, p := range []string{"hooks/hooks.json", ".lsp.json", "bin/saga-lsp-run", "LICENSE"} {
		if _, err := os.Stat(filepath.Join(pluginDir(), p)); err != nil {
			t.Errorf("standard layout: %v", err)
		}
	}
	// Nothing but the manifest inside .claude-plugin/ (the marketplace is
	// the repository's, at its root).
	entries, err := os.ReadDir(filepath.Join(pluginDir(), ".claude-plugin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "plugin.json" {
			t.Errorf(".claude-plugin/%s: components belong at the plugin root, the marketplace at the repository's", e.Name())
		}
	}
	// The repository's licence, the same text as the VS Code extension's.
	mine, err1 := os.ReadFile(filepath.Join(pluginDir(), "LICENSE"))
	vscode, err2 := os.ReadFile(filepath.Join(pluginDir(), "..", "vscode", "LICENSE"))
	if err1 != nil || err2 != nil || !bytes.Equal(mine, vscode) {
		t.Errorf("LICENSE differs from editors/vscode/LICENSE (%v, %v)", err1, err2)
	}
}

// marketplace is Claude Code's marketplace.json: name, owner and plugins
// are required; each plugin entry needs name and source.
type marketplace struct {
	Name        string  `json:"name"`
	Owner       *person `json:"owner"`
	Description string  `json:"description"`
	Plugins     []struct {
		Name        string `json:"name"`
		Source      string `json:"source"`
		Description string `json:"description"`
		Version     string `json:"version"`
		Category    string `json:"category"`
	} `json:"plugins"`
}

// repoRoot is the repository this plugin is part of.
func repoRoot() string { return filepath.Dir(filepath.Dir(pluginDir())) }

// The repository is the marketplace (`/plugin marketplace add
// saga-ai/saga-lsp`), listing this folder as its one plugin. The version
// lives in plugin.json alone (scripts/set-version.sh stamps it), so the
// entry has none that could disagree.
func TestMarketplace(t *testing.T) {
	var mp marketplace
	decodeStrict(t, filepath.Join(repoRoot(), ".claude-plugin", "marketplace.json"), &mp)
	m := readManifest(t)
	if !kebab.MatchString(mp.Name) || mp.Owner == nil || mp.Owner.Name == "" {
		t.Errorf("marketplace needs a kebab-case name and owner.name: %+v", mp)
	}
	if len(mp.Plugins) != 1 {
		t.Fatalf("want one plugin entry, got %d", len(mp.Plugins))
	}
	p := mp.Plugins[0]
	if p.Name != m.Name || p.Description == "" || p.Version != "" {
		t.Errorf("plugin entry %+v: want name %q, a description, no version (plugin.json's is the one)", p, m.Name)
	}
	if !strings.HasPrefix(p.Source, "./") || filepath.Join(repoRoot(), filepath.FromSlash(p.Source)) != pluginDir() {
		t.Errorf("plugin entry source %q: want ./editors/claude-code, this folder", p.Source)
	}
}

// ---- hooks/hooks.json ----

// hookCommand is a "command" hook of Claude Code's hooks schema; timeout is
// in seconds (a number, positive).
type hookCommand struct {
	Type          string   `json:"type"`
	Command       string   `json:"command"`
	Timeout       *float64 `json:"timeout"`
	StatusMessage string   `json:"statusMessage"`
	Once          bool     `json:"once"`
	Async         bool     `json:"async"`
}

type hookGroup struct {
	Matcher *string       `json:"matcher"`
	Hooks   []hookCommand `json:"hooks"`
}

// pluginHooks is a plugin's hooks/hooks.json.
type pluginHooks struct {
	Description string                 `json:"description"`
	Hooks       map[string][]hookGroup `json:"hooks"`
}

// hookEvents are Claude Code's hook events (2.1.x).
var hookEvents = []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "Notification", "UserPromptSubmit",
	"SessionStart", "SessionEnd", "Stop", "SubagentStart", "SubagentStop", "PreCompact", "PermissionRequest",
	"TaskCreated", "TaskCompleted", "Setup", "TeammateIdle", "ConfigChange", "WorktreeCreate", "WorktreeRemove",
	"InstructionsLoaded", "CwdChanged", "FileChanged", "Elicitation", "ElicitationResult", "PostCompact", "StopFailure"}

// matches is Claude Code's matcher test (docs/claude-code.md#hooks): empty or
// "*" matches all; only [A-Za-z0-9_|]: an exact name or an A|B list; else an
// unanchored regular expression.
func matches(t *testing.T, matcher, query string) bool {
	t.Helper()
	if matcher == "" || matcher == "*" {
		return true
	}
	if regexp.MustCompile(`^[A-Za-z0-9_|]+$`).MatchString(matcher) {
		return slices.Contains(strings.Split(matcher, "|"), query)
	}
	re, err := regexp.Compile(matcher)
	if err != nil {
		t.Errorf("matcher %q is not a valid regular expression: %v", matcher, err)
		return false
	}
	return re.MatchString(query)
}

func TestHooksJSON(t *testing.T) {
	var h pluginHooks
	decodeStrict(t, filepath.Join(pluginDir(), "hooks", "hooks.json"), &h)
	if h.Description == "" {
		t.Error("description is empty")
	}
	for event := range h.Hooks {
		if !slices.Contains(hookEvents, event) {
			t.Errorf("unknown hook event %q", event)
		}
	}
	// The same hooks as `saga-lsp install` registers: event, matcher, timeout.
	if len(h.Hooks) != len(claudecode.Hooks) {
		t.Errorf("events %v, want those of claudecode.Hooks %v", keys(h.Hooks), claudecode.Hooks)
	}
	const wantCommand = `"${CLAUDE_PLUGIN_ROOT}/bin/saga-lsp-run" hook`
	for _, spec := range claudecode.Hooks {
		groups := h.Hooks[spec.Event]
		if len(groups) != 1 || len(groups[0].Hooks) != 1 {
			t.Errorf("%s: want one group with one hook, got %+v", spec.Event, groups)
			continue
		}
		g := groups[0]
		matcher := ""
		if g.Matcher != nil {
			matcher = *g.Matcher
		}
		if matcher != spec.Matcher {
			t.Errorf("%s matcher %q, want %q", spec.Event, matcher, spec.Matcher)
		}
		c := g.Hooks[0]
		if c.Type != "command" || c.Command != wantCommand {
			t.Errorf("%s hook %+v, want type command running %s", spec.Event, c, wantCommand)
		}
		if c.Timeout == nil || *c.Timeout <= 0 || *c.Timeout != float64(spec.Timeout()) {
			t.Errorf("%s timeout %v, want %d (seconds)", spec.Event, c.Timeout, spec.Timeout())
		}
		if c.Async || c.Once {
			t.Errorf("%s: async/once hooks cannot deny or sync in time", spec.Event)
		}
	}
	// What the matchers select.
	pre := h.Hooks["PreToolUse"][0].Matcher
	for tool, want := range map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true,
		"Read": false, "Bash": false, "TaskUpdate": false} {
		if got := matches(t, *pre, tool); got != want {
			t.Errorf("PreToolUse matcher on %s: %v, want %v", tool, got, want)
		}
	}
	post := h.Hooks["PostToolUse"][0].Matcher
	for tool, want := range map[string]bool{"TaskUpdate": true, "TaskCreate": false, "TaskList": false, "Write": false} {
		if got := matches(t, *post, tool); got != want {
			t.Errorf("PostToolUse matcher on %s: %v, want %v", tool, got, want)
		}
	}
	for _, source := range []string{"startup", "resume", "clear", "compact", "fork"} {
		if m := h.Hooks["SessionStart"][0].Matcher; m != nil && !matches(t, *m, source) {
			t.Errorf("SessionStart matcher misses source %s", source)
		}
	}
	// The command, expanded as Claude Code does, names the executable wrapper.
	cmd := strings.ReplaceAll(wantCommand, "${CLAUDE_PLUGIN_ROOT}", pluginDir())
	path := strings.Trim(strings.TrimSuffix(cmd, " hook"), `"`)
	if fi, err := os.Stat(path); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("%s must be an executable file: %v", path, err)
	}
}

func keys[M ~map[string]V, V any](m M) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ---- bin/saga-lsp-run ----

// fakeSaga writes an executable "saga-lsp" that prints its name, its
// arguments and its stdin.
func fakeSaga(t *testing.T, dir, name string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "saga-lsp")
	// Only builtins: the tests run it with a PATH that has nothing else.
	script := "#!/bin/sh\necho \"" + name + " $*\"\nwhile IFS= read -r l; do echo \"$l\"; done\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHookWrapper(t *testing.T) {
	root := t.TempDir()
	plugin := filepath.Join(root, "plugin") // a copy: the real plugin has no bundled binary
	testkit.CopyInto(t, pluginDir(), plugin)
	wrapper := filepath.Join(plugin, "bin", "saga-lsp-run")
	empty := filepath.Join(root, "empty") // a PATH without saga-lsp
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	explicit := fakeSaga(t, filepath.Join(root, "explicit"), "explicit")
	onPath := filepath.Join(root, "onpath")
	fakeSaga(t, onPath, "path")
	gopath := filepath.Join(root, "gopath")
	fakeSaga(t, filepath.Join(gopath, "bin"), "gopath")
	gobin := filepath.Join(root, "gobin")
	fakeSaga(t, gobin, "gobin")
	home := filepath.Join(root, "home")

	run := func(env ...string) (string, string, int) {
		t.Helper()
		r := testkit.Run(t, "", append([]string{"HOME=" + home}, env...), `{"hook_event_name":"SessionStart"}`+"\n", wrapper, "hook")
		return r.Stdout, r.Stderr, r.Code
	}
	want := func(name, out string) {
		t.Helper()
		if wantOut := name + " hook\n" + `{"hook_event_name":"SessionStart"}` + "\n"; out != wantOut {
			t.Errorf("ran %q, want %q (the %s binary, with `hook` and the payload on stdin)", out, wantOut, name)
		}
	}

	// Nothing found: a clear message, exit 1 (a non-blocking hook error).
	out, stderr, code := run("PATH="+empty, "CLAUDE_PLUGIN_ROOT="+plugin)
	if code != 1 || out != "" || !strings.Contains(stderr, "saga-lsp not found") || !strings.Contains(stderr, "go install") {
		t.Errorf("no binary: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	// PATH.
	out, _, _ = run("PATH="+onPath, "CLAUDE_PLUGIN_ROOT="+plugin)
	want("path", out)
	// Go's install dirs, for editors started without the user's PATH.
	out, _, _ = run("PATH="+empty, "CLAUDE_PLUGIN_ROOT="+plugin, "GOPATH="+gopath+":"+filepath.Join(root, "other"))
	want("gopath", out)
	out, _, _ = run("PATH="+empty, "CLAUDE_PLUGIN_ROOT="+plugin, "GOPATH="+gopath, "GOBIN="+gobin)
	want("gobin", out)
	if err := os.MkdirAll(filepath.Join(home, "go", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	fakeSaga(t, filepath.Join(home, "go", "bin"), "homego")
	out, _, _ = run("PATH="+empty, "CLAUDE_PLUGIN_ROOT="+plugin)
	want("homego", out)
	// A binary shipped in the plugin beats PATH …
	fakeSaga(t, filepath.Join(plugin, "bin"), "bundled")
	out, _, _ = run("PATH="+onPath, "CLAUDE_PLUGIN_ROOT="+plugin)
	want("bundled", out)
	// … and is found from the script's own place without CLAUDE_PLUGIN_ROOT
	// (dirname is the one outside tool it needs then).
	out, _, _ = run("PATH=" + onPath + ":/usr/bin:/bin")
	want("bundled", out)
	// The arguments pass through as they are (.lsp.json's `serve`).
	r := testkit.Run(t, "", []string{"HOME=" + home, "PATH=" + onPath, "CLAUDE_PLUGIN_ROOT=" + plugin}, "", wrapper, "serve", "--log-file", "a b")
	if r.Stdout != "bundled serve --log-file a b\n" {
		t.Errorf("saga-lsp-run serve …: ran %q", r.Stdout)
	}
	// $SAGA_LSP_BIN beats everything.
	out, _, _ = run("PATH="+onPath, "CLAUDE_PLUGIN_ROOT="+plugin, "SAGA_LSP_BIN="+explicit)
	want("explicit", out)
	// A SAGA_LSP_BIN that is not there falls through.
	out, _, _ = run("PATH="+onPath, "CLAUDE_PLUGIN_ROOT="+plugin, "SAGA_LSP_BIN="+filepath.Join(root, "nope"))
	want("bundled", out)

	// With the real binary: an event outside any story is allowed silently.
	os.Remove(filepath.Join(plugin, "bin", "saga-lsp"))
	r = testkit.Run(t, root, []string{"HOME=" + home, "PATH=" + filepath.Dir(testkit.Binary(t)), "CLAUDE_PLUGIN_ROOT=" + plugin},
		`{"session_id":"s","transcript_path":"/dev/null","cwd":"`+root+
			`","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/etc/x","content":""},"tool_use_id":"toolu_1"}`+"\n",
		wrapper, "hook")
	if r.Code != 0 || r.Stdout+r.Stderr != "" {
		t.Errorf("real saga-lsp hook outside a story: exit %d, output %q", r.Code, r.Stdout+r.Stderr)
	}
}

// ---- .lsp.json ----

// lspServer is Claude Code's LSP server config, a strict object: unknown
// keys are errors there too.
type lspServer struct {
	Command               string            `json:"command"`
	Args                  []string          `json:"args"`
	ExtensionToLanguage   map[string]string `json:"extensionToLanguage"`
	Transport             string            `json:"transport"`
	Env                   map[string]string `json:"env"`
	InitializationOptions any               `json:"initializationOptions"`
	Settings              any               `json:"settings"`
	WorkspaceFolder       string            `json:"workspaceFolder"`
	StartupTimeout        *int              `json:"startupTimeout"`
	ShutdownTimeout       *int              `json:"shutdownTimeout"`
	RestartOnCrash        *bool             `json:"restartOnCrash"`
	MaxRestarts           *int              `json:"maxRestarts"`
}

func TestLSPJSON(t *testing.T) {
	var servers map[string]lspServer
	decodeStrict(t, filepath.Join(pluginDir(), ".lsp.json"), &servers)
	if len(servers) != 1 {
		t.Fatalf("want one server, got %v", keys(servers))
	}
	for name, s := range servers {
		if name == "" {
			t.Error("empty server name")
		}
		if s.Command == "" || (strings.ContainsAny(s.Command, " \t") && !strings.HasPrefix(s.Command, "/")) {
			t.Errorf("%s: command %q must be one word (arguments go in args)", name, s.Command)
		}
		for _, a := range s.Args {
			if a == "" {
				t.Errorf("%s: empty argument", name)
			}
		}
		if len(s.ExtensionToLanguage) == 0 {
			t.Errorf("%s: extensionToLanguage needs a mapping", name)
		}
		for ext, lang := range s.ExtensionToLanguage {
			if len(ext) < 2 || ext[0] != '.' || lang == "" {
				t.Errorf("%s: mapping %q → %q: extensions start with a dot, languages are non-empty", name, ext, lang)
			}
		}
		if s.Transport != "" && s.Transport != "stdio" && s.Transport != "socket" {
			t.Errorf("%s: transport %q", name, s.Transport)
		}
		for what, v := range map[string]*int{"startupTimeout": s.StartupTimeout, "shutdownTimeout": s.ShutdownTimeout} {
			if v != nil && *v <= 0 {
				t.Errorf("%s: %s must be a positive integer (ms)", name, what)
			}
		}
		// Found the way the hooks find it (bin/saga-lsp-run), not on PATH only.
		if s.Command != "${CLAUDE_PLUGIN_ROOT}/bin/saga-lsp-run" || !slices.Equal(s.Args, []string{"serve"}) || s.ExtensionToLanguage[".json"] != "json" {
			t.Errorf("%s: want ${CLAUDE_PLUGIN_ROOT}/bin/saga-lsp-run serve for .json files, got %+v", name, s)
		}
	}
}

// TestLanguageServerStarts starts the server the way .lsp.json says, in a
// workspace with one mistake: the mistake gets diagnostics, a JSON file
// outside .saga/ gets none.
func TestLanguageServerStarts(t *testing.T) {
	var servers map[string]lspServer
	decodeStrict(t, filepath.Join(pluginDir(), ".lsp.json"), &servers)
	s := servers["saga"]
	root := testkit.CopyExample(t, "workspace")
	broken := filepath.Join(root, ".saga", "stories", "user-auth--api", "logout-endpoint.json")
	data, _ := os.ReadFile(broken)
	data = bytes.Replace(data, []byte(`"blockedBy": ["login-endpoint"]`), []byte(`"blockedBy": ["logn-endpoint"]`), 1)
	if err := os.WriteFile(broken, data, 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(root, "package.json")
	if err := os.WriteFile(other, []byte(`{"id": "Not A Saga Id", "status": 7}`), 0o644); err != nil {
		t.Fatal(err)
	}

	// s.Command expanded as Claude Code does; the wrapper finds the built
	// binary in a Go install dir, with nothing on PATH (a GUI-started editor's).
	home := t.TempDir()
	gobin := filepath.Join(home, "go", "bin")
	if err := os.MkdirAll(gobin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testkit.Binary(t), filepath.Join(gobin, "saga-lsp")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Expand(s.Command, func(k string) string {
		if k == "CLAUDE_PLUGIN_ROOT" {
			return pluginDir()
		}
		return "${" + k + "}"
	}), s.Args...)
	cmd.Dir = root
	cmd.Env = append(testEnv(t), "PATH=/usr/bin:/bin", "HOME="+home, "CLAUDE_PLUGIN_ROOT="+pluginDir())
	cmd.Stderr = io.Discard
	c, err := lspclient.Start(cmd, lspclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(10 * time.Second)
	rootURI := lspclient.FileURI(root)
	if _, err := c.Call("initialize", map[string]any{"processId": nil, "rootUri": rootURI, "capabilities": map[string]any{},
		"workspaceFolders": []any{map[string]any{"uri": rootURI, "name": "w"}}}, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	c.Notify("initialized", map[string]any{})
	type publication struct {
		URI         string           `json:"uri"`
		Diagnostics []map[string]any `json:"diagnostics"`
	}
	var p publication
	if _, _, err := c.Next(0, time.Now().Add(30*time.Second), func(m lspclient.Message) bool {
		return m.Method == "textDocument/publishDiagnostics" && json.Unmarshal(m.Params, &p) == nil &&
			lspclient.URIPath(p.URI) == broken && len(p.Diagnostics) > 0
	}); err != nil {
		t.Fatalf("no diagnostics for %s: %v", broken, err)
	}
	if d := p.Diagnostics[0]; d["code"] != "unknown-dependency" {
		t.Errorf("diagnostic %v, want unknown-dependency", d)
	}
	// Claude Code sends every .json file it touches: other JSON gets nothing.
	text, _ := os.ReadFile(other)
	from := c.Mark()
	c.Notify("textDocument/didOpen", map[string]any{
		"textDocument": map[string]any{"uri": lspclient.FileURI(other), "languageId": "json", "version": 1, "text": string(text)}})
	if _, err := c.Call("shutdown", nil, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Notes(from) {
		if m.Method == "textDocument/publishDiagnostics" && json.Unmarshal(m.Params, &p) == nil &&
			lspclient.URIPath(p.URI) == other && len(p.Diagnostics) > 0 {
			t.Errorf("diagnostics for a JSON file outside .saga/: %v", p.Diagnostics)
		}
	}
}

// ---- skills ----

type skill struct {
	dir         string
	name        string
	frontmatter map[string]string
	body        string
}

// skillKeys are the SKILL.md frontmatter fields Claude Code reads.
var skillKeys = []string{"name", "description", "allowed-tools", "argument-hint", "model", "disable-model-invocation",
	"user-invocable", "license", "version"}

// parseFrontmatter reads the YAML frontmatter, allowing only the subset a
// skill needs (one "key: value" per line, plain or quoted scalars) and
// refusing what YAML would read differently from what it looks like.
func parseFrontmatter(t *testing.T, path string, data []byte) (map[string]string, string) {
	t.Helper()
	text := string(data)
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		t.Fatalf("%s: no frontmatter (the file must start with ---)", path)
	}
	head, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		t.Fatalf("%s: frontmatter not closed", path)
	}
	fm := map[string]string{}
	for i, line := range strings.Split(head, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok || !regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(k) {
			t.Errorf("%s:%d: want `key: value`, got %q", path, i+2, line)
			continue
		}
		if !slices.Contains(skillKeys, k) {
			t.Errorf("%s:%d: unknown frontmatter key %q", path, i+2, k)
		}
		if _, dup := fm[k]; dup {
			t.Errorf("%s:%d: duplicate key %q", path, i+2, k)
		}
		switch {
		case strings.HasPrefix(v, `"`):
			if err := json.Unmarshal([]byte(v), &v); err != nil {
				t.Errorf("%s:%d: bad double-quoted value: %v", path, i+2, err)
			}
		case strings.HasPrefix(v, "'"):
			if len(v) < 2 || !strings.HasSuffix(v, "'") {
				t.Errorf("%s:%d: bad single-quoted value", path, i+2)
			}
			v = strings.ReplaceAll(v[1:len(v)-1], "''", "'")
		default:
			// A plain scalar: no indicator first, no ": " or " #" inside.
			if v == "" || strings.ContainsAny(v[:1], "-?:,[]{}#&*!|>'\"%@`") || strings.Contains(v, ": ") ||
				strings.Contains(v, " #") || strings.HasSuffix(v, ":") || strings.TrimSpace(v) != v {
				t.Errorf("%s:%d: %q is not a safe plain YAML scalar; quote it", path, i+2, v)
			}
		}
		fm[k] = v
	}
	return fm, body
}

func loadSkills(t *testing.T) []skill {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(pluginDir(), "skills"))
	if err != nil {
		t.Fatal(err)
	}
	var out []skill
	for _, e := range entries {
		if !e.IsDir() {
			t.Errorf("skills/%s: only skill folders belong here", e.Name())
			continue
		}
		path := filepath.Join(pluginDir(), "skills", e.Name(), "SKILL.md")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fm, body := parseFrontmatter(t, path, data)
		out = append(out, skill{dir: e.Name(), name: fm["name"], frontmatter: fm, body: body})
	}
	return out
}

func TestSkillFrontmatter(t *testing.T) {
	skills := loadSkills(t)
	var names []string
	for _, s := range skills {
		names = append(names, s.dir)
		if s.name != s.dir {
			t.Errorf("skills/%s: name %q must equal the folder name", s.dir, s.name)
		}
		if len(s.name) > 64 || !regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`).MatchString(s.name) {
			t.Errorf("skills/%s: name %q: lowercase letters, digits, hyphens, at most 64", s.dir, s.name)
		}
		d := s.frontmatter["description"]
		if d == "" || len(d) > 1024 || !strings.Contains(d, "Use when") {
			t.Errorf("skills/%s: description must say what it does and when to use it (\"Use when …\"), ≤ 1024 chars: %q", s.dir, d)
		}
		if !strings.Contains(s.body, "# ") {
			t.Errorf("skills/%s: no instructions after the frontmatter", s.dir)
		}
	}
	if want := []string{"breakdown", "execute-story", "review-story"}; !slices.Equal(names, want) {
		t.Errorf("skills %v, want %v", names, want)
	}
}

// shCommand is one command of a skill: from a ```sh block (joined across
// line continuations) or an inline `saga-lsp …` span in the prose.
type shCommand struct {
	line   int
	text   string
	inline bool
}

// extractCommands returns every command of the ```sh blocks and every inline
// `saga-lsp …` code span. Fences other than sh (and json, for examples of
// output) are refused, so no command escapes the test.
func extractCommands(t *testing.T, path, body string) []shCommand {
	t.Helper()
	var out []shCommand
	lines := strings.Split(body, "\n")
	inBlock, lang := false, ""
	pending, start := "", 0
	for i, l := range lines {
		fence := strings.HasPrefix(strings.TrimSpace(l), "```")
		switch {
		case fence && !inBlock:
			inBlock, lang = true, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "```"))
			if lang != "sh" && lang != "json" {
				t.Errorf("%s:%d: code block %q: commands go in ```sh blocks", path, i, lang)
			}
		case fence:
			if pending != "" {
				t.Errorf("%s:%d: line continuation runs off the end of the block", path, start)
			}
			inBlock, pending = false, ""
		case inBlock && lang == "sh":
			if pending == "" {
				start = i
			}
			if s, ok := strings.CutSuffix(l, `\`); ok {
				pending += s
				continue
			}
			if cmd := strings.TrimSpace(pending + l); cmd != "" && !strings.HasPrefix(cmd, "#") {
				out = append(out, shCommand{line: start, text: cmd})
			}
			pending = ""
		case !inBlock:
			for _, m := range regexp.MustCompile("`(saga-lsp [^`]*)`").FindAllStringSubmatch(l, -1) {
				out = append(out, shCommand{line: i, text: m[1], inline: true})
			}
		}
	}
	if inBlock {
		t.Errorf("%s: unclosed code block", path)
	}
	return out
}

// shellWords splits a command the way sh would for the simple commands the
// skills show: quotes and escapes, a trailing # comment; anything that would
// make sh do more (pipes, redirections — an unreplaced <placeholder> is one —
// substitutions, globs) is an error.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			return words, nil
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unclosed single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				switch s[i] {
				case '\\':
					if i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
						i++
					}
				case '$', '`':
					return nil, fmt.Errorf("substitution inside quotes at %q", s[i:])
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unclosed double quote")
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("trailing backslash")
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		case strings.IndexByte("|&;<>()$`*?[~{}", c) >= 0:
			return nil, fmt.Errorf("shell syntax %q at %q (an unreplaced placeholder?)", c, s[i:])
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// startsWork are the commands that would start or stop a worker, run the
// server or change Claude Code's settings: the test runs them with --help
// (which still checks their flags).
var startsWork = []string{"run", "stop", "worker", "--worker", "install", "hook", "serve"}

// skillNames maps each skill's placeholders to names of the example
// workspace (or, for breakdown, to the new epic it builds there).
var skillNames = map[string]map[string]string{
	"breakdown": {
		"<epic>": "billing", "<story>": "invoices", "<next-story>": "reminders",
		"<task>": "load-line-items", "<next-task>": "render-pdf",
	},
	"execute-story": {"<epic>": "user-auth", "<story>": "user-auth--api"},
	"review-story":  {"<epic>": "user-auth", "<story>": "user-auth--api", "<task>": "rate-limit-login"},
}

// TestSkillCommands runs every saga-lsp command of every skill, in order,
// with the built binary first on PATH, in a copy of examples/workspace:
// placeholders get real names, commands that would start work get --help,
// inline commands in the prose get --help (their flags are checked), and
// every one must exit 0. A skill cannot drift from the CLI.
func TestSkillCommands(t *testing.T) {
	for _, s := range loadSkills(t) {
		t.Run(s.dir, func(t *testing.T) {
			names, ok := skillNames[s.dir]
			if !ok {
				t.Fatalf("no placeholder names for skill %s", s.dir)
			}
			path := filepath.Join("skills", s.dir, "SKILL.md")
			root := testkit.CopyExample(t, "workspace")
			env := testEnv(t)
			var ran []string
			var others []string
			for _, c := range extractCommands(t, path, s.body) {
				text := c.text
				for k, v := range names {
					text = strings.ReplaceAll(text, k, v)
				}
				if !strings.HasPrefix(text, "saga-lsp ") && text != "saga-lsp" {
					others = append(others, text)
					continue
				}
				args, err := shellWords(text)
				if err != nil {
					t.Errorf("%s:%d: %q: %v", path, c.line, c.text, err)
					continue
				}
				args = args[1:]
				if c.inline || (len(args) > 0 && slices.Contains(startsWork, args[0])) {
					args = append(args, "--help")
				}
				r := testkit.Run(t, root, env, "", testkit.Binary(t), args...)
				if r.Code != 0 {
					t.Errorf("%s:%d: saga-lsp %s: exit %d\nstdout: %s\nstderr: %s", path, c.line, strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
					continue
				}
				ran = append(ran, strings.Join(args, " "))
				if strings.Join(args, " ") == "plan user-auth --format json" {
					var p struct{ Ready []string }
					if err := json.Unmarshal([]byte(r.Stdout), &p); err != nil || !slices.Equal(p.Ready, []string{"user-auth--api"}) {
						t.Errorf("plan user-auth: ready %v (%v), want [user-auth--api]", p.Ready, err)
					}
				}
			}
			t.Logf("ran:\n  %s", strings.Join(ran, "\n  "))
			// What each skill must show.
			has := func(prefix string) bool {
				return slices.ContainsFunc(ran, func(r string) bool { return strings.HasPrefix(r, prefix) })
			}
			hasOther := func(prefix string) bool {
				return slices.ContainsFunc(others, func(r string) bool { return strings.HasPrefix(r, prefix) })
			}
			var want []string
			switch s.dir {
			case "breakdown":
				want = []string{"status", "check", "new epic billing", "new story invoices --epic billing",
					"new story reminders --epic billing --blocked-by billing--invoices",
					"new task billing--invoices load-line-items", "new task billing--invoices render-pdf --blocked-by load-line-items",
					"plan billing", "plan billing--invoices"}
				checkBreakdownResult(t, root, env)
			case "execute-story":
				want = []string{"status --format json", "plan user-auth --format json", "plan user-auth--api", "check",
					"run user-auth--api --format json --help", "status user-auth--api", "stop user-auth--api --help"}
				for _, o := range []string{"tmux attach -t <session>", "tail -f <outputFile>"} {
					if !hasOther(o) {
						t.Errorf("execute-story does not show %q", o)
					}
				}
			case "review-story":
				want = []string{"status user-auth--api", "status user-auth--api --format json", "plan user-auth--api",
					"plan user-auth", "new task user-auth--api rate-limit-login", "check", "run user-auth--api --help"}
				for _, o := range []string{"cat .saga/stories/user-auth--api/journal.md",
					"cat .saga/worktrees/user-auth--api/.saga/stories/user-auth--api/journal.md", "gh pr view story/user-auth--api"} {
					if !hasOther(o) {
						t.Errorf("review-story does not show %q", o)
					}
				}
			}
			for _, w := range want {
				if !has(w) {
					t.Errorf("%s does not run `saga-lsp %s…`", s.dir, w)
				}
			}
		})
	}
}

// checkBreakdownResult: what the breakdown skill's commands built is a clean
// epic with ordered stories and tasks.
func checkBreakdownResult(t *testing.T, root string, env []string) {
	t.Helper()
	ws := workspace.Load(t, root)
	e := ws.Epic("billing")
	if e == nil {
		t.Fatal("no epic billing")
	}
	var children []string
	for _, c := range e.Children {
		children = append(children, c.ID)
	}
	if !slices.Equal(children, []string{"billing--invoices", "billing--reminders"}) {
		t.Errorf("epic children %v", children)
	}
	st := ws.Story("billing--invoices")
	if st == nil || len(st.Tasks) != 2 {
		t.Fatalf("story billing--invoices: %+v", st)
	}
	for _, task := range st.Tasks {
		if task.DoneWhen == "" || task.Description == "" {
			t.Errorf("task %s lacks a description or doneWhen", task.ID)
		}
	}
	if r := testkit.Run(t, root, env, "", testkit.Binary(t), "check", "--format", "json"); r.Code != 0 {
		t.Errorf("check after breakdown: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// ---- the plugin as a whole, loaded by the stand-in claude ----

// TestStandinLoadsPlugin runs the stand-in claude with --plugin-dir in a
// story worktree, as the worker would run claude but with the plugin's hooks
// instead of --settings: SessionStart gives the story's context, PreToolUse
// denies the escape script's writes outside the story's scope, and
// PostToolUse writes every TaskUpdate status into the worktree's .saga.
func TestStandinLoadsPlugin(t *testing.T) {
	const story = "user-auth--api"
	tmp := t.TempDir()
	repo := testkit.GitRepo(t, filepath.Join(testkit.ModuleRoot(t), "examples", "workspace"))
	home := filepath.Join(tmp, "home")
	config := filepath.Join(tmp, "claude-config")
	for _, d := range []string{home, config} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, ".git", "info", "exclude"), []byte(".saga/worktrees/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	worktree := testkit.Worktree(t, repo, ".saga/worktrees/"+story, "story/"+story)

	// Hydrate the story's task list as the worker does.
	ws := workspace.Load(t, worktree)
	list := claudecode.ListID(story, time.Now().UnixMilli())
	listDir := claudecode.ListDir(config, list)
	tasks := claudecode.FromStory(ws.Story(story))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := claudecode.Hydrate(ctx, listDir, tasks); err != nil {
		t.Fatal(err)
	}
	storyDir := filepath.Join(worktree, ".saga", "stories", story)
	before := readTaskFiles(t, storyDir)
	mainBefore := readTaskFiles(t, filepath.Join(repo, ".saga", "stories", story))

	binDir := filepath.Dir(testkit.Binary(t))
	r := testkit.Run(t, worktree, []string{
		"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"CLAUDE_CONFIG_DIR=" + config,
		"CLAUDE_CODE_ENABLE_TASKS=true",
		"CLAUDE_CODE_TASK_LIST_ID=" + list,
		"SAGA_STORY_ID=" + story,
		"SAGA_PROJECT_DIR=" + worktree,
		"SAGA_SESSION_DIR=" + filepath.Join(tmp, "sessions"),
		"SAGA_STANDIN_SCRIPT=escape",
	}, "", testkit.Build(t, "./testdata/standin/claude"), "-p", "x", "--output-format", "stream-json", "--verbose",
		"--permission-mode", "acceptEdits", "--allowedTools", "TaskList TaskGet TaskUpdate TaskCreate",
		"--plugin-dir", pluginDir())
	if r.Code != 0 {
		t.Fatalf("stand-in claude: exit %d\nstderr: %s\nstdout: %s", r.Code, r.Stderr, r.Stdout)
	}
	calls, lines := parseStream(t, r.Stdout)

	// The plugin was loaded, by the name in its manifest.
	var plugins []any
	var sessionStart []map[string]any
	for _, l := range lines {
		if l["type"] == "system" && l["subtype"] == "init" {
			plugins, _ = l["plugins"].([]any)
		}
		if l["type"] == "system" && l["subtype"] == "hook_response" && l["hook_event"] == "SessionStart" {
			sessionStart = append(sessionStart, l)
		}
	}
	if len(plugins) != 1 || plugins[0].(map[string]any)["name"] != "saga-lsp" || plugins[0].(map[string]any)["path"] != pluginDir() {
		t.Errorf("init plugins %v, want saga-lsp at %s", plugins, pluginDir())
	}
	// SessionStart: the story's summary as context.
	if len(sessionStart) != 1 || sessionStart[0]["exit_code"] != float64(0) ||
		!strings.Contains(sessionStart[0]["stdout"].(string), `"additionalContext"`) ||
		!strings.Contains(sessionStart[0]["stdout"].(string), story) {
		t.Errorf("SessionStart hook responses: %v", sessionStart)
	}
	// PreToolUse: the three escapes were denied by the plugin's hook (with
	// acceptEdits, nothing else stops a write to the worktree's .saga/epics).
	if len(calls) < 3 {
		t.Fatalf("only %d tool calls", len(calls))
	}
	for _, c := range calls[:3] {
		if c.name != "Write" || !c.isError || !strings.HasPrefix(c.content, "Hook PreToolUse:Write denied this tool: SAGA scope:") {
			t.Errorf("escape write %v: error=%v, result %q; want the plugin hook's denial", c.input["file_path"], c.isError, c.content)
		}
	}
	for _, p := range []string{filepath.Join(worktree, ".saga", "epics", "x.json"), filepath.Join(filepath.Dir(worktree), "outside.txt")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	// PostToolUse: every status change reached the worktree's task files,
	// changing only the status value; the main checkout is untouched.
	var updates []string
	for _, c := range calls {
		if c.name == "TaskUpdate" && !c.isError {
			updates = append(updates, fmt.Sprint(c.input["taskId"], ":", c.input["status"]))
		}
	}
	if len(updates) != 8 { // four tasks, each in_progress then completed
		t.Errorf("TaskUpdates %v", updates)
	}
	after := readTaskFiles(t, storyDir)
	statusRE := regexp.MustCompile(`"status": "[a-z_]+"`)
	for id, b := range before {
		want := statusRE.ReplaceAllString(b, `"status": "completed"`)
		if after[id] != want {
			t.Errorf("worktree task %s after the run:\n%s\nwant (only the status changed):\n%s", id, after[id], want)
		}
	}
	if got := readTaskFiles(t, filepath.Join(repo, ".saga", "stories", story)); !maps.Equal(got, mainBefore) {
		t.Error("the main checkout's task files changed")
	}
	// The worktree's .saga is still clean.
	if r := testkit.Run(t, worktree, []string{"HOME=" + home, "PATH=" + binDir}, "", testkit.Binary(t), "check"); r.Code != 0 {
		t.Errorf("check in the worktree: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

func readTaskFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		if filepath.Base(f) == "story.json" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = string(b)
	}
	if len(out) == 0 {
		t.Fatalf("no task files in %s", dir)
	}
	return out
}

type toolCall struct {
	name    string
	input   map[string]any
	content string
	isError bool
}

// parseStream reads stream-json output: the lines, and the tool calls with
// their results in order.
func parseStream(t *testing.T, stdout string) ([]toolCall, []map[string]any) {
	t.Helper()
	var lines []map[string]any
	var calls []toolCall
	index := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stream line is not JSON: %v\n%s", err, l)
		}
		lines = append(lines, m)
		msg, _ := m["message"].(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, b := range blocks {
			block := b.(map[string]any)
			switch block["type"] {
			case "tool_use":
				index[block["id"].(string)] = len(calls)
				input, _ := block["input"].(map[string]any)
				calls = append(calls, toolCall{name: block["name"].(string), input: input})
			case "tool_result":
				n, ok := index[block["tool_use_id"].(string)]
				if !ok {
					t.Fatalf("tool_result for an unknown tool_use: %v", block)
				}
				calls[n].content, _ = block["content"].(string)
				calls[n].isError, _ = block["is_error"].(bool)
			}
		}
	}
	if len(lines) == 0 || lines[len(lines)-1]["type"] != "result" || lines[len(lines)-1]["is_error"] != false {
		t.Errorf("the run did not end with a successful result line")
	}
	return calls, lines
}

// ---- helpers ----

// testEnv is a small environment with the built saga-lsp first on PATH and
// every place a command could write to inside the test's temp dir.
func testEnv(t *testing.T) []string {
	t.Helper()
	tmp := t.TempDir()
	return []string{
		"PATH=" + filepath.Dir(testkit.Binary(t)) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + filepath.Join(tmp, "home"),
		"CLAUDE_CONFIG_DIR=" + filepath.Join(tmp, "claude"),
		"SAGA_SESSION_DIR=" + filepath.Join(tmp, "sessions"),
		"SAGA_TMUX_SOCKET=saga-plugin-test-" + strconv.Itoa(os.Getpid()),
		"TMPDIR=" + os.TempDir(),
	}
}
