package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit"
)

const hookDenyPrefix = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"`

// hookPrePayload is the PreToolUse fixture for tool with input and cwd.
func hookPrePayload(t testing.TB, tool string, input map[string]any, cwd string) string {
	return hookPayloadFrom(t, "pretooluse.json", map[string]any{"tool_name": tool, "tool_input": input, "cwd": cwd})
}

// hookDenyReason returns the reason of a deny, or "" with ok false when the
// hook allowed silently; anything else fails the test.
func hookDenyReason(t *testing.T, r hookResult) (string, bool) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	if r.stdout == "" {
		return "", false
	}
	if !strings.HasPrefix(r.stdout, hookDenyPrefix) || !strings.HasSuffix(r.stdout, "\"}}\n") || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("stdout %q is not the deny JSON", r.stdout)
	}
	var out struct {
		HookSpecificOutput map[string]string `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.HookSpecificOutput) != 3 {
		t.Fatalf("stdout %q: %v", r.stdout, err)
	}
	return out.HookSpecificOutput["permissionDecisionReason"], true
}

// hookScopeFixture is a repository with a story worktree and links in it.
type hookScopeFixture struct {
	base, repo, wt, outside, scratch string
}

func newHookScopeFixture(t *testing.T) hookScopeFixture {
	t.Helper()
	base := hookBaseDir(t)
	f := hookScopeFixture{base: base, outside: filepath.Join(base, "outside"), scratch: filepath.Join(base, "scratch")}
	f.repo = hookRepo(t, base, "my-story", "other-story")
	f.wt = testkit.Worktree(t, f.repo, ".saga/worktrees/my-story", "story/my-story")
	hookWriteFile(t, filepath.Join(f.outside, "secret.txt"), []byte("secret\n"))
	links := map[string]string{
		"escape":      f.outside,
		"escape-file": filepath.Join(f.outside, "secret.txt"),
		"dangling":    filepath.Join(f.outside, "new.txt"),
		"rel-escape":  "../../../../outside",
		"inner-link":  "src",
		"saga-link":   ".saga/epics",
		"loop":        "loop",
		"hop":         "escape/../outside-again",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(f.wt, name)); err != nil {
			t.Fatal(err)
		}
	}
	hookNarrowTemp(t, f.scratch)
	return f
}

func TestPreToolUseScope(t *testing.T) {
	f := newHookScopeFixture(t)
	wt := f.wt
	tests := []struct {
		name, tool, path, cwd string
		deny                  bool
		reasonHas             string // for denies: also in the reason
	}{
		// Allowed: inside the worktree and the story's own folder.
		{"relative inside", "Write", "src/main.go", "", false, ""},
		{"absolute inside", "Edit", filepath.Join(wt, "src", "main.go"), "", false, ""},
		{"new folders inside", "Write", filepath.Join(wt, "src", "new", "deep", "x.go"), "", false, ""},
		{"own story journal", "Write", ".saga/stories/my-story/journal.md", "", false, ""},
		{"dotdot staying inside", "Write", "../main.go", filepath.Join(wt, "src"), false, ""},
		{"link inside the worktree", "Write", filepath.Join(wt, "inner-link", "x.go"), "", false, ""},
		{"temp dir", "Write", filepath.Join(f.scratch, "notes.txt"), "", false, ""},
		{"notebook inside", "NotebookEdit", filepath.Join(wt, "nb.ipynb"), "", false, ""},

		// Denied: outside the worktree.
		{"dotdot traversal", "Write", "../../../../outside/x", "", true, filepath.Join(f.outside, "x")},
		{"absolute outside", "Write", filepath.Join(f.outside, "x"), "", true, "outside the story worktree"},
		{"main checkout", "Edit", filepath.Join(f.repo, "src", "main.go"), "", true, wt},
		{"escaping dir link", "Write", filepath.Join(wt, "escape", "x"), "", true, filepath.Join(f.outside, "x")},
		{"new dir under escaping link", "Write", filepath.Join(wt, "escape", "newdir", "deeper", "x"), "", true, filepath.Join(f.outside, "newdir", "deeper", "x")},
		{"escaping file link", "Edit", filepath.Join(wt, "escape-file"), "", true, filepath.Join(f.outside, "secret.txt")},
		{"dangling link", "Write", filepath.Join(wt, "dangling"), "", true, filepath.Join(f.outside, "new.txt")},
		{"relative link", "Write", "rel-escape/x", "", true, filepath.Join(f.outside, "x")},
		{"link with dotdot in target", "Write", "hop/x", "", true, filepath.Join(f.base, "outside-again", "x")},
		{"link loop", "Write", filepath.Join(wt, "loop", "x"), "", true, "cannot check"},
		{"multiedit outside", "MultiEdit", filepath.Join(f.outside, "x"), "", true, ""},
		{"notebook outside", "NotebookEdit", filepath.Join(f.outside, "nb.ipynb"), "", true, ""},
		{"root", "Write", "/etc/passwd", "", true, "/etc/passwd"},

		// Denied: what would change the agent's own powers, or git's files.
		{"claude settings", "Write", ".claude/settings.json", "", true, ".claude/"},
		{"claude local settings", "Edit", filepath.Join(wt, ".claude", "settings.local.json"), "", true, ".claude/"},
		{"nested claude folder", "Write", "src/.claude/settings.json", "", true, ".claude/"},
		{"mcp config", "Write", ".mcp.json", "", true, "MCP"},
		{"git file", "Write", ".git", "", true, ".git"},
		{"git hooks", "Write", ".git/hooks/pre-commit", "", true, ".git"},
		{"nested repo", "Write", "vendor/x/.git/config", "", true, ".git"},
		{"gitmodules", "Edit", ".gitmodules", "", true, ".gitmodules"},
		{"husky hooks", "Write", ".husky/pre-commit", "", true, ".husky"},
		{"githooks", "Write", ".githooks/pre-push", "", true, ".githooks"},

		// Denied: the rest of the worktree's .saga/, and the story's JSON.
		{"own story task", "Edit", filepath.Join(wt, ".saga", "stories", "my-story", "1.json"), "", true, "TaskUpdate"},
		{"own story file", "Write", ".saga/stories/my-story/story.json", "", true, "only journal.md"},
		{"own story other file", "Write", ".saga/stories/my-story/notes.md", "", true, "only journal.md"},
		{"other story", "Write", filepath.Join(wt, ".saga", "stories", "other-story", "1.json"), "", true, filepath.Join(wt, ".saga", "stories", "my-story") + "/"},
		{"other story via dotdot", "Write", ".saga/stories/my-story/../other-story/x.json", "", true, ""},
		{"prefix of the story name", "Write", ".saga/stories/my-story-evil/x.json", "", true, ""},
		{"epics", "Edit", filepath.Join(wt, ".saga", "epics", "ep", "epic.json"), "", true, ".saga/"},
		{"saga top", "Write", ".saga/config.json", "", true, ""},
		{"worktrees under saga", "Write", ".saga/worktrees/x/y", "", true, ""},
		{"link into epics", "Write", filepath.Join(wt, "saga-link", "ep", "epic.json"), "", true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cwd := tc.cwd
			if cwd == "" {
				cwd = wt
			}
			key := "file_path"
			if tc.tool == "NotebookEdit" {
				key = "notebook_path"
			}
			r := runHookIn(t, hookPrePayload(t, tc.tool, map[string]any{key: tc.path, "content": "x"}, cwd), nil)
			if r.stderr != "" {
				t.Errorf("stderr %q", r.stderr)
			}
			reason, denied := hookDenyReason(t, r)
			if denied != tc.deny {
				t.Fatalf("denied = %v (reason %q), want %v", denied, reason, tc.deny)
			}
			t.Logf("reason: %s", reason)
			if denied && (!strings.Contains(reason, tc.path) || !strings.Contains(reason, tc.reasonHas) || !strings.Contains(reason, `"my-story"`)) {
				t.Errorf("reason %q should name the path %q, the story and %q", reason, tc.path, tc.reasonHas)
			}
		})
	}
	// Nothing was written or created by the checks.
	if _, err := os.Lstat(filepath.Join(f.outside, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("dangling target exists: %v", err)
	}
}

// Outside a story context, and for tools that do not write, everything is
// allowed silently.
func TestPreToolUseAllowsSilently(t *testing.T) {
	f := newHookScopeFixture(t)
	outside := filepath.Join(f.outside, "x")
	tests := []struct {
		name, tool, cwd string
		input           map[string]any
		env             map[string]string
	}{
		{"read tool", "Read", f.wt, map[string]any{"file_path": outside}, nil},
		{"bash tool", "Bash", f.wt, map[string]any{"command": "rm -rf /"}, nil},
		{"task tool", "TaskUpdate", f.wt, map[string]any{"taskId": "1"}, nil},
		{"main checkout", "Write", f.repo, map[string]any{"file_path": outside}, nil},
		{"main checkout saga", "Write", f.repo, map[string]any{"file_path": filepath.Join(f.repo, ".saga", "epics", "ep", "epic.json")}, nil},
		{"no workspace", "Write", f.outside, map[string]any{"file_path": "/etc/x"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runHookIn(t, hookPrePayload(t, tc.tool, tc.input, tc.cwd), tc.env)
			if r.code != 0 || r.stdout != "" || r.stderr != "" {
				t.Errorf("%+v, want a silent allow", r)
			}
		})
	}
	// Missing or odd inputs in a story context: a warning, no deny.
	for _, input := range []any{map[string]any{}, map[string]any{"file_path": 7}, "text", nil} {
		p := hookPayloadFrom(t, "pretooluse.json", map[string]any{"cwd": f.wt, "tool_input": input})
		r := runHookIn(t, p, nil)
		if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "not checked") {
			t.Errorf("input %v: %+v, want a warning and no deny", input, r)
		}
	}
}

// The worker's environment names the story and worktree; cwd does not
// matter then.
func TestPreToolUseEnvContext(t *testing.T) {
	f := newHookScopeFixture(t)
	env := map[string]string{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": f.wt, "SAGA_TASK_CONTEXT": "story-worktree"}
	check := func(path, cwd string, env map[string]string, deny bool) {
		t.Helper()
		r := runHookIn(t, hookPrePayload(t, "Write", map[string]any{"file_path": path}, cwd), env)
		if _, denied := hookDenyReason(t, r); denied != deny {
			t.Errorf("%s from %s: denied = %v, want %v (stdout %q, stderr %q)", path, cwd, denied, deny, r.stdout, r.stderr)
		}
	}
	check("x.go", f.base, env, true) // relative to cwd, outside the worktree
	check(filepath.Join(f.wt, "x.go"), f.base, env, false)
	check(filepath.Join(f.wt, ".saga", "stories", "other-story", "1.json"), f.base, env, true)
	check(filepath.Join(f.repo, "src", "main.go"), f.base, env, true)

	// Without SAGA_PROJECT_DIR the worktree comes from cwd, else from
	// CLAUDE_PROJECT_DIR.
	check(filepath.Join(f.wt, "x.go"), filepath.Join(f.wt, "src"), map[string]string{"SAGA_STORY_ID": "my-story"}, false)
	check(filepath.Join(f.repo, "x.go"), filepath.Join(f.wt, "src"), map[string]string{"SAGA_STORY_ID": "my-story"}, true)
	check(filepath.Join(f.wt, "x.go"), f.base, map[string]string{"SAGA_STORY_ID": "my-story", "CLAUDE_PROJECT_DIR": f.wt}, false)
	check(filepath.Join(f.outside, "x.go"), f.base, map[string]string{"SAGA_STORY_ID": "my-story", "CLAUDE_PROJECT_DIR": f.wt}, true)

	// An invalid SAGA_STORY_ID is ignored with a warning; cwd decides.
	r := runHookIn(t, hookPrePayload(t, "Write", map[string]any{"file_path": "/etc/x"}, f.repo), map[string]string{"SAGA_STORY_ID": "../x"})
	if r.stdout != "" || !strings.Contains(r.stderr, "SAGA_STORY_ID") {
		t.Errorf("%+v", r)
	}
}

// With the real temp dirs, /tmp is allowed, but not the repository of the
// worktree when that lives in /tmp too.
func TestPreToolUseRealTempDir(t *testing.T) {
	f := newHookScopeFixture(t)
	t.Setenv("TMPDIR", "")
	for _, p := range []string{"/tmp/x", filepath.Join(os.TempDir(), "saga-hook-test", "y")} {
		r := runHookIn(t, hookPrePayload(t, "Write", map[string]any{"file_path": p}, f.wt), nil)
		if _, denied := hookDenyReason(t, r); denied {
			t.Errorf("%s denied: %s", p, r.stdout)
		}
	}
	r := runHookIn(t, hookPrePayload(t, "Write", map[string]any{"file_path": filepath.Join(f.repo, "src", "main.go")}, f.wt), nil)
	if _, denied := hookDenyReason(t, r); !denied {
		t.Errorf("main checkout in the temp dir allowed")
	}
}

func TestResolvePath(t *testing.T) {
	base := hookBaseDir(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(base, "a", "b"), 0o755))
	must(os.Symlink("b", filepath.Join(base, "a", "lb")))
	must(os.Symlink("../a/b/../../c", filepath.Join(base, "a", "up")))
	must(os.Symlink(filepath.Join(base, "a", "lb"), filepath.Join(base, "abs")))
	must(os.Symlink("missing/../a", filepath.Join(base, "via-missing")))
	must(os.Symlink("l2", filepath.Join(base, "l1")))
	must(os.Symlink("l1", filepath.Join(base, "l2")))
	hookWriteFile(t, filepath.Join(base, "file"), nil)
	tests := map[string]string{
		"a/lb/x":          "a/b/x",
		"a/up/x":          "c/x",
		"abs/y/z":         "a/b/y/z",
		"via-missing/b/q": "a/b/q",
		"file/under":      "file/under",
		"nope/x/y":        "nope/x/y",
	}
	for in, want := range tests {
		got, err := resolveAllLinks(filepath.Join(base, in))
		if err != nil || got != filepath.Join(base, want) {
			t.Errorf("resolvePath(%s) = %q, %v; want %q", in, got, err, filepath.Join(base, want))
		}
	}
	if _, err := resolveAllLinks(filepath.Join(base, "l1", "x")); err == nil {
		t.Errorf("loop resolved")
	}
	if got, _ := resolveAllLinks("/"); got != "/" {
		t.Errorf("resolvePath(/) = %q", got)
	}
}

// The temp dir exception never covers saga-lsp's own state: the session
// dir, the lock dirs of workspaces outside git, Claude Code's task lists.
func TestPreToolUseProtectsOwnState(t *testing.T) {
	f := newHookScopeFixture(t)
	env := map[string]string{
		"SAGA_SESSION_DIR":  filepath.Join(f.scratch, "sessions"),
		"CLAUDE_CONFIG_DIR": filepath.Join(f.scratch, "claude"),
	}
	for _, p := range []string{
		filepath.Join(f.scratch, "sessions", "saga-story-my-story-1.log.events.jsonl"),
		filepath.Join(f.scratch, filepath.Base(filesafe.TempLockRoot()), "abc", "worker-my-story.lock"),
		filepath.Join(f.scratch, "claude", "tasks", "saga__my-story__1", "1.json"),
	} {
		r := runHookIn(t, hookPrePayload(t, "Write", map[string]any{"file_path": p, "content": "x"}, f.wt), env)
		if reason, denied := hookDenyReason(t, r); !denied || !strings.Contains(reason, "saga-lsp's own state") {
			t.Errorf("%s: denied %v, reason %q", p, denied, reason)
		}
	}
	r := runHookIn(t, hookPrePayload(t, "Write", map[string]any{"file_path": filepath.Join(f.scratch, "notes.txt"), "content": "x"}, f.wt), env)
	if _, denied := hookDenyReason(t, r); denied {
		t.Errorf("the temp dir itself denied: %s", r.stdout)
	}
}

// The build caches are not the file tools' to write even where they lie in
// the temp dir (another story's, the checks' own): in a worker's run the
// root is found from the story's caches (SAGA_CACHE_DIR; the run's
// XDG_CACHE_HOME points inside them), elsewhere from XDG_CACHE_HOME.
func TestPreToolUseDeniesTheCaches(t *testing.T) {
	f := newHookScopeFixture(t)
	caches := filepath.Join(f.scratch, "caches", "saga-lsp")
	own := filepath.Join(caches, "repo-1", "agent", "my-story")
	for _, env := range []map[string]string{
		{"SAGA_CACHE_DIR": own, "XDG_CACHE_HOME": own},
		{"XDG_CACHE_HOME": filepath.Join(f.scratch, "caches")},
	} {
		for path, deny := range map[string]bool{
			filepath.Join(caches, "repo-1", "agent", "other-story", "go-build", "x"): true,
			filepath.Join(caches, "repo-1", "checks", "my-story", "x"):               true,
			filepath.Join(f.scratch, "notes.txt"):                                    false,
		} {
			r := runHookIn(t, hookPrePayload(t, "Write", map[string]any{"file_path": path, "content": "x"}, f.wt), env)
			if reason, denied := hookDenyReason(t, r); denied != deny || (deny && !strings.Contains(reason, "saga-lsp's own state")) {
				t.Errorf("env %v: Write %s: denied %v (%q), want %v", env, path, denied, reason, deny)
			}
		}
	}
}
