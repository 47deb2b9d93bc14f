package plan

import "cmp"

// StateBroken is the state of an item whose file cannot be trusted.
const StateBroken = "broken"

// States returns each item's state as derived from the item alone:
// "broken" for a broken item, else its status ("pending" when the status
// is not one of pending, in_progress, completed — as Compute treats it).
// It is what WriteMermaid, WriteDot and CriticalPath use for an item the
// caller's states map does not name; a caller with a better source (the
// epic runner's per-story run states) passes that map instead.
func States(items []Item) map[string]string {
	out := make(map[string]string, len(items))
	for _, it := range items {
		if _, dup := out[it.ID]; !dup {
			out[it.ID] = derivedState(it)
		}
	}
	return out
}

func derivedState(it Item) string {
	switch {
	case it.Broken != "":
		return StateBroken
	case it.Status == "in_progress", it.Status == "completed":
		return it.Status
	}
	return "pending"
}

// CriticalPath is the longest chain, by number of items, of items not yet
// completed, each blocked by the one before it: the ids from the first to
// do to the last. An item is completed when its state (states[id], else
// derived as States does) is "completed". Items on a dependency cycle are
// never on it (the chain would not end); items behind a cycle or a broken
// item may be, since they are work still to do. Among chains of equal
// length the one whose first item comes first in plan's order (waves,
// then the unplanned items in input order) wins, and so on at every step.
// Empty when nothing is left to do.
func CriticalPath(items []Item, states map[string]string) []string {
	d := newDrawing(items, states)
	return d.g.names(d.critical)
}

// drawing is what WriteMermaid and WriteDot draw: every item as a node with
// its state, every blocker as an edge, the cycles' edges and the critical
// path marked.
type drawing struct {
	g      *graph // over the items with the states' notion of completed
	states []string
	// edges: blocker → dependent over known ids (self-references too), for
	// each dependent in input order, its blockers in file order, each once.
	edges    []drawEdge
	critical []int  // the critical path, node indexes in order
	onPath   []bool // by node: on the critical path
}

type drawEdge struct {
	from, to        int // from blocks to
	critical, cycle bool
}

func newDrawing(items []Item, states map[string]string) *drawing {
	// Compute's notion of done must be the states', so a story the runner
	// saw completed is off the path even before its tasks say so.
	stateOf := States(items)
	for id, st := range states {
		if _, ok := stateOf[id]; ok {
			stateOf[id] = st
		}
	}
	eff := make([]Item, len(items))
	for i, it := range items {
		it.Status = "pending"
		if stateOf[it.ID] == "completed" {
			it.Status = "completed"
		}
		eff[i] = it
	}
	g := newGraph(eff)
	n := len(g.ids)
	d := &drawing{g: g, states: make([]string, n)}
	for v, id := range g.ids {
		d.states[v] = stateOf[id]
	}

	// Cycles as plan sees them: strongly connected components of the
	// unfinished items over their unfinished blockers.
	open := make([]bool, n)
	for v := range n {
		open[v] = !g.done[v]
	}
	compOf := make([]int, n)
	inCycle := make([]bool, n)
	for k, c := range g.sccs(open) {
		for _, v := range c {
			compOf[v] = k
			inCycle[v] = len(c) > 1
		}
	}
	d.critical = g.criticalPath(inCycle)
	d.onPath = make([]bool, n)
	next := make(map[int]int, len(d.critical))
	for i, v := range d.critical {
		d.onPath[v] = true
		if i > 0 {
			next[d.critical[i-1]] = v
		}
	}

	for v, it := range g.items {
		seen := map[int]bool{}
		for _, id := range it.BlockedBy {
			w, ok := g.index[id]
			if !ok || seen[w] {
				continue
			}
			seen[w] = true
			e := drawEdge{from: w, to: v}
			if open[v] && open[w] {
				e.cycle = w == v || inCycle[v] && compOf[v] == compOf[w]
			}
			if to, ok := next[w]; ok && to == v {
				e.critical = true
			}
			d.edges = append(d.edges, e)
		}
	}
	return d
}

// criticalPath is the longest chain of unfinished items outside cycles
// (see CriticalPath), as node indexes.
func (g *graph) criticalPath(inCycle []bool) []int {
	n := len(g.ids)
	in := make([]bool, n)
	for v := range n {
		in[v] = !g.done[v] && !inCycle[v]
	}
	// Plan's order: the waves in order, then whatever no wave holds.
	rank := make([]int, n)
	for v := range rank {
		rank[v] = -1
	}
	r := 0
	for _, wave := range g.levels() {
		for _, v := range wave {
			rank[v] = r
			r++
		}
	}
	for v := range n {
		if rank[v] < 0 {
			rank[v] = r
			r++
		}
	}
	// Without cycle members the unfinished graph is acyclic: Kahn's order
	// over it, then each item's longest chain of dependents, from the end.
	pending := make([]int, n)
	var order, queue []int
	for v := range n {
		if !in[v] {
			continue
		}
		for _, w := range g.deps[v] {
			if in[w] {
				pending[v]++
			}
		}
		if pending[v] == 0 {
			queue = append(queue, v)
		}
	}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		order = append(order, v)
		for _, u := range g.dependents[v] {
			if in[u] {
				if pending[u]--; pending[u] == 0 {
					queue = append(queue, u)
				}
			}
		}
	}
	length := make([]int, n)
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		length[v] = 1
		for _, u := range g.dependents[v] {
			if in[u] {
				length[v] = max(length[v], length[u]+1)
			}
		}
	}
	better := func(a, b int) bool { // a before b: longer chain, then plan's order
		return cmp.Or(cmp.Compare(length[b], length[a]), cmp.Compare(rank[a], rank[b])) < 0
	}
	best := -1
	for _, v := range order {
		if best < 0 || better(v, best) {
			best = v
		}
	}
	var path []int
	for v := best; v >= 0; {
		path = append(path, v)
		next := -1
		for _, u := range g.dependents[v] {
			if in[u] && length[u] == length[v]-1 && (next < 0 || rank[u] < rank[next]) {
				next = u
			}
		}
		v = next
	}
	return path
}
