package plan

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// it builds a pending item; tests override fields where they matter.
func it(id string, blockedBy ...string) Item {
	return Item{ID: id, Subject: "do " + id, Status: "pending", BlockedBy: blockedBy}
}

func with(i Item, status, priority string) Item {
	i.Status, i.Priority = status, priority
	return i
}

func done(id string, blockedBy ...string) Item { return with(it(id, blockedBy...), "completed", "") }

func prio(p, id string, blockedBy ...string) Item { return with(it(id, blockedBy...), "pending", p) }

type want struct {
	waves     [][]string
	completed []string
	blocked   []Blocked
	cycles    [][]string
	weak      []Edge
	waveOf    map[string]int // nil: derive from waves, i.e. no split expected
	waveCount int            // with waveOf only
}

func TestCompute(t *testing.T) {
	tests := []struct {
		name        string
		items       []Item
		maxParallel int
		want        want
	}{
		{name: "empty", items: nil, want: want{}},
		{
			name:  "all completed",
			items: []Item{done("b"), done("a", "b"), done("c", "a")},
			want:  want{completed: []string{"b", "a", "c"}},
		},
		{
			name:  "linear chain",
			items: []Item{it("c", "b"), it("b", "a"), it("a")},
			want:  want{waves: [][]string{{"a"}, {"b"}, {"c"}}},
		},
		{
			name:  "diamond",
			items: []Item{it("d", "b", "c"), it("c", "a"), it("b", "a"), it("a")},
			want:  want{waves: [][]string{{"a"}, {"b", "c"}, {"d"}}},
		},
		{
			name: "completed blocker is satisfied",
			items: []Item{
				done("a"), it("b", "a"), with(it("c", "a", "b"), "in_progress", ""),
			},
			want: want{waves: [][]string{{"b"}, {"c"}}, completed: []string{"a"}},
		},
		{
			name: "unknown status is pending",
			items: []Item{
				with(it("a"), "blocked", ""), with(it("b", "a"), "", ""), with(it("c", "b"), "COMPLETED", ""),
			},
			want: want{waves: [][]string{{"a"}, {"b"}, {"c"}}},
		},
		{
			name: "priorities ordering",
			items: []Item{
				prio("low", "a"), it("b"), prio("critical", "c"), prio("high", "d"),
				prio("medium", "e"), prio("urgent", "f"),
			},
			maxParallel: 10,
			want:        want{waves: [][]string{{"c", "d", "e", "a", "b", "f"}}},
		},
		{
			name: "unblocks most breaks priority ties",
			items: []Item{
				it("a"), it("b"), it("c"), prio("high", "d"), prio("high", "e"),
				it("x", "c"), it("y", "c", "e"), it("z", "b"),
			},
			want: want{waves: [][]string{{"e", "d", "c", "b", "a"}, {"x", "y", "z"}}},
		},
		{
			name:  "dependents that are completed do not count as unblocked",
			items: []Item{it("a"), it("b"), done("x", "b"), done("y", "b"), it("z", "a")},
			want:  want{waves: [][]string{{"a", "b"}, {"z"}}, completed: []string{"x", "y"}},
		},
		{
			name: "max-parallel split keeps order and WaveOf",
			items: []Item{
				it("g"), it("f"), it("e"), it("d"), it("c"), it("b"), prio("high", "a"),
				it("h", "a", "b"), it("i", "h"),
			},
			maxParallel: 3,
			want: want{
				waves:     [][]string{{"a", "b", "c"}, {"d", "e", "f"}, {"g"}, {"h"}, {"i"}},
				waveOf:    map[string]int{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1, "h": 2, "i": 3},
				waveCount: 3,
			},
		},
		{
			name:        "max-parallel zero means five",
			items:       []Item{it("a"), it("b"), it("c"), it("d"), it("e"), it("f")},
			maxParallel: 0,
			want: want{
				waves:     [][]string{{"a", "b", "c", "d", "e"}, {"f"}},
				waveOf:    map[string]int{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1},
				waveCount: 1,
			},
		},
		{
			name: "unknown, self and duplicate blockedBy tolerated",
			items: []Item{
				it("a", "a", "nope", "b", "b", "b"), it("b"), it("c"),
				it("d", "c"), it("e", "c", "d", "d"),
			},
			// b is listed three times by a but unblocks one item; c unblocks two.
			want: want{waves: [][]string{{"c", "b"}, {"d", "a"}, {"e"}}},
		},
		{
			name:  "duplicate item id: first wins",
			items: []Item{it("a", "b"), done("a"), it("b")},
			want:  want{waves: [][]string{{"b"}, {"a"}}},
		},
		{
			name:  "cycle of 2 with dependent",
			items: []Item{it("b", "a"), it("a", "b"), it("c", "a"), it("d")},
			want: want{
				waves: [][]string{{"d"}},
				blocked: []Blocked{
					{ID: "b", By: []string{"a"}}, {ID: "a", By: []string{"b"}}, {ID: "c", By: []string{"a"}},
				},
				cycles: [][]string{{"a", "b", "a"}},
				weak:   []Edge{{From: "a", To: "b"}},
			},
		},
		{
			name: "cycle of 3 with dependent and a scheduled blocker",
			items: []Item{
				it("x"), it("a", "b", "x"), it("b", "c"), it("c", "a"), it("d", "c", "x"),
			},
			want: want{
				waves: [][]string{{"x"}},
				blocked: []Blocked{
					{ID: "a", By: []string{"b"}}, {ID: "b", By: []string{"c"}},
					{ID: "c", By: []string{"a"}}, {ID: "d", By: []string{"c"}},
				},
				cycles: [][]string{{"a", "b", "c", "a"}},
				// a has two unfinished blockers, b and c one each: b wins the tie.
				weak: []Edge{{From: "b", To: "c"}},
			},
		},
		{
			name: "cycle of 4 with transitive dependents",
			items: []Item{
				it("y1"), it("y2"), it("y3"),
				it("t4", "t1", "y3"), it("t3", "t4"), it("t2", "t3", "y2"), it("t1", "t2", "y1"),
				it("u", "t2"), it("v", "u", "y1"),
			},
			want: want{
				waves: [][]string{{"y1", "y2", "y3"}},
				blocked: []Blocked{
					{ID: "t4", By: []string{"t1"}}, {ID: "t3", By: []string{"t4"}},
					{ID: "t2", By: []string{"t3"}}, {ID: "t1", By: []string{"t2"}},
					{ID: "u", By: []string{"t2"}}, {ID: "v", By: []string{"u"}},
				},
				cycles: [][]string{{"t1", "t2", "t3", "t4", "t1"}},
				weak:   []Edge{{From: "t3", To: "t4"}},
			},
		},
		{
			name: "two disjoint cycles",
			items: []Item{
				it("q", "p"), it("p", "q"), it("c", "a"), it("b", "c"), it("a", "b"), it("z"),
			},
			want: want{
				waves: [][]string{{"z"}},
				blocked: []Blocked{
					{ID: "q", By: []string{"p"}}, {ID: "p", By: []string{"q"}}, {ID: "c", By: []string{"a"}},
					{ID: "b", By: []string{"c"}}, {ID: "a", By: []string{"b"}},
				},
				cycles: [][]string{{"a", "b", "c", "a"}, {"p", "q", "p"}},
				weak:   []Edge{{From: "a", To: "b"}, {From: "p", To: "q"}},
			},
		},
		{
			name: "larger SCC reports a cycle through every member",
			items: []Item{
				it("a", "b", "c"), it("b", "a", "c"), it("c", "a"),
			},
			want: want{
				waves: [][]string{},
				blocked: []Blocked{
					{ID: "a", By: []string{"b", "c"}}, {ID: "b", By: []string{"a", "c"}}, {ID: "c", By: []string{"a"}},
				},
				cycles: [][]string{{"a", "b", "c", "a"}},
				weak:   []Edge{{From: "c", To: "a"}},
			},
		},
		{
			name:  "figure eight SCC reports one simple cycle",
			items: []Item{it("a", "b", "c"), it("b", "a"), it("c", "a")},
			want: want{
				blocked: []Blocked{
					{ID: "a", By: []string{"b", "c"}}, {ID: "b", By: []string{"a"}}, {ID: "c", By: []string{"a"}},
				},
				cycles: [][]string{{"a", "b", "a"}},
				weak:   []Edge{{From: "b", To: "a"}},
			},
		},
		{
			name:  "completed item breaks a would-be cycle",
			items: []Item{it("a", "b"), it("b", "c"), done("c", "a")},
			want:  want{waves: [][]string{{"b"}, {"a"}}, completed: []string{"c"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Compute(tc.items, tc.maxParallel)
			w := tc.want
			if w.waveOf == nil {
				w.waveOf = map[string]int{}
				for k, wave := range w.waves {
					for _, id := range wave {
						w.waveOf[id] = k + 1
					}
				}
				w.waveCount = len(w.waves)
			}
			check(t, "Waves", got.Waves, orEmpty(w.waves))
			check(t, "Completed", got.Completed, orEmpty(w.completed))
			check(t, "Blocked", got.Blocked, orEmpty(w.blocked))
			check(t, "Cycles", got.Cycles, orEmpty(w.cycles))
			check(t, "WeakLinks", got.WeakLinks, orEmpty(w.weak))
			check(t, "WaveOf", got.WaveOf, w.waveOf)
			check(t, "WaveCount", got.WaveCount, w.waveCount)
			// Ready is the first unsplit wave, in wave order.
			ready := []string{}
			for _, wave := range w.waves {
				for _, id := range wave {
					if w.waveOf[id] == 1 {
						ready = append(ready, id)
					}
				}
			}
			check(t, "Ready", got.Ready, ready)
		})
	}
}

// TestReady: what can start now is every item without an unfinished
// blocker — the whole first wave however --max-parallel splits it, started
// items included, completed and cycle-blocked ones not.
func TestReady(t *testing.T) {
	tests := []struct {
		name        string
		items       []Item
		maxParallel int
		want        []string
	}{
		{name: "empty", want: []string{}},
		{name: "all completed", items: []Item{done("a"), done("b", "a")}, want: []string{}},
		{
			name:  "completed blockers free their dependents",
			items: []Item{done("a"), it("b", "a"), it("c", "b"), it("d")},
			want:  []string{"b", "d"},
		},
		{
			name:        "split first wave stays whole",
			items:       []Item{it("a"), it("b"), it("c"), prio("high", "d"), it("e", "a")},
			maxParallel: 2,
			want:        []string{"d", "a", "b", "c"},
		},
		{
			name:  "in progress is ready, its dependents are not",
			items: []Item{with(it("a"), "in_progress", ""), it("b", "a")},
			want:  []string{"a"},
		},
		{
			name:  "only a cycle",
			items: []Item{it("a", "b"), it("b", "a"), it("c", "a")},
			want:  []string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check(t, "Ready", Compute(tc.items, tc.maxParallel).Ready, tc.want)
		})
	}
}

