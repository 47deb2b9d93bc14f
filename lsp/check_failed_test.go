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

// A worker run whose final re-run of the checks fails (a later task broke
// an earlier one's check): the editor shows check-failed on the failing
// command in the task's checks, with its output, in the main copy and the
// worktree copy, and the task lens says "✗ check failed" (the other
// "✓ checks"). A later run where the check passes clears it.
func TestCheckFailedFromAWorkerRun(t *testing.T) {
	testkit.Bwrap(t)
	root := testkit.GitRepo(t, "../examples/workspace")
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	sessions, config := t.TempDir(), t.TempDir()
	t.Setenv("SAGA_SESSION_DIR", sessions)
	breaks := "test ! -e saga-work/gated/second.md"
	first := `{
  "id": "first",
  "subject": "First",
  "description": "",
  "status": "pending",
  "blockedBy": [],
  "checks": ["true", %q]
}
`
	files := map[string]string{
		"story.json":  `{"id": "gated", "title": "Gated", "description": ""}` + "\n",
		"first.json":  fmt.Sprintf(first, breaks),
		"second.json": `{"id": "second", "subject": "Second", "description": "", "status": "pending", "blockedBy": ["first"], "checks": ["test -f saga-work/gated/second.md"]}` + "\n",
	}
	dir := filepath.Join(root, ".saga", "stories", "gated")
	os.MkdirAll(dir, 0o755)
	for name, data := range files {
		os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644)
	}
	testkit.Git(t, root, "add", "-A")
	testkit.Git(t, root, "commit", "-qm", "plan gated")
	worker := func(wantCode int) {
		t.Helper()
		session := fmt.Sprintf("saga-story-gated-%d", time.Now().UnixMilli())
		// A real run (the stand-in claude): a dry run's checks are never
		// the story's (docs/worker.md#dry-runs).
		cmd := exec.Command(testkit.Binary(t), "worker", "gated", "--output-file", filepath.Join(sessions, session+".log"))
		cmd.Dir = root
		cmd.Env = append(testkit.CleanEnv(), "SAGA_SESSION_DIR="+sessions, "SAGA_SESSION="+session, "CLAUDE_CONFIG_DIR="+config,
			"SAGA_CLAUDE="+testkit.Build(t, "./testdata/standin/claude"), "SAGA_GH="+filepath.Join(config, "no-gh"))
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != wantCode {
			t.Fatalf("worker: exit %d (%v), want %d\n%s", code, err, wantCode, out)
		}
	}

	c := startLive(t, root)
	rel := ".saga/stories/gated/first.json"
	wtRel := ".saga/worktrees/gated/" + rel
	from := c.mark()
	worker(1)
	text := testkit.FileText(filepath.Join(root, rel))
	for _, r := range []string{rel, wtRel} {
		d, _ := c.diagnostics(from, r, func(p publishedDiagnostics) bool { return slices.Contains(p.codes(), "check-failed") })
		dg := d.Diagnostics[slices.Index(d.codes(), "check-failed")]
		if dg.Severity != 2 || dg.Range != spanOf(t, text, fmt.Sprintf("%q", breaks), 0) ||
			!strings.Contains(dg.Message, "task first's check failed in the last run: "+breaks) || !strings.Contains(dg.Message, "exit status 1") {
			t.Errorf("%s: check-failed %+v", r, dg)
		}
	}
	// The worker's journal entry (Markdown) is no JSON document to check.
	for _, n := range c.notesOf(from, "textDocument/publishDiagnostics") {
		if strings.Contains(string(n.Params), "journal.md") && strings.Contains(string(n.Params), `"code"`) {
			t.Errorf("diagnostics on a journal: %s", n.Params)
		}
	}
	if titles := lensTitles(codeLenses(c, rel)); len(titles) != 1 || !strings.HasSuffix(titles[0], " · ✗ check failed") {
		t.Errorf("first's lens %q", titles)
	}
	if titles := lensTitles(codeLenses(c, ".saga/stories/gated/second.json")); len(titles) != 1 || !strings.HasSuffix(titles[0], " · ✓ checks") {
		t.Errorf("second's lens %q", titles)
	}

	// Fixed on the base and taken into the branch: the next run passes.
	os.WriteFile(filepath.Join(root, rel), []byte(fmt.Sprintf(first, "test -d saga-work")), 0o644)
	testkit.Git(t, root, "commit", "-qam", "fix first's check")
	testkit.Git(t, filepath.Join(root, ".saga", "worktrees", "gated"), "merge", "-q", "--no-edit", "main")
	from = c.mark()
	worker(0)
	c.diagnostics(from, rel, func(p publishedDiagnostics) bool { return !slices.Contains(p.codes(), "check-failed") })
	if titles := lensTitles(codeLenses(c, rel)); len(titles) != 1 || !strings.HasSuffix(titles[0], " · ✓ checks") {
		t.Errorf("first's lens after the fix %q", titles)
	}
}
