// Package plan owns the execution plan of a SAGA story's tasks or an epic's
// child stories: the dependency waves, the order within a wave, the
// --max-parallel split, and the report of what can never run (dependency
// cycles, the weak link of each, and the items stuck behind them); and its
// drawing: the dependency graph as Mermaid or Graphviz DOT, each item with
// its state, the critical path (the longest chain of work left) marked.
//
// It works on plain []Item values and knows nothing about files: the CLI
// and the language server convert their own data before calling Compute.
// Components, the strongly connected components of a graph given by
// positions, is the one implementation of Tarjan's algorithm: the checker
// finds cycles with it too.
package plan

import (
	"cmp"
	"slices"
)

// DefaultMaxParallel is the sub-wave size used when the caller passes <= 0.
const DefaultMaxParallel = 5

// Item is one task of a story, or one child story of an epic.
type Item struct {
	ID        string
	Subject   string   // task subject or story title (for text output)
	Status    string   // "pending", "in_progress", "completed" (anything else is treated as pending)
	Priority  string   // "critical","high","medium","low" or "" (none)
	BlockedBy []string // ids; may name unknown ids, itself, or duplicates — tolerate them
	// Broken says why the item cannot be trusted (its file is empty,
	// unparsable or schema-invalid: the finding, as `check` prints it); ""
	// when it is fine. A broken item is never scheduled and holds back
	// whatever it blocks.
	Broken string
	// Paths are the globs of the files the item expects to touch (an
	// epic's story: its tasks' "paths"); items whose paths overlap wait
	// for one another (Overlaps).
	Paths []string
}

// Broken is an item whose file cannot be trusted, with the finding.
type Broken struct {
	ID      string `json:"id"`
	Problem string `json:"problem"`
}

// Blocked is an item that can never be scheduled, with the unscheduled
// blockers that hold it back.
type Blocked struct {
	ID string   `json:"id"`
	By []string `json:"by"`
}

// Edge is a dependency: From is blocked by To (From.blockedBy contains To).
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Plan is the result of Compute. Slices are never nil so that JSON output
// shows [] rather than null.
type Plan struct {
	Waves     [][]string `json:"waves"`     // after --max-parallel splitting
	Completed []string   `json:"completed"` // input order
	Blocked   []Blocked  `json:"blocked"`   // input order
	Cycles    [][]string `json:"cycles"`    // each a closed path ["a","b","c","a"]
	WeakLinks []Edge     `json:"weakLinks"` // one per cycle, same order: the edge to remove
	Broken    []Broken   `json:"broken"`    // input order: items whose file must be fixed first
	// Ready is what can start now: every item of the first (unsplit) wave —
	// not completed, no unfinished blocker — in wave order, however
	// --max-parallel split it. In-progress items are included (a crashed or
	// stopped run can be resumed); ask the worker state to tell them apart.
	Ready []string `json:"ready"`
	// Waits are the items that wait for another because their paths
	// overlap (Overlaps), completed ones left out.
	Waits []Wait `json:"waits"`
	// Unsplit wave number (1-based) of each planned id, for "wave n/m" in
	// the editor; and the unsplit wave count.
	WaveOf    map[string]int `json:"-"`
	WaveCount int            `json:"-"`
}