// orEmpty turns an omitted expectation into the non-nil empty slice Compute returns.
func orEmpty[S ~[]E, E any](s S) S {
	if s == nil {
		return S{}
	}
	return s
}

func check[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %#v\n want %#v", what, got, want)
	}
}

// TestComputeOrderIndependent: shuffling the input changes only the
// input-ordered lists (Completed, Blocked), never the plan itself.
func TestComputeOrderIndependent(t *testing.T) {
	items := []Item{
		prio("high", "a"), it("b", "a"), it("c", "a"), it("d", "b", "c"), done("e"),
		it("f", "g"), it("g", "h"), it("h", "f"), it("i", "h"), it("j"), prio("low", "k", "j"),
	}
	base := Compute(items, 2)
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		shuffled := append([]Item(nil), items...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		got := Compute(shuffled, 2)
		check(t, "Waves", got.Waves, base.Waves)
		check(t, "Cycles", got.Cycles, base.Cycles)
		check(t, "WeakLinks", got.WeakLinks, base.WeakLinks)
		check(t, "WaveOf", got.WaveOf, base.WaveOf)
		check(t, "Ready", got.Ready, base.Ready)
	}
}

// TestComputeLarge runs graphs deep and wide enough that recursion or
// quadratic work would show: no stack overflow, everything accounted for.
func TestComputeLarge(t *testing.T) {
	const n = 10_000
	id := func(i int) string { return fmt.Sprintf("t%05d", i) }
	r := rand.New(rand.NewPCG(42, 7))

	chain := make([]Item, n)
	for i := range n {
		chain[i] = it(id(i))
		if i > 0 {
			chain[i].BlockedBy = []string{id(i - 1)}
		}
	}
	// Random DAG: edges only point at lower indices; input order shuffled.
	dag := make([]Item, n)
	for i := range n {
		dag[i] = it(id(i))
		for range r.IntN(4) {
			if i > 0 {
				dag[i].BlockedBy = append(dag[i].BlockedBy, id(r.IntN(i)))
			}
		}
		dag[i].Priority = []string{"", "low", "medium", "high", "critical"}[r.IntN(5)]
	}
	r.Shuffle(n, func(i, j int) { dag[i], dag[j] = dag[j], dag[i] })
	// One cycle through every item, plus a dependent: Tarjan and the cycle walk at depth n.
	ring := make([]Item, n, n+1)
	for i := range n {
		ring[i] = it(id(i), id((i+1)%n))
	}
	ring = append(ring, it("z", id(0)))

	tests := []struct {
		name      string
		items     []Item
		waveCount int // -1: only check consistency
		cycleLen  int // 0: expect everything scheduled
	}{
		{name: "10k chain", items: chain, waveCount: n},
		{name: "10k random DAG", items: dag, waveCount: -1},
		{name: "10k ring", items: ring, waveCount: 0, cycleLen: n + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const maxParallel = 7
			p := Compute(tc.items, maxParallel)
			if tc.waveCount >= 0 && p.WaveCount != tc.waveCount {
				t.Errorf("WaveCount = %d, want %d", p.WaveCount, tc.waveCount)
			}
			if tc.cycleLen == 0 {
				if len(p.WaveOf) != len(tc.items) || len(p.Blocked) != 0 || len(p.Cycles) != 0 {
					t.Fatalf("scheduled %d of %d; blocked %d, cycles %d",
						len(p.WaveOf), len(tc.items), len(p.Blocked), len(p.Cycles))
				}
			} else {
				if len(p.Cycles) != 1 || len(p.Cycles[0]) != tc.cycleLen || len(p.Blocked) != len(tc.items) {
					t.Fatalf("cycles %d (first len %d), blocked %d", len(p.Cycles), len(p.Cycles[0]), len(p.Blocked))
				}
			}
			byID := map[string]Item{}
			for _, x := range tc.items {
				byID[x.ID] = x
			}
			seen := 0
			for _, wave := range p.Waves {
				if len(wave) == 0 || len(wave) > maxParallel {
					t.Fatalf("sub-wave of %d items", len(wave))
				}
				seen += len(wave)
			}
			if seen != len(p.WaveOf) {
				t.Fatalf("waves hold %d ids, WaveOf %d", seen, len(p.WaveOf))
			}
			// Each item sits exactly one wave after its latest blocker.
			for id, k := range p.WaveOf {
				latest := 0
				for _, b := range byID[id].BlockedBy {
					latest = max(latest, p.WaveOf[b])
				}
				if k != latest+1 {
					t.Fatalf("%s in wave %d, latest blocker in wave %d", id, k, latest)
				}
			}
		})
	}
}

