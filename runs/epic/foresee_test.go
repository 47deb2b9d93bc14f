//go:build unix

package epic_test

import (
	"slices"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
)

// TestRunnerForeseesConflicts: a story started again — its branch there
// from an earlier attempt — is warned of a sibling whose branch conflicts
// with it, and runs anyway (docs/landing.md#conflicts-foreseen): e and c
// both changed shared.md on their branches, and neither is the other's
// blocker or dependent. A story's first run, whose branch its worker
// makes, is warned of nothing: the runner does not look.
func TestRunnerForeseesConflicts(t *testing.T) {
	f := newEpicFixture(t, false)
	for id, text := range map[string]string{"shop--e": "e\n", "shop--c": "c\n"} {
		testkit.Git(t, f.root, "checkout", "-q", "-b", runs.StoryBranch(id), "main")
		testkit.WriteFiles(t, f.root, map[string]string{"shared.md": text})
		testkit.Git(t, f.root, "add", "shared.md")
		testkit.Git(t, f.root, "commit", "-qm", "an earlier attempt of "+id)
	}
	testkit.Git(t, f.root, "checkout", "-q", "main")
	if r := f.saga(nil, "run", "shop", "--max-parallel", "2"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s", r.Code, r.Stderr)
	}
	if fr := f.follow(); fr.Code != 0 {
		t.Fatalf("follow: exit %d\n%s", fr.Code, fr.Stderr)
	}
	warned := map[string][]string{}
	for _, e := range f.events() {
		if e.Event == runs.KindStoryForeseen {
			if !slices.Equal(e.Files, []string{"shared.md"}) {
				t.Errorf("%s foreseen with %v in %v, want shared.md", e.Story, e.By, e.Files)
			}
			warned[e.Story] = append(warned[e.Story], e.By...)
		}
	}
	want := map[string][]string{"shop--e": {"shop--c"}, "shop--c": {"shop--e"}}
	if len(warned) != len(want) || !slices.Equal(warned["shop--e"], want["shop--e"]) || !slices.Equal(warned["shop--c"], want["shop--c"]) {
		t.Errorf("warned %v, want %v", warned, want)
	}
	if n := count(f.events(), runs.KindStoryStart, "shop--e") + count(f.events(), runs.KindStoryStart, "shop--c"); n != 2 {
		t.Errorf("the warned stories started %d times, want once each", n)
	}
}
