package store

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/store/plan"
)

// The cross-file rules: per story (its tasks, and the epic it belongs to)
// and per epic (its children). A finding goes on the file holding the
// offending text.

// anchor returns the byte span diagnostics about an object's id go on: the id
// value, else the object's opening brace, else the file start.
func anchor(f *File, key string) (int, int) {
	obj := f.Root()
	if n := obj.Get(key); n != nil {
		return n.Start, n.End
	}
	if obj != nil {
		return obj.Start, obj.Start + 1
	}
	return 0, 0
}

// checkStoryNode checks both copies of a story, and the story's place in
// its epic once: on the main copy, or the worktree copy of a story that
// exists only there.
func (w *Workspace) checkStoryNode(n *storyNode) []Diagnostic {
	var out []Diagnostic
	for _, s := range []*Story{n.main, n.wt} {
		if s != nil {
			out = append(out, checkStory(s)...)
		}
	}
	if m := n.member(); m != nil {
		out = append(out, w.checkMembership(m)...)
	}
	return out
}

// checkMembership: a story naming an epic (by its "epic" field, else by the
// prefix of its canonical name) must be listed by it. A story whose "epic"
// field names an epic absent from this checkout is only told so (upstream
// SAGA often leaves epic files uncommitted on story branches).
func (w *Workspace) checkMembership(s *Story) []Diagnostic {
	epic := s.EpicID()
	if s.File == nil || s.File.Story == nil || epic == "" {
		return nil
	}
	st, en := anchor(s.File, "id")
	e := w.Epic(epic)
	var code Code
	var msg string
	switch {
	case e == nil && s.Epic != "":
		code, msg = CodeAbsentEpic, fmt.Sprintf(
			"story %q names epic %q, which is not in this checkout (%s or %s); its order among the epic's stories is not checked here",
			s.ID, epic, SingleEpicFileRel(epic), EpicFileRel(epic))
	case e == nil:
		code, msg = CodeOrphanStory, fmt.Sprintf(
			"story %q belongs to epic %q by its name, but there is no such epic; create it with `saga-lsp new epic %s --title …` (it lists the stories that name it) or rename the story", s.ID, epic, epic)
	case e.Child(s.ID) == nil:
		code, msg = CodeOrphanStory, fmt.Sprintf(
			"epic %q does not list story %q in its children; add {\"id\": %q, \"blockedBy\": []} to %s", epic, s.ID, s.ID, e.File.Rel)
	default:
		return nil
	}
	return []Diagnostic{newDiagnostic(s.File, code, st, en, msg, nil)}
}

// checkStory checks one copy of a story: its files, its tasks' ids and
// dependencies, cycles, and status consistency.
func checkStory(s *Story) []Diagnostic {
	var out []Diagnostic
	add := func(f *File, code Code, start, end int, msg string, fix *Fix) {
		out = append(out, newDiagnostic(f, code, start, end, msg, fix))
	}
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
	if s.File != nil && s.File.Story != nil {
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
					"story is marked completed but %d of %d tasks are not: %s", len(open), len(s.Tasks), strings.Join(open, ", ")), nil)
			}
		}
	}

	byID := map[string]*Task{}
	for _, t := range s.Tasks {
		byID[t.ID] = t
	}
	// duplicate-id: among tasks whose id values collide, the one whose file name
	// matches keeps the id; the others are the duplicates.
	groups := map[string][]*Task{}
	for _, t := range s.Tasks {
		if t.IDValue != "" {
			groups[t.IDValue] = append(groups[t.IDValue], t)
		}
	}
	for id, g := range groups {
		if len(g) < 2 && (byID[id] == nil || byID[id] == g[0]) {
			continue
		}
		owner := byID[id]
		if owner == nil {
			owner = g[0]
		}
		for _, t := range g {
			if t == owner {
				continue
			}
			st, en := anchor(t.File, "id")
			add(t.File, CodeDuplicateID, st, en, fmt.Sprintf("task id %q is already used by %s", id, owner.File.Rel), &Fix{Want: t.ID})
		}
	}
	for _, t := range s.Tasks {
		for _, r := range t.BlockedBy {
			switch {
			case r.ID == t.ID:
				add(t.File, CodeSelfDependency, r.Node.Start, r.Node.End, fmt.Sprintf("task %q cannot be blocked by itself", t.ID), &Fix{Ref: r.ID})
			case byID[r.ID] == nil && ValidID(r.ID): // an invalid id is reported as invalid-id
				add(t.File, CodeUnknownDependency, r.Node.Start, r.Node.End, fmt.Sprintf(
					"no task %q in story %q%s", r.ID, s.ID, suggest(r.ID, slices.Collect(maps.Keys(byID)))), &Fix{Ref: r.ID})
			}
		}
		if t.Status == StatusCompleted {
			var open []string
			for _, r := range t.BlockedBy {
				if b := byID[r.ID]; b != nil && b != t && b.Status != StatusCompleted && !slices.Contains(open, r.ID) {
					open = append(open, r.ID)
				}
			}
			if len(open) > 0 {
				st, en := anchor(t.File, "status")
				add(t.File, CodeStatusInconsistent, st, en, fmt.Sprintf(
					"task is marked completed but its blocker%s %s %s not", plural(len(open)), strings.Join(open, ", "), isAre(len(open))), nil)
			}
		}
	}
	items := make([]plan.Item, len(s.Tasks))
	for i, t := range s.Tasks {
		items[i] = plan.Item{ID: t.ID, Status: t.Status, BlockedBy: refIDs(t.BlockedBy)}
	}
	cycleDiags(items, func(from string) ([]Ref, *File) {
		t := byID[from]
		return t.BlockedBy, t.File
	}, "task", add)
	return out
}

