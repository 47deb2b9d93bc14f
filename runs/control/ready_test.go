//go:build unix

package control_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
)

// TestReadyStartAsksGitLess: the epic runner starts a story its step has
// just derived ready (Ready): the story's state and its blockers' are not
// derived again, and the branches are listed once for every question of
// where it starts — on loaded cores each git process was tens of
// milliseconds of the start (docs/architecture.md#an-epic-of-200-stories).
// The start is the same: on its blocker's unmerged branch, from HEAD's
// branch. Without Ready, the same start derives both states (a refusal's
// reasons), and still lists the branches once.
func TestReadyStartAsksGitLess(t *testing.T) {
	const api, db = "user-auth--api", "user-auth--setup-db"
	for _, ready := range []bool{true, false} {
		h := newTmuxEnv(t)
		// The blocker's work, on its branch, not merged.
		testkit.Git(t, h.root, "checkout", "-q", "-b", runs.StoryBranch(db))
		testkit.WriteFiles(t, h.root, map[string]string{"db.sql": "create table users;\n"})
		testkit.Git(t, h.root, "add", "db.sql")
		testkit.Git(t, h.root, "commit", "-qm", "db")
		testkit.Git(t, h.root, "checkout", "-q", "main")
		calls := testkit.GitCalls(t)
		res, err := control.StartStory(t.Context(), control.RunOptions{Setup: control.NewSetup(h.root, h.getenv), Story: api,
			Worker: runs.WorkerFlags{}.WithDefaults(), Ready: ready, Force: !ready})
		if err != nil {
			t.Fatalf("ready %v: %v", ready, err)
		}
		if res.Base != runs.StoryBranch(db) {
			t.Errorf("ready %v: started on %q, want its blocker's branch %s", ready, res.Base, runs.StoryBranch(db))
		}
		var listings, derivations int
		for _, c := range calls() {
			switch c[0] {
			case "for-each-ref":
				if slices.Contains(c, "refs/heads/") && !slices.ContainsFunc(c, func(w string) bool { return strings.HasPrefix(w, "refs/remotes/") }) {
					listings++ // the start's own listing
				} else {
					derivations++ // an Evidence's (readmodel's listing)
				}
			case "symbolic-ref":
				t.Errorf("ready %v: HEAD's branch asked again: %v", ready, c)
			case "rev-parse":
				if slices.ContainsFunc(c, func(w string) bool { return strings.HasPrefix(w, "refs/heads/") }) {
					t.Errorf("ready %v: a branch asked on its own: %v", ready, c)
				}
			}
		}
		if listings != 1 {
			t.Errorf("ready %v: the branches listed %d times, want once", ready, listings)
		}
		if ready && derivations != 0 || !ready && derivations == 0 {
			t.Errorf("ready %v: %d derivations of a state", ready, derivations)
		}
	}
}
