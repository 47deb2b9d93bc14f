package store

import (
	"maps"
	"path"
	"reflect"
	"slices"
)

// Update returns a new workspace with changed files replaced (or added) and
// removed paths dropped, recomputing only what they touch: their stories,
// their epics, and the stories and epics that refer to those. w is not
// modified, and the new workspace shares everything else with it: its maps
// are persistent (pmap), so an update costs what it touches, not the
// workspace. affected lists every file whose diagnostics may have changed:
// the changed and removed paths, the files whose cross-file findings
// differ, and a changed journal's story.json (the language server's
// story-blocked follows the journal). A path is either changed or removed;
// when a path is changed twice, the last wins.
func (w *Workspace) Update(changed []*File, removed []string) (nw *Workspace, affected []string) {
	nw = &Workspace{}
	*nw = *w
	affectedSet := map[string]bool{}

	// What each touched story copy (by folder) and epic loses and gains.
	type copyEdit struct {
		removed []string
		changed []*File
	}
	copies := map[string]*copyEdit{}
	editOf := func(dir string) *copyEdit {
		if copies[dir] == nil {
			copies[dir] = &copyEdit{}
		}
		return copies[dir]
	}
	epicDefs := map[string][]*File{}
	// Touched epics whose stories' membership findings may change
	// (checkMembership: the epic's presence, its file, its children's ids).
	membershipMoved := map[string]bool{}
	defsOf := func(id string) []*File {
		if fs, ok := epicDefs[id]; ok {
			return fs
		}
		fs := slices.Clone(w.EpicDefinitions(id))
		epicDefs[id] = fs
		return fs
	}
	// put records that rel is replaced by f, or removed (f nil).
	put := func(rel string, f *File) {
		affectedSet[rel] = true
		kind, owner, _ := Classify(rel)
		switch kind {
		case KindStory, KindTask, KindJournal:
			if kind == KindJournal { // story-blocked, on story.json, follows the journal
				affectedSet[path.Dir(rel)+"/story.json"] = true
			}
			e := editOf(path.Dir(rel))
			e.removed = slices.DeleteFunc(e.removed, func(r string) bool { return r == rel })
			e.changed = slices.DeleteFunc(e.changed, func(c *File) bool { return c.Rel == rel })
			if f != nil {
				e.changed = append(e.changed, f)
			} else {
				e.removed = append(e.removed, rel)
			}
		case KindEpic:
			defs := slices.DeleteFunc(defsOf(owner), func(d *File) bool { return d.Rel == rel })
			if f != nil {
				defs = append(defs, f)
			}
			epicDefs[owner] = defs
		default:
			nw.others = nw.others.del(rel)
			if f != nil && (f.ReadErr != "" || f.Kind == KindMisplaced) {
				nw.others = nw.others.set(rel, f)
			}
		}
	}
	for _, rel := range removed {
		put(rel, nil)
	}
	for _, f := range changed {
		put(f.Rel, f)
	}

	// Touched copies, in new nodes: their task rules are run again below.
	fresh := map[string]*storyNode{} // story id → its new node, copies changed
	for dir, e := range copies {
		id := path.Base(dir)
		n := fresh[id]
		if n == nil {
			n = &storyNode{}
			if on := w.stories.get(id); on != nil {
				n.main, n.wt = on.main, on.wt
			}
			fresh[id] = n
		}
		if inWorktree(dir) {
			n.wt = editCopy(n.wt, dir, e.removed, e.changed)
		} else {
			n.main = editCopy(n.main, dir, e.removed, e.changed)
		}
	}
	for id, n := range fresh {
		if oldEpic, newEpic := w.stories.get(id).epicID(), n.epicID(); oldEpic != newEpic {
			nw.naming = listDel(nw.naming, oldEpic, id)
			nw.naming = listAdd(nw.naming, newEpic, id)
		}
	}
	for id, defs := range epicDefs {
		old := w.Epic(id)
		var e *Epic
		if len(defs) == 0 {
			nw.epics = nw.epics.del(id)
		} else {
			sortEpicDefs(defs)
			e = epicOf(defs[0])
			nw.epics = nw.epics.set(id, &epicNode{defs: defs, epic: e})
		}
		// Only the children that came or went: an edit of the epic's text
		// (a keystroke in its description) leaves its 200 entries alone.
		was, is := childIDs(old), childIDs(e)
		for c := range was {
			if !is[c] {
				nw.listedBy = listDel(nw.listedBy, c, id)
			}
		}
		for c := range is {
			if !was[c] {
				nw.listedBy = listAdd(nw.listedBy, c, id)
			}
		}
		if !sameMembership(old, e, was, is) {
			membershipMoved[id] = true
		}
	}

	// What else the touched ones affect: the stories naming a touched epic
	// (their membership), and the epics listing or named by a touched story.
	member := map[string]bool{} // stories whose place in an epic is checked again
	epics := map[string]bool{}
	for id := range epicDefs {
		epics[id] = true
		if !membershipMoved[id] {
			continue
		}
		for _, l := range [][]string{w.naming.get(id), nw.naming.get(id)} {
			for _, sid := range l {
				member[sid] = true
			}
		}
	}
	for id := range fresh {
		member[id] = true
		for _, ws := range []*Workspace{w, nw} {
			for _, e := range ws.listedBy.get(id) {
				epics[e] = true
			}
			if e := ws.stories.get(id).epicID(); e != "" {
				epics[e] = true
			}
		}
	}

	for id := range member {
		old := w.stories.get(id)
		n := fresh[id]
		switch {
		case n == nil && old == nil:
			continue
		case n == nil: // only its epic changed: the copies and their task findings stay
			n = &storyNode{main: old.main, wt: old.wt, mainCheck: old.mainCheck, wtCheck: old.wtCheck}
		case n.main == nil && n.wt == nil:
			nw.stories = nw.stories.del(id)
			diffChecks(affectedSet, old, nil)
			continue
		default:
			n.check(old)
		}
		n.member = nw.checkMembership(n)
		nw.stories = nw.stories.set(id, n)
		diffChecks(affectedSet, old, n)
	}
	for id := range epics {
		var before map[string][]Diagnostic
		if on := w.epics.get(id); on != nil {
			before = on.diags
		}
		on := nw.epics.get(id)
		if on == nil {
			diffInto(affectedSet, before, nil)
			continue
		}
		n := &epicNode{defs: on.defs, epic: on.epic}
		nw.epics = nw.epics.set(id, n)
		n.diags = byFile(nw.checkEpic(id))
		diffInto(affectedSet, before, n.diags)
	}
	affected = slices.Sorted(maps.Keys(affectedSet))
	return nw, affected
}

