package hook

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// hookSyncRoot is a git repository (so the lock lives in its .git) holding the
// fixture story "my-story"; it returns the root and the story folder.
func hookSyncRoot(t testing.TB) (root, dir string) {
	t.Helper()
	root = filepath.Join(hookBaseDir(t), "root")
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root, hookCopyStory(t, root, "my-story")
}

// hookPostPayload is the PostToolUse fixture with members replaced.
func hookPostPayload(t testing.TB, set map[string]any) string {
	return hookPayloadFrom(t, "posttooluse.json", set)
}

func hookTaskResponse(success bool, taskID any, from, to string) map[string]any {
	r := map[string]any{"success": success, "taskId": taskID, "updatedFields": []string{"status"}}
	if from != "" || to != "" {
		r["statusChange"] = map[string]any{"from": from, "to": to}
	}
	return r
}

// hookWithStatus returns src with its one quoted status value old replaced.
func hookWithStatus(t testing.TB, src []byte, old, new string) []byte {
	t.Helper()
	if n := bytes.Count(src, []byte(`"`+old+`"`)); n != 1 {
		t.Fatalf("fixture holds %q %d times, want once", old, n)
	}
	return bytes.Replace(src, []byte(`"`+old+`"`), []byte(`"`+new+`"`), 1)
}

