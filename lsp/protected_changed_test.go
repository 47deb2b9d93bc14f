//go:build unix

package lsp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// A worker run whose story fixed the code but also changed a protected
// file ends blocked: the editor shows protected-file-changed on the task's
// checks, naming the file, in the main copy and the worktree copy, and the
// task lens says "✗ protected files changed". Reverted, the next run
// clears it.
func TestProtectedFileChangedFromAWorkerRun(t *testing.T) {
	testkit.Bwrap(t)
	testkit.NeedsTool(t, "socat", "the simulated agent's Bash sandbox needs it; Debian: apt-get install -y socat")
	root := testkit.GitRepo(t, "../examples/workspace")
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	sessions, config := t.TempDir(), t.TempDir()
	t.Setenv("SAGA_SESSION_DIR", sessions)
	testkit.WriteFiles(t, root, map[string]string{
		"calc.py":                       "def add(a, b):\n    return a - b\n",
		"tests/check.sh":                "grep -q 'a + b' calc.py\n",
		".saga/stories/prot/story.json": `{"id": "prot", "title": "Prot", "description": "Fix it.\nSIMAGENT bash sed -i 's/a - b/a + b/' calc.py\nSIMAGENT bash echo '# tidied' >> tests/check.sh"}` + "\n",
		".saga/stories/prot/fix.json":   `{"id": "fix", "subject": "Fix", "description": "", "status": "pending", "blockedBy": [], "checks": ["sh tests/check.sh"]}` + "\n",
	})
	testkit.Git(t, root, "add", "-A")
	testkit.Git(t, root, "commit", "-qm", "plan prot")
	worker := func(wantCode int) {
		t.Helper()
		session := fmt.Sprintf("saga-story-prot-%d", time.Now().UnixMilli())
		// A real run (the stand-in claude): a dry run is never the story's
		// (docs/worker.md#dry-runs).
		cmd := exec.Command(testkit.Binary(t), "worker", "prot", "--output-file", filepath.Join(sessions, session+".log"))
		cmd.Dir = root
		cmd.Env = append(testkit.CleanEnv(), "SAGA_SESSION_DIR="+sessions, "SAGA_SESSION="+session, "CLAUDE_CONFIG_DIR="+config,
			"SAGA_CLAUDE="+testkit.Build(t, "./testdata/standin/claude"), "SAGA_GH="+filepath.Join(config, "no-gh"))
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != wantCode {
			t.Fatalf("worker: exit %d (%v), want %d\n%s", code, err, wantCode, out)
		}
	}
	c := startLive(t, root)
	rel := ".saga/stories/prot/fix.json"
	from := c.mark()
	worker(3)
	for _, r := range []string{rel, ".saga/worktrees/prot/" + rel} {
		d, _ := c.diagnostics(from, r, func(p publishedDiagnostics) bool { return slices.Contains(p.codes(), "protected-file-changed") })
		dg := d.Diagnostics[slices.Index(d.codes(), "protected-file-changed")]
		if dg.Severity != 2 || !strings.Contains(dg.Message, "story prot changed protected files: tests/check.sh (modified)") {
			t.Errorf("%s: protected-file-changed %+v", r, dg)
		}
	}
	if titles := lensTitles(codeLenses(c, rel)); len(titles) != 1 || !strings.HasSuffix(titles[0], " · ✓ checks · ✗ protected files changed") {
		t.Errorf("fix's lens %q", titles)
	}

	// Reverted in the worktree (the agent's Bash changes it again: the
	// story is told to leave it alone now).
	wt := filepath.Join(root, ".saga", "worktrees", "prot")
	story := `{"id": "prot", "title": "Prot", "description": "Fix it."}` + "\n"
	os.WriteFile(filepath.Join(root, ".saga/stories/prot/story.json"), []byte(story), 0o644)
	testkit.Git(t, root, "commit", "-qam", "no more script")
	testkit.Git(t, wt, "checkout", "main", "--", "tests/check.sh")
	testkit.Git(t, wt, "commit", "-qm", "revert the check")
	from = c.mark()
	worker(0)
	c.diagnostics(from, rel, func(p publishedDiagnostics) bool { return !slices.Contains(p.codes(), "protected-file-changed") })
	if titles := lensTitles(codeLenses(c, rel)); len(titles) != 1 || strings.Contains(titles[0], "protected") {
		t.Errorf("fix's lens after the revert %q", titles)
	}
}
