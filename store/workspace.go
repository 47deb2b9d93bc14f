package store

import (
	"iter"
	"maps"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Workspace is an immutable view of a .saga/ tree: stories with their tasks,
// epics, and every diagnostic. A change builds a new Workspace that shares
// what did not change (see Update).
//
// A story id may have two copies: the main one, .saga/stories/<id>/, and the
// one in the story's worktree, .saga/worktrees/<id>/.saga/stories/<id>/,
// where upstream SAGA and the worker write while the story runs. Story
// returns the live copy (the worktree's when there is one); Copies returns
// both.
type Workspace struct {
	Root string

	stories  map[string]*storyNode // by story id
	epics    map[string]*epicNode  // by epic id
	listedBy map[string][]string   // story id → epics listing it as a child, sorted
	others   map[string]*File      // unreadable entries that are neither stories nor epics; misplaced files
}

// storyNode is what the workspace knows of one story id.
type storyNode struct {
	main, wt *Story
	diags    map[string][]Diagnostic // cross-file findings, by file
}

// epicNode is what the workspace knows of one epic id.
type epicNode struct {
	defs  []*File // every file defining the id, folder dialect first
	epic  *Epic   // the definition that counts: defs[0]'s
	diags map[string][]Diagnostic
}

// StoryCopies is every copy of one story the workspace holds.
type StoryCopies struct {
	Main     *Story // .saga/stories/<id>/; nil when the checkout has none
	Worktree *Story // .saga/worktrees/<id>/.saga/stories/<id>/; nil when there is none
}

// Live is the copy whose state counts: the worktree copy when it has files
// (a running or unmerged story's statuses are there), else the main copy.
func (c StoryCopies) Live() *Story {
	if c.Worktree != nil && (c.Worktree.File != nil || len(c.Worktree.Tasks) > 0 || c.Main == nil) {
		return c.Worktree
	}
	return c.Main
}

// WorktreeDir is the story's worktree relative to the root
// (.saga/worktrees/<id>), or "" when the workspace holds no worktree copy.
func (c StoryCopies) WorktreeDir() string {
	if c.Worktree == nil {
		return ""
	}
	return WorktreeDirRel(c.Worktree.ID)
}

// Build assembles a workspace from parsed files. storyDirs lists story
// folders (relative to the root: .saga/stories/<id> or a worktree copy's
// folder) that exist even if they hold no file.
func Build(root string, storyDirs []string, files []*File) *Workspace {
	w := &Workspace{
		Root:     root,
		stories:  map[string]*storyNode{},
		epics:    map[string]*epicNode{},
		listedBy: map[string][]string{},
		others:   map[string]*File{},
	}
	byDir := map[string][]*File{}
	for _, d := range storyDirs {
		byDir[d] = nil // an empty folder is still a story that exists
	}
	epicDefs := map[string][]*File{}
	for _, f := range files {
		switch f.Kind {
		case KindStory, KindTask, KindJournal:
			dir := path.Dir(f.Rel)
			byDir[dir] = append(byDir[dir], f)
		case KindEpic:
			epicDefs[f.Owner] = append(epicDefs[f.Owner], f)
		default:
			if f.ReadErr != "" || f.Kind == KindMisplaced {
				w.others[f.Rel] = f
			}
		}
	}
	for dir, fs := range byDir {
		s := assembleStory(dir, fs)
		n := w.stories[s.ID]
		if n == nil {
			n = &storyNode{}
			w.stories[s.ID] = n
		}
		if s.InWorktree {
			n.wt = s
		} else {
			n.main = s
		}
	}
	for id, defs := range epicDefs {
		sortEpicDefs(defs)
		w.epics[id] = &epicNode{defs: defs, epic: epicOf(defs[0])}
	}
	w.indexChildren()
	w.checkStories(slices.Collect(maps.Keys(w.stories)))
	for id, n := range w.epics {
		n.diags = byFile(w.checkEpic(id))
	}
	return w
}

// checkStories computes the cross-file findings of the given stories on all
// CPUs: stories are independent once the epics are indexed.
func (w *Workspace) checkStories(ids []string) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(max(1, runtime.GOMAXPROCS(0)), max(1, len(ids)/64)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(ids); i = int(next.Add(1) - 1) {
				n := w.stories[ids[i]]
				n.diags = byFile(w.checkStoryNode(n))
			}
		})
	}
	wg.Wait()
}

