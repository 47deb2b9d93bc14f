package hook

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
)

// hookSessionPayload is the SessionStart fixture with cwd set.
func hookSessionPayload(t testing.TB, cwd string) string {
	return hookPayloadFrom(t, "sessionstart.json", map[string]any{"cwd": cwd})
}

func hookEnvLines(vars ...string) string {
	var b strings.Builder
	for i := 0; i < len(vars); i += 2 {
		b.WriteString("export " + vars[i] + "=" + runs.ShellQuote(vars[i+1]) + "\n")
	}
	return b.String()
}

// hookSessionContext decodes the SessionStart output and checks its shape.
func hookSessionContext(t *testing.T, stdout string) string {
	t.Helper()
	if !strings.HasPrefix(stdout, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"`) || !strings.HasSuffix(stdout, "\"}}\n") {
		t.Fatalf("stdout %q is not the SessionStart additionalContext JSON", stdout)
	}
	var out struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	return out.HookSpecificOutput.AdditionalContext
}

func hookSummaryWant(story, wt string) string {
	return fmt.Sprintf(`SAGA story worktree for story %q (%s). Title: Sync task status from hooks. Status: in_progress; 1/4 tasks completed. `+
		`Remaining: 1 [in_progress] Parse the "status" field é→; t2 [pending] Write the sync (blocked by 1); t10 [pending] Benchmark it (blocked by t2, 1). `+
		`Edits are limited to this worktree; inside .saga/ only .saga/stories/%s/ may change.`, story, wt, story)
}

func TestSessionStartMain(t *testing.T) {
	base := hookBaseDir(t)
	repo := hookRepo(t, base, "my-story", "other")
	hookWriteFile(t, filepath.Join(repo, ".saga", "epics", "single.json"), []byte(`{"id":"single"}`))
	envFile := filepath.Join(base, "env")
	hookWriteFile(t, envFile, []byte("export FOO=bar\n"))

	r := runHookIn(t, hookSessionPayload(t, filepath.Join(repo, "src")), map[string]string{"CLAUDE_ENV_FILE": envFile})
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	want := "export FOO=bar\n" + hookEnvLines(
		"SAGA_PROJECT_DIR", repo,
		"SAGA_TASK_CONTEXT", "main",
		"SAGA_SESSION_DIR", runs.DefaultSessionDir())
	if got := testkit.ReadFile(t, envFile); got != want {
		t.Errorf("env file:\n%s\nwant:\n%s", got, want)
	}
	wantCtx := "SAGA workspace " + repo + ": 2 stories, 2 epics. Stories live in .saga/stories/<story>/ (story.json plus one JSON file per task), epics in .saga/epics/; `saga-lsp check` lints them and `saga-lsp plan <story>` shows the order of work."
	if got := hookSessionContext(t, r.stdout); got != wantCtx {
		t.Errorf("context:\n%s\nwant:\n%s", got, wantCtx)
	}
}

