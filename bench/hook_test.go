package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/verify"
)

// BenchmarkHookSyncPaired is the hook budget (docs/architecture.md#budgets): one
// PostToolUse status sync by the hook program the worker registers
// (saga-lsp-hook, docs/hooks.md#the-hook-program), process start included, against
// the start of an empty Go program (bench/empty), alternating in each op.
// Reports the median of each and of the ratio (budget ≤ 2).
func BenchmarkHookSyncPaired(b *testing.B) {
	hookSyncPaired(b, builtHookProgram(b))
}

// BenchmarkHookSyncSagaLSPPaired is the same sync by `saga-lsp hook`
// itself, the hook of those without saga-lsp-hook (a plugin or settings
// naming saga-lsp): its start must stay within the hook's old budget,
// ≤ 3 × the empty program's, both measured in the same run.
func BenchmarkHookSyncSagaLSPPaired(b *testing.B) {
	hookSyncPaired(b, builtBinary(b))
}

// hookSyncPaired is one PostToolUse status sync by bin's hook, paired
// with the empty program's start.
func hookSyncPaired(b *testing.B, bin string) {
	empty := testkit.Build(b, "./bench/empty")
	// A project as the hook sees it during a run: a git repository (the
	// story lock lives in its common dir) with one story.
	project := b.TempDir()
	testkit.Git(b, project, "init", "-q")
	taskFile := filepath.Join(project, ".saga", "stories", "s", "t.json")
	os.MkdirAll(filepath.Dir(taskFile), 0o755)
	os.WriteFile(filepath.Join(project, ".saga", "stories", "s", "story.json"), []byte(`{"id": "s", "title": "S", "description": ""}`), 0o644)
	os.WriteFile(taskFile, []byte("{\n  \"id\": \"t\",\n  \"subject\": \"s\",\n  \"description\": \"\",\n  \"status\": \"pending\",\n  \"blockedBy\": []\n}\n"), 0o644)
	env := append(os.Environ(), "SAGA_STORY_ID=s", "SAGA_PROJECT_DIR="+project, "CLAUDE_PROJECT_DIR="+project)
	statuses := []string{"pending", "completed"}
	i := 0
	pairedHook(b, bin, empty, env, func() string {
		from, to := statuses[i%2], statuses[(i+1)%2]
		i++
		return fmt.Sprintf(`{"session_id":"b","transcript_path":"/tmp/t.jsonl","cwd":%q,"permission_mode":"acceptEdits","hook_event_name":"PostToolUse","tool_name":"TaskUpdate","tool_input":{"taskId":"t","status":%q},"tool_response":{"success":true,"taskId":"t","updatedFields":["status"],"statusChange":{"from":%q,"to":%q}},"tool_use_id":"toolu_1","duration_ms":3}`+"\n",
			project, to, from, to)
	})
	if data, _ := os.ReadFile(taskFile); !strings.Contains(string(data), fmt.Sprintf(`"status": %q`, statuses[i%2])) {
		b.Fatalf("the hook did not sync the status:\n%s", data)
	}
}

// BenchmarkHookTaskCompletedPaired is the TaskCompleted budget
// (issue 14): in a worker's run, completing a task without checks costs the
// hook, process start included, ≤ 2× an empty Go program's start, measured
// alternately. The worker read the checks that count with git before the
// run (SAGA_CHECKS_FILE); the hook reads that file and no git runs.
func BenchmarkHookTaskCompletedPaired(b *testing.B) {
	bin := builtHookProgram(b)
	empty := testkit.Build(b, "./bench/empty")
	wt, fork := checksRepo(b)
	manifest := filepath.Join(b.TempDir(), "saga-story-s-1.checks.json")
	m := &verify.Manifest{Story: "s", ForkPoint: fork, Tasks: map[string]verify.TaskChecks{"t": {From: fork}, "c": {Commands: []string{"true"}, From: fork}}}
	if err := runs.WriteChecksManifest(manifest, m); err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), "SAGA_STORY_ID=s", "SAGA_PROJECT_DIR="+wt, "CLAUDE_PROJECT_DIR="+wt,
		"SAGA_CHECKS_FILE="+manifest, "SAGA_FORK_POINT="+fork, "SAGA_BASH=sandboxed")
	pairedHook(b, bin, empty, env, completedPayload(wt, "t"))
}

// BenchmarkHookTaskCompletedGit is the same completion in a session
// started by hand in the story's worktree (no worker, so no reading of the
// checks to take): the hook asks git for the fork point and the committed
// file. Reported, not budgeted.
func BenchmarkHookTaskCompletedGit(b *testing.B) {
	bin := builtHookProgram(b)
	empty := testkit.Build(b, "./bench/empty")
	wt, _ := checksRepo(b)
	pairedHook(b, bin, empty, os.Environ(), completedPayload(wt, "t"))
}