func byFile(ds []Diagnostic) map[string][]Diagnostic {
	if len(ds) == 0 {
		return nil
	}
	out := map[string][]Diagnostic{}
	for _, d := range ds {
		out[d.File] = append(out[d.File], d)
	}
	return out
}

// sortEpicDefs puts the folder dialect first, so it is the definition that
// counts when both exist.
func sortEpicDefs(defs []*File) {
	slices.SortStableFunc(defs, func(a, b *File) int {
		af, bf := strings.HasSuffix(a.Rel, "/epic.json"), strings.HasSuffix(b.Rel, "/epic.json")
		switch {
		case af && !bf:
			return -1
		case bf && !af:
			return 1
		}
		return strings.Compare(a.Rel, b.Rel)
	})
}

func epicOf(f *File) *Epic {
	if f.Epic != nil {
		return f.Epic
	}
	return &Epic{ID: f.Owner, File: f} // unreadable: present, but with nothing in it
}

func (w *Workspace) indexChildren() {
	w.listedBy = map[string][]string{}
	for _, n := range w.epics {
		e := n.epic
		for _, c := range e.Children {
			if !slices.Contains(w.listedBy[c.ID], e.ID) {
				w.listedBy[c.ID] = append(w.listedBy[c.ID], e.ID)
			}
		}
	}
	for _, l := range w.listedBy {
		slices.Sort(l)
	}
}

// assembleStory builds one copy of a story from the files of its folder dir.
func assembleStory(dir string, files []*File) *Story {
	s := &Story{ID: path.Base(dir)}
	for _, f := range files {
		if f.Kind != KindStory {
			continue
		}
		if f.Story != nil {
			meta := *f.Story // the File's copy stays untouched: snapshots share it
			s = &meta
		} else {
			s.File = f
		}
	}
	s.Dir = dir
	s.InWorktree = inWorktree(dir)
	for _, f := range files {
		switch f.Kind {
		case KindTask:
			t := f.Task
			if t == nil { // unreadable: keep the task so the story still counts it
				t = &Task{ID: f.Name, File: f}
			}
			s.Tasks = append(s.Tasks, t)
		case KindJournal:
			s.Journal = f
		}
	}
	slices.SortFunc(s.Tasks, func(a, b *Task) int { return strings.Compare(a.ID, b.ID) })
	return s
}

// StoryFiles returns the story's JSON files: story.json first, then tasks.
func (s *Story) StoryFiles() []*File {
	out := make([]*File, 0, len(s.Tasks)+1)
	if s.File != nil {
		out = append(out, s.File)
	}
	for _, t := range s.Tasks {
		out = append(out, t.File)
	}
	return out
}

// allFiles is StoryFiles plus the journal.
func (s *Story) allFiles() []*File {
	fs := s.StoryFiles()
	if s.Journal != nil {
		fs = append(fs, s.Journal)
	}
	return fs
}

// copyOf returns the copy of the node that holds rel (a file or the
// copy's folder).
func (n *storyNode) copyOf(rel string) *Story {
	switch {
	case n == nil:
		return nil
	case inWorktree(rel):
		return n.wt
	}
	return n.main
}

func inWorktree(rel string) bool { return strings.HasPrefix(rel, ".saga/worktrees/") }

func (n *storyNode) copies() StoryCopies {
	if n == nil {
		return StoryCopies{}
	}
	return StoryCopies{Main: n.main, Worktree: n.wt}
}

// File returns the parsed file at rel, or nil.
func (w *Workspace) File(rel string) *File {
	kind, owner, name := Classify(rel)
	switch kind {
	case KindStory, KindTask, KindJournal:
		s := w.stories[owner].copyOf(rel)
		switch {
		case s == nil:
		case kind == KindStory:
			return s.File
		case kind == KindJournal:
			return s.Journal
		default:
			if t := s.Task(name); t != nil {
				return t.File
			}
		}
	case KindEpic:
		if n := w.epics[owner]; n != nil {
			for _, f := range n.defs {
				if f.Rel == rel {
					return f
				}
			}
		}
	}
	return w.others[rel]
}