func TestPlanJSON(t *testing.T) {
	tests := []struct {
		name  string
		items []Item
		want  string
	}{
		{
			name: "empty slices are [] not null",
			want: `{"waves":[],"completed":[],"blocked":[],"cycles":[],"weakLinks":[],"broken":[],"ready":[],"waits":[]}`,
		},
		{
			name:  "populated",
			items: []Item{done("a"), it("b", "a"), it("c", "d"), it("d", "c")},
			want: `{"waves":[["b"]],"completed":["a"],` +
				`"blocked":[{"id":"c","by":["d"]},{"id":"d","by":["c"]}],` +
				`"cycles":[["c","d","c"]],"weakLinks":[{"from":"c","to":"d"}],"broken":[],"ready":["b"],"waits":[]}`,
		},
		{
			// A broken item is never ready, even completed, and holds back
			// what it blocks; it is listed apart with its finding.
			name: "broken",
			items: []Item{{ID: "a", Status: "completed", Broken: "a.json:1:1: bad [json-syntax]"},
				it("b", "a"), it("c"), {ID: "d", Status: "pending", Broken: "d.json:2:3: worse [schema]"}},
			want: `{"waves":[["c"]],"completed":[],"blocked":[{"id":"b","by":["a"]}],"cycles":[],"weakLinks":[],` +
				`"broken":[{"id":"a","problem":"a.json:1:1: bad [json-syntax]"},{"id":"d","problem":"d.json:2:3: worse [schema]"}],"ready":["c"],"waits":[]}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(Compute(tc.items, 0))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
		})
	}
}

func TestLetters(t *testing.T) {
	for k, want := range map[int]string{0: "a", 1: "b", 25: "z", 26: "aa", 27: "ab", 51: "az", 52: "ba", 701: "zz", 702: "aaa"} {
		if got := letters(k); got != want {
			t.Errorf("letters(%d) = %q, want %q", k, got, want)
		}
	}
}
