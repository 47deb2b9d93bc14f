package cli_test

import (
	"os"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
)

// A worker started by hand in a terminal is the user's own command there:
// it never lowers the CPU share of the terminal's session, which the
// user's other work shares (docs/worker.md#priority; a worker leading its
// session, as `run` starts it in tmux: runs/control's assertBackground).
func TestWorkerByHandLeavesTheSessionAlone(t *testing.T) {
	before, err := os.ReadFile("/proc/self/autogroup")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(before) > 0 {
		t.Cleanup(func() { // a failure here lowered this session: restore it
			if after, _ := os.ReadFile("/proc/self/autogroup"); string(after) != string(before) {
				_, nice, _ := strings.Cut(strings.TrimSpace(string(before)), " nice ")
				_ = os.WriteFile("/proc/self/autogroup", []byte(nice), 0)
			}
		})
	}
	root := t.TempDir()
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/s/story.json": `{"id": "s", "title": "S", "description": ""}` + "\n",
		".saga/stories/s/t.json":     `{"id": "t", "subject": "T", "description": "", "status": "pending", "blockedBy": []}` + "\n",
	})
	testkit.InitRepo(t, root)
	env := append(testkit.CleanEnv(), runs.EnvWorkerNice+"=", "SAGA_SESSION_DIR="+t.TempDir(), "CLAUDE_CONFIG_DIR="+t.TempDir())
	r := testkit.Run(t, root, env, "", testkit.Binary(t), "worker", "s", "--dry-run", "--max-cycles", "1")
	if r.Code != 0 || !strings.Contains(r.Stdout, "dry run: worker for story s") {
		t.Fatalf("worker: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if after, _ := os.ReadFile("/proc/self/autogroup"); string(after) != string(before) {
		t.Errorf("the session's CPU share changed from %q to %q", before, after)
	}
}