// diffChecks adds to set every file whose cross-file findings differ
// between two nodes of a story (nil: none).
func diffChecks(set map[string]bool, before, after *storyNode) {
	var b, a [3]map[string][]Diagnostic
	for k, n := range []*storyNode{before, after} {
		if n == nil {
			continue
		}
		m := &b
		if k == 1 {
			m = &a
		}
		if n.mainCheck != nil {
			m[0] = n.mainCheck.diags
		}
		if n.wtCheck != nil {
			m[1] = n.wtCheck.diags
		}
		m[2] = byFile(n.member)
	}
	for i := range b {
		diffInto(set, b[i], a[i])
	}
}

// diffInto adds to set every file whose findings differ between before and
// after.
func diffInto(set map[string]bool, before, after map[string][]Diagnostic) {
	for rel, ds := range before {
		if !reflect.DeepEqual(ds, after[rel]) {
			set[rel] = true
		}
	}
	for rel := range after {
		if _, ok := before[rel]; !ok {
			set[rel] = true
		}
	}
}

// childIDs is the set of the ids an epic lists (none for nil).
func childIDs(e *Epic) map[string]bool {
	if e == nil {
		return nil
	}
	ids := make(map[string]bool, len(e.Children))
	for _, c := range e.Children {
		ids[c.ID] = true
	}
	return ids
}

// sameMembership says whether what checkMembership reads of an epic is the
// same in old and e: there or not, its defining file, its children's ids.
func sameMembership(old, e *Epic, was, is map[string]bool) bool {
	switch {
	case old == nil || e == nil:
		return old == e
	case (old.File == nil) != (e.File == nil) || (old.File != nil && old.File.Rel != e.File.Rel):
		return false
	}
	return maps.Equal(was, is)
}

// listAdd and listDel keep a sorted list of a pmap entry.
func listAdd(m pmap[[]string], key, v string) pmap[[]string] {
	if key == "" {
		return m
	}
	l := m.get(key)
	i, found := slices.BinarySearch(l, v)
	if found {
		return m
	}
	return m.set(key, slices.Insert(slices.Clip(l), i, v))
}

func listDel(m pmap[[]string], key, v string) pmap[[]string] {
	l := m.get(key)
	i, found := slices.BinarySearch(l, v)
	switch {
	case !found:
		return m
	case len(l) == 1:
		return m.del(key)
	}
	return m.set(key, slices.Delete(slices.Clone(l), i, i+1))
}