func (w *Workspace) checkEpic(id string) []Diagnostic {
	var out []Diagnostic
	add := func(f *File, code Code, start, end int, msg string, fix *Fix) {
		out = append(out, newDiagnostic(f, code, start, end, msg, fix))
	}
	n := w.epics[id]
	defs := n.defs
	for _, f := range defs[1:] {
		st, en := anchor(f, "id")
		add(f, CodeDuplicateID, st, en, fmt.Sprintf("epic %q is also defined in %s; keep one of the two files", id, defs[0].Rel), nil)
	}
	e := n.epic
	if e.File == nil || e.File.Epic == nil {
		return out
	}
	f := e.File
	flat := e.Flat()
	first := map[string]*Child{}
	for i := range e.Children {
		c := &e.Children[i]
		if prev := first[c.ID]; prev != nil {
			add(f, CodeDuplicateID, c.Node.Start, c.Node.End, fmt.Sprintf("story %q is already listed in this epic's children", c.ID), nil)
			continue
		}
		first[c.ID] = c
		if !ValidCanonical(c.ID) {
			continue // invalid-id already says what is wrong
		}
		s := w.Story(c.ID)
		if s == nil {
			add(f, CodeUnknownStory, c.Node.Start, c.Node.End, fmt.Sprintf(
				"no story folder .saga/stories/%s/ (nor a copy in its worktree); create it with `saga-lsp new story %s --title … --epic %s`%s",
				c.ID, c.ID, id, suggest(c.ID, w.SortedStoryIDs())), &Fix{Ref: c.ID})
		}
		// The flat dialect: an upstream epic's children are plain story ids,
		// and a story naming the epic in its "epic" field is its child.
		if !strings.HasPrefix(c.ID, id+"--") && !flat && (s == nil || s.Epic != id) {
			add(f, CodeEpicPrefix, c.Node.Start, c.Node.End, fmt.Sprintf(
				"child story %q of epic %q should be named %s--<story> so its name shows where it belongs, or name the epic in the story's \"epic\" field", c.ID, id, id), &Fix{Want: id + "--" + c.ID})
		}
	}
	for i := range e.Children {
		c := &e.Children[i]
		for _, r := range c.BlockedBy {
			switch {
			case r.ID == c.ID:
				add(f, CodeSelfDependency, r.Node.Start, r.Node.End, fmt.Sprintf("story %q cannot be blocked by itself", c.ID), &Fix{Ref: r.ID})
			case first[r.ID] == nil && ValidCanonical(r.ID): // an invalid name is reported as invalid-id
				add(f, CodeUnknownDependency, r.Node.Start, r.Node.End, fmt.Sprintf(
					"%q is not a child of epic %q%s", r.ID, id, suggest(r.ID, slices.Collect(maps.Keys(first)))), &Fix{Ref: r.ID})
			}
		}
	}
	items := make([]plan.Item, 0, len(first))
	for i := range e.Children {
		c := &e.Children[i]
		if first[c.ID] == c {
			it := plan.Item{ID: c.ID, BlockedBy: refIDs(c.BlockedBy)}
			if s := w.Story(c.ID); s != nil {
				it.Status = s.EffectiveStatus()
			}
			items = append(items, it)
		}
	}
	cycleDiags(items, func(from string) ([]Ref, *File) { return first[from].BlockedBy, f }, "story", add)
	return out
}

