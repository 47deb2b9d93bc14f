//go:build unix

package worker_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/runs"
)

// versionAnswer starts a shell-script claude of a test: it answers the
// worker's `--version` as a current Claude Code does, and nothing else
// of the script runs for it.
const versionAnswer = "case \"$*\" in --version) echo '2.1.330 (Claude Code)'; exit 0;; esac\n"

// A Claude Code older than claudecode.MinVersion (before "onFailure" on a
// command hook, a write-scope hook that crashes lets the write through) is
// refused before anything is created: no worktree, no run; the message
// names both versions and how to update. The current one starts.
func TestOldClaudeCodeRefused(t *testing.T) {
	f := newFixture(t, false)
	log := filepath.Join(t.TempDir(), "claude.log")
	t.Setenv("SAGA_STANDIN_LOG", log)
	t.Setenv("SAGA_STANDIN_VERSION", "2.1.294")
	code, out := f.run("add-logout-button", "all", nil)
	if code != runs.ExitFailed {
		t.Fatalf("exit %d, want %d\n%s", code, runs.ExitFailed, out)
	}
	for _, want := range []string{"Claude Code 2.1.294 (", "is older than 2.1.295", "claude update", "no run was started"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(f.root, ".saga", "worktrees", "add-logout-button")); !os.IsNotExist(err) {
		t.Errorf("a worktree was created for a refused Claude Code: %v", err)
	}
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Errorf("an agent ran: %v", err)
	}

	t.Setenv("SAGA_STANDIN_VERSION", "2.1.295")
	if code, out := f.run("add-logout-button", "all", nil); code != runs.ExitCompleted || !strings.Contains(out, "start: Claude Code 2.1.295 (") {
		t.Errorf("2.1.295: exit %d\n%s", code, out)
	}
}
