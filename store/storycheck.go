package store

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/saga-ai/saga-lsp/store/plan"
)

// The task rules of one story copy, in time linear in its tasks and their
// blockedBy entries, and an edit of a few tasks in time proportional to the
// edit plus one pass over the dependency graph: an edit in a story of
// 100,000 tasks gets its diagnostics without waiting (docs/architecture.md#budgets).
// Items are addressed by position (Story.Tasks is sorted by id, and
// Story.index maps an id to its position), the dependency graph is two flat
// arrays, and a dependency cycle is only worked out in full for the members
// of a cycle.

// storyCheck is what checking one copy of a story found, kept so that the
// next version of the copy — the same tasks, a few of them edited — is
// checked in time proportional to the edit plus one pass over the graph.
type storyCheck struct {
	g       depGraph
	perTask map[int32][]Diagnostic // findings of single tasks (self, unknown, status) by position; sparse, nil when none
	acyclic bool
	cycles  cycles                  // when not acyclic
	diags   map[string][]Diagnostic // everything, by file
}

// setTask records task i's findings. The map is made on the first: most
// stories have none, and an empty map for each of 8,000 stories is 1.3 MB
// (docs/architecture.md#memory-at-88000-files).
func (c *storyCheck) setTask(i int32, ds []Diagnostic) {
	if c.perTask == nil {
		c.perTask = map[int32][]Diagnostic{}
	}
	c.perTask[i] = ds
}

// checkStory checks one copy of a story: its files, its tasks' ids and
// dependencies, cycles, and status consistency. prev and prevCheck, when
// set, are an earlier version of the copy and its check: if the new version
// has the same tasks (only their files changed), only the changed tasks and
// those they block are checked again.
func checkStory(s, prev *Story, prevCheck *storyCheck) *storyCheck {
	tasks := s.Tasks
	var changed []int32
	incremental := prev != nil && prevCheck != nil && len(prev.Tasks) == len(tasks) && sameIndex(prev, s)
	if incremental {
		for i := range tasks {
			if tasks[i] != prev.Tasks[i] {
				changed = append(changed, int32(i))
			}
		}
		incremental = len(changed) <= len(tasks)/8+1
	}
	c := &storyCheck{}
	sg := &suggester{}
	item := func(i int) (string, string, []Ref, *File) {
		return tasks[i].ID, tasks[i].Status, tasks[i].BlockedBy, tasks[i].File
	}
	if !incremental {
		c.g = taskGraph(s, nil, depGraph{})
		for i := range tasks {
			if ds := taskFindings(s, c.g, i, sg); len(ds) > 0 {
				c.setTask(int32(i), ds)
			}
		}
		if c.acyclic = c.g.acyclic(); !c.acyclic {
			c.cycles = findCycles(c.g, nil, item)
		}
	} else {
		c.g = taskGraph(s, changed, prevCheck.g)
		c.perTask = maps.Clone(prevCheck.perTask)
		// A task's status findings depend on its blockers' statuses.
		again := slices.Clone(changed)
		var statusChanged []int32
		grew, edgesChanged := false, false
		for _, i := range changed {
			if tasks[i].Status != prev.Tasks[i].Status {
				statusChanged = append(statusChanged, i)
			}
			now, before := c.g.blockers(int(i)), prevCheck.g.blockers(int(i))
			grew = grew || !subset(now, before)
			edgesChanged = edgesChanged || !slices.Equal(now, before)
		}
		if !edgesChanged {
			c.g = prevCheck.g // the same graph: share it
		}
		if len(statusChanged) > 0 {
			for i := range tasks {
				for _, j := range c.g.blockers(i) {
					if slices.Contains(statusChanged, j) {
						again = append(again, int32(i))
						break
					}
				}
			}
		}
		for _, i := range again {
			delete(c.perTask, i)
			if ds := taskFindings(s, c.g, int(i), sg); len(ds) > 0 {
				c.setTask(i, ds)
			}
		}
		// Without a cycle before, a new one goes through a changed task and
		// one of its new dependencies: look there only.
		var newCycle bool
		if prevCheck.acyclic && grew {
			for _, i := range changed {
				for _, j := range c.g.blockers(int(i)) {
					if !slices.Contains(prevCheck.g.blockers(int(i)), j) && c.g.reaches(j, i) {
						newCycle = true
					}
				}
			}
		}
		switch {
		case !edgesChanged:
			c.acyclic = prevCheck.acyclic
		case prevCheck.acyclic:
			c.acyclic = !newCycle
		default:
			c.acyclic = c.g.acyclic()
		}
		switch {
		case c.acyclic:
		case !edgesChanged && len(statusChanged) == 0:
			c.cycles = prevCheck.cycles // the same cycles, the same weakest links
		case prevCheck.acyclic:
			c.cycles = findCycles(c.g, changed, item)
		default:
			c.cycles = findCycles(c.g, nil, item)
		}
	}
	var out []Diagnostic
	add := func(f *File, code Code, start, end int, msg string, fix *Fix) {
		out = append(out, newDiagnostic(f, code, start, end, msg, fix))
	}
	storyFindings(s, add)
	for _, ds := range c.perTask {
		out = append(out, ds...)
	}
	out = append(out, duplicateTaskIDs(s)...)
	if !c.acyclic {
		cycleDiags(c.cycles, item, "task", add)
	}
	c.diags = byFile(out)
	return c
}

