//go:build unix

package epic_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
)

// A story whose check keeps refusing a task fails the epic (exit 1, not a
// limit): its end says the check, its output and the next step — in the
// runner's events, follow and status —, its dependent is held with the
// step to take, and the graph in every story's PR shows the states as they
// are now (a's PR, written when a completed and b still ran, shows b
// failed and d held). Fixed on main, the epic is run again to completion;
// its spend counts every headless run of every story, b's three included,
// in status and in the PRs.
func TestCheckFailureFailsEpicThenFixedOnMain(t *testing.T) {
	testkit.Bwrap(t)
	f := newEpicFixture(t, true)
	check := `test -f fixed.txt || { echo 'fixed.txt is missing'; exit 1; }`
	b1 := filepath.Join(f.root, ".saga/stories/shop--b/b1.json")
	checked := strings.Replace(task("b1"), `"blockedBy": []`, `"blockedBy": [], "checks": [`+quoteJSON(check)+`]`, 1)
	if err := os.WriteFile(b1, []byte(checked), 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.Git(t, f.root, "commit", "-qam", "b1 has a check")
	testkit.Git(t, f.root, "push", "-q", "origin", "main")
	cost := []string{"SAGA_STANDIN_COST_USD=0.25"}
	if r := f.saga(cost, "run", "shop", "--max-parallel", "3", "--max-check-failures", "2"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s", r.Code, r.Stderr)
	}
	fr := f.follow()
	if fr.Code != runs.ExitFailed {
		t.Fatalf("follow: exit %d, want %d (a story failed)\n%s", fr.Code, runs.ExitFailed, fr.Stderr)
	}
	var bEnd, dHeld *runs.Event
	for _, e := range f.events() {
		switch {
		case e.Event == runs.KindStoryEnd && e.Story == "shop--b":
			bEnd = &e
		case e.Event == runs.KindStoryHeld && e.Story == "shop--d":
			dHeld = &e
		}
	}
	if bEnd == nil || bEnd.Status != runs.StatusFailed || !strings.Contains(bEnd.Message, "`"+check+"` — exit status 1") ||
		!strings.Contains(bEnd.Message, "fixed.txt is missing") || !strings.Contains(bEnd.Message, "the code on main (the next run takes it in)") || !strings.Contains(bEnd.Message, "then `saga-lsp run shop`") {
		t.Errorf("b's story.end: %+v", bEnd)
	}
	if dHeld == nil || !strings.Contains(dHeld.Message, "`saga-lsp status shop--b` says why they stopped; fix that, then `saga-lsp run shop`") {
		t.Errorf("d's story.held: %+v", dHeld)
	}
	st := f.saga(nil, "status", "shop")
	for _, want := range []string{"held by shop--b: `saga-lsp status shop--b` says why", "↳ worker failed: 0/2 tasks, 2 runs, exit 1 — task b1: its check refused the completion in 2 runs in a row",
		"fixed.txt is missing", "$1.25 spent (every run of its stories)"} {
		if !strings.Contains(st.Stdout, want) {
			t.Errorf("status shop lacks %q:\n%s", want, st.Stdout)
		}
	}
	prs := f.pullRequests()
	for _, head := range []string{"story/shop--a", "story/shop--b", "story/shop--c", "story/shop--e"} {
		body := prs[head].Body
		for _, want := range []string{"shop--a · completed", "shop--b · failed", "shop--c · completed", "shop--d · held", "shop--e · completed", "spent so far: $1.25"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s's PR lacks %q:\n%s", head, want, body)
			}
		}
	}
	if !prs["story/shop--b"].IsDraft || !strings.Contains(prs["story/shop--b"].Body, "The story failed: a check kept refusing a task") {
		t.Errorf("b's PR: draft %v\n%s", prs["story/shop--b"].IsDraft, prs["story/shop--b"].Body)
	}

	// The fix, on main.
	if err := os.WriteFile(b1, []byte(task("b1")), 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.Git(t, f.root, "commit", "-qam", "b1's check was wrong")
	testkit.Git(t, f.root, "push", "-q", "origin", "main")
	if r := f.saga(cost, "run", "shop", "--max-parallel", "3"); r.Code != 0 {
		t.Fatalf("run again: exit %d\n%s", r.Code, r.Stderr)
	}
	if fr := f.follow(); fr.Code != 0 {
		t.Fatalf("follow the second run: exit %d\n%s", fr.Code, fr.Stderr)
	}
	status := f.status()
	// 7 runs at $0.25: one each for a, c, d and e; b's two refused and
	// the one after the fix.
	if status.Done != 5 || math.Abs(status.Cost-1.75) > 1e-9 || math.Abs(storyState(status, "shop--b").Cost-0.75) > 1e-9 {
		t.Errorf("after the fix: %d/%d, spent %v (b %v), want 5/5, 1.75 (b 0.75)", status.Done, status.Total, status.Cost, storyState(status, "shop--b").Cost)
	}
	for head, p := range f.pullRequests() {
		for _, want := range []string{"shop--b · completed", "shop--d · completed", "spent so far: $1.75"} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("%s's PR after the fix lacks %q:\n%s", head, want, p.Body)
			}
		}
		if strings.Contains(p.Body, "The story failed") {
			t.Errorf("%s's PR still says the story failed:\n%s", head, p.Body)
		}
	}
	var ends []string
	for _, e := range f.events() {
		if e.Event == runs.KindStoryEnd {
			ends = append(ends, e.Story+" "+e.Status)
		}
	}
	if !strings.Contains(strings.Join(ends, ","), "shop--d completed") {
		t.Errorf("the second run's ends: %v", ends)
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
