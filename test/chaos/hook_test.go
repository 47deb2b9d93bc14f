//go:build unix

package chaos_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/test/chaos"
)

// The hook under chaos: `saga-lsp hook` with random and hostile payloads
// and environments. It must never panic, never run past its budget, exit
// only with 0 (docs/commands.md: a hook never blocks a run by accident),
// print only valid JSON on stdout, and never leave a task file broken.

const hookStory = "add-logout-button"

// hookBudget is how long one hook run may take: its 2 s stdin timeout and
// then some. Past it, the hook counts as hung.
const hookBudget = 10 * time.Second

// hookWorktree makes a checkout with a story worktree, as the worker does,
// and returns the worktree.
func hookWorktree(t *testing.T) string {
	t.Helper()
	repo := testkit.CopyExample(t, "workspace")
	wt := filepath.Join(repo, ".saga", "worktrees", hookStory)
	for _, sub := range []string{"stories", "epics"} {
		if err := os.CopyFS(filepath.Join(wt, ".saga", sub), os.DirFS(filepath.Join(repo, ".saga", sub))); err != nil {
			t.Fatal(err)
		}
	}
	return wt
}

// hookTemplates are well-formed payloads of every event the hook handles.
func hookTemplates(wt string) []string {
	task := func(id, from, to string) string {
		return fmt.Sprintf(`{"session_id":"s","cwd":%q,"hook_event_name":"PostToolUse","tool_name":"TaskUpdate","tool_input":{"taskId":%q,"status":%q},"tool_response":{"success":true,"taskId":%q,"updatedFields":["status"],"statusChange":{"from":%q,"to":%q}}}`,
			wt, id, to, id, from, to)
	}
	write := func(tool, key, path string) string {
		return fmt.Sprintf(`{"session_id":"s","cwd":%q,"hook_event_name":"PreToolUse","tool_name":%q,"tool_input":{%q:%q,"content":"x"}}`, wt, tool, key, path)
	}
	return []string{
		fmt.Sprintf(`{"session_id":"s","cwd":%q,"hook_event_name":"SessionStart","source":"startup"}`, wt),
		write("Write", "file_path", filepath.Join(wt, "src", "main.go")),
		write("Edit", "file_path", "/etc/passwd"),
		write("MultiEdit", "file_path", "../../../outside.txt"),
		write("NotebookEdit", "notebook_path", filepath.Join(wt, ".saga", "stories", "other", "x.json")),
		write("Write", "file_path", filepath.Join(wt, ".saga", "stories", hookStory, "write-tests.json")),
		task("write-tests", "pending", "in_progress"),
		task("implement-button", "in_progress", "completed"),
		task("write-tests", "completed", "pending"),
		`{"hook_event_name":"Notification","message":"hi"}`,
	}
}