// sameIndex tells whether two versions of a copy hold the same task ids at
// the same positions (editCopy keeps the index when no task came or went).
func sameIndex(a, b *Story) bool {
	if a.index != nil || b.index != nil {
		return a.index == b.index
	}
	for i := range a.Tasks {
		if a.Tasks[i].ID != b.Tasks[i].ID {
			return false
		}
	}
	return true
}

func subset(a, b []int32) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// taskGraph resolves the tasks' blockedBy entries to positions. With
// changed set, only those rows are resolved again; the others are copied
// from prev.
func taskGraph(s *Story, changed []int32, prev depGraph) depGraph {
	g := depGraph{off: make([]int32, len(s.Tasks)+1)}
	if changed != nil {
		g.to = make([]int32, 0, len(prev.to)+8)
	}
	for i, t := range s.Tasks {
		if changed != nil && !slices.Contains(changed, int32(i)) {
			g.to = append(g.to, prev.blockers(i)...)
		} else {
			for _, r := range t.BlockedBy {
				if j := s.taskPos(r.ID); j >= 0 && r.ID != t.ID {
					g.to = append(g.to, int32(j))
				}
			}
		}
		g.off[i+1] = int32(len(g.to))
	}
	return g
}

// storyFindings: the story's own files — story.json present, tasks present,
// its status consistent with theirs.
func storyFindings(s *Story, add func(f *File, code Code, start, end int, msg string, fix *Fix)) {
	if s.File == nil && len(s.Tasks) > 0 {
		f := s.Tasks[0].File
		st, en := anchor(f, "id")
		msg := fmt.Sprintf("story folder %q has no story.json; create it with `saga-lsp new story %s --title …`", s.ID, s.ID)
		if s.InWorktree {
			msg = fmt.Sprintf("the worktree copy %s/ of story %q has no story.json; restore it from the story's branch (git -C %s checkout -- .saga/stories/%s/story.json)",
				s.Dir, s.ID, WorktreeDirRel(s.ID), s.ID)
		}
		add(f, CodeMissingStoryFile, st, en, msg, nil)
	}
	if s.File == nil || s.File.Story == nil {
		return
	}
	if len(s.Tasks) == 0 {
		st, en := anchor(s.File, "id")
		msg := fmt.Sprintf("story %q has no tasks; add one with `saga-lsp new task %s <task-id> --subject …`", s.ID, s.ID)
		if s.InWorktree {
			msg = fmt.Sprintf("story %q has no tasks in its worktree copy %s/", s.ID, s.Dir)
		}
		add(s.File, CodeEmptyStory, st, en, msg, nil)
	}
	if s.Status == StatusCompleted {
		if open := unfinished(s.Tasks); len(open) > 0 {
			st, en := anchor(s.File, "status")
			add(s.File, CodeStatusInconsistent, st, en, fmt.Sprintf(
				"story is marked completed but %d of %d tasks are not: %s", len(open), len(s.Tasks), elide(open, ", ", 20)), nil)
		}
	}
}

// taskFindings: one task's blockedBy entries (itself, unknown ids) and its
// status against its blockers'.
func taskFindings(s *Story, g depGraph, i int, sg *suggester) []Diagnostic {
	t := s.Tasks[i]
	var out []Diagnostic
	for _, r := range t.BlockedBy {
		switch {
		case r.ID == t.ID:
			out = append(out, newDiagnostic(t.File, CodeSelfDependency, r.Node.Start(), r.Node.End(), fmt.Sprintf("task %q cannot be blocked by itself", t.ID), &Fix{Ref: r.ID}))
		case ValidID(r.ID) && s.taskPos(r.ID) < 0: // an invalid id is reported as invalid-id
			out = append(out, newDiagnostic(t.File, CodeUnknownDependency, r.Node.Start(), r.Node.End(), fmt.Sprintf(
				"no task %q in story %q%s", r.ID, s.ID, sg.suggest(r.ID, s.taskIDs)), &Fix{Ref: r.ID}))
		}
	}
	if t.Status != StatusCompleted {
		return out
	}
	var open []string
	for _, j := range g.blockers(i) {
		if b := s.Tasks[j]; b.Status != StatusCompleted && !slices.Contains(open, b.ID) {
			open = append(open, b.ID)
		}
	}
	if len(open) > 0 {
		st, en := anchor(t.File, "status")
		out = append(out, newDiagnostic(t.File, CodeStatusInconsistent, st, en, fmt.Sprintf(
			"task is marked completed but its blocker%s %s %s not", plural(len(open)), strings.Join(open, ", "), isAre(len(open))), nil))
	}
	return out
}

