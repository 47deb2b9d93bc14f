//go:build unix

package control_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// Red team (issue 32, closing note): several repositories, one user. The
// session dir and the tmux server are the user's, shared by every
// repository; two repositories may hold a story of the same id. Stopping
// repository A's story must never stop repository B's worker of a story
// that only shares its id.
//
// It did (`stop` in A ended B's worker and its tmux session: runs,
// sessions and panes were found by story id alone); runs now record their
// repository and every reader tells its own apart (runs.Run.In).
func TestStopNeverReachesAnotherRepository(t *testing.T) {
	b := newTmuxEnv(t)
	b.realWorker(t)
	dir := t.TempDir()
	claude := filepath.Join(dir, "claude")
	if err := os.WriteFile(claude, []byte("#!/bin/sh\ncase \"$*\" in --version) echo '2.1.330 (Claude Code)'; exit 0;; esac\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b.env = append(b.env, "SAGA_CLAUDE="+claude)
	// Repository A: another clone of the same workspace, the same user's
	// session dir and tmux server.
	a := &tmuxEnv{root: testkit.GitRepo(t, "../../examples/workspace"), sessionDir: b.sessionDir, socket: b.socket, env: slices.Clone(b.env)}

	m := b.startJSON(t, nil, story)
	eventsFile := m["eventsFile"].(string)
	if !testkit.WaitUntil(30*time.Second, func() bool { return findEvent(readEvents(t, eventsFile), "run.start", "") != nil }) {
		t.Fatalf("no run started:\n%s", testkit.FileText(m["outputFile"].(string)))
	}
	t.Cleanup(func() { b.saga(t, nil, "stop", story) })

	r := a.saga(t, nil, "stop", story)
	if end := findEvent(readEvents(t, eventsFile), "worker.end", ""); end != nil {
		t.Fatalf("`stop %s` in repository A stopped repository B's worker (exit %d):\n%s%s\nB's worker ended %v",
			story, r.Code, r.Stdout, r.Stderr, end)
	}
	if !b.hasSession(m["session"].(string)) {
		t.Fatalf("`stop %s` in repository A killed repository B's tmux session (exit %d):\n%s%s", story, r.Code, r.Stdout, r.Stderr)
	}
	if r.Code == 0 || strings.Contains(r.Stdout, "stopped") {
		t.Errorf("`stop %s` in repository A, where nothing runs: exit %d\n%s%s", story, r.Code, r.Stdout, r.Stderr)
	}
}
