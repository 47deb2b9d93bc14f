// Package claudecode drives saga-lsp's worker with the real Claude Code CLI
// (claude-offline: the real binary, offline, with a scripted model), found
// through $SAGA_CLAUDE_OFFLINE, by default ../shared/tools/claude-offline
// beside the repository (docs/claude-code.md). The tests skip where that
// tool is absent.
package claudecode

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Every test runs beside another (t.Parallel): each has its own
// repositories, homes and environment, and most of its time is spent
// waiting on the CLI, the sandbox and git (docs/architecture.md#test-time).
func TestMain(m *testing.M) { testkit.Main(m) }

// claudeOffline is the real CLI's wrapper, or the test is skipped.
func claudeOffline(t *testing.T) string {
	t.Helper()
	p := os.Getenv("SAGA_CLAUDE_OFFLINE")
	if p == "" {
		p = filepath.Join(testkit.ModuleRoot(t), "..", "shared", "tools", "claude-offline")
	}
	if _, err := os.Stat(p); err != nil {
		testkit.Needs(t, fmt.Sprintf("the real Claude Code CLI wrapper is absent (%s; set SAGA_CLAUDE_OFFLINE to it)", p))
	}
	for _, prog := range []string{"bwrap", "socat", "python3", "npm"} {
		testkit.NeedsTool(t, prog, "")
	}
	return p
}