func TestPostToolUseSync(t *testing.T) {
	orig1 := hookFixture(t, "story/1.json")
	origT2 := hookFixture(t, "story/t2.json")
	if !bytes.Contains(orig1, []byte("\r\n")) {
		t.Fatal("fixture 1.json lost its CRLF line ends (see testdata/.gitattributes)")
	}
	type env = map[string]string
	tests := []struct {
		name    string
		set     map[string]any           // payload members (cwd "<root>" and "<sub>" are replaced)
		env     func(root string) env    // environment
		want    map[string]func() []byte // expected files (others unchanged)
		stderr  string                   // substring; "" = silent
		prepare func(t *testing.T, dir string)
	}{
		{
			name: "facts example",
			env:  func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root} },
			want: map[string]func() []byte{"1.json": func() []byte { return hookWithStatus(t, orig1, "in_progress", "completed") }},
		},
		{
			name: "task list id fallback",
			env: func(root string) env {
				return env{"CLAUDE_CODE_TASK_LIST_ID": "saga__my-story__1735689600000", "CLAUDE_PROJECT_DIR": root}
			},
			want: map[string]func() []byte{"1.json": func() []byte { return hookWithStatus(t, orig1, "in_progress", "completed") }},
		},
		{
			name: "cwd fallback",
			set:  map[string]any{"cwd": "<sub>"},
			env:  func(string) env { return env{"CLAUDE_CODE_TASK_LIST_ID": "saga__my-story__1735689600000"} },
			want: map[string]func() []byte{"1.json": func() []byte { return hookWithStatus(t, orig1, "in_progress", "completed") }},
		},
		{
			name: "task id from the response",
			set: map[string]any{
				"tool_input":    map[string]any{"status": "in_progress"},
				"tool_response": hookTaskResponse(true, "t2", "pending", "in_progress"),
			},
			env:  func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root} },
			want: map[string]func() []byte{"t2.json": func() []byte { return hookWithStatus(t, origT2, "pending", "in_progress") }},
		},
		{
			name: "numeric task id",
			set: map[string]any{
				"tool_input":    map[string]any{"taskId": 1, "status": "pending"},
				"tool_response": hookTaskResponse(true, 1, "in_progress", "pending"),
			},
			env:  func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root} },
			want: map[string]func() []byte{"1.json": func() []byte { return hookWithStatus(t, orig1, "in_progress", "pending") }},
		},
		{
			name: "missing status member is added",
			set: map[string]any{
				"tool_input":    map[string]any{"taskId": "t4", "status": "completed"},
				"tool_response": hookTaskResponse(true, "t4", "pending", "completed"),
			},
			env: func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root} },
			prepare: func(t *testing.T, dir string) {
				hookWriteFile(t, filepath.Join(dir, "t4.json"), []byte("{\n  \"id\": \"t4\",\n  \"subject\": \"s\"\n}\n"))
			},
			want: map[string]func() []byte{"t4.json": func() []byte {
				return []byte("{\n  \"id\": \"t4\",\n  \"subject\": \"s\",\n  \"status\": \"completed\"\n}\n")
			}},
		},
		// Nothing to do, silently.
		{name: "success false", set: map[string]any{"tool_response": map[string]any{"success": false, "taskId": "1", "updatedFields": []string{}, "error": "Task not found"}},
			env: func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root} }},
		{name: "success false with a status change", set: map[string]any{"tool_response": hookTaskResponse(false, "1", "in_progress", "completed")},
			env: func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root} }},
		{name: "no statusChange", set: map[string]any{"tool_response": hookTaskResponse(true, "1", "", "")},
			env: func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root} }},
		{name: "deleted", set: map[string]any{"tool_input": map[string]any{"taskId": "1", "status": "deleted"}, "tool_response": hookTaskResponse(true, "1", "in_progress", "deleted")},
			env: func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root} }},
		{name: "unknown task", set: map[string]any{"tool_input": map[string]any{"taskId": "99", "status": "completed"}, "tool_response": hookTaskResponse(true, "99", "pending", "completed")},
			env: func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root} }},
		{name: "not a saga task list", env: func(root string) env {
			return env{"CLAUDE_CODE_TASK_LIST_ID": "5f0c-session-uuid", "CLAUDE_PROJECT_DIR": root}
		}},
		{name: "list of another story", env: func(root string) env {
			return env{"SAGA_STORY_ID": "my-story", "CLAUDE_CODE_TASK_LIST_ID": "saga__other__1735689600000", "SAGA_PROJECT_DIR": root}
		}, stderr: `task list "saga__other__1735689600000" is not story my-story's`},
		{
			name: "SAGA_STORY_ID wins over a non-SAGA list",
			env: func(root string) env {
				return env{"SAGA_STORY_ID": "my-story", "CLAUDE_CODE_TASK_LIST_ID": "5f0c-session-uuid", "SAGA_PROJECT_DIR": root}
			},
			want: map[string]func() []byte{"1.json": func() []byte { return hookWithStatus(t, orig1, "in_progress", "completed") }},
		},
		{name: "no story in the environment", env: func(root string) env { return env{"CLAUDE_PROJECT_DIR": root} }},
		{name: "other tool", set: map[string]any{"tool_name": "TaskCreate"},
			env: func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root} }},
		{name: "same status", set: map[string]any{"tool_response": hookTaskResponse(true, "1", "pending", "in_progress")},
			env: func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root} }},
		// Warnings, files untouched.
		{name: "bad status", set: map[string]any{"tool_response": hookTaskResponse(true, "1", "pending", "done")},
			env:    func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root} },
			stderr: `statusChange.to "done"`},
		{name: "response not an object", set: map[string]any{"tool_response": "Updated task #1 status"},
			env:    func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root} },
			stderr: "tool_response is not the expected object"},
		{name: "no task id", set: map[string]any{"tool_input": map[string]any{"status": "completed"}, "tool_response": hookTaskResponse(true, nil, "pending", "completed")},
			env:    func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root} },
			stderr: "no taskId"},
		{name: "story folder missing", env: func(root string) env { return env{"SAGA_STORY_ID": "nope", "SAGA_PROJECT_DIR": root} },
			stderr: "no story folder .saga/stories/nope"},
		{name: "no workspace", env: func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": "/"} },
			stderr: "no .saga/ folder found"},
		{name: "malformed saga list id", env: func(root string) env {
			return env{"CLAUDE_CODE_TASK_LIST_ID": "saga__My_Story__1", "CLAUDE_PROJECT_DIR": root}
		}, stderr: "saga__My_Story__1"},
		{name: "broken task file",
			set: map[string]any{"tool_input": map[string]any{"taskId": "t2"}, "tool_response": hookTaskResponse(true, "t2", "pending", "completed")},
			env: func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root} },
			prepare: func(t *testing.T, dir string) {
				hookWriteFile(t, filepath.Join(dir, "t2.json"), []byte(`{"id":"t2","status":"pending",}`))
			},
			stderr: "fix the JSON first"},
		{name: "task file is a link",
			env: func(root string) env { return env{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root} },
			prepare: func(t *testing.T, dir string) {
				if err := os.Rename(filepath.Join(dir, "1.json"), filepath.Join(dir, "real.txt")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("real.txt", filepath.Join(dir, "1.json")); err != nil {
					t.Fatal(err)
				}
			},
			stderr: "not a regular file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, dir := hookSyncRoot(t)
			if tc.prepare != nil {
				tc.prepare(t, dir)
			}
			set := map[string]any{}
			for k, v := range tc.set {
				set[k] = v
			}
			switch set["cwd"] {
			case nil:
				set["cwd"] = "/repo"
			case "<sub>":
				set["cwd"] = filepath.Join(root, ".saga", "stories")
			}
			before := hookTree(t, root)
			fi1, _ := os.Lstat(filepath.Join(dir, "1.json"))
			r := runHookIn(t, hookPostPayload(t, set), tc.env(root))
			if r.code != 0 || r.stdout != "" {
				t.Errorf("exit %d, stdout %q", r.code, r.stdout)
			}
			if tc.stderr == "" && r.stderr != "" || !strings.Contains(r.stderr, tc.stderr) || strings.Count(r.stderr, "\n") > 1 {
				t.Errorf("stderr %q, want %q", r.stderr, tc.stderr)
			}
			after := hookTree(t, root)
			for name, want := range tc.want {
				p := filepath.Join(dir, name)
				if got := after[p]; got != string(want()) {
					t.Errorf("%s:\n%q\nwant:\n%q", name, got, want())
				}
				before[p], after[p] = "", ""
			}
			if !hookSameTree(before, after) {
				t.Errorf("other files changed:\nbefore %q\nafter  %q", before, after)
			}
			if len(tc.want) == 0 && fi1 != nil {
				// Not even rewritten with the same bytes.
				if fi, err := os.Lstat(filepath.Join(dir, "1.json")); err != nil || !os.SameFile(fi, fi1) {
					t.Errorf("1.json was replaced")
				}
			}
		})
	}
}

