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

	// Persistent maps (pmap): an update shares every untouched entry.
	stories  pmap[*storyNode] // by story id
	epics    pmap[*epicNode]  // by epic id
	listedBy pmap[[]string]   // story id → epics listing it as a child, sorted
	naming   pmap[[]string]   // epic id → stories naming it (storyNode.epicID), sorted
	others   pmap[*File]      // unreadable entries that are neither stories nor epics; misplaced files
}

// storyNode is what the workspace knows of one story id. It is immutable
// once in a Workspace; an update makes a new node.
type storyNode struct {
	main, wt           *Story
	mainCheck, wtCheck *storyCheck  // the task rules' findings on each copy
	member             []Diagnostic // the story's place in its epic (on the member copy's story.json)
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
	byDir := map[string][]*File{}
	for _, d := range storyDirs {
		byDir[d] = nil // an empty folder is still a story that exists
	}
	var rest []*File
	for _, f := range files {
		switch f.Kind {
		case KindStory, KindTask, KindJournal:
			dir := path.Dir(f.Rel)
			byDir[dir] = append(byDir[dir], f)
		default:
			rest = append(rest, f)
		}
	}
	dirs := make([]string, 0, len(byDir))
	groups := make([][]*File, 0, len(byDir))
	for dir, fs := range byDir {
		dirs, groups = append(dirs, dir), append(groups, fs)
	}
	return build(root, dirs, groups, rest)
}

// build is Build given the files already grouped, as Load reads them: the
// files of story folder dirs[i] (which exists even with no file) in
// groups[i], and the files that are not a story's in rest.
func build(root string, dirs []string, groups [][]*File, rest []*File) *Workspace {
	epicDefs := map[string][]*File{}
	others := newPmapBuilder[*File]()
	for _, f := range rest {
		switch {
		case f.Kind == KindEpic:
			epicDefs[f.Owner] = append(epicDefs[f.Owner], f)
		case f.ReadErr != "" || f.Kind == KindMisplaced:
			others.set(f.Rel, f)
		}
	}
	nodes := make(map[string]*storyNode, len(dirs))
	for i, dir := range dirs {
		s := assembleStory(dir, groups[i])
		n := nodes[s.ID]
		if n == nil {
			n = &storyNode{}
			nodes[s.ID] = n
		}
		if s.InWorktree {
			n.wt = s
		} else {
			n.main = s
		}
	}
	stories := newPmapBuilder[*storyNode]()
	naming := map[string][]string{}
	for id, n := range nodes {
		stories.set(id, n)
		if e := n.epicID(); e != "" {
			naming[e] = append(naming[e], id)
		}
	}
	epics := newPmapBuilder[*epicNode]()
	listedBy := map[string][]string{}
	for id, defs := range epicDefs {
		sortEpicDefs(defs)
		n := &epicNode{defs: defs, epic: epicOf(defs[0])}
		epics.set(id, n)
		for _, c := range n.epic.Children {
			if !slices.Contains(listedBy[c.ID], id) {
				listedBy[c.ID] = append(listedBy[c.ID], id)
			}
		}
	}
	w := &Workspace{Root: root, stories: stories.done(), epics: epics.done(), others: others.done(),
		listedBy: sortedLists(listedBy), naming: sortedLists(naming)}
	ids := slices.Collect(maps.Keys(nodes))
	parallel(len(ids), func(i int) {
		n := nodes[ids[i]]
		n.check(nil)
		n.member = w.checkMembership(n)
	})
	for id, n := range w.epics.all() {
		n.diags = byFile(w.checkEpic(id))
	}
	return w
}

// sortedLists turns a map of lists into a pmap of sorted lists.
func sortedLists(m map[string][]string) pmap[[]string] {
	b := newPmapBuilder[[]string]()
	for k, l := range m {
		slices.Sort(l)
		b.set(k, l)
	}
	return b.done()
}