// Files returns every parsed file, sorted by path.
func (w *Workspace) Files() []*File {
	var out []*File
	for _, n := range w.stories {
		out = append(out, n.files()...)
	}
	for _, n := range w.epics {
		out = append(out, n.defs...)
	}
	out = append(out, slices.Collect(maps.Values(w.others))...)
	slices.SortFunc(out, func(a, b *File) int { return strings.Compare(a.Rel, b.Rel) })
	return out
}

// Diagnostics returns every diagnostic of the workspace, sorted.
func (w *Workspace) Diagnostics() []Diagnostic {
	var out []Diagnostic
	for _, f := range w.Files() {
		out = append(out, f.Local...)
	}
	for _, n := range w.stories {
		for _, ds := range n.diags {
			out = append(out, ds...)
		}
	}
	for _, n := range w.epics {
		for _, ds := range n.diags {
			out = append(out, ds...)
		}
	}
	SortDiagnostics(out)
	return out
}

// FileDiagnostics returns the diagnostics published on one file, sorted.
func (w *Workspace) FileDiagnostics(rel string) []Diagnostic {
	f := w.File(rel)
	if f == nil {
		return nil
	}
	out := slices.Clone(f.Local)
	switch f.Kind {
	case KindStory, KindTask:
		if n := w.stories[f.Owner]; n != nil {
			out = append(out, n.diags[rel]...)
		}
	case KindEpic:
		if n := w.epics[f.Owner]; n != nil {
			out = append(out, n.diags[rel]...)
		}
	}
	SortDiagnostics(out)
	return out
}

// Story returns the live copy of the story (see StoryCopies.Live), or nil.
func (w *Workspace) Story(id string) *Story { return w.stories[id].copies().Live() }

// Copies returns every copy of the story the workspace holds.
func (w *Workspace) Copies(id string) StoryCopies { return w.stories[id].copies() }

// StoryOf returns the copy of its story a story, task or journal file
// belongs to (the worktree copy for a file in the worktree), or nil.
func (w *Workspace) StoryOf(f *File) *Story {
	if f == nil {
		return nil
	}
	switch f.Kind {
	case KindStory, KindTask, KindJournal:
		return w.stories[f.Owner].copyOf(f.Rel)
	}
	return nil
}

// Epic returns the epic with this id (its first definition when it has
// two), or nil.
func (w *Workspace) Epic(id string) *Epic {
	if n := w.epics[id]; n != nil {
		return n.epic
	}
	return nil
}

// Stories yields the live copy of every story, in no particular order.
func (w *Workspace) Stories() iter.Seq[*Story] {
	return func(yield func(*Story) bool) {
		for _, n := range w.stories {
			if !yield(n.copies().Live()) {
				return
			}
		}
	}
}

// Epics yields every epic (its first definition), in no particular order.
func (w *Workspace) Epics() iter.Seq[*Epic] {
	return func(yield func(*Epic) bool) {
		for _, n := range w.epics {
			if !yield(n.epic) {
				return
			}
		}
	}
}

// StoryCount and EpicCount count story ids and epic ids.
func (w *Workspace) StoryCount() int { return len(w.stories) }
func (w *Workspace) EpicCount() int  { return len(w.epics) }

// ListedBy returns the epics that list story id as a child.
func (w *Workspace) ListedBy(id string) []string { return w.listedBy[id] }

// EpicDefinitions returns every file defining epic id (more than one is an error).
func (w *Workspace) EpicDefinitions(id string) []*File {
	if n := w.epics[id]; n != nil {
		return n.defs
	}
	return nil
}

// SortedStoryIDs and SortedEpicIDs list ids in order.
func (w *Workspace) SortedStoryIDs() []string { return slices.Sorted(maps.Keys(w.stories)) }
func (w *Workspace) SortedEpicIDs() []string  { return slices.Sorted(maps.Keys(w.epics)) }
