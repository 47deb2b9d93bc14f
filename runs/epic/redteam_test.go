//go:build unix

package epic_test

import (
	"testing"

	"github.com/saga-ai/saga-lsp/runs"
)

// Red team (issue 32, closing note): a run that reports a negative cost
// must not buy an epic room under --max-cost. Story e, run by hand before
// the epic, reports -$100 (a model's result, or a forged record); the epic
// then runs the rest at $0.60 a run under --max-cost 1. Were the -100
// counted, the spend would stay below the cap however many runs went on
// (all four of a, b, c, d would start and the runner exit 0); counted as
// nothing (runs.Cost), the cap stops new starts after two runs.
func TestNegativeCostDoesNotLiftTheCap(t *testing.T) {
	f := newEpicFixture(t, false)
	if r := f.saga([]string{"SAGA_STANDIN_COST_USD=-100"}, "run", "shop--e"); r.Code != 0 {
		t.Fatalf("run shop--e: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := f.saga(nil, "follow", "shop--e"); r.Code != 0 {
		t.Fatalf("follow shop--e: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	priced := []string{"SAGA_STANDIN_COST_USD=0.6"}
	if r := f.saga(priced, "run", "shop", "--max-parallel", "1", "--max-cost", "1"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s", r.Code, r.Stderr)
	}
	if fr := f.follow(); fr.Code != 2 {
		t.Fatalf("follow: exit %d, want the runner's 2 (the cap)\n%s%s", fr.Code, fr.Stdout, fr.Stderr)
	}
	starts, capped := 0, false
	for _, e := range f.events() {
		switch e.Event {
		case runs.KindStoryStart:
			starts++
			if e.Story == "shop--e" {
				t.Errorf("shop--e, completed by hand, started again")
			}
		case runs.KindEpicCap:
			capped = true
		}
	}
	if !capped || starts != 2 {
		t.Errorf("capped %v after %d starts; want the cap after 2 runs of $0.60 (e's -$100 counts nothing)", capped, starts)
	}
	if st := f.status(); st.Cost < 1 || st.Cost > 2 {
		t.Errorf("the epic's spend $%.2f, want the two runs' $1.20", st.Cost)
	}
}