func (s *Story) taskIDs() []string {
	ids := make([]string, len(s.Tasks))
	for i, t := range s.Tasks {
		ids[i] = t.ID
	}
	return ids
}

// duplicateTaskIDs: among tasks whose id values collide, the one whose file
// name matches keeps the id; the others are the duplicates. Only a task
// whose id differs from its file name can collide, so only those are
// grouped.
func duplicateTaskIDs(s *Story) []Diagnostic {
	var out []Diagnostic
	var pending map[string][]*Task // id value naming no file → the tasks claiming it
	var order []string
	for _, t := range s.Tasks {
		v := t.IDValue
		if v == "" || v == t.ID {
			continue
		}
		if j := s.taskPos(v); j >= 0 {
			out = append(out, duplicateID(t, v, s.Tasks[j]))
			continue
		}
		if pending == nil {
			pending = map[string][]*Task{}
		}
		if pending[v] == nil {
			order = append(order, v)
		}
		pending[v] = append(pending[v], t)
	}
	for _, v := range order {
		g := pending[v]
		for _, t := range g[1:] {
			out = append(out, duplicateID(t, v, g[0]))
		}
	}
	return out
}

func duplicateID(t *Task, id string, owner *Task) Diagnostic {
	st, en := anchor(t.File, "id")
	return newDiagnostic(t.File, CodeDuplicateID, st, en, fmt.Sprintf("task id %q is already used by %s", id, owner.File.Rel), &Fix{Want: t.ID})
}

// depGraph is a dependency graph over items 0…n-1: the known blockers of
// item i, self references left out, are to[off[i]:off[i+1]].
type depGraph struct {
	off []int32
	to  []int32
}

func (g depGraph) blockers(i int) []int32 { return g.to[g.off[i]:g.off[i+1]] }

// acyclic reports whether the graph has no cycle (of two or more: self
// references are not edges), by peeling items whose blockers are all peeled
// (Kahn's algorithm).
func (g depGraph) acyclic() bool {
	n := len(g.off) - 1
	if len(g.to) == 0 {
		return true
	}
	// One buffer for the four arrays, on the stack for a story of the usual
	// size: every story is checked when a workspace loads.
	var small [256]int32
	buf := small[:]
	if size := 3*n + 1 + len(g.to); size > len(small) {
		buf = make([]int32, size)
	}
	pending, buf := buf[:n:n], buf[n:]         // unpeeled blockers per item
	blocksOff, buf := buf[:n+1:n+1], buf[n+1:] // reverse edges, as flat arrays too
	blocks, fill := buf[:len(g.to):len(g.to)], buf[len(g.to):len(g.to)+n]
	for _, j := range g.to {
		blocksOff[j+1]++
	}
	for i := range n {
		blocksOff[i+1] += blocksOff[i]
		pending[i] = g.off[i+1] - g.off[i]
	}
	copy(fill, blocksOff[:n])
	for i := range n {
		for _, j := range g.blockers(i) {
			blocks[fill[j]] = int32(i)
			fill[j]++
		}
	}
	queue := fill[:0] // reused: fill is no longer needed
	for i := range n {
		if pending[i] == 0 {
			queue = append(queue, int32(i))
		}
	}
	for k := 0; k < len(queue); k++ {
		j := queue[k]
		for _, i := range blocks[blocksOff[j]:blocksOff[j+1]] {
			if pending[i]--; pending[i] == 0 {
				queue = append(queue, i)
			}
		}
	}
	return len(queue) == n
}

// reaches tells whether target is among from's blockers, transitively.
func (g depGraph) reaches(from, target int32) bool {
	seen := make([]bool, len(g.off)-1)
	stack := []int32{from}
	seen[from] = true
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range g.blockers(int(v)) {
			if w == target {
				return true
			}
			if !seen[w] {
				seen[w] = true
				stack = append(stack, w)
			}
		}
	}
	return false
}

// cycleMembers returns the items on some cycle: those of the strongly
// connected components of two or more items. With roots, only the
// components reachable from them are explored: enough when every cycle goes
// through a root.
func (g depGraph) cycleMembers(roots []int32) []int32 {
	var members []int32
	for _, c := range plan.Components(len(g.off)-1, g.blockers, nil, roots) {
		if len(c) >= 2 {
			members = append(members, c...)
		}
	}
	return members
}