// Compute plans items into waves. maxParallel <= 0 means DefaultMaxParallel.
//
// If two items share an id, the first one wins and later ones are ignored;
// the checker reports duplicates, the plan only has to stay well defined.
func Compute(items []Item, maxParallel int) Plan {
	if maxParallel <= 0 {
		maxParallel = DefaultMaxParallel
	}
	g := newGraph(items)
	n := len(g.ids)
	p := Plan{
		Waves:     [][]string{},
		Completed: []string{},
		Blocked:   []Blocked{},
		Cycles:    [][]string{},
		WeakLinks: []Edge{},
		Broken:    []Broken{},
		Ready:     []string{},
		WaveOf:    map[string]int{},
	}
	for i := range n {
		switch {
		case g.items[i].Broken != "":
			p.Broken = append(p.Broken, Broken{ID: g.ids[i], Problem: g.items[i].Broken})
		case g.done[i]:
			p.Completed = append(p.Completed, g.ids[i])
		}
	}

	scheduled := make([]bool, n)
	levels := g.levels()
	p.WaveCount = len(levels)
	if len(levels) > 0 {
		p.Ready = g.names(levels[0])
	}
	for k, wave := range levels {
		for _, v := range wave {
			scheduled[v] = true
			p.WaveOf[g.ids[v]] = k + 1
		}
		for chunk := range slices.Chunk(wave, maxParallel) {
			p.Waves = append(p.Waves, g.names(chunk))
		}
	}

	// Whatever Kahn's algorithm could not reach sits in a cycle or behind one.
	stuck := make([]bool, n)
	for v := range n {
		stuck[v] = !g.done[v] && !scheduled[v]
	}
	for v := range n {
		if !stuck[v] || g.items[v].Broken != "" {
			continue
		}
		by := []string{}
		for _, w := range g.deps[v] { // already sorted by id
			if stuck[w] {
				by = append(by, g.ids[w])
			}
		}
		p.Blocked = append(p.Blocked, Blocked{ID: g.ids[v], By: by})
	}

	comps := g.sccs(stuck)
	compOf := make([]int, n)
	for v := range compOf {
		compOf[v] = -1
	}
	var cyclic [][]int
	for _, c := range comps {
		// Self-loops are dropped from deps, so only SCCs of size >= 2 are cycles.
		if len(c) < 2 {
			continue
		}
		slices.SortFunc(c, g.byID)
		cyclic = append(cyclic, c)
	}
	// Report cycles in order of their smallest id, which is also where each path starts.
	slices.SortFunc(cyclic, func(a, b []int) int { return g.byID(a[0], b[0]) })
	visited := make([]bool, n)
	for k, c := range cyclic {
		for _, v := range c {
			compOf[v] = k
		}
		path := g.cyclePath(c[0], k, compOf, visited)
		if path == nil {
			continue // unreachable for a true SCC; keep Cycles and WeakLinks aligned regardless
		}
		p.Cycles = append(p.Cycles, g.names(path))
		p.WeakLinks = append(p.WeakLinks, g.weakLink(path))
	}
	p.Waits = Overlaps(items, true)
	return p
}

// graph is the dependency graph over unique item ids, indexed in input order.
type graph struct {
	ids   []string
	items []Item
	index map[string]int
	done  []bool
	// deps[v]: v's unfinished blockers (known, not v, not completed), deduplicated
	// and sorted by id so every traversal is deterministic. Empty for completed items.
	deps [][]int
	// dependents[v]: the non-completed items that have v in deps.
	dependents [][]int
}

func newGraph(items []Item) *graph {
	g := &graph{index: make(map[string]int, len(items))}
	for _, it := range items {
		if _, dup := g.index[it.ID]; dup {
			continue
		}
		g.index[it.ID] = len(g.ids)
		g.ids = append(g.ids, it.ID)
		g.items = append(g.items, it)
		g.done = append(g.done, it.Status == "completed" && it.Broken == "")
	}
	n := len(g.ids)
	g.deps = make([][]int, n)
	g.dependents = make([][]int, n)
	for v, it := range g.items {
		if g.done[v] {
			continue
		}
		var ds []int
		for _, id := range it.BlockedBy {
			w, ok := g.index[id]
			if !ok || w == v || g.done[w] {
				continue
			}
			ds = append(ds, w)
		}
		slices.SortFunc(ds, g.byID)
		ds = slices.Compact(ds)
		g.deps[v] = ds
		for _, w := range ds {
			g.dependents[w] = append(g.dependents[w], v)
		}
	}
	return g
}

func (g *graph) byID(a, b int) int { return cmp.Compare(g.ids[a], g.ids[b]) }

func (g *graph) names(vs []int) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = g.ids[v]
	}
	return out
}

// priorityRank orders critical first and "none" (or anything unrecognised) last.
func priorityRank(p string) int {
	switch p {
	case "critical":
		return 0
	case "high":
		return 1
	case "medium":
		return 2
	case "low":
		return 3
	}
	return 4
}

// order is the within-wave order: priority, then "unblocks most", then id.
func (g *graph) order(a, b int) int {
	return cmp.Or(
		cmp.Compare(priorityRank(g.items[a].Priority), priorityRank(g.items[b].Priority)),
		cmp.Compare(len(g.dependents[b]), len(g.dependents[a])),
		g.byID(a, b),
	)
}

