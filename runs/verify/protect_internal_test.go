//go:build unix

package verify

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// Without bubblewrap (unconfined, as the user allowed) the protected run
// works in a mirror of the whole worktree: the check sees the fork point's
// protected file there, the worktree keeps the story's, and the mirror is
// removed afterwards.
func TestProtectedRunUnconfined(t *testing.T) {
	s := newSandbox(t)
	testkit.WriteFiles(t, s.dir, map[string]string{"tests/check.sh": "exit 1\n", "code.txt": "x\n"})
	testkit.Git(t, s.dir, "add", "-A")
	testkit.Git(t, s.dir, "commit", "-qm", "R")
	fork := testkit.Git(t, s.dir, "rev-parse", "HEAD")
	testkit.WriteFiles(t, s.dir, map[string]string{"tests/check.sh": "exit 0\n", "tests/new_test.go": "package x\n"})
	m := &Manifest{Tasks: map[string]TaskChecks{"a": {Commands: []string{"sh tests/check.sh && test ! -e tests/new_test.go"}, From: fork}}}
	p, err := protect(context.Background(), git.Repo{Dir: s.dir}, s.dir, fork, RulesOf(m))
	if err != nil {
		t.Fatal(err)
	}
	r := unconfined(t, s) // PATH without bwrap (nor git) from here
	res := runTask(context.Background(), r, "a", m.Tasks["a"], p, time.Time{}, nil)
	if res.Passed() || len(res.Results) != 1 || !res.Results[0].Protected || res.Results[0].ExitCode != 1 {
		t.Errorf("results %+v", res.Results)
	}
	if got := testkit.ReadFile(t, filepath.Join(s.dir, "tests/check.sh")); got != "exit 0\n" {
		t.Errorf("the worktree's file is %q", got)
	}
	views, _ := viewsDir(s.dir)
	if des, _ := os.ReadDir(views); len(des) != 0 {
		t.Errorf("views left behind: %v", des)
	}
}
