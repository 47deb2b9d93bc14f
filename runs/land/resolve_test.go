//go:build unix

package land_test

import (
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/land"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// commitOn commits a file on the story's branch in its worktree and pushes
// it to origin (a review round's commit, or the story's own work).
func (f *fixture) commitOn(story, file, content string) {
	f.t.Helper()
	wt := store.WorktreeDir(f.root, story)
	testkit.WriteFiles(f.t, wt, map[string]string{file: content})
	testkit.Git(f.t, wt, "add", "-A")
	testkit.Git(f.t, wt, "commit", "-q", "-m", story+": "+file)
	testkit.Git(f.t, wt, "push", "-q", "origin", "story/"+story)
}

// A dependent's follow of main conflicts: its blocker's branch took a
// commit in a file the dependent changed too, and landed with it. The
// dependent is stopped with its conflict-resolution task; `land --resolve`
// starts its run on that task as `run` does (the run takes the task and
// main's tip in, the conflict committed for its agent), and refuses once
// no conflict is open.
func TestLandResolveStartsTheConflictRun(t *testing.T) {
	f := newFixture(t)
	f.commitOn("shop--b", "shared.txt", "b's\n")
	f.commitOn("shop--a", "shared.txt", "a's\n")

	res, r := f.land("shop")
	if r.Code != 1 {
		t.Fatalf("land: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	b := outcome(res, "shop--b")
	if b.State != land.Failed || !strings.Contains(b.Why, "conflicts in shared.txt") || !strings.Contains(b.Next, "saga-lsp land --resolve shop--b") {
		t.Fatalf("b: %+v\n%s", b, r.Stdout)
	}
	if d := outcome(res, "shop--d"); d.State != land.Waiting {
		t.Errorf("d: %+v", d)
	}
	st := f.status("shop--b")
	if st.Conflict == nil || len(st.Conflict.Files) != 1 || st.Conflict.Files[0] != "shared.txt" || st.Next.Action != readmodel.NextResolve {
		t.Fatalf("b's status: conflict %+v, next %+v", st.Conflict, st.Next)
	}
	task := st.Conflict.Task
	if out := f.saga("status", "shop--b").Stdout; !strings.Contains(out, "`saga-lsp land --resolve shop--b` starts its run on task "+task) {
		t.Errorf("status shop--b does not say how to resolve it:\n%s", out)
	}
	old := testkit.Git(t, f.root, "rev-parse", "story/shop--b")

	r = f.saga("land", "--resolve", "shop--b")
	if r.Code != 0 || !strings.Contains(r.Stdout, "resolving the conflict of story shop--b: its run started") ||
		!strings.Contains(r.Stdout, "follow: saga-lsp follow shop--b") || !strings.Contains(r.Stdout, "`saga-lsp land shop--b`") {
		t.Fatalf("land --resolve: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	f.saga("follow", "shop--b") // until the run ends
	log := testkit.Git(t, f.root, "log", "--format=%s", old+"..story/shop--b")
	if !strings.Contains(log, "saga(shop--b): restack task "+task) || !strings.Contains(log, "conflicts left for this run's agent in shared.txt") {
		t.Errorf("the run did not take the conflict task and main's tip in:\n%s", log)
	}
	main := testkit.Git(t, f.origin, "rev-parse", "main")
	if testkit.Git(t, f.root, "merge-base", main, "story/shop--b") != main {
		t.Errorf("story/shop--b does not build on main's tip %s after the run", main)
	}

	// Taken in by that run: nothing is open to resolve any more.
	r = f.saga("land", "--resolve", "shop--b")
	if r.Code != 1 || !strings.Contains(r.Stderr, "story shop--b has no open conflict to resolve") {
		t.Errorf("land --resolve after the run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if st := f.status("shop--b"); st.Conflict != nil {
		t.Errorf("still an open conflict after the run: %+v", st.Conflict)
	}
}
