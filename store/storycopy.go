package store

import (
	"path"
	"slices"
	"strings"
)

// A copy of a story (main or worktree) is assembled once from its folder's
// files, then edited: an update replaces, adds or drops files in place (a
// binary search in the sorted tasks), so an edit in a story of 100,000 tasks
// neither re-sorts nor re-indexes it.

// indexFrom is how many tasks a story needs before it keeps an id → position
// map; smaller ones search their sorted tasks.
const indexFrom = 64

// assembleStory builds one copy of a story from the files of its folder dir.
func assembleStory(dir string, files []*File) *Story {
	id := path.Base(dir)
	var s *Story
	var tasks []*Task
	var journal *File
	for _, f := range files {
		switch f.Kind {
		case KindStory:
			s = storyMeta(id, f)
		case KindTask:
			if tasks == nil {
				tasks = make([]*Task, 0, len(files))
			}
			tasks = append(tasks, taskOf(f))
		case KindJournal:
			journal = f
		}
	}
	if s == nil {
		s = &Story{ID: id}
	}
	slices.SortFunc(tasks, func(a, b *Task) int { return strings.Compare(a.ID, b.ID) })
	s.Tasks, s.Journal, s.Dir, s.InWorktree = tasks, journal, dir, inWorktree(dir)
	s.reindex()
	return s
}

// storyMeta is a story with story.json's fields (f's copy stays untouched:
// snapshots share it).
func storyMeta(id string, f *File) *Story {
	if f.Story != nil {
		meta := *f.Story
		return &meta
	}
	return &Story{ID: id, File: f} // unreadable: present, but with nothing in it
}

// taskOf is a task file's task; an unreadable one still counts as the task
// its name says.
func taskOf(f *File) *Task {
	if f.Task != nil {
		return f.Task
	}
	return &Task{ID: f.Name, File: f}
}

// taskIndex maps a large story's task ids to their positions in Tasks. It
// is shared by the versions of a copy that hold the same tasks.
type taskIndex struct{ pos map[string]int32 }

// reindex builds the index of a large story.
func (s *Story) reindex() {
	s.index = nil
	if len(s.Tasks) < indexFrom {
		return
	}
	s.index = &taskIndex{pos: make(map[string]int32, len(s.Tasks))}
	for i, t := range s.Tasks {
		s.index.pos[t.ID] = int32(i)
	}
}

// taskPos is the position of task id in Tasks, or -1.
func (s *Story) taskPos(id string) int {
	if s.index != nil {
		if i, ok := s.index.pos[id]; ok {
			return int(i)
		}
		return -1
	}
	if i, ok := slices.BinarySearchFunc(s.Tasks, id, func(t *Task, id string) int { return strings.Compare(t.ID, id) }); ok {
		return i
	}
	return -1
}

// Task finds a task by id.
func (s *Story) Task(id string) *Task {
	if i := s.taskPos(id); i >= 0 {
		return s.Tasks[i]
	}
	return nil
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

// fileCount counts the copy's files, journal included.
func (s *Story) fileCount() int {
	n := len(s.Tasks)
	if s.File != nil {
		n++
	}
	if s.Journal != nil {
		n++
	}
	return n
}

// editCopy returns old (a copy of a story in folder dir, nil when there was
// none) with the files at removed dropped and the changed files put in. A
// folder whose last file went away is gone (nil); one that had none (an
// empty folder is still a story that exists) stays.
func editCopy(old *Story, dir string, removed []string, changed []*File) *Story {
	if old == nil {
		if len(changed) == 0 {
			return nil
		}
		return assembleStory(dir, changed)
	}
	s := &Story{}
	*s = *old
	tasks := old.Tasks
	owned := false // tasks is ours to modify
	shifted := false
	own := func() {
		if !owned {
			tasks, owned = slices.Clone(tasks), true
		}
	}
	find := func(id string) (int, bool) {
		if !shifted && old.index != nil {
			i, ok := old.index.pos[id]
			if ok {
				return int(i), true
			}
		}
		return slices.BinarySearchFunc(tasks, id, func(t *Task, id string) int { return strings.Compare(t.ID, id) })
	}
	story, journal := s.File, s.Journal
	for _, rel := range removed {
		kind, _, name := Classify(rel)
		switch kind {
		case KindStory:
			story = nil
		case KindJournal:
			journal = nil
		case KindTask:
			if i, ok := find(name); ok {
				own()
				tasks = slices.Delete(tasks, i, i+1)
				shifted = true
			}
		}
	}
	for _, f := range changed {
		switch f.Kind {
		case KindStory:
			story = f
		case KindJournal:
			journal = f
		case KindTask:
			own()
			if i, ok := find(f.Name); ok {
				tasks[i] = taskOf(f)
			} else {
				tasks = slices.Insert(tasks, i, taskOf(f))
				shifted = true
			}
		}
	}
	if story != s.File {
		if story != nil {
			s = storyMeta(old.ID, story)
		} else {
			s = &Story{ID: old.ID}
		}
	}
	s.Tasks, s.Journal, s.Dir, s.InWorktree, s.index = tasks, journal, dir, inWorktree(dir), old.index
	if shifted {
		s.reindex()
	}
	if s.fileCount() == 0 && old.fileCount() > 0 {
		return nil
	}
	return s
}
