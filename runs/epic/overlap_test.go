//go:build unix

package epic_test

import (
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/runs"
)

// Stories whose paths overlap never run at once (docs/landing.md#conflicts-foreseen):
// e (api/users.go) waits for a (api/**), the earlier in plan order, until
// a's worker ended; b and c (web/b/**, web/c/**) overlap nothing and start
// together once a ends. Judged from the runner's own events: its steps
// start every ready story in one pass, ends are reported between passes.
func TestOverlappingStoriesRunOneAfterTheOther(t *testing.T) {
	paths := map[string]string{"a": `["api/**"]`, "e": `["api/users.go"]`, "b": `["web/b/**"]`, "c": `["web/c/**"]`}
	f := newEpicFixtureWith(t, true, func(files map[string]string) {
		for s, p := range paths {
			name := ".saga/stories/shop--" + s + "/" + s + "1.json"
			files[name] = strings.Replace(task(s+"1"), `"blockedBy": []`, `"blockedBy": [], "paths": `+p, 1)
		}
	})
	if r := f.saga(nil, "plan", "shop"); !strings.Contains(r.Stdout, "waits for [shop--a]: both touch api/users.go (shop--a: api/**)") {
		t.Errorf("plan does not say e waits for a:\n%s%s", r.Stdout, r.Stderr)
	}
	if r := f.saga(nil, "run", "shop", "--max-parallel", "3"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := f.follow(); r.Code != 0 {
		t.Fatalf("follow: exit %d\n%s", r.Code, r.Stderr)
	}
	defer func() {
		if t.Failed() { // the runner's own account, to tell why
			for _, e := range f.events() {
				t.Logf("%s %s %s %s %s", e.Time.Format("15:04:05.000"), e.Event, e.Story, e.Status, e.Message)
			}
		}
	}()
	var order []string // "start x", "end x", in the runner's order
	told := false
	for _, e := range f.events() {
		switch e.Event {
		case runs.KindStoryStart:
			order = append(order, "start "+e.Story)
		case runs.KindStoryEnd:
			order = append(order, "end "+e.Story)
		case runs.KindStep:
			if strings.HasPrefix(e.Message, "shop--e: waits for shop--a: both touch api/users.go (shop--a: api/**)") {
				told = true
			}
		}
	}
	at := func(s string) int {
		for i, o := range order {
			if o == s {
				return i
			}
		}
		t.Fatalf("no %q among the runner's events: %q", s, order)
		return -1
	}
	if at("start shop--e") < at("end shop--a") {
		t.Errorf("e started before a ended, though their paths overlap: %q", order)
	}
	if !told {
		t.Errorf("the runner never said why e waits")
	}
	// b and c: both started in the pass after a ended, with no end between
	// their starts — running at once.
	b, c := at("start shop--b"), at("start shop--c")
	lo, hi := min(b, c), max(b, c)
	for _, o := range order[lo:hi] {
		if strings.HasPrefix(o, "end ") {
			t.Errorf("b and c did not run at once (%s between their starts): %q", o, order)
		}
	}
	if st := f.status(); st.Done != 5 || st.State != runs.StatusCompleted {
		t.Errorf("status: %d/%d %s", st.Done, st.Total, st.State)
	}
}