// hookEnv returns a random environment: each variable the hook reads set
// well, left unset, or set to something hostile.
func hookEnv(r *rand.Rand, t *testing.T, wt string) []string {
	home := t.TempDir()
	envFile := filepath.Join(home, "env")
	hostile := []string{"", " ", "/", "..", "relative/path", "/nonexistent/dir/x", strings.Repeat("a", 100_000),
		"line\nbreak", "$(touch pwned)", home, "/dev/null", "/proc/self/mem", envFile + "/below-a-file"}
	pick := func(good string) string {
		switch r.IntN(4) {
		case 0:
			return hostile[r.IntN(len(hostile))]
		case 1:
			return "" // unset below
		}
		return good
	}
	vars := map[string]string{
		"CLAUDE_PROJECT_DIR":       pick(wt),
		"CLAUDE_ENV_FILE":          pick(envFile),
		"SAGA_STORY_ID":            pick(hookStory),
		"CLAUDE_CODE_TASK_LIST_ID": pick("saga__" + hookStory + "__1700000000000"),
		"SAGA_SESSION_DIR":         pick(filepath.Join(home, "sessions")),
		"TMPDIR":                   pick(home),
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	for k, v := range vars {
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	if r.IntN(2) == 0 { // an env file that exists but is not writable
		_ = os.WriteFile(envFile, nil, 0o400)
	}
	return env
}

// hookInput is a payload: a template mutated, or bytes that are no payload.
func hookInput(r *rand.Rand, templates []string) string {
	switch r.IntN(8) {
	case 0:
		return chaos.HostileValue(r)
	case 1:
		b := make([]byte, r.IntN(2000))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	case 2:
		tpl := templates[r.IntN(len(templates))]
		return tpl[:r.IntN(len(tpl)+1)] // cut short
	case 3:
		return `{"hook_event_name":"PostToolUse","pad":"` + strings.Repeat("x", 1<<20) + `"}` // over the 1 MiB limit
	}
	var v any
	tpl := templates[r.IntN(len(templates))]
	if err := json.Unmarshal([]byte(tpl), &v); err != nil {
		panic(err)
	}
	if r.IntN(3) == 0 {
		return tpl
	}
	return chaos.Mutate(r, v)
}

// runHook runs the hook once and checks what it did.
func runHook(t *testing.T, payload string, env []string, dir string, keepStdinOpen bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hookBudget)
	defer cancel()
	cmd := exec.CommandContext(ctx, testkit.Binary(t), "hook")
	cmd.Env, cmd.Dir = env, dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_, _ = stdin.Write([]byte(payload)) // a hook that stops reading early is fine
	if !keepStdinOpen {
		stdin.Close()
	}
	err = cmd.Wait()
	stdin.Close()
	what := fmt.Sprintf("payload %.300q", payload)
	if ctx.Err() != nil {
		t.Fatalf("the hook ran past %s (hung) on %s; stderr: %s", hookBudget, what, stderr.String())
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) || err != nil {
		t.Fatalf("the hook failed (%v) on %s; stderr: %s", err, what, stderr.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if line != "" && !json.Valid([]byte(line)) {
			t.Fatalf("the hook printed a line that is not JSON on %s: %q", what, line)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if line != "" && (!strings.HasPrefix(line, "saga-lsp hook: ") || strings.Contains(line, "internal error")) {
			t.Fatalf("the hook wrote %q on stderr for %s", line, what)
		}
	}
}

// TestChaosHook: random payloads, environments and working directories.
func TestChaosHook(t *testing.T) {
	r, deadline := chaos.Start(t, 0.1)
	wt := hookWorktree(t)
	templates := hookTemplates(wt)
	dirs := []string{wt, filepath.Dir(wt), t.TempDir(), "/"}
	for n := 0; n < len(templates) || time.Now().Before(deadline); n++ {
		payload := templates[n%len(templates)]
		if n >= len(templates) {
			payload = hookInput(r, templates)
		}
		// A payload Claude Code sends ends in a newline; with one, the hook
		// need not wait for stdin to close.
		keepOpen := r.IntN(4) == 0
		if keepOpen && (!strings.HasPrefix(payload, "{") || !json.Valid([]byte(payload))) {
			keepOpen = false // would wait out the 2 s stdin timeout: covered by commands' tests
		}
		if keepOpen {
			payload += "\n"
		}
		runHook(t, payload, hookEnv(r, t, wt), dirs[r.IntN(len(dirs))], keepOpen)
	}
	checkTaskFiles(t, filepath.Join(wt, ".saga", "stories", hookStory))
}

// TestChaosHookSpecialFiles: special files where the hook expects regular
// ones — CLAUDE_ENV_FILE a FIFO without a reader, a task file that is a
// FIFO — must not make it block.
func TestChaosHookSpecialFiles(t *testing.T) {
	wt := hookWorktree(t)
	fifo := filepath.Join(t.TempDir(), "env")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + t.TempDir(), "CLAUDE_ENV_FILE=" + fifo, "SAGA_STORY_ID=" + hookStory}
	runHook(t, hookTemplates(wt)[0], env, wt, false)
}

// checkTaskFiles: every task file of a story is still valid JSON with a
// status the hook may write.
func checkTaskFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if strings.Contains(name, ".tmp-") {
			t.Errorf("temp file %s left in %s", name, dir)
			continue
		}
		if !strings.HasSuffix(name, ".json") || name == "story.json" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var task struct{ Status string }
		if err := json.Unmarshal(b, &task); err != nil {
			t.Errorf("%s is no longer valid JSON: %v\n%s", name, err, b)
		} else if task.Status != "pending" && task.Status != "in_progress" && task.Status != "completed" {
			t.Errorf("%s has status %q", name, task.Status)
		}
	}
}

