package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// verifyRepo is a repository with story s committed on main: a task whose
// checks pass, one whose second check fails, one without checks.
func verifyRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		".saga/stories/s/story.json": `{"id": "s", "title": "S", "description": ""}`,
		".saga/stories/s/ok.json":    `{"id": "ok", "subject": "OK", "description": "", "status": "completed", "blockedBy": [], "checks": ["test -f README", "true"]}`,
		".saga/stories/s/bad.json":   `{"id": "bad", "subject": "Bad", "description": "", "status": "pending", "blockedBy": [], "checks": ["true", "echo broken; exit 2", "true"]}`,
		".saga/stories/s/none.json":  `{"id": "none", "subject": "None", "description": "", "status": "pending", "blockedBy": []}`,
		"README":                     "hello\n",
	}
	for rel, data := range files {
		files[rel] = data + "\n"
	}
	testkit.WriteFiles(t, root, files)
	testkit.InitRepo(t, root)
	return root
}

func TestVerify(t *testing.T) {
	root := verifyRepo(t)
	r := run(t, root, "verify", "s")
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{
		"story s: checks as committed at ", "(where it forked from main), run in . (",
		"  ✓ ok: test -f README — passed", "  ✓ ok: true — passed",
		"  ✗ bad: echo broken; exit 2 — exit status 2", "      broken\n", "    (1 more check of bad not run after the failure)",
		"  none: no checks", "1 task passed, 1 failed, 1 without checks",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
		}
	}
	if r := run(t, root, "verify", "s", "ok"); r.Code != 0 || strings.Contains(r.Stdout, "bad") {
		t.Errorf("verify s ok: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// JSON: every result, and the fork point.
	r = run(t, root, "verify", "s", "bad", "none", "--format", "json")
	var rep struct {
		Story, Dir, Base, ForkPoint, Mode string
		Passed                            bool
		Tasks                             []struct {
			Task, From string
			Passed     bool
			Results    []struct {
				Command  string
				ExitCode int
				Passed   bool
				Outcome  string
				Output   string
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || r.Code != 1 {
		t.Fatalf("exit %d, %v:\n%s", r.Code, err, r.Stdout)
	}
	head := testkit.Git(t, root, "rev-parse", "HEAD")
	if rep.Story != "s" || rep.ForkPoint != head || rep.Base != "main" || rep.Passed || len(rep.Tasks) != 2 ||
		rep.Tasks[0].Task != "bad" || rep.Tasks[0].From != head || len(rep.Tasks[0].Results) != 2 ||
		rep.Tasks[0].Results[1].ExitCode != 2 || rep.Tasks[0].Results[1].Output != "broken" || len(rep.Tasks[1].Results) != 0 {
		t.Errorf("report %+v", rep)
	}
	// Bad input: a usage error names what to do, exit 2.
	for args, want := range map[string]string{
		"verify":              "missing the story to verify",
		"verify nope":         `no story "nope"`,
		"verify s nope":       `no task "nope" in story s (its tasks: bad, none, ok)`,
		"verify s ../x":       `invalid task id "../x"`,
		"verify s --format x": `unknown format "x" (text, json)`,
	} {
		if r := run(t, root, strings.Fields(args)...); r.Code != 2 || !strings.Contains(r.Stderr, want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", args, r.Code, r.Stderr, want)
		}
	}
}

// In the story's worktree, the checks that count are those of the fork
// point: weakening the task file there, even committed, changes nothing.
// A task not committed anywhere yet is judged by its file.
func TestVerifyWorktree(t *testing.T) {
	root := verifyRepo(t)
	wt := testkit.Worktree(t, root, ".saga/worktrees/s", "story/s")
	os.WriteFile(filepath.Join(wt, ".saga/stories/s/bad.json"), []byte(`{"id": "bad", "subject": "Bad", "description": "", "status": "pending", "blockedBy": [], "checks": []}`+"\n"), 0o644)
	testkit.Git(t, wt, "commit", "-qam", "weaken")
	r := run(t, root, "verify", "s", "bad")
	if r.Code != 1 || !strings.Contains(r.Stdout, "run in .saga/worktrees/s (") || !strings.Contains(r.Stdout, "exit status 2") {
		t.Errorf("exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	os.WriteFile(filepath.Join(wt, ".saga/stories/s/fresh.json"), []byte(`{"id": "fresh", "subject": "New", "description": "", "status": "pending", "blockedBy": [], "checks": ["echo not yet; exit 7"]}`+"\n"), 0o644)
	r = run(t, root, "verify", "s", "fresh")
	if r.Code != 1 || !strings.Contains(r.Stdout, "exit status 7") {
		t.Errorf("an uncommitted task: exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := exec.LookPath("bwrap"); err == nil && !strings.Contains(r.Stdout, "(confined)") {
		t.Errorf("not confined though bubblewrap is installed:\n%s", r.Stdout)
	}
}