// checksRepo is a repository with story s (task t without checks) on main
// and its worktree on story/s.
func checksRepo(b *testing.B) (wt, fork string) {
	repo := b.TempDir()
	dir := filepath.Join(repo, ".saga", "stories", "s")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "story.json"), []byte(`{"id": "s", "title": "S", "description": ""}`), 0o644)
	os.WriteFile(filepath.Join(dir, "t.json"), []byte("{\n  \"id\": \"t\",\n  \"subject\": \"s\",\n  \"description\": \"\",\n  \"status\": \"in_progress\",\n  \"blockedBy\": []\n}\n"), 0o644)
	// Code and its test (a protected file), for the protected run's view.
	os.MkdirAll(filepath.Join(repo, "calc"), 0o755)
	os.WriteFile(filepath.Join(repo, "calc", "calc.go"), []byte("package calc\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "calc", "calc_test.go"), []byte("package calc\n"), 0o644)
	testkit.InitRepo(b, repo)
	wt = testkit.Worktree(b, repo, ".saga/worktrees/s", "story/s")
	return wt, testkit.Git(b, repo, "rev-parse", "main")
}

func completedPayload(cwd, task string) func() string {
	p := fmt.Sprintf(`{"session_id":"0ab0bb43-2afa-47b1-86ad-a690b51891e1","transcript_path":"/nonexistent.jsonl","cwd":%q,"prompt_id":"p","hook_event_name":"TaskCompleted","task_id":%q,"task_subject":"s","task_description":"d"}`+"\n", cwd, task)
	return func() string { return p }
}

// pairedHook runs the hook with payload() and an empty program
// alternately, and reports the median of each and of their ratio.
func pairedHook(b *testing.B, bin, empty string, env []string, payload func() string) {
	var hookS, emptyS, ratios []float64
	for b.Loop() {
		in := payload()
		start := time.Now()
		if err := exec.Command(empty).Run(); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		cmd := exec.Command(bin, "hook")
		cmd.Env = env
		cmd.Stdin = strings.NewReader(in)
		out, err := cmd.CombinedOutput()
		end := time.Now()
		if err != nil || len(out) > 0 {
			b.Fatalf("hook: %v %s", err, out)
		}
		e, h := mid.Sub(start).Seconds(), end.Sub(mid).Seconds()
		emptyS, hookS, ratios = append(emptyS, e), append(hookS, h), append(ratios, h/e)
	}
	b.ReportMetric(median(emptyS), "empty-s")
	b.ReportMetric(median(hookS), "hook-s")
	b.ReportMetric(median(ratios), "hook/empty")
}

// BenchmarkHydrate200 is the hydration budget (≤ 50 ms): a 200-task story
// read from .saga and written as Claude Code's task list, lock and fsyncs
// included.
func BenchmarkHydrate200(b *testing.B) {
	root := b.TempDir()
	dir := filepath.Join(root, ".saga", "stories", "big")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "story.json"), []byte(`{"id": "big", "title": "Big", "description": ""}`), 0o644)
	for i := range 200 {
		blocked := "[]"
		if i > 0 {
			blocked = fmt.Sprintf(`["task-%03d"]`, i-1)
		}
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("task-%03d.json", i)), fmt.Appendf(nil,
			`{"id": "task-%03d", "subject": "Task %d", "description": "Do part %d of the work, as the story describes, and check it with the tests.", "activeForm": "Working on part %d", "status": "pending", "blockedBy": %s, "guidance": "Keep it small.", "doneWhen": "Tests pass."}`,
			i, i, i, i, blocked), 0o644)
	}
	p := workspace.Parser(b)
	config := b.TempDir()
	// The disk's own floor, measured alternately in the same run: the same
	// 200 files written with os.WriteFile into a new folder. On a busy ext4
	// disk file creation itself can take tens of milliseconds.
	var encoded [][]byte
	if s, err := p.LoadStory(root, "big"); err == nil {
		for _, t := range claudecode.FromStory(s) {
			e, _ := claudecode.Encode(t)
			encoded = append(encoded, e)
		}
	}
	var hydrateMs, floorMs []float64
	n := 0
	for b.Loop() {
		n++
		start := time.Now()
		s, err := p.LoadStory(root, "big")
		if err != nil || len(s.Tasks) != 200 {
			b.Fatalf("load: %v", err)
		}
		list := claudecode.ListDir(config, claudecode.ListID("big", int64(n)))
		if err := claudecode.Hydrate(context.Background(), list, claudecode.FromStory(s)); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		plain := filepath.Join(config, fmt.Sprintf("plain-%d", n))
		os.MkdirAll(plain, 0o755)
		for i, e := range encoded {
			os.WriteFile(filepath.Join(plain, fmt.Sprintf("task-%03d.json", i)), e, 0o644)
		}
		end := time.Now()
		hydrateMs = append(hydrateMs, float64(mid.Sub(start).Microseconds())/1000)
		floorMs = append(floorMs, float64(end.Sub(mid).Microseconds())/1000)
	}
	b.ReportMetric(median(hydrateMs), "ms")
	b.ReportMetric(median(floorMs), "write-floor-ms")
}