// TestChaosHookScope: random write paths — relative and absolute, with
// "..", symlinks, and the places docs/hooks.md#pretooluse-write-scope puts out of an agent's reach
// — get exactly the PreToolUse decision the rule gives: inside a story
// worktree, deny anything outside it (the temp dir excepted), anything in
// .saga/ but .saga/stories/<story>/, the story's own task and story JSON
// (journal.md is the agent's), .mcp.json at the top, and at any depth
// .claude/, .git, .githooks/, .husky/ and .gitmodules (a nested one is as
// much git's or Claude Code's as the top one: a nested .git is a repository
// git commands there obey); and outside it, anything in the checkout that
// holds the worktree.
func TestChaosHookScope(t *testing.T) {
	r, deadline := chaos.Start(t, 0.05)
	wt := hookWorktree(t)
	if err := os.Symlink("/etc", filepath.Join(wt, "link-out")); err != nil {
		t.Fatal(err)
	}
	parts := []string{"src", "..", ".", ".claude", "settings.json", "settings.local.json", ".mcp.json", ".git", "hooks",
		"pre-commit", ".gitmodules", ".saga", "stories", hookStory, "other", "journal.md", "write-tests.json", "story.json",
		"x.go", "link-out", "passwd"}
	story := filepath.Join(wt, ".saga", "stories", hookStory)
	repo := resolveExisting(filepath.Join(wt, "..", "..", "..")) // the checkout holding .saga/worktrees/
	for n := 0; n < 50 || time.Now().Before(deadline); n++ {
		var elems []string
		for range 1 + r.IntN(5) {
			elems = append(elems, parts[r.IntN(len(parts))])
		}
		path := filepath.Join(elems...)
		switch r.IntN(4) {
		case 0:
			path = filepath.Join(wt, path)
		case 1:
			path = filepath.Join(os.TempDir(), path)
		}
		abs := resolveExisting(filepath.Join(wt, path))
		if filepath.IsAbs(path) {
			abs = resolveExisting(path)
		}
		rel, err := filepath.Rel(wt, abs)
		inside := err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
		first, _, _ := strings.Cut(rel, "/")
		inRepo := strings.HasPrefix(abs, repo+"/")
		inTemp := false
		for _, tmp := range []string{resolveExisting(os.TempDir()), "/tmp"} {
			inTemp = inTemp || abs == tmp || strings.HasPrefix(abs, tmp+"/")
		}
		deny := !inside && (inRepo || !inTemp)
		if inside {
			inStory := strings.HasPrefix(abs, story+"/")
			comps := strings.Split(rel, "/")
			powers := rel == ".mcp.json" || comps[len(comps)-1] == ".gitmodules" ||
				slices.ContainsFunc(comps, func(c string) bool { return c == ".claude" || c == ".git" || c == ".githooks" || c == ".husky" })
			deny = (first == ".saga" && !inStory) || (inStory && strings.HasSuffix(abs, ".json")) || powers
		}
		payload := fmt.Sprintf(`{"cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":%q,"content":"x"}}`, wt, path)
		cmd := exec.Command(testkit.Binary(t), "hook")
		cmd.Stdin, cmd.Env = strings.NewReader(payload+"\n"), []string{"HOME=" + t.TempDir(), "SAGA_STORY_ID=" + hookStory}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("hook: %v", err)
		}
		if got := strings.Contains(string(out), `"deny"`); got != deny {
			t.Errorf("Write %s (resolved %s): deny = %v, the rule says %v", path, abs, got, deny)
		}
	}
}

// resolveExisting cleans path and evaluates the symlinks of its longest
// existing prefix, as the hook resolves a path about to be written.
func resolveExisting(path string) string {
	path = filepath.Clean(path)
	rest := ""
	for p := path; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(p) == p {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}
