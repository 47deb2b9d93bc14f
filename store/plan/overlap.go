package plan

import (
	"fmt"
	"slices"

	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/store/glob"
)

// Conflicts foreseen (docs/landing.md#conflicts-foreseen): two items whose
// paths overlap (glob.Overlap) never run at once; the later in plan order
// waits for the earlier to end. It is an order, not a dependency: no edge
// of the graph, no wave moves. Two items the graph already orders (one
// blocks the other, directly or not) need no wait.

// Wait is an item that waits for another because their paths overlap:
// ID's glob Glob and For's glob ForGlob can match the same path.
type Wait struct {
	ID      string `json:"id"`
	For     string `json:"for"`
	Glob    string `json:"glob"`
	ForGlob string `json:"forGlob"`
}

// Why says what the two touch: "both touch api/**", or "both touch
// api/users.go (auth: api/**)" when their globs differ (terminal-safe).
func (w Wait) Why() string {
	if w.Glob == w.ForGlob {
		return "both touch " + termtext.Escape(w.Glob)
	}
	return fmt.Sprintf("both touch %s (%s: %s)", termtext.Escape(w.Glob), termtext.Escape(w.For), termtext.Escape(w.ForGlob))
}

// Order is plan order regardless of progress: the waves of every item as
// if none were done (by dependency wave, then priority, then what it
// unblocks, then id). Broken items and items in or behind a cycle are not
// in it. Overlap waits go from later to earlier in it, so they never make
// a cycle with the graph, and it stays the same as items complete.
func Order(items []Item) []string {
	all := make([]Item, len(items))
	for i, it := range items {
		all[i] = it
		all[i].Status = ""
	}
	g := newGraph(all)
	var out []string
	for _, w := range g.levels() {
		out = append(out, g.names(w)...)
	}
	return out
}

// Overlaps finds, for every pair of items with overlapping paths that the
// graph does not already order, the later one's wait for the earlier, in
// plan order (Order) of the waiting item, then of what it waits for. Done
// items are left out when skipDone: they run no more. Pairs of one epic are
// few (a few hundred stories); each pair's globs are compiled once.
func Overlaps(items []Item, skipDone bool) []Wait {
	if !slices.ContainsFunc(items, func(it Item) bool { return len(it.Paths) > 0 }) {
		return []Wait{}
	}
	order := Order(items)
	all := make([]Item, len(items))
	for i, it := range items {
		all[i] = it
		all[i].Status = ""
	}
	g := newGraph(all)
	done := map[string]bool{}
	for _, it := range items {
		if _, seen := done[it.ID]; !seen {
			done[it.ID] = it.Status == "completed"
		}
	}
	type entry struct {
		v   int
		pat []glob.Pattern
	}
	var es []entry
	for _, id := range order {
		v := g.index[id]
		it := g.items[v]
		if len(it.Paths) == 0 || skipDone && done[id] {
			continue
		}
		pats := make([]glob.Pattern, len(it.Paths))
		for k, p := range it.Paths {
			pats[k] = glob.Compile(p)
		}
		es = append(es, entry{v, pats})
	}
	waits := []Wait{}
	anc := map[int][]bool{}
	for b := range es {
		for a := range b {
			pa, pb := firstOverlap(es[a].pat, es[b].pat)
			if pa < 0 {
				continue
			}
			if anc[es[b].v] == nil {
				anc[es[b].v] = g.ancestors(es[b].v)
			}
			if anc[es[b].v][es[a].v] {
				continue // already after it
			}
			waits = append(waits, Wait{ID: g.ids[es[b].v], For: g.ids[es[a].v], Glob: es[b].pat[pb].Glob, ForGlob: es[a].pat[pa].Glob})
		}
	}
	return waits
}

// firstOverlap is the first pair of globs, one of each, that overlap; -1
// when none does.
func firstOverlap(a, b []glob.Pattern) (int, int) {
	for i := range a {
		for j := range b {
			if a[i].Overlaps(b[j]) {
				return i, j
			}
		}
	}
	return -1, -1
}

// ancestors marks every item v waits for through the graph.
func (g *graph) ancestors(v int) []bool {
	seen := make([]bool, len(g.ids))
	stack := []int{v}
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range g.deps[u] {
			if !seen[w] {
				seen[w] = true
				stack = append(stack, w)
			}
		}
	}
	return seen
}