// toolResults reads the request log: every tool result Claude Code sent to
// the model (what the model read), in order.
func toolResults(t *testing.T, log string) []string {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var req struct {
			Body struct {
				Messages []struct {
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			} `json:"body"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil {
			continue
		}
		var results []string
		for _, m := range req.Body.Messages {
			var blocks []struct {
				Type    string          `json:"type"`
				Content json.RawMessage `json:"content"`
				Name    string          `json:"name"`
			}
			if json.Unmarshal(m.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				switch b.Type {
				case "tool_result":
					var s string
					if json.Unmarshal(b.Content, &s) != nil {
						s = string(b.Content)
					}
					results = append(results, s)
				case "tool_use":
					results = append(results, "tool_use "+b.Name)
				}
			}
		}
		if len(results) > len(last) { // the conversation grows; keep the longest
			last = results
		}
	}
	return last
}

// A story run with the real Claude Code delivers: the agent's files
// committed and pushed on story/<s>; the task's guidance in what the model
// read; a Bash `go test ./...` passing inside the sandbox while a write
// outside the worktree fails; a project .claude/settings.json of the
// worktree not loaded (its hook never runs).
func TestStoryRunWithRealClaudeCode(t *testing.T) {
	t.Parallel()
	claude := claudeOffline(t)
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	outside := filepath.Join(base, "escape.txt")
	planted := filepath.Join(base, "planted-hook-ran")
	testkit.WriteFiles(t, root, map[string]string{
		"go.mod":                        "module example.com/calc\n\ngo 1.22\n",
		"calc.go":                       "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
		"calc_test.go":                  "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n",
		".saga/stories/calc/story.json": `{"id": "calc", "title": "Calculator", "description": ` + jsonc.Quote("Make the calculator work.\nFAKEAPI bash 'go test ./... > gotest.txt 2>&1; echo go-test-exit=$?'\nFAKEAPI bash 'echo x > "+outside+"; echo escape-exit=$?'") + "}\n",
		".saga/stories/calc/add.json": `{"id": "add", "subject": "Implement Add", "description": "Add two numbers.",
  "guidance": "Use the plus operator, nothing clever.", "doneWhen": "go test passes", "status": "pending", "blockedBy": []}` + "\n",
		".claude/settings.json": `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch ` + planted + `"}]}]}}` + "\n",
	})
	testkit.InitRepo(t, root)
	origin := testkit.BareOrigin(t, root)

	log := filepath.Join(base, "api.jsonl")
	env := append(testkit.CleanEnv(), "SAGA_CLAUDE="+claude, "CLAUDE_OFFLINE_LOG="+log,
		"CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"), "SAGA_SESSION_DIR="+filepath.Join(base, "sessions"),
		"SAGA_GH="+filepath.Join(base, "no-gh"))
	r := testkit.Run(t, root, env, "", testkit.Binary(t), "worker", "calc", "--max-cycles", "2")
	if r.Code != 0 {
		t.Fatalf("worker: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	pushed := testkit.Git(t, origin, "ls-tree", "-r", "--name-only", "story/calc")
	for _, want := range []string{"saga-out/add.txt", "gotest.txt"} {
		if !strings.Contains(pushed, want) {
			t.Errorf("the pushed branch lacks %s:\n%s", want, pushed)
		}
	}
	if strings.Contains(pushed, ".bashrc") || strings.Contains(pushed, ".gitconfig") {
		t.Errorf("sandbox placeholders committed:\n%s", pushed)
	}
	results := strings.Join(toolResults(t, log), "\n---\n")
	for _, want := range []string{"Guidance:\nUse the plus operator, nothing clever.", "Done when:\ngo test passes", "go-test-exit=0", "escape-exit=1", "read-only file system"} {
		// bash says "Read-only file system", zsh "read-only file system":
		// Claude Code's Bash tool runs zsh when $SHELL does not name bash.
		if !strings.Contains(strings.ToLower(results), strings.ToLower(want)) {
			t.Errorf("the model never read %q:\n%s", want, results)
		}
	}
	if strings.Contains(results, "tool_use ToolSearch") {
		t.Errorf("the Task tools were deferred (a ToolSearch turn)")
	}
	gotest, _ := os.ReadFile(filepath.Join(root, ".saga/worktrees/calc/gotest.txt"))
	if !strings.Contains(string(gotest), "ok  \texample.com/calc") {
		t.Errorf("go test in the sandbox:\n%s", gotest)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("the agent wrote outside its worktree: %v", err)
	}
	if _, err := os.Stat(planted); !os.IsNotExist(err) {
		t.Errorf("the worktree's .claude/settings.json was loaded (its hook ran)")
	}
}

// The TaskCompleted gate with the real Claude Code: the model's first
// completion of the task (before any work) is refused — it reads the failing
// command, its status and output — and its completion after the work is
// accepted; the worker's final re-run passes and the story completes.
func TestCompletionGateWithRealClaudeCode(t *testing.T) {
	t.Parallel()
	claude := claudeOffline(t)
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	check := "test -s saga-out/build.txt || { echo 'no build output yet'; exit 1; }"
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/gate/story.json": `{"id": "gate", "title": "Gated build", "description": ` + jsonc.Quote("Build the thing.\nFAKEAPI task build completed") + "}\n",
		".saga/stories/gate/build.json": `{"id": "build", "subject": "Build it", "description": "Produce the build output.", "status": "pending", "blockedBy": [],
  "checks": [` + jsonc.Quote(check) + `]}` + "\n",
	})
	testkit.InitRepo(t, root)
	log := filepath.Join(base, "api.jsonl")
	sessions := filepath.Join(base, "sessions")
	out := filepath.Join(sessions, "saga-story-gate-1.log")
	env := append(testkit.CleanEnv(), "SAGA_CLAUDE="+claude, "CLAUDE_OFFLINE_LOG="+log,
		"CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"), "SAGA_SESSION_DIR="+sessions, "SAGA_SESSION=saga-story-gate-1",
		"SAGA_GH="+filepath.Join(base, "no-gh"))
	r := testkit.Run(t, root, env, "", testkit.Binary(t), "worker", "gate", "--max-cycles", "2", "--output-file", out)
	if r.Code != 0 {
		t.Fatalf("worker: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	results := toolResults(t, log)
	refused, accepted := -1, -1
	for i, res := range results {
		switch {
		case refused < 0 && strings.Contains(res, "TaskCompleted hook feedback"):
			refused = i
			for _, want := range []string{"task build cannot be completed yet", "check: " + check, "result: exit status 1", "no build output yet"} {
				if !strings.Contains(res, want) {
					t.Errorf("the refusal the model read lacks %q:\n%s", want, res)
				}
			}
		case refused >= 0 && strings.Contains(res, "Updated task #build status"):
			accepted = i
		}
	}
	t.Logf("the model read, refused:\n%s", results[max(refused, 0)])
	if refused < 0 || accepted < refused {
		t.Fatalf("want a refused completion, then an accepted one; the model read:\n%s", strings.Join(results, "\n---\n"))
	}
	var passed []bool
	f, err := os.Open(out + ".events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e struct {
			Event, Task string
			Passed      *bool
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Event == "check.end" && e.Task == "build" && e.Passed != nil {
			passed = append(passed, *e.Passed)
		}
	}
	if len(passed) != 3 || passed[0] || !passed[1] || !passed[2] {
		t.Errorf("check results %v, want refused, accepted, then the final re-run passing", passed)
	}
}
