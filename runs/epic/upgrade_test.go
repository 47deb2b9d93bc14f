package epic_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
)

// An epic started by saga-lsp before issue 22 resumes after the upgrade.
// The fixture is the layout that version left: story a completed on its
// branch, with its worktree, its run record in <git dir>/saga-lsp/runs/ as
// that version wrote it (no reference commit) and its build caches in
// <git dir>/saga-lsp/cache/. The upgraded runner does not run a again; b
// and c build on a's branch and read their checks at main's tip (a's
// record's base), which they record as their reference commit; the epic
// completes.
func TestEpicOfThePreviousVersionResumes(t *testing.T) {
	f := newEpicFixture(t, false)
	main := testkit.Git(t, f.root, "rev-parse", "main")
	wt := testkit.Worktree(t, f.root, ".saga/worktrees/shop--a", "story/shop--a")
	testkit.WriteFiles(t, wt, map[string]string{
		"a.txt":                         "a's work\n",
		".saga/stories/shop--a/a1.json": strings.Replace(task("a1"), `"pending"`, `"completed"`, 1),
		".saga/stories/shop--a/a2.json": strings.Replace(task("a2", "a1"), `"pending"`, `"completed"`, 1),
	})
	testkit.Git(t, wt, "add", "-A")
	testkit.Git(t, wt, "commit", "-qm", "saga(shop--a): run 1 — completed a1, a2")
	git := filepath.Join(f.root, ".git")
	testkit.WriteFiles(t, git, map[string]string{
		"info/exclude": ".saga/worktrees/\n",
		"saga-lsp/runs/shop--a.json": `{
  "story": "shop--a",
  "session": "saga-story-shop--a-1795000000000",
  "status": "completed",
  "exitCode": 0,
  "ended": "2026-11-20T10:30:00Z",
  "branch": "story/shop--a",
  "base": "main",
  "dryRun": true
}
`,
		"saga-lsp/cache/shop--a/go-build/README": "Go's build cache of the old layout\n",
	})

	if r := f.saga(nil, "run", "shop", "--max-parallel", "2"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if fr := f.follow(); fr.Code != 0 {
		t.Fatalf("follow: exit %d\n%s", fr.Code, fr.Stderr)
	}
	if st := f.status(); st.Done != 5 {
		t.Fatalf("after the upgrade: %+v", st)
	}
	if n := count(f.events(), runs.KindStoryStart, "shop--a"); n != 0 {
		t.Errorf("a ran again (%d) though the old record says it completed", n)
	}
	for _, s := range []string{"shop--b", "shop--c"} {
		rec, ok := runs.ReadRecord(f.root, s)
		if !ok || rec.Status != runs.StatusCompleted || rec.Reference != main || rec.Base != "story/shop--a" {
			t.Errorf("%s's record %+v: want completed on story/shop--a with reference %s", s, rec, main)
		}
		if files := testkit.Git(t, f.root, "ls-tree", "-r", "--name-only", "story/"+s); !strings.Contains(files, "a.txt") {
			t.Errorf("story/%s does not build on a's work:\n%s", s, files)
		}
	}
}