// cycleDiags reports every blockedBy entry on each dependency cycle, with the
// whole cycle in the message; the weakest link is marked for the quick fix.
// Statuses do not hide a cycle (it is wrong whatever is done), but they pick
// the weakest link the way `plan` does, so both name the same edge.
func cycleDiags(items []plan.Item, entries func(from string) ([]Ref, *File), what string,
	add func(f *File, code Code, start, end int, msg string, fix *Fix)) {
	if acyclic(items) {
		return // the common case: skip building a whole plan
	}
	structural := make([]plan.Item, len(items))
	for i, it := range items {
		structural[i] = plan.Item{ID: it.ID, BlockedBy: it.BlockedBy}
	}
	p := plan.Compute(structural, 0)
	for _, cyc := range p.Cycles {
		weak := weakestLink(cyc, items)
		msg := fmt.Sprintf("%s dependency cycle: %s (weakest link: %s → %s)", what, strings.Join(cyc, " → "), weak.From, weak.To)
		for j := 0; j+1 < len(cyc); j++ {
			from, to := cyc[j], cyc[j+1]
			refs, f := entries(from)
			for _, r := range refs {
				if r.ID == to {
					isWeak := weak.From == from && weak.To == to
					add(f, CodeDependencyCycle, r.Node.Start, r.Node.End, msg, &Fix{Ref: to, Weak: isWeak})
					break
				}
			}
		}
	}
}

// weakestLink is plan's rule: the cycle edge leaving the member with the
// fewest unfinished blockers (ties: the smallest id).
func weakestLink(cyc []string, items []plan.Item) plan.Edge {
	byID := make(map[string]plan.Item, len(items))
	for _, it := range items {
		byID[it.ID] = it
	}
	best, bestN := -1, 0
	for j := 0; j+1 < len(cyc); j++ {
		it := byID[cyc[j]]
		seen := map[string]bool{}
		for _, b := range it.BlockedBy {
			if bi, ok := byID[b]; ok && b != it.ID && bi.Status != StatusCompleted {
				seen[b] = true
			}
		}
		if n := len(seen); best < 0 || n < bestN || (n == bestN && cyc[j] < cyc[best]) {
			best, bestN = j, n
		}
	}
	return plan.Edge{From: cyc[best], To: cyc[best+1]}
}

// acyclic reports whether the blockedBy graph has no cycle of two or more
// (self references and unknown ids are other rules' business), by peeling
// items whose blockers are all peeled (Kahn's algorithm).
func acyclic(items []plan.Item) bool {
	index := make(map[string]int, len(items))
	for i, it := range items {
		index[it.ID] = i
	}
	pending := make([]int, len(items)) // unpeeled blockers per item
	var blocks [][]int                 // blocker → items it blocks; built lazily
	for i, it := range items {
		for _, b := range it.BlockedBy {
			if j, ok := index[b]; ok && j != i {
				if blocks == nil {
					blocks = make([][]int, len(items))
				}
				pending[i]++
				blocks[j] = append(blocks[j], i)
			}
		}
	}
	if blocks == nil {
		return true
	}
	queue := make([]int, 0, len(items))
	for i, n := range pending {
		if n == 0 {
			queue = append(queue, i)
		}
	}
	for k := 0; k < len(queue); k++ {
		for _, i := range blocks[queue[k]] {
			if pending[i]--; pending[i] == 0 {
				queue = append(queue, i)
			}
		}
	}
	return len(queue) == len(items)
}

func refIDs(rs []Ref) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func unfinished(tasks []*Task) []string {
	var out []string
	for _, t := range tasks {
		if t.Status != StatusCompleted {
			out = append(out, t.ID)
		}
	}
	return out
}

// suggest proposes the closest known name for a mistyped reference.
func suggest(name string, known []string) string {
	best, bestD := "", 4
	for _, k := range known {
		if d := editDistance(name, k); d < bestD || (d == bestD && k < best) {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
