package claudecode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// breakHook is a `claude` the worker runs in these tests: it takes the
// worker's --settings as the worker wrote them, makes one event's hook fail
// — FAILHOOK_EVENT's command replaced by one that crashes (killed by
// SIGSEGV) or hangs past a 3 s timeout (FAILHOOK_MODE) — and runs the real
// CLI with them. Everything else (onFailure included) is the worker's:
// the shipped hook is never changed, and nothing in it reads a test's
// variable.
const breakHook = `#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
if "--settings" in args:
    i = args.index("--settings") + 1
    s = json.loads(args[i])
    for group in s["hooks"][os.environ["FAILHOOK_EVENT"]]:
        for h in group["hooks"]:
            if os.environ["FAILHOOK_MODE"] == "crash":
                h["command"] = "sh -c 'kill -SEGV $$'"
            else:
                h["command"], h["timeout"] = "sleep 600", 3
    args[i] = json.dumps(s)
os.execv(os.environ["FAILHOOK_CLAUDE"], [os.environ["FAILHOOK_CLAUDE"]] + args)
`

// failHookRun runs the worker on story with the real CLI, event's hook
// broken as mode says, for at most one headless run.
func failHookRun(t *testing.T, root, story, event, mode string) (testkit.Result, string) {
	t.Helper()
	claude := claudeOffline(t)
	base := filepath.Dir(root)
	wrapper := filepath.Join(base, "claude-breaking-"+event)
	if err := os.WriteFile(wrapper, []byte(breakHook), 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(base, "api-"+mode+".jsonl")
	sessions := filepath.Join(base, "sessions")
	env := append(testkit.CleanEnv(), "SAGA_CLAUDE="+wrapper, "FAILHOOK_CLAUDE="+claude, "FAILHOOK_EVENT="+event, "FAILHOOK_MODE="+mode,
		"CLAUDE_OFFLINE_LOG="+log, "CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"), "SAGA_SESSION_DIR="+sessions,
		"SAGA_SESSION=saga-story-"+story+"-1", "SAGA_GH="+filepath.Join(base, "no-gh"))
	if tools := os.Getenv("SAGA_TOOLS_CACHE"); tools != "" {
		env = append(env, "SAGA_TOOLS_CACHE="+tools)
	}
	out := filepath.Join(sessions, "saga-story-"+story+"-1.log")
	r := testkit.Run(t, root, env, "", testkit.Binary(t), "worker", story, "--max-cycles", "1", "--output-file", out)
	t.Logf("worker: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	return r, log
}

// The write-scope hook fails closed in a worker's run with the real CLI:
// made to crash, or to hang past its timeout, it blocks the agent's writes
// (Claude Code's onFailure "block", which the worker registers) — the model
// reads why, and nothing was written. Without it, Claude Code lets each
// write through.
func TestWriteScopeHookFailsClosed(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"crash", "hang"} {
		t.Run(mode, func(t *testing.T) {
			claudeOffline(t)
			root := filepath.Join(t.TempDir(), "repo")
			wt := filepath.Join(root, ".saga", "worktrees", "scope")
			probe := filepath.Join(wt, "probe.txt")
			testkit.WriteFiles(t, root, map[string]string{
				".saga/stories/scope/story.json": `{"id": "scope", "title": "Scope", "description": ` + jsonc.Quote("Write a file.\nFAKEAPI write "+probe+" hello\nFAKEAPI notasks") + "}\n",
				".saga/stories/scope/one.json":   `{"id": "one", "subject": "One", "description": "", "status": "pending", "blockedBy": []}` + "\n",
			})
			testkit.InitRepo(t, root)
			_, log := failHookRun(t, root, "scope", "PreToolUse", mode)
			if _, err := os.Lstat(probe); !os.IsNotExist(err) {
				t.Errorf("the write went through the failed hook: %v", err)
			}
			why := map[string]string{"crash": "failed", "hang": "timed out"}[mode]
			results := strings.Join(toolResults(t, log), "\n---\n")
			if !strings.Contains(results, "PreToolUse:Write hook error") || !strings.Contains(results, why+"; blocking because onFailure is \"block\"") {
				t.Errorf("the model never read that the failed hook blocked the write:\n%s", results)
			}
		})
	}
}

// The completion gate cannot be closed by Claude Code (it ignores
// onFailure on TaskCompleted): a gate hook that crashes lets the real CLI
// complete the task. The worker closes it: with no passing verdict from
// the gate, the completion does not count — the task is pending again in
// the story's files (worktree and committed branch) and in the task list,
// and the journal says why — although the task's check would pass: the
// gate never ran it.
func TestCrashedCompletionGateNeverCounts(t *testing.T) {
	t.Parallel()
	claudeOffline(t)
	root := filepath.Join(t.TempDir(), "repo")
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/gate/story.json": `{"id": "gate", "title": "Gate", "description": "Build it."}` + "\n",
		".saga/stories/gate/build.json": `{"id": "build", "subject": "Build it", "description": "Produce the build output.", "status": "pending", "blockedBy": [],
  "checks": ["test -s saga-out/build.txt"]}` + "\n",
	})
	testkit.InitRepo(t, root)
	r, log := failHookRun(t, root, "gate", "TaskCompleted", "crash")
	if r.Code == runs.ExitCompleted {
		t.Errorf("the story completed through a crashed gate")
	}
	// The real CLI did complete it: the crash let the completion through.
	results := strings.Join(toolResults(t, log), "\n---\n")
	if !strings.Contains(results, "Updated task #build status") {
		t.Fatalf("the real CLI refused the completion itself (the test shows nothing):\n%s", results)
	}
	wt := filepath.Join(root, ".saga", "worktrees", "gate")
	status := func(data string) string {
		doc := jsonc.Parse([]byte(data))
		if v := doc.Root.Get("status"); v != nil {
			return v.Str()
		}
		return ""
	}
	file, _ := os.ReadFile(filepath.Join(wt, ".saga/stories/gate/build.json"))
	if s := status(string(file)); s == "completed" || s == "" {
		t.Errorf("the worktree's task is %q:\n%s", s, file)
	}
	if s := status(testkit.Git(t, root, "show", "story/gate:.saga/stories/gate/build.json")); s == "completed" || s == "" {
		t.Errorf("the committed task is %q", s)
	}
	lists, _ := filepath.Glob(filepath.Join(filepath.Dir(root), "claude", "tasks", "saga__gate__*", "build.json"))
	for _, l := range lists {
		data, _ := os.ReadFile(l)
		if s := status(string(data)); s == "completed" {
			t.Errorf("the task list still holds it completed: %s", l)
		}
	}
	journal, _ := os.ReadFile(filepath.Join(wt, ".saga/stories/gate/journal.md"))
	if !strings.Contains(string(journal), "without a passing verdict from the completion gate") {
		t.Errorf("the journal does not say why:\n%s", journal)
	}
	if !strings.Contains(r.Stdout, "build was completed without a passing verdict") {
		t.Errorf("the log does not say why")
	}
}
