package store

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/saga-ai/saga-lsp/store/plan"
)

// Workspace is an immutable view of a .saga/ tree: stories with their tasks,
// epics, and every diagnostic. A change builds a new Workspace that shares
// what did not change (see Update).
type Workspace struct {
	Root    string
	Stories map[string]*Story // by folder name
	Epics   map[string]*Epic  // by id; the first definition when an id is defined twice

	epicDefs   map[string][]*File      // every definition of an epic id, folder dialect first
	listedBy   map[string][]string     // story id → epics listing it as a child
	storyDiags map[string][]Diagnostic // cross-file findings on a story's files
	epicDiags  map[string][]Diagnostic // cross-file findings on an epic's files
	problems   map[string]*File        // unreadable entries that are neither tasks nor epics
}

// Build assembles a workspace from parsed files. storyDirs lists story
// folders that exist even if they hold no file.
func Build(root string, storyDirs []string, files []*File) *Workspace {
	w := &Workspace{
		Root:       root,
		Stories:    map[string]*Story{},
		Epics:      map[string]*Epic{},
		epicDefs:   map[string][]*File{},
		listedBy:   map[string][]string{},
		storyDiags: map[string][]Diagnostic{},
		epicDiags:  map[string][]Diagnostic{},
		problems:   map[string]*File{},
	}
	byStory := map[string][]*File{}
	for _, d := range storyDirs {
		byStory[d] = nil // an empty folder is still a story that exists
	}
	for _, f := range files {
		switch f.Kind {
		case KindStory, KindTask, KindJournal:
			byStory[f.Owner] = append(byStory[f.Owner], f)
		case KindEpic:
			w.epicDefs[f.Owner] = append(w.epicDefs[f.Owner], f)
		default:
			if f.ReadErr != "" {
				w.problems[f.Rel] = f
			}
		}
	}
	for id, fs := range byStory {
		w.Stories[id] = assembleStory(id, fs)
	}
	for id, defs := range w.epicDefs {
		sortEpicDefs(defs)
		w.Epics[id] = epicOf(defs[0])
	}
	w.indexChildren()
	w.checkStories(slices.Collect(maps.Keys(w.Stories)))
	for id := range w.epicDefs {
		w.epicDiags[id] = w.checkEpic(id)
	}
	return w
}

