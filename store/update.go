package store

import (
	"maps"
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
		Root:       w.Root,
		Stories:    maps.Clone(w.Stories),
		Epics:      maps.Clone(w.Epics),
		epicDefs:   maps.Clone(w.epicDefs),
		storyDiags: maps.Clone(w.storyDiags),
		epicDiags:  maps.Clone(w.epicDiags),
		problems:   maps.Clone(w.problems),
	}
	stories := map[string]bool{}
	epics := map[string]bool{}
	affectedSet := map[string]bool{}

	// Files per touched story/epic, starting from what w has.
	storyFiles := map[string][]*File{}
	filesOf := func(id string) []*File {
		if fs, ok := storyFiles[id]; ok {
			return fs
		}
		var fs []*File
		if s := w.Stories[id]; s != nil {
			fs = s.StoryFiles()
			if s.Journal != nil {
				fs = append(fs, s.Journal)
			}
		}
		storyFiles[id] = fs
		return fs
	}
	drop := func(rel string) {
		affectedSet[rel] = true
		kind, owner, _ := Classify(rel)
		switch kind {
		case KindStory, KindTask, KindJournal:
			stories[owner] = true
			storyFiles[owner] = slices.DeleteFunc(slices.Clone(filesOf(owner)), func(f *File) bool { return f.Rel == rel })
		case KindEpic:
			epics[owner] = true
			nw.epicDefs[owner] = slices.DeleteFunc(slices.Clone(nw.epicDefs[owner]), func(f *File) bool { return f.Rel == rel })
		default:
			delete(nw.problems, rel)
		}
	}
	for _, rel := range removed {
		drop(rel)
	}
	for _, f := range changed {
		drop(f.Rel)
		switch f.Kind {
		case KindStory, KindTask, KindJournal:
			storyFiles[f.Owner] = append(storyFiles[f.Owner], f)
		case KindEpic:
			nw.epicDefs[f.Owner] = append(nw.epicDefs[f.Owner], f)
		default:
			if f.ReadErr != "" {
				nw.problems[f.Rel] = f
			}
		}
	}

	// Rebuild touched stories; a story folder whose last file went away is
	// gone unless w knew it as an (empty) folder and nothing was removed.
	for id := range stories {
		fs := storyFiles[id]
		old := w.Stories[id]
		if len(fs) == 0 && (old == nil || len(old.StoryFiles()) > 0 || old.Journal != nil) {
			delete(nw.Stories, id)
			continue
		}
		nw.Stories[id] = assembleStory(id, fs)
	}
	for id := range epics {
		defs := nw.epicDefs[id]
		if len(defs) == 0 {
			delete(nw.epicDefs, id)
			delete(nw.Epics, id)
			delete(nw.epicDiags, id)
			continue
		}
		sortEpicDefs(defs)
		nw.Epics[id] = epicOf(defs[0])
	}
	if len(epics) > 0 {
		nw.indexChildren()
	} else {
		nw.listedBy = w.listedBy // unchanged: only epics list children
	}

	// What else the touched ones affect: an epic's children and the stories
	// named under it; the epics listing a touched story.
	for id := range epics {
		for _, e := range []*Epic{w.Epics[id], nw.Epics[id]} {
			if e != nil {
				for _, c := range e.Children {
					stories[c.ID] = true
				}
			}
		}
		for sid, s := range nw.Stories {
			if s.EpicID() == id {
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
		if s := w.Stories[id]; s != nil && s.EpicID() != "" {
			epics[s.EpicID()] = true
		}
	}

	for id := range stories {
		if old := w.Stories[id]; old != nil {
			for _, f := range old.StoryFiles() {
				affectedSet[f.Rel] = true
			}
		}
		s := nw.Stories[id]
		if s == nil {
			delete(nw.storyDiags, id)
			continue
		}
		nw.storyDiags[id] = nw.checkStory(s)
		for _, f := range s.StoryFiles() {
			affectedSet[f.Rel] = true
		}
	}
	for id := range epics {
		for _, f := range w.epicDefs[id] {
			affectedSet[f.Rel] = true
		}
		if len(nw.epicDefs[id]) == 0 {
			continue
		}
		nw.epicDiags[id] = nw.checkEpic(id)
		for _, f := range nw.epicDefs[id] {
			affectedSet[f.Rel] = true
		}
	}
	affected = slices.Sorted(maps.Keys(affectedSet))
	return nw, affected
}