// cycles are the dependency cycles of a graph as plan reports them: each a
// closed path, with its weakest link, and the members' positions.
type cycles struct {
	paths [][]string
	weak  []plan.Edge
	pos   map[string]int32
}

// findCycles works out the cycles of a graph that is not acyclic. plan
// itself gives the paths, run on the members of the cycles only, so `check`
// and `plan` name the same cycles and the same weakest links. item gives an
// item's id, status, blockedBy entries and file.
func findCycles(g depGraph, roots []int32, item func(i int) (id, status string, refs []Ref, f *File)) cycles {
	members := g.cycleMembers(roots)
	structural := make([]plan.Item, len(members))
	c := cycles{pos: make(map[string]int32, len(members))}
	for k, i := range members {
		id, _, refs, _ := item(int(i))
		structural[k] = plan.Item{ID: id, BlockedBy: refIDs(refs)}
		c.pos[id] = i
	}
	c.paths = plan.Compute(structural, 0).Cycles
	for _, cyc := range c.paths {
		c.weak = append(c.weak, weakestLink(g, cyc, c.pos, item))
	}
	return c
}

// cycleDiags reports every blockedBy entry on each cycle, with the cycle in
// the message (its middle elided when long); the weakest link is marked for
// the quick fix. Statuses do not hide a cycle (it is wrong whatever is
// done), but they pick the weakest link the way `plan` does.
func cycleDiags(c cycles, item func(i int) (id, status string, refs []Ref, f *File), what string,
	add func(f *File, code Code, start, end int, msg string, fix *Fix)) {
	for k, cyc := range c.paths {
		weak := c.weak[k]
		path := elide(cyc, " → ", 8)
		long := len(cyc)-1 > 8
		for j := 0; j+1 < len(cyc); j++ {
			from, to := cyc[j], cyc[j+1]
			_, _, refs, f := item(int(c.pos[from]))
			msg := fmt.Sprintf("%s dependency cycle: %s (weakest link: %s → %s)", what, path, weak.From, weak.To)
			if long {
				msg = fmt.Sprintf("%s dependency cycle of %s %ss: %s (this entry: %s → %s; weakest link: %s → %s)",
					what, thousands(len(cyc)-1), what, path, from, to, weak.From, weak.To)
			}
			for _, r := range refs {
				if r.ID == to {
					add(f, CodeDependencyCycle, r.Node.Start(), r.Node.End(), msg, &Fix{Ref: to, Weak: weak.From == from && weak.To == to})
					break
				}
			}
		}
	}
}

// weakestLink is plan's rule: the cycle edge leaving the member with the
// fewest unfinished blockers (ties: the smallest id).
func weakestLink(g depGraph, cyc []string, byID map[string]int32, item func(i int) (string, string, []Ref, *File)) plan.Edge {
	best, bestN := -1, 0
	var seen []int32
	for j := 0; j+1 < len(cyc); j++ {
		seen = seen[:0]
		for _, b := range g.blockers(int(byID[cyc[j]])) {
			if _, status, _, _ := item(int(b)); status != StatusCompleted && !slices.Contains(seen, b) {
				seen = append(seen, b)
			}
		}
		if n := len(seen); best < 0 || n < bestN || (n == bestN && cyc[j] < cyc[best]) {
			best, bestN = j, n
		}
	}
	return plan.Edge{From: cyc[best], To: cyc[best+1]}
}

// elide joins a closed path (or a list) with sep, keeping the first and
// last three of a long one and naming how many were left out:
// "a → b → c → … 9,994 more … → x → y → z → a". limit is the longest list
// shown whole (a path's closing repeat not counted).
func elide(items []string, sep string, limit int) string {
	closed := len(items) > 1 && items[0] == items[len(items)-1]
	n := len(items)
	if closed {
		n--
	}
	if n <= limit {
		return strings.Join(items, sep)
	}
	head, tail := items[:3], items[n-3:n]
	parts := append(append(append([]string{}, head...), "… "+thousands(n-6)+" more …"), tail...)
	if closed {
		parts = append(parts, items[0])
	}
	return strings.Join(parts, sep)
}

// thousands writes n with thousands separators: 9,994.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// suggester proposes the closest known name for mistyped references within
// a budget of comparisons per check, so a story with thousands of unknown
// references among thousands of tasks stays linear.
type suggester struct {
	known []string
	spent int
}

const suggestBudget = 2_000_000

func (sg *suggester) suggest(name string, known func() []string) string {
	if sg.known == nil {
		sg.known = known()
	}
	if sg.spent+len(sg.known) > suggestBudget {
		return ""
	}
	sg.spent += len(sg.known)
	return suggest(name, sg.known)
}