// Invalid names are refused before any path is built: nothing is read,
// created or locked (the project dir does not even have to exist).
func TestPostToolUseInvalidIDs(t *testing.T) {
	for _, tc := range []struct{ story, list, task string }{
		{story: "../../etc", task: "1"},
		{story: "My-Story", task: "1"},
		{story: "a__b", task: "1"},
		{story: "a/b", task: "1"},
		{story: "my-story/..", task: "1"},
		{list: "saga__../x__1", task: "1"},
		{list: "saga__my-story/../x__1", task: "1"},
		{story: "my-story", task: "../story"},
		{story: "my-story", task: "../../../x"},
		{story: "my-story", task: ".."},
		{story: "my-story", task: "T1"},
		{story: "my-story", task: "1.json"},
		{story: "my-story", task: "a/b"},
		{story: "my-story", task: "a--b"},
		{story: "my-story", task: "-1"},
		{story: "my-story", task: "x\x00y"},
	} {
		root, dir := hookSyncRoot(t)
		// A file the traversal names, so a slip would show.
		hookWriteFile(t, filepath.Join(dir, "..", "story.json"), []byte(`{"status":"pending"}`))
		before := hookTree(t, root)
		env := map[string]string{"SAGA_STORY_ID": tc.story, "CLAUDE_CODE_TASK_LIST_ID": tc.list, "SAGA_PROJECT_DIR": root}
		p := hookPostPayload(t, map[string]any{
			"tool_input":    map[string]any{"taskId": tc.task, "status": "completed"},
			"tool_response": hookTaskResponse(true, tc.task, "pending", "completed"),
		})
		r := runHookIn(t, p, env)
		if r.code != 0 || !strings.Contains(r.stderr, "not a valid") && !strings.Contains(r.stderr, "is not saga__") {
			t.Errorf("%+v: %+v, want an invalid-name warning", tc, r)
		}
		if after := hookTree(t, root); !hookSameTree(before, after) {
			t.Errorf("%+v: files changed", tc)
		}
		if _, err := os.Stat(filepath.Join(root, ".git", "saga-lsp")); !os.IsNotExist(err) {
			t.Errorf("%+v: lock dir created: %v", tc, err)
		}
	}
}

