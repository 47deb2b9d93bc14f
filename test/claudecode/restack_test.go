package claudecode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Issue 34 point 10, the worker's side of a restack that conflicted, with
// the real Claude Code CLI: the blocker's branch moved (a review round) in
// a file the stacked story changed too; `restack` leaves the branch and
// writes the conflict task; the story's next run merges the new tip with
// the conflicts committed as git left them, the agent resolves them, the
// task's check (no marker left) and the story's own checks gate it, and the
// story builds on the blocker's new tip.
func TestRestackConflictResolvedWithRealClaudeCode(t *testing.T) {
	t.Parallel()
	claude := claudeOffline(t)
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	resolve := "FAKEAPI bash " + shellQuote("if ls .saga/stories/shop--b/restack-*.json >/dev/null 2>&1; then printf 'a and b\\n' > shared.txt; fi")
	testkit.WriteFiles(t, root, map[string]string{
		".saga/epics/shop/epic.json": `{"id": "shop", "title": "Shop", "description": "", "children": [
  {"id": "shop--a", "blockedBy": []}, {"id": "shop--b", "blockedBy": ["shop--a"]}]}`,
		".saga/stories/shop--a/story.json": `{"id": "shop--a", "title": "A", "description": ""}`,
		".saga/stories/shop--a/t1.json":    `{"id": "t1", "subject": "a", "description": "", "status": "pending", "blockedBy": []}`,
		".saga/stories/shop--b/story.json": `{"id": "shop--b", "title": "B", "description": ` + jsonc.Quote("Build b.\n"+resolve) + `}`,
		".saga/stories/shop--b/t1.json": `{"id": "t1", "subject": "b", "description": "", "status": "pending", "blockedBy": [],
  "checks": ["grep -q ok b.txt"]}`,
		"shared.txt": "base\n",
	})
	testkit.InitRepo(t, root)
	main := testkit.Git(t, root, "rev-parse", "HEAD")
	commitOn := func(story, from string, files map[string]string) string {
		if from != "" {
			testkit.Git(t, root, "checkout", "-q", "-b", "story/"+story, from)
		} else {
			testkit.Git(t, root, "checkout", "-q", "story/"+story)
		}
		task := filepath.Join(root, ".saga/stories", story, "t1.json")
		data, _ := os.ReadFile(task)
		files[".saga/stories/"+story+"/t1.json"] = strings.Replace(string(data), `"pending"`, `"completed"`, 1)
		testkit.WriteFiles(t, root, files)
		testkit.Git(t, root, "add", "-A")
		testkit.Git(t, root, "commit", "-q", "-m", "work of "+story)
		tip := testkit.Git(t, root, "rev-parse", "HEAD")
		testkit.Git(t, root, "checkout", "-q", "main")
		return tip
	}
	commitOn("shop--a", "main", map[string]string{"a.txt": "a\n"})
	commitOn("shop--b", "story/shop--a", map[string]string{"b.txt": "ok\n", "shared.txt": "b's\n"})
	for s, b := range map[string]string{"shop--a": "main", "shop--b": "story/shop--a"} {
		if err := runs.WriteRecord(root, runs.Record{Story: s, Session: "saga-" + s, Status: runs.StatusCompleted, Ended: time.Now().UTC(),
			Branch: "story/" + s, Base: b, Reference: main}); err != nil {
			t.Fatal(err)
		}
	}
	// A review round moves the blocker, in the file b changed too.
	moved := commitOn("shop--a", "", map[string]string{"shared.txt": "a's\n"})

	env := append(testkit.CleanEnv(), "SAGA_CLAUDE="+claude, "CLAUDE_OFFLINE_LOG="+filepath.Join(base, "api.jsonl"),
		"CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"), "SAGA_SESSION_DIR="+filepath.Join(base, "sessions"),
		"SAGA_GH="+filepath.Join(base, "no-gh"))
	saga := func(want int, args ...string) string {
		t.Helper()
		r := testkit.Run(t, root, env, "", testkit.Binary(t), args...)
		if r.Code != want {
			t.Fatalf("saga-lsp %v: exit %d, want %d\n%s%s", args, r.Code, want, r.Stdout, r.Stderr)
		}
		return r.Stdout + r.Stderr
	}
	out := saga(1, "restack", "shop--b")
	if !strings.Contains(out, "shared.txt") {
		t.Fatalf("restack does not name the conflict:\n%s", out)
	}
	old := testkit.Git(t, root, "rev-parse", "story/shop--b")

	out = saga(0, "worker", "shop--b", "--base", "story/shop--a")
	tip := testkit.Git(t, root, "rev-parse", "story/shop--b")
	if testkit.Git(t, root, "merge-base", moved, tip) != moved || testkit.Git(t, root, "merge-base", old, tip) != old {
		t.Errorf("story/shop--b (%s) does not build on both its old tip and shop--a's new one:\n%s", tip, out)
	}
	if got := testkit.Git(t, root, "show", tip+":shared.txt"); got != "a and b" {
		t.Errorf("shared.txt on the branch: %q\n%s", got, out)
	}
	if !strings.Contains(out, "conflicts left for this run's agent in shared.txt") || !strings.Contains(out, "— passed") || !strings.Contains(out, "grep -rnI") {
		t.Errorf("the run does not say it merged with conflicts, or no check ran:\n%s", out)
	}
	if st := saga(0, "status", "shop--b"); strings.Contains(st, "base moved") {
		t.Errorf("still base moved after the run:\n%s", st)
	}
}