// parallel runs f(0…n-1) on all CPUs: stories are independent once the
// epics are indexed.
func parallel(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(max(1, runtime.GOMAXPROCS(0)), max(1, n/64)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
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

func inWorktree(rel string) bool { return strings.HasPrefix(rel, WorktreesRel+"/") }

func (n *storyNode) copies() StoryCopies {
	if n == nil {
		return StoryCopies{}
	}
	return StoryCopies{Main: n.main, Worktree: n.wt}
}

// member is the copy whose place in an epic is checked: the main copy, or
// the worktree copy of a story that exists only there.
func (n *storyNode) memberCopy() *Story {
	switch {
	case n == nil:
		return nil
	case n.main != nil:
		return n.main
	}
	return n.wt
}

// epicID is the epic the story names (see Story.EpicID), "" for none.
func (n *storyNode) epicID() string {
	if m := n.memberCopy(); m != nil {
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

// check runs the task rules on both copies; a copy that old (the node the
// story had) holds unchanged keeps its findings, and an edited one is
// checked from its previous version.
func (n *storyNode) check(old *storyNode) {
	if old == nil {
		old = &storyNode{}
	}
	n.mainCheck = checkCopy(n.main, old.main, old.mainCheck)
	n.wtCheck = checkCopy(n.wt, old.wt, old.wtCheck)
}

func checkCopy(s, old *Story, oldCheck *storyCheck) *storyCheck {
	switch {
	case s == nil:
		return nil
	case s == old:
		return oldCheck
	}
	return checkStory(s, old, oldCheck)
}

// checksOf returns the task rules' findings on one copy's files.
func (n *storyNode) checksOf(rel string) map[string][]Diagnostic {
	if n == nil {
		return nil
	}
	c := n.mainCheck
	if inWorktree(rel) {
		c = n.wtCheck
	}
	if c == nil {
		return nil
	}
	return c.diags
}

// File returns the parsed file at rel, or nil.
func (w *Workspace) File(rel string) *File {
	kind, owner, name := Classify(rel)
	switch kind {
	case KindStory, KindTask, KindJournal:
		s := w.stories.get(owner).copyOf(rel)
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
		if n := w.epics.get(owner); n != nil {
			for _, f := range n.defs {
				if f.Rel == rel {
					return f
				}
			}
		}
	}
	return w.others.get(rel)
}

// Files returns every parsed file, sorted by path.
func (w *Workspace) Files() []*File {
	var out []*File
	for _, n := range w.stories.all() {
		out = append(out, n.files()...)
	}
	for _, n := range w.epics.all() {
		out = append(out, n.defs...)
	}
	for _, f := range w.others.all() {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *File) int { return strings.Compare(a.Rel, b.Rel) })
	return out
}

// SrcBytes is the size of the text of every file the workspace holds (the
// sum of their sizes on disk, for a loaded workspace): what its memory is
// in proportion to.
func (w *Workspace) SrcBytes() int64 {
	var n int
	for _, sn := range w.stories.all() {
		for _, s := range [2]*Story{sn.main, sn.wt} {
			if s == nil {
				continue
			}
			if s.File != nil {
				n += len(s.File.Src)
			}
			for _, t := range s.Tasks {
				n += len(t.File.Src)
			}
		}
	}
	for _, e := range w.epics.all() {
		for _, f := range e.defs {
			n += len(f.Src)
		}
	}
	for _, f := range w.others.all() {
		n += len(f.Src)
	}
	return int64(n)
}

// Diagnostics returns every diagnostic of the workspace, sorted. It walks
// the files where they are, not through Files: that list of every file is
// garbage made as the server publishes after its load, where its memory
// peaks (docs/architecture.md#memory-at-88000-files).
func (w *Workspace) Diagnostics() []Diagnostic {
	var out []Diagnostic
	for _, n := range w.stories.all() {
		for _, s := range [2]*Story{n.main, n.wt} {
			if s == nil {
				continue
			}
			if s.File != nil {
				out = append(out, s.File.Local...)
			}
			for _, t := range s.Tasks {
				out = append(out, t.File.Local...)
			}
		}
		for _, c := range [2]*storyCheck{n.mainCheck, n.wtCheck} {
			if c != nil {
				for _, ds := range c.diags {
					out = append(out, ds...)
				}
			}
		}
		out = append(out, n.member...)
	}
	for _, n := range w.epics.all() {
		for _, f := range n.defs {
			out = append(out, f.Local...)
		}
		for _, ds := range n.diags {
			out = append(out, ds...)
		}
	}
	for _, f := range w.others.all() {
		out = append(out, f.Local...)
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
		if n := w.stories.get(f.Owner); n != nil {
			out = append(out, n.checksOf(rel)[rel]...)
			for _, d := range n.member {
				if d.File == rel {
					out = append(out, d)
				}
			}
		}
		if f.Kind == KindTask { // paths-overlap, an epic's finding on its stories' tasks
			for _, e := range w.listedBy.get(f.Owner) {
				if en := w.epics.get(e); en != nil {
					out = append(out, en.diags[rel]...)
				}
			}
		}
	case KindEpic:
		if n := w.epics.get(f.Owner); n != nil {
			out = append(out, n.diags[rel]...)
		}
	}
	SortDiagnostics(out)
	return out
}

// Story returns the live copy of the story (see StoryCopies.Live), or nil.
func (w *Workspace) Story(id string) *Story { return w.stories.get(id).copies().Live() }

// Copies returns every copy of the story the workspace holds.
func (w *Workspace) Copies(id string) StoryCopies { return w.stories.get(id).copies() }

// StoryOf returns the copy of its story a story, task or journal file
// belongs to (the worktree copy for a file in the worktree), or nil.
func (w *Workspace) StoryOf(f *File) *Story {
	if f == nil {
		return nil
	}
	switch f.Kind {
	case KindStory, KindTask, KindJournal:
		return w.stories.get(f.Owner).copyOf(f.Rel)
	}
	return nil
}

// Epic returns the epic with this id (its first definition when it has
// two), or nil.
func (w *Workspace) Epic(id string) *Epic {
	if n := w.epics.get(id); n != nil {
		return n.epic
	}
	return nil
}

// Stories yields the live copy of every story, in no particular order.
func (w *Workspace) Stories() iter.Seq[*Story] {
	return func(yield func(*Story) bool) {
		for _, n := range w.stories.all() {
			if !yield(n.copies().Live()) {
				return
			}
		}
	}
}

// Epics yields every epic (its first definition), in no particular order.
func (w *Workspace) Epics() iter.Seq[*Epic] {
	return func(yield func(*Epic) bool) {
		for _, n := range w.epics.all() {
			if !yield(n.epic) {
				return
			}
		}
	}
}

// StoryCount and EpicCount count story ids and epic ids.
func (w *Workspace) StoryCount() int { return w.stories.len() }
func (w *Workspace) EpicCount() int  { return w.epics.len() }

// ListedBy returns the epics that list story id as a child.
func (w *Workspace) ListedBy(id string) []string { return w.listedBy.get(id) }

// EpicDefinitions returns every file defining epic id (more than one is an error).
func (w *Workspace) EpicDefinitions(id string) []*File {
	if n := w.epics.get(id); n != nil {
		return n.defs
	}
	return nil
}

// SortedStoryIDs and SortedEpicIDs list ids in order.
func (w *Workspace) SortedStoryIDs() []string { return w.stories.sortedKeys() }
func (w *Workspace) SortedEpicIDs() []string  { return w.epics.sortedKeys() }