// levels runs Kahn's algorithm one level at a time, so an item lands in the
// wave right after its last unfinished blocker. Each wave comes back sorted.
func (g *graph) levels() [][]int {
	n := len(g.ids)
	pending := make([]int, n)
	var cur []int
	for v := range n {
		if g.done[v] {
			continue
		}
		pending[v] = len(g.deps[v])
		if g.items[v].Broken != "" {
			pending[v]++ // never reaches 0: a broken item is not scheduled
		}
		if pending[v] == 0 {
			cur = append(cur, v)
		}
	}
	var out [][]int
	for len(cur) > 0 {
		slices.SortFunc(cur, g.order)
		out = append(out, cur)
		var next []int
		for _, v := range cur {
			for _, d := range g.dependents[v] {
				pending[d]--
				if pending[d] == 0 {
					next = append(next, d)
				}
			}
		}
		cur = next
	}
	return out
}

// sccs returns the strongly connected components of the subgraph induced by
// in, following deps edges.
func (g *graph) sccs(in []bool) [][]int {
	return Components(len(g.ids), func(v int) []int { return g.deps[v] }, func(v int) bool { return in[v] }, nil)
}

// Components returns the strongly connected components of the graph over
// 0…n-1 whose edges leave v towards edges(v), restricted to the vertices in
// admits (every vertex when nil), exploring from roots (every admitted
// vertex, in order, when nil). Tarjan's algorithm with an explicit call
// stack, so a 10,000-long chain cannot overflow the goroutine stack; each
// vertex and edge is visited once.
func Components[T ~int | ~int32](n int, edges func(v int) []T, in func(v int) bool, roots []T) [][]T {
	index := make([]int32, n) // 0 = unvisited, else discovery order + 1
	low := make([]int32, n)
	onStack := make([]bool, n)
	var stack []T
	type frame struct {
		v    T
		next int
	}
	var calls []frame
	var counter int32
	var out [][]T
	admitted := func(v T) bool { return in == nil || in(int(v)) }

	visit := func(v T) {
		counter++
		index[v], low[v] = counter, counter
		stack = append(stack, v)
		onStack[v] = true
		calls = append(calls, frame{v: v})
	}
	if roots == nil {
		roots = make([]T, n)
		for v := range roots {
			roots[v] = T(v)
		}
	}
	for _, root := range roots {
		if !admitted(root) || index[root] != 0 {
			continue
		}
		visit(root)
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			v := f.v
			if es := edges(int(v)); f.next < len(es) {
				w := es[f.next]
				f.next++ // before visit: appending may move calls
				switch {
				case !admitted(w):
				case index[w] == 0:
					visit(w)
				case onStack[w]:
					low[v] = min(low[v], index[w])
				}
				continue
			}
			if low[v] == index[v] {
				var comp []T
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp = append(comp, w)
					if w == v {
						break
					}
				}
				out = append(out, comp)
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				u := calls[len(calls)-1].v
				low[u] = min(low[u], low[v])
			}
		}
	}
	return out
}

// cyclePath finds a simple cycle through start inside component comp, as a
// closed path [start, ..., start]. The DFS visits neighbours in id order and
// goes as deep as it can before closing back to start, so a simple cycle is
// reported whole and a larger SCC yields a long cycle rather than the first
// two-node loop. Every node is entered at most once: O(V+E) per component.
// In a strongly connected component some member blocks start and is reachable
// from it, so the search always closes; nil is only a guard.
func (g *graph) cyclePath(start, comp int, compOf []int, visited []bool) []int {
	type frame struct {
		v, next int
		closes  bool // v is blocked by start
	}
	visited[start] = true
	calls := []frame{{v: start}}
	for len(calls) > 0 {
		f := &calls[len(calls)-1]
		deps := g.deps[f.v]
		descended := false
		for f.next < len(deps) {
			w := deps[f.next]
			f.next++
			if compOf[w] != comp {
				continue
			}
			if w == start {
				f.closes = true
				continue
			}
			if !visited[w] {
				visited[w] = true
				calls = append(calls, frame{v: w})
				descended = true
				break
			}
		}
		if descended {
			continue
		}
		if f.closes && f.v != start {
			path := make([]int, 0, len(calls)+1)
			for _, c := range calls {
				path = append(path, c.v)
			}
			return append(path, start)
		}
		calls = calls[:len(calls)-1]
	}
	return nil
}

// weakLink is the cycle edge leaving the member with the fewest unfinished
// blockers (ties: smallest id): removing it frees the member closest to runnable.
func (g *graph) weakLink(path []int) Edge {
	best := 0
	for i := 1; i < len(path)-1; i++ {
		v, b := path[i], path[best]
		if d := cmp.Compare(len(g.deps[v]), len(g.deps[b])); d < 0 || d == 0 && g.byID(v, b) < 0 {
			best = i
		}
	}
	return Edge{From: g.ids[path[best]], To: g.ids[path[best+1]]}
}
