package plan

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestOverlaps: the later in plan order waits for the earlier; a pair the
// graph orders already, a completed item and an item without paths wait
// for nothing; no edge is added (the waves stay the graph's).
func TestOverlaps(t *testing.T) {
	items := []Item{
		{ID: "b-users", Paths: []string{"api/users.go"}},
		{ID: "a-auth", Paths: []string{"web/**", "api/**"}},
		{ID: "c-report", BlockedBy: []string{"a-auth"}, Paths: []string{"api/report.go"}},
		{ID: "d-docs", Paths: []string{"docs/**"}},
		{ID: "e-old", Status: "completed", Paths: []string{"api/**"}},
		{ID: "f-none"},
		{ID: "g-readme", Paths: []string{"README.md"}},
		{ID: "h-readme", BlockedBy: []string{"d-docs"}, Paths: []string{"docs/README.md"}},
	}
	p := Compute(items, 0)
	// c-report waits for nothing: a-auth blocks it, and api/report.go
	// never meets api/users.go; h-readme not for d-docs, its blocker. A
	// glob without a slash is a name in any folder: README.md meets web/**
	// and docs/**.
	got := p.Waits
	want := []Wait{
		{ID: "b-users", For: "a-auth", Glob: "api/users.go", ForGlob: "api/**"},
		{ID: "g-readme", For: "a-auth", Glob: "README.md", ForGlob: "web/**"},
		{ID: "g-readme", For: "d-docs", Glob: "README.md", ForGlob: "docs/**"},
		{ID: "h-readme", For: "g-readme", Glob: "docs/README.md", ForGlob: "README.md"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Waits = %+v\nwant %+v", got, want)
	}
	if !reflect.DeepEqual(p.Waves, [][]string{{"a-auth", "d-docs", "b-users", "f-none", "g-readme"}, {"c-report", "h-readme"}}) {
		t.Errorf("Waves = %q: an overlap moved a wave", p.Waves)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Waits []map[string]string `json:"waits"`
	}
	if err := json.Unmarshal(b, &back); err != nil || len(back.Waits) != 4 || back.Waits[0]["for"] != "a-auth" || back.Waits[0]["forGlob"] != "api/**" {
		t.Errorf("JSON waits = %s (%v)", b, err)
	}
	if w := Compute([]Item{{ID: "x"}}, 0).Waits; w == nil || len(w) != 0 {
		t.Errorf("no paths: Waits = %#v, want [] (never null in JSON)", w)
	}
}

// TestOrderIgnoresProgress: plan order for overlaps is the same whatever
// is done, so a wait never flips as blockers complete.
func TestOrderIgnoresProgress(t *testing.T) {
	items := []Item{{ID: "z", Paths: []string{"a/**"}}, {ID: "y", BlockedBy: []string{"x"}, Paths: []string{"a/b"}}, {ID: "x"}}
	before := Compute(items, 0).Waits
	items[2].Status = "completed"
	after := Compute(items, 0).Waits
	if !reflect.DeepEqual(before, after) || len(after) != 1 || after[0].ID != "y" || after[0].For != "z" {
		t.Errorf("waits before %+v, after x completed %+v: want y waits for z both times", before, after)
	}
}