// checkStories computes the cross-file findings of the given stories on all
// CPUs: stories are independent once the epics are indexed.
func (w *Workspace) checkStories(ids []string) {
	out := make([][]Diagnostic, len(ids))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(max(1, runtime.GOMAXPROCS(0)), max(1, len(ids)/64)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(ids); i = int(next.Add(1) - 1) {
				out[i] = w.checkStory(w.Stories[ids[i]])
			}
		})
	}
	wg.Wait()
	for i, id := range ids {
		w.storyDiags[id] = out[i]
	}
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
	for _, e := range w.Epics {
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

// assembleStory builds a story from the files of its folder.
func assembleStory(id string, files []*File) *Story {
	s := &Story{ID: id}
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

// File returns the parsed file at rel, or nil.
func (w *Workspace) File(rel string) *File {
	kind, owner, name := Classify(rel)
	switch kind {
	case KindStory:
		if s := w.Stories[owner]; s != nil {
			return s.File
		}
	case KindTask:
		if s := w.Stories[owner]; s != nil {
			if t := s.Task(name); t != nil {
				return t.File
			}
		}
	case KindEpic:
		for _, f := range w.epicDefs[owner] {
			if f.Rel == rel {
				return f
			}
		}
	}
	return w.problems[rel]
}

// Files returns every parsed file, sorted by path.
func (w *Workspace) Files() []*File {
	var out []*File
	for _, s := range w.Stories {
		out = append(out, s.StoryFiles()...)
	}
	for _, defs := range w.epicDefs {
		out = append(out, defs...)
	}
	out = append(out, slices.Collect(maps.Values(w.problems))...)
	slices.SortFunc(out, func(a, b *File) int { return strings.Compare(a.Rel, b.Rel) })
	return out
}

// Diagnostics returns every diagnostic of the workspace, sorted.
func (w *Workspace) Diagnostics() []Diagnostic {
	var out []Diagnostic
	for _, f := range w.Files() {
		out = append(out, f.Local...)
	}
	for _, ds := range w.storyDiags {
		out = append(out, ds...)
	}
	for _, ds := range w.epicDiags {
		out = append(out, ds...)
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
	var cross []Diagnostic
	switch f.Kind {
	case KindStory, KindTask:
		cross = w.storyDiags[f.Owner]
	case KindEpic:
		cross = w.epicDiags[f.Owner]
	}
	for _, d := range cross {
		if d.File == rel {
			out = append(out, d)
		}
	}
	SortDiagnostics(out)
	return out
}

// Story returns the story whose id is the canonical name, or nil.
func (w *Workspace) Story(id string) *Story { return w.Stories[id] }

// ListedBy returns the epics that list story id as a child.
func (w *Workspace) ListedBy(id string) []string { return w.listedBy[id] }

// EpicDefinitions returns every file defining epic id (more than one is an error).
func (w *Workspace) EpicDefinitions(id string) []*File { return w.epicDefs[id] }

// SortedStoryIDs and SortedEpicIDs list ids in order.
func (w *Workspace) SortedStoryIDs() []string { return slices.Sorted(maps.Keys(w.Stories)) }
func (w *Workspace) SortedEpicIDs() []string  { return slices.Sorted(maps.Keys(w.Epics)) }

// --- rules ---

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

func (w *Workspace) checkStory(s *Story) []Diagnostic {
	var out []Diagnostic
	add := func(f *File, code Code, start, end int, msg string, fix *Fix) {
		out = append(out, newDiagnostic(f, code, start, end, msg, fix))
	}
	if s.File == nil && len(s.Tasks) > 0 {
		f := s.Tasks[0].File
		st, en := anchor(f, "id")
		add(f, CodeMissingStoryFile, st, en, fmt.Sprintf(
			"story folder %q has no story.json; create it with `saga-lsp new story %s --title …`", s.ID, s.ID), nil)
	}
	if s.File != nil && s.File.Story != nil {
		if len(s.Tasks) == 0 {
			st, en := anchor(s.File, "id")
			add(s.File, CodeEmptyStory, st, en, fmt.Sprintf(
				"story %q has no tasks; add one with `saga-lsp new task %s <task-id> --subject …`", s.ID, s.ID), nil)
		}
		if s.Status == StatusCompleted {
			if open := unfinished(s.Tasks); len(open) > 0 {
				st, en := anchor(s.File, "status")
				add(s.File, CodeStatusInconsistent, st, en, fmt.Sprintf(
					"story is marked completed but %d of %d tasks are not: %s", len(open), len(s.Tasks), strings.Join(open, ", ")), nil)
			}
		}
		if epic := s.EpicID(); epic != "" {
			st, en := anchor(s.File, "id")
			e := w.Epics[epic]
			switch {
			case e == nil:
				add(s.File, CodeOrphanStory, st, en, fmt.Sprintf(
					"story %q belongs to epic %q, which does not exist; create it (`saga-lsp new epic %s --title …`) or rename the story", s.ID, epic, epic), nil)
			case e.Child(s.ID) == nil:
				add(s.File, CodeOrphanStory, st, en, fmt.Sprintf(
					"epic %q does not list story %q in its children; add {\"id\": %q, \"blockedBy\": []} to %s", epic, s.ID, s.ID, e.File.Rel), nil)
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
	taskIDs := sync.OnceValue(func() []string { return slices.Collect(maps.Keys(byID)) }) // listed once, not per unknown reference
	for _, t := range s.Tasks {
		for _, r := range t.BlockedBy {
			switch {
			case r.ID == t.ID:
				add(t.File, CodeSelfDependency, r.Node.Start, r.Node.End, fmt.Sprintf("task %q cannot be blocked by itself", t.ID), &Fix{Ref: r.ID})
			case byID[r.ID] == nil && ValidID(r.ID): // an invalid id is reported as invalid-id
				add(t.File, CodeUnknownDependency, r.Node.Start, r.Node.End, fmt.Sprintf(
					"no task %q in story %q%s", r.ID, s.ID, suggest(r.ID, taskIDs())), &Fix{Ref: r.ID})
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
	defs := w.epicDefs[id]
	for _, f := range defs[1:] {
		st, en := anchor(f, "id")
		add(f, CodeDuplicateID, st, en, fmt.Sprintf("epic %q is also defined in %s; keep one of the two files", id, defs[0].Rel), nil)
	}
	e := w.Epics[id]
	if e == nil || e.File == nil || e.File.Epic == nil {
		return out
	}
	f := e.File
	storyIDs := sync.OnceValue(w.SortedStoryIDs) // listed once, not per unknown child
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
		if w.Stories[c.ID] == nil {
			add(f, CodeUnknownStory, c.Node.Start, c.Node.End, fmt.Sprintf(
				"no story folder .saga/stories/%s/; create it with `saga-lsp new story %s --title … --epic %s`%s",
				c.ID, c.ID, id, suggest(c.ID, storyIDs())), &Fix{Ref: c.ID})
		}
		if !strings.HasPrefix(c.ID, id+"--") {
			add(f, CodeEpicPrefix, c.Node.Start, c.Node.End, fmt.Sprintf(
				"child story %q of epic %q should be named %s--<story> so its name shows where it belongs", c.ID, id, id), &Fix{Want: id + "--" + c.ID})
		}
	}
	childIDs := sync.OnceValue(func() []string { return slices.Collect(maps.Keys(first)) })
	for i := range e.Children {
		c := &e.Children[i]
		for _, r := range c.BlockedBy {
			switch {
			case r.ID == c.ID:
				add(f, CodeSelfDependency, r.Node.Start, r.Node.End, fmt.Sprintf("story %q cannot be blocked by itself", c.ID), &Fix{Ref: r.ID})
			case first[r.ID] == nil && ValidCanonical(r.ID): // an invalid name is reported as invalid-id
				add(f, CodeUnknownDependency, r.Node.Start, r.Node.End, fmt.Sprintf(
					"%q is not a child of epic %q%s", r.ID, id, suggest(r.ID, childIDs())), &Fix{Ref: r.ID})
			}
		}
	}
	items := make([]plan.Item, 0, len(first))
	for i := range e.Children {
		c := &e.Children[i]
		if first[c.ID] == c {
			it := plan.Item{ID: c.ID, BlockedBy: refIDs(c.BlockedBy)}
			if s := w.Stories[c.ID]; s != nil {
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
