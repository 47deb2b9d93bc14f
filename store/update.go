package store

import (
	"maps"
	"path"
	"slices"
)

// Update returns a new workspace with changed files replaced (or added) and
// removed paths dropped, recomputing only what they touch: their stories,
// their epics, and the stories and epics that refer to those. w is not
// modified. affected lists every file whose diagnostics may have changed
// (removed files included, so their diagnostics can be cleared). A path is
// either changed or removed; when a path is changed twice, the last wins.
func (w *Workspace) Update(changed []*File, removed []string) (nw *Workspace, affected []string) {
	nw = &Workspace{
		Root:     w.Root,
		stories:  maps.Clone(w.stories),
		epics:    maps.Clone(w.epics),
		listedBy: w.listedBy,
		others:   maps.Clone(w.others),
	}
	stories := map[string]bool{}
	epics := map[string]bool{}
	affectedSet := map[string]bool{}

	// Files per touched story copy (by folder) and epic, starting from w's.
	dirFiles := map[string][]*File{}
	filesOf := func(dir string) []*File {
		if fs, ok := dirFiles[dir]; ok {
			return fs
		}
		var fs []*File
		if s := w.stories[path.Base(dir)].copyOf(dir); s != nil {
			fs = s.allFiles()
		}
		dirFiles[dir] = fs
		return fs
	}
	epicDefs := map[string][]*File{}
	defsOf := func(id string) []*File {
		if fs, ok := epicDefs[id]; ok {
			return fs
		}
		fs := slices.Clone(w.EpicDefinitions(id))
		epicDefs[id] = fs
		return fs
	}
	drop := func(rel string) {
		affectedSet[rel] = true
		kind, owner, _ := Classify(rel)
		switch kind {
		case KindStory, KindTask, KindJournal:
			dir := path.Dir(rel)
			dirFiles[dir] = slices.DeleteFunc(slices.Clone(filesOf(dir)), func(f *File) bool { return f.Rel == rel })
		case KindEpic:
			epicDefs[owner] = slices.DeleteFunc(defsOf(owner), func(f *File) bool { return f.Rel == rel })
		default:
			delete(nw.others, rel)
		}
	}
	for _, rel := range removed {
		drop(rel)
	}
	for _, f := range changed {
		drop(f.Rel)
		switch f.Kind {
		case KindStory, KindTask, KindJournal:
			dir := path.Dir(f.Rel)
			dirFiles[dir] = append(dirFiles[dir], f)
		case KindEpic:
			epicDefs[f.Owner] = append(epicDefs[f.Owner], f)
		default:
			if f.ReadErr != "" || f.Kind == KindMisplaced {
				nw.others[f.Rel] = f
			}
		}
	}

	// Rebuild touched copies; a folder whose last file went away is gone
	// unless w knew it as an (empty) folder and nothing was removed.
	for dir, fs := range dirFiles {
		id := path.Base(dir)
		stories[id] = true
		old := w.stories[id].copyOf(dir)
		var s *Story
		if len(fs) > 0 || (old != nil && len(old.allFiles()) == 0) {
			s = assembleStory(dir, fs)
		}
		n := &storyNode{}
		if on := nw.stories[id]; on != nil {
			n.main, n.wt = on.main, on.wt
		}
		if inWorktree(dir) {
			n.wt = s
		} else {
			n.main = s
		}
		if n.main == nil && n.wt == nil {
			delete(nw.stories, id)
			continue
		}
		nw.stories[id] = n
	}
	for id, defs := range epicDefs {
		epics[id] = true
		if len(defs) == 0 {
			delete(nw.epics, id)
			continue
		}
		sortEpicDefs(defs)
		nw.epics[id] = &epicNode{defs: defs, epic: epicOf(defs[0])}
	}
	if len(epicDefs) > 0 {
		nw.indexChildren()
	}

	// What else the touched ones affect: an epic's children and the stories
	// naming it; the epics listing a touched story or named by it.
	for id := range epics {
		for _, e := range []*Epic{w.Epic(id), nw.Epic(id)} {
			if e != nil {
				for _, c := range e.Children {
					stories[c.ID] = true
				}
			}
		}
		for sid, n := range nw.stories {
			if n.epicID() == id {
				stories[sid] = true
			}
		}
	}
	for id := range stories {
		for _, e := range w.listedBy[id] {
			epics[e] = true
		}
		for _, e := range nw.listedBy[id] {
			epics[e] = true
		}
		for _, n := range []*storyNode{w.stories[id], nw.stories[id]} {
			if e := n.epicID(); e != "" {
				epics[e] = true
			}
		}
	}

	for id := range stories {
		for _, f := range w.stories[id].files() {
			affectedSet[f.Rel] = true
		}
		on := nw.stories[id]
		if on == nil {
			continue
		}
		n := &storyNode{main: on.main, wt: on.wt}
		n.diags = byFile(nw.checkStoryNode(n))
		nw.stories[id] = n
		for _, f := range n.files() {
			affectedSet[f.Rel] = true
		}
	}
	for id := range epics {
		for _, f := range w.EpicDefinitions(id) {
			affectedSet[f.Rel] = true
		}
		on := nw.epics[id]
		if on == nil {
			continue
		}
		n := &epicNode{defs: on.defs, epic: on.epic}
		nw.epics[id] = n
		n.diags = byFile(nw.checkEpic(id))
		for _, f := range n.defs {
			affectedSet[f.Rel] = true
		}
	}
	affected = slices.Sorted(maps.Keys(affectedSet))
	return nw, affected
}

// member is the copy whose place in an epic is checked: the main copy, or
// the worktree copy of a story that exists only there.
func (n *storyNode) member() *Story {
	switch {
	case n == nil:
		return nil
	case n.main != nil:
		return n.main
	}
	return n.wt
}

func (n *storyNode) epicID() string {
	if m := n.member(); m != nil {
		return m.EpicID()
	}
	return ""
}

// files lists the JSON files of both copies.
func (n *storyNode) files() []*File {
	if n == nil {
		return nil
	}
	var out []*File
	for _, s := range []*Story{n.main, n.wt} {
		if s != nil {
			out = append(out, s.StoryFiles()...)
		}
	}
	return out
}