func TestSessionStartNoWorkspace(t *testing.T) {
	base := hookBaseDir(t)
	cwd := filepath.Join(base, "plain")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, projectDir, want string
	}{
		{"cwd", "", cwd},
		{"CLAUDE_PROJECT_DIR", filepath.Join(base, "proj"), filepath.Join(base, "proj")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			envFile := filepath.Join(t.TempDir(), "env")
			r := runHookIn(t, hookSessionPayload(t, cwd), map[string]string{
				"CLAUDE_ENV_FILE": envFile, "CLAUDE_PROJECT_DIR": tc.projectDir, "SAGA_SESSION_DIR": "/var/saga",
			})
			if r.code != 0 || r.stderr != "" || r.stdout != "" {
				t.Fatalf("%+v, want no output without .saga", r)
			}
			want := hookEnvLines("SAGA_PROJECT_DIR", tc.want, "SAGA_TASK_CONTEXT", "main", "SAGA_SESSION_DIR", "/var/saga")
			if got := testkit.ReadFile(t, envFile); got != want {
				t.Errorf("env file:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestSessionStartStoryWorktree(t *testing.T) {
	base := hookBaseDir(t)
	repo := hookRepo(t, base, "my-story", "stories")
	wt := testkit.Worktree(t, repo, ".saga/worktrees/my-story", "story/my-story")
	legacy := testkit.Worktree(t, repo, ".saga/worktrees/stories/my-story", "legacy/my-story")
	tests := []struct {
		name, cwd, story, wt string
	}{
		{"worktree root", wt, "my-story", wt},
		{"subfolder", filepath.Join(wt, "src"), "my-story", wt},
		{"legacy layout", filepath.Join(legacy, "src"), "my-story", legacy},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			envFile := filepath.Join(t.TempDir(), "env")
			r := runHookIn(t, hookSessionPayload(t, tc.cwd), map[string]string{"CLAUDE_ENV_FILE": envFile})
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			want := hookEnvLines(
				"SAGA_PROJECT_DIR", tc.wt,
				"SAGA_TASK_CONTEXT", "story-worktree",
				"SAGA_STORY_ID", tc.story,
				"SAGA_STORY_PATH", tc.story,
				"SAGA_SESSION_DIR", runs.DefaultSessionDir())
			if got := testkit.ReadFile(t, envFile); got != want {
				t.Errorf("env file:\n%s\nwant:\n%s", got, want)
			}
			if got, want := hookSessionContext(t, r.stdout), hookSummaryWant(tc.story, tc.wt); got != want {
				t.Errorf("context:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// A story named "stories" in the new layout is told from the legacy folder
// by its .git.
func TestSessionStartStoryNamedStories(t *testing.T) {
	base := hookBaseDir(t)
	repo := hookRepo(t, base, "stories")
	wt := testkit.Worktree(t, repo, ".saga/worktrees/stories", "story/stories")
	envFile := filepath.Join(base, "env")
	r := runHookIn(t, hookSessionPayload(t, filepath.Join(wt, "src")), map[string]string{"CLAUDE_ENV_FILE": envFile})
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if got := testkit.ReadFile(t, envFile); !strings.Contains(got, "export SAGA_STORY_ID=stories\n") || !strings.Contains(got, "export SAGA_PROJECT_DIR="+wt+"\n") {
		t.Errorf("env file:\n%s", got)
	}
}

// Values are quoted so that sourcing the file gives them back exactly.
func TestSessionStartEnvQuoting(t *testing.T) {
	testkit.NeedsTool(t, "sh", "")
	base := hookBaseDir(t)
	envFile := filepath.Join(base, "env")
	odd := "/tmp/it's a $dir `x` \"y\" \\z;*"
	r := runHookIn(t, hookSessionPayload(t, base), map[string]string{"CLAUDE_ENV_FILE": envFile, "SAGA_SESSION_DIR": odd})
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%+v", r)
	}
	out, err := exec.Command("sh", "-c", `. "$1"; printf %s "$SAGA_SESSION_DIR"`, "sh", envFile).CombinedOutput()
	if err != nil || string(out) != odd {
		t.Errorf("sourced SAGA_SESSION_DIR = %q (%v), want %q\nfile:\n%s", out, err, odd, testkit.ReadFile(t, envFile))
	}

	// A line break cannot be exported safely: that variable is skipped.
	envFile2 := filepath.Join(base, "env2")
	r = runHookIn(t, hookSessionPayload(t, base), map[string]string{"CLAUDE_ENV_FILE": envFile2, "SAGA_SESSION_DIR": "/a\nexport EVIL=1"})
	if r.code != 0 || !strings.Contains(r.stderr, "SAGA_SESSION_DIR") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stderr %q, want one warning", r.stderr)
	}
	if got := testkit.ReadFile(t, envFile2); strings.Contains(got, "EVIL") || strings.Contains(got, "SAGA_SESSION_DIR") || !strings.Contains(got, "SAGA_TASK_CONTEXT=main") {
		t.Errorf("env file:\n%s", got)
	}
}

// Broken files are counted, never fatal; an unwritable env file is a
// warning and the summary is still printed.
func TestSessionStartBrokenStory(t *testing.T) {
	base := hookBaseDir(t)
	repo := hookRepo(t, base, "my-story")
	wt := testkit.Worktree(t, repo, ".saga/worktrees/my-story", "story/my-story")
	dir := filepath.Join(wt, ".saga", "stories", "my-story")
	hookWriteFile(t, filepath.Join(dir, "story.json"), []byte(`{"title": "Half typed`))
	hookWriteFile(t, filepath.Join(dir, "t2.json"), []byte("\x00\xffgarbage"))
	hookWriteFile(t, filepath.Join(dir, "t3.json"), []byte(`{"status":"completed", "subject": "ok",`))
	if err := os.Mkdir(filepath.Join(dir, "folder.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runHookIn(t, hookSessionPayload(t, wt), map[string]string{"CLAUDE_ENV_FILE": filepath.Join(base, "missing", "env")})
	if r.code != 0 || !strings.Contains(r.stderr, "CLAUDE_ENV_FILE") {
		t.Errorf("exit %d, stderr %q; want an env file warning", r.code, r.stderr)
	}
	got := hookSessionContext(t, r.stdout)
	for _, want := range []string{
		"Title: Half typed.", "Status: pending; 1/4 tasks completed.",
		"t2 [unknown status]", "3 file(s) of the story could not be read cleanly",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("context %q lacks %q", got, want)
		}
	}
}

// A worktree without its own copy of the story folder shows the main
// checkout's; no folder at all is said so.
func TestSessionStartStoryFolderFallback(t *testing.T) {
	base := hookBaseDir(t)
	repo := hookRepo(t, base, "my-story")
	wt := testkit.Worktree(t, repo, ".saga/worktrees/my-story", "story/my-story")
	if err := os.RemoveAll(filepath.Join(wt, ".saga")); err != nil {
		t.Fatal(err)
	}
	r := runHookIn(t, hookSessionPayload(t, wt), nil)
	if got, want := hookSessionContext(t, r.stdout), hookSummaryWant("my-story", wt); got != want || r.stderr != "" {
		t.Errorf("context:\n%s\nwant:\n%s\nstderr %q", got, want, r.stderr)
	}

	ghost := filepath.Join(repo, ".saga", "worktrees", "ghost")
	if err := os.MkdirAll(ghost, 0o755); err != nil {
		t.Fatal(err)
	}
	r = runHookIn(t, hookSessionPayload(t, ghost), nil)
	if got := hookSessionContext(t, r.stdout); !strings.Contains(got, `story "ghost"`) || !strings.Contains(got, "was not found") {
		t.Errorf("context %q", got)
	}
}

func TestDetectStoryWorktree(t *testing.T) {
	base := hookBaseDir(t)
	wts := filepath.Join(base, "r", ".saga", "worktrees")
	// .saga/worktrees/stories as a story worktree of its own.
	if err := os.MkdirAll(filepath.Join(base, "s", ".saga", "worktrees", "stories"), 0o755); err != nil {
		t.Fatal(err)
	}
	hookWriteFile(t, filepath.Join(base, "s", ".saga", "worktrees", "stories", ".git"), []byte("gitdir: x\n"))
	sw := filepath.Join(base, "s", ".saga", "worktrees")
	tests := []struct {
		dir, story, wt string
		legacy         bool
	}{
		{filepath.Join(wts, "a"), "a", filepath.Join(wts, "a"), false},
		{filepath.Join(wts, "a--b", "x", "y"), "a--b", filepath.Join(wts, "a--b"), false},
		{filepath.Join(wts, "stories", "a--b", "x"), "a--b", filepath.Join(wts, "stories", "a--b"), true},
		{filepath.Join(wts, "stories"), "stories", filepath.Join(wts, "stories"), false},
		{filepath.Join(sw, "stories", "src"), "stories", filepath.Join(sw, "stories"), false},
		{filepath.Join(wts, "x", ".saga", "worktrees", "inner"), "inner", filepath.Join(wts, "x", ".saga", "worktrees", "inner"), false},
		{filepath.Join(wts, "a", "..", "b"), "b", filepath.Join(wts, "b"), false},
		{wts, "", "", false},
		{filepath.Join(base, "r"), "", "", false},
		{filepath.Join(wts, "Bad_Name"), "", "", false},
		{filepath.Join(wts, "stories", "Bad"), "", "", false},
		{filepath.Join(base, "r", ".saga", "worktreesX", "a"), "", "", false},
	}
	for _, tc := range tests {
		got, ok := DetectStoryWorktree(tc.dir)
		if ok != (tc.story != "") || got.Story != tc.story || got.Worktree != tc.wt || got.Legacy != tc.legacy {
			t.Errorf("DetectStoryWorktree(%s) = %+v, %v; want story %q worktree %q legacy %v", tc.dir, got, ok, tc.story, tc.wt, tc.legacy)
		}
	}
	if got, _ := DetectStoryWorktree(filepath.Join(wts, "a", "src")); got.Repo != filepath.Join(base, "r") {
		t.Errorf("repo %q", got.Repo)
	}
}
