package store

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The cross-file rules: per story (its tasks, and the epic it belongs to)
// and per epic (its children). A finding goes on the file holding the
// offending text.

// anchor returns the byte span diagnostics about an object's id go on: the id
// value, else the object's opening brace, else the file start.
func anchor(f *File, key string) (int, int) {
	obj := f.Root()
	if n := obj.Get(key); n != nil {
		return n.Start(), n.End()
	}
	if obj != nil {
		return obj.Start(), obj.Start() + 1
	}
	return 0, 0
}

// checkMembership: a story naming an epic (by its "epic" field, else by the
// prefix of its canonical name) must be listed by it. A story whose "epic"
// field names an epic absent from this checkout is only told so (upstream
// SAGA often leaves epic files uncommitted on story branches). It is
// checked once per story, on its member copy (storyNode.memberCopy).
func (w *Workspace) checkMembership(n *storyNode) []Diagnostic {
	s := n.memberCopy()
	if s == nil || s.File == nil || s.File.Story == nil || s.EpicID() == "" {
		return nil
	}
	epic := s.EpicID()
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

func (w *Workspace) checkEpic(id string) []Diagnostic {
	var out []Diagnostic
	add := func(f *File, code Code, start, end int, msg string, fix *Fix) {
		out = append(out, newDiagnostic(f, code, start, end, msg, fix))
	}
	n := w.epics.get(id)
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
	var stories, children suggester
	// Sized up front: an epic's maps are garbage made at the end of a load,
	// where memory peaks (docs/architecture.md#memory-at-88000-files).
	first := make(map[string]*Child, len(e.Children))
	for i := range e.Children {
		c := &e.Children[i]
		if prev := first[c.ID]; prev != nil {
			add(f, CodeDuplicateID, c.Node.Start(), c.Node.End(), fmt.Sprintf("story %q is already listed in this epic's children", c.ID), nil)
			continue
		}
		first[c.ID] = c
		if !ValidCanonical(c.ID) {
			continue // invalid-id already says what is wrong
		}
		s := w.Story(c.ID)
		if s == nil {
			add(f, CodeUnknownStory, c.Node.Start(), c.Node.End(), fmt.Sprintf(
				"no story folder .saga/stories/%s/ (nor a copy in its worktree); create it with `saga-lsp new story %s --title … --epic %s`%s",
				c.ID, c.ID, id, stories.suggest(c.ID, w.SortedStoryIDs)), &Fix{Ref: c.ID})
		}
		// The flat dialect: an upstream epic's children are plain story ids,
		// and a story naming the epic in its "epic" field is its child.
		if !strings.HasPrefix(c.ID, id+"--") && !flat && (s == nil || s.Epic != id) {
			add(f, CodeEpicPrefix, c.Node.Start(), c.Node.End(), fmt.Sprintf(
				"child story %q of epic %q should be named %s--<story> so its name shows where it belongs, or name the epic in the story's \"epic\" field", c.ID, id, id), &Fix{Want: id + "--" + c.ID})
		}
	}
	for i := range e.Children {
		c := &e.Children[i]
		for _, r := range c.BlockedBy {
			switch {
			case r.ID == c.ID:
				add(f, CodeSelfDependency, r.Node.Start(), r.Node.End(), fmt.Sprintf("story %q cannot be blocked by itself", c.ID), &Fix{Ref: r.ID})
			case first[r.ID] == nil && ValidCanonical(r.ID): // an invalid name is reported as invalid-id
				add(f, CodeUnknownDependency, r.Node.Start(), r.Node.End(), fmt.Sprintf(
					"%q is not a child of epic %q%s", r.ID, id, children.suggest(r.ID, func() []string { return slices.Collect(maps.Keys(first)) })), &Fix{Ref: r.ID})
			}
		}
	}
	// The order between children, as positions among the first listings.
	kids := make([]*Child, 0, len(first))
	pos := make(map[string]int32, len(first))
	for i := range e.Children {
		if c := &e.Children[i]; first[c.ID] == c {
			pos[c.ID] = int32(len(kids))
			kids = append(kids, c)
		}
	}
	g := depGraph{off: make([]int32, len(kids)+1)}
	for i, c := range kids {
		for _, r := range c.BlockedBy {
			if j, ok := pos[r.ID]; ok && r.ID != c.ID {
				g.to = append(g.to, j)
			}
		}
		g.off[i+1] = int32(len(g.to))
	}
	item := func(i int) (string, string, []Ref, *File) {
		status := ""
		if s := w.Story(kids[i].ID); s != nil {
			status = s.EffectiveStatus()
		}
		return kids[i].ID, status, kids[i].BlockedBy, f
	}
	if !g.acyclic() {
		cycleDiags(findCycles(g, nil, item), item, "story", add)
	}
	return append(out, w.overlapDiags(id, kids, pos, g)...)
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
	best, bestD := "", 3 // the farthest name worth suggesting
	from := newDistances(name)
	for _, k := range known {
		if d := from.to(k, bestD+1); d < bestD || (d == bestD && (best == "" || k < best)) {
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

// DidYouMean is "; did you mean \"x\"?" for the known name closest to a
// mistyped one, or "" when none is close.
func DidYouMean(name string, known []string) string { return suggest(name, known) }