// The sync waits for the story lock, and gives up with a warning.
func TestPostToolUseWaitsForLock(t *testing.T) {
	root, dir := hookSyncRoot(t)
	short := defaultLimits()
	short.lock = 200 * time.Millisecond
	l, err := filesafe.AcquireLock(context.Background(), root, "story-my-story")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root}
	orig := hookFixture(t, "story/1.json")
	r := runHookLimits(t, strings.NewReader(hookPostPayload(t, nil)), env, short)
	if r.code != 0 || !strings.Contains(r.stderr, "lock story my-story") {
		t.Errorf("%+v, want a lock warning", r)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "1.json")); !bytes.Equal(got, orig) {
		t.Errorf("changed without the lock")
	}
	// Released while the sync waits for it (it has opened the lock file):
	// the sync then writes.
	locks, err := filesafe.LockDir(root)
	if err != nil {
		t.Fatal(err)
	}
	tried := testkit.Opened(t, filepath.Join(locks, "story-my-story.lock"))
	payload := hookPostPayload(t, nil)
	done := make(chan hookResult, 1)
	go func() { done <- runHookIn(t, payload, env) }()
	<-tried
	_ = l.Unlock()
	r = <-done
	if got, _ := os.ReadFile(filepath.Join(dir, "1.json")); r.stderr != "" || !bytes.Equal(got, hookWithStatus(t, orig, "in_progress", "completed")) {
		t.Errorf("after unlock: %+v, file %q", r, got)
	}
}

// In a worker run the project dir is the story's worktree: its copy
// changes, under the lock all worktrees of the repository share.
func TestPostToolUseWorktree(t *testing.T) {
	base := hookBaseDir(t)
	repo := hookRepo(t, base, "my-story")
	wt := testkit.Worktree(t, repo, ".saga/worktrees/my-story", "story/my-story")
	orig := hookFixture(t, "story/1.json")
	r := runHookIn(t, hookPostPayload(t, map[string]any{"cwd": filepath.Join(wt, "src")}), map[string]string{
		"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": wt, "CLAUDE_PROJECT_DIR": wt,
		"CLAUDE_CODE_TASK_LIST_ID": "saga__my-story__1735689600000", "SAGA_TASK_CONTEXT": "story-worktree",
	})
	if r.code != 0 || r.stderr != "" || r.stdout != "" {
		t.Fatalf("%+v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(wt, ".saga", "stories", "my-story", "1.json")); !bytes.Equal(got, hookWithStatus(t, orig, "in_progress", "completed")) {
		t.Errorf("worktree copy: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(repo, ".saga", "stories", "my-story", "1.json")); !bytes.Equal(got, orig) {
		t.Errorf("main checkout copy changed: %q", got)
	}
	// The lock's folder: its file stays after a flock's release, and is
	// removed with a portable lock file's (-tags portable).
	if _, err := os.Stat(filepath.Join(repo, ".git", "saga-lsp", "locks")); err != nil {
		t.Errorf("lock not in the repository's common dir: %v", err)
	}
	if out := testkit.Git(t, wt, "status", "--porcelain"); strings.TrimSpace(out) != "M .saga/stories/my-story/1.json" {
		t.Errorf("git status in the worktree:\n%s", out)
	}
}

// BenchmarkHookSync measures one PostToolUse status sync in-process:
// payload parsing, root discovery, the story lock and the atomic write
// (with its fsyncs).
func BenchmarkHookSync(b *testing.B) {
	root, _ := hookSyncRoot(b)
	env := hookEnv(map[string]string{"SAGA_STORY_ID": "my-story", "SAGA_PROJECT_DIR": root})
	payloads := [2]string{
		hookPostPayload(b, map[string]any{"tool_response": hookTaskResponse(true, "1", "in_progress", "completed")}),
		hookPostPayload(b, map[string]any{"tool_response": hookTaskResponse(true, "1", "completed", "in_progress")}),
	}
	var out, errb bytes.Buffer
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Hook(context.Background(), strings.NewReader(payloads[i%2]), env, &out, &errb, nil)
	}
	b.StopTimer()
	if errb.Len() > 0 || out.Len() > 0 {
		b.Fatalf("stdout %q stderr %q", out.String(), errb.String())
	}
}
