package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// The life of a story run with the real Claude Code
// (docs/commands.md#the-life-of-a-story-run): a dry run lives apart and
// calls no model; the real run after it runs the agent; once clean has
// taken the completed, pushed story's worktree, status, plan and run agree
// it is completed; reset --remote discards the attempt and it is pending.
func TestStoryLifeWithRealClaudeCode(t *testing.T) {
	t.Parallel()
	claude := claudeOffline(t)
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	testkit.WriteFiles(t, root, map[string]string{
		"go.mod":                        "module example.com/calc\n\ngo 1.22\n",
		"calc.go":                       "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
		".saga/stories/calc/story.json": `{"id": "calc", "title": "Calculator", "description": "Make the calculator work."}` + "\n",
		".saga/stories/calc/add.json":   `{"id": "add", "subject": "Implement Add", "description": "Add two numbers.", "status": "pending", "blockedBy": []}` + "\n",
	})
	testkit.InitRepo(t, root)
	testkit.BareOrigin(t, root)
	log := filepath.Join(base, "api.jsonl")
	env := append(testkit.CleanEnv(), "SAGA_CLAUDE="+claude, "CLAUDE_OFFLINE_LOG="+log,
		"CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"), "SAGA_SESSION_DIR="+filepath.Join(base, "sessions"),
		"SAGA_GH="+filepath.Join(base, "no-gh"), "SAGA_TMUX_SOCKET="+testkit.TmuxServer(t))
	saga := func(args ...string) testkit.Result {
		t.Helper()
		return testkit.Run(t, root, env, "", testkit.Binary(t), args...)
	}
	type story struct {
		State, Status string
		Done, Total   int
		DryRun        *struct{ State, Branch string }
	}
	status := func() story {
		t.Helper()
		r := saga("status", "calc", "--format", "json")
		var st struct{ Stories []story }
		if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || len(st.Stories) != 1 {
			t.Fatalf("status: %v\n%s%s", err, r.Stdout, r.Stderr)
		}
		return st.Stories[0]
	}

	// A dry run: apart, no model called.
	if r := saga("worker", "calc", "--dry-run", "--max-cycles", "2"); r.Code != 0 {
		t.Fatalf("dry run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if data, _ := os.ReadFile(log); len(data) != 0 {
		t.Fatal("a dry run called the model")
	}
	if s := status(); s.State != "pending" || s.Done != 0 || s.DryRun == nil || s.DryRun.State != "completed" || s.DryRun.Branch != "saga-dry/calc" {
		t.Errorf("status after the dry run: %+v", s)
	}

	// The real run after it runs the agent.
	r := saga("worker", "calc", "--max-cycles", "2")
	if r.Code != 0 {
		t.Fatalf("worker: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if data, _ := os.ReadFile(log); len(data) == 0 || strings.Contains(r.Stdout, "(1 done)") {
		t.Fatalf("the real run after a dry run did not run the agent:\n%s", r.Stdout)
	}

	// clean takes the worktree (completed and pushed) and the dry run's
	// leftovers; status, plan and run still say completed.
	if r := saga("clean", "--yes"); r.Code != 0 || !strings.Contains(r.Stdout, "removed worktree .saga/worktrees/calc (") ||
		!strings.Contains(r.Stdout, "removed branch saga-dry/calc") {
		t.Errorf("clean --yes: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if s := status(); s.State != "completed" || s.Status != "completed" || s.Done != 1 || s.Total != 1 || s.DryRun != nil {
		t.Errorf("status after clean: %+v", s)
	}
	var pl struct{ Completed, Ready []string }
	if r := saga("plan", "calc", "--format", "json"); json.Unmarshal([]byte(r.Stdout), &pl) != nil || len(pl.Completed) != 1 || len(pl.Ready) != 0 {
		t.Errorf("plan after clean: %s%s", r.Stdout, r.Stderr)
	}
	if r := saga("run", "calc"); r.Code != 0 || !strings.Contains(r.Stdout, "story calc is already completed (1/1 tasks") {
		t.Errorf("run after clean: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	// reset --remote: the attempt goes, here and on origin; pending again.
	if r := saga("reset", "calc", "--yes", "--remote"); r.Code != 0 || !strings.Contains(r.Stdout, "removed branch story/calc") ||
		!strings.Contains(r.Stdout, "removed remote branch origin/story/calc") {
		t.Errorf("reset: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	testkit.Git(t, root, "fetch", "-q", "--prune", "origin")
	if s := status(); s.State != "pending" || s.Done != 0 {
		t.Errorf("status after reset: %+v", s)
	}
}
