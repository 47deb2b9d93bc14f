package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/store/plan"
)

// NameKind is what a name given by a user stands for.
type NameKind string

const (
	NameEither NameKind = ""      // a story or an epic, whichever has the name
	NameStory  NameKind = "story" // a story
	NameEpic   NameKind = "epic"  // an epic
)

// AmbiguousNameError is a name that is both a story and an epic, given
// without saying which.
type AmbiguousNameError struct{ Name string }

func (e *AmbiguousNameError) Error() string {
	return fmt.Sprintf("%q is both a story and an epic", e.Name)
}

// ResolveName says whether name is a story or an epic. want narrows it to
// one kind; NameEither takes whichever has the name and refuses one that is
// both (*AmbiguousNameError) rather than quietly picking one. A name of
// neither (of the wanted kind) is an error naming what to do, with a
// did-you-mean among the names of that kind.
func ResolveName(ws *Workspace, name string, want NameKind) (NameKind, error) {
	story, epic := ws.Story(name) != nil, ws.Epic(name) != nil
	switch {
	case want == NameStory && story, want == NameEither && story && !epic:
		return NameStory, nil
	case want == NameEpic && epic, want == NameEither && epic && !story:
		return NameEpic, nil
	case want == NameEither && story && epic:
		return "", &AmbiguousNameError{Name: name}
	case want == NameStory:
		return "", fmt.Errorf("no story named %q%s: .saga/stories/ holds the stories, `saga-lsp check` lists problems",
			name, suggest(name, ws.SortedStoryIDs()))
	case want == NameEpic:
		return "", fmt.Errorf("no epic named %q%s: .saga/epics/ holds the epics, `saga-lsp check` lists problems",
			name, suggest(name, ws.SortedEpicIDs()))
	}
	return "", fmt.Errorf("no story or epic named %q%s: `saga-lsp check` lists problems, .saga/stories/ and .saga/epics/ hold the names",
		name, suggest(name, append(ws.SortedStoryIDs(), ws.SortedEpicIDs()...)))
}

// NameOnDisk is ResolveName without loading the workspace, where the
// files at root settle it alone: the name's story file with nothing of an
// epic of that name, or the reverse (or the one of the wanted kind). ok is
// false otherwise — neither, both, a story only in its worktree, anything
// unusual — and ResolveName on a loaded workspace answers, with its errors.
// It spares `status <name>` a whole load before the one that reads it.
func NameOnDisk(root, name string, want NameKind) (kind NameKind, ok bool) {
	if name == "" || !filepath.IsLocal(name) || strings.ContainsAny(name, `/\`) {
		return "", false
	}
	at := func(rel string) (present, absent bool) {
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
		return err == nil && fi.Mode().IsRegular(), errors.Is(err, fs.ErrNotExist)
	}
	story, _ := at(StoryFileRel(name))
	_, noStoryDir := at(StoryDirRel(name))
	_, noWorktree := at(WorktreeDirRel(name))
	epicDir, _ := at(EpicFileRel(name))
	_, noEpicFolder := at(path.Dir(EpicFileRel(name)))
	single, noSingle := at(SingleEpicFileRel(name))
	epic := epicDir || single
	noStory, noEpic := noStoryDir && noWorktree, noEpicFolder && noSingle
	switch {
	case story && (want == NameStory || want == NameEither && noEpic):
		return NameStory, true
	case epic && (want == NameEpic || want == NameEither && noStory):
		return NameEpic, true
	}
	return "", false
}

// Planned is what `plan` orders for a name: a story's tasks, or an epic's
// child stories.
type Planned struct {
	Kind  NameKind // NameStory or NameEpic
	Title string
	Noun  plan.Noun // task(s) or story/stories
	Items []plan.Item
}

// PlanFor resolves name as ResolveName does and returns what `plan` orders
// for it. Statuses come from each story's live copy (its worktree's while
// it has one), so a story completed in its worktree is planned as
// completed; an epic's child story's status is Story.EffectiveStatus. A
// task whose file cannot be trusted (empty, unreadable, unparsable,
// schema-invalid) is a broken item, and so is an epic's child story
// holding such a file.
func PlanFor(ws *Workspace, name string, want NameKind) (Planned, error) {
	kind, err := ResolveName(ws, name, want)
	if err != nil {
		return Planned{}, err
	}
	if kind == NameStory {
		s := ws.Story(name)
		return Planned{Kind: NameStory, Title: storyTitle(s), Noun: plan.Noun{One: "task", Many: "tasks"}, Items: TaskPlanItems(s)}, nil
	}
	e := ws.Epic(name)
	p := Planned{Kind: NameEpic, Title: e.Title, Noun: plan.Stories()}
	if p.Title == "" {
		p.Title = e.ID
	}
	seen := map[string]bool{}
	for _, c := range e.Children {
		if seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		it := plan.Item{ID: c.ID, Status: StatusPending, BlockedBy: refIDs(c.BlockedBy)}
		if s := ws.Story(c.ID); s != nil {
			it.Subject, it.Status, it.Paths = s.Title, s.EffectiveStatus(), ws.StoryPaths(c.ID)
			for _, f := range s.StoryFiles() {
				if it.Broken = brokenProblem(f); it.Broken != "" {
					break
				}
			}
		}
		p.Items = append(p.Items, it)
	}
	return p, nil
}

// PathGlobs are the story's paths: the union of its tasks' "paths", each
// glob once, in task order (docs/format.md#paths).
func (s *Story) PathGlobs() []string {
	var out []string
	for _, t := range s.Tasks {
		for _, g := range t.Paths {
			if !slices.Contains(out, g.Pattern) {
				out = append(out, g.Pattern)
			}
		}
	}
	return out
}

// StoryPaths are the paths of story id as overlaps count them: the union of
// its main copy's and its worktree copy's (docs/landing.md#conflicts-foreseen).
// A worktree being checked out, or an agent editing its copy, can add
// paths, never take the main copy's away.
func (w *Workspace) StoryPaths(id string) []string {
	c := w.Copies(id)
	var out []string
	for _, s := range []*Story{c.Main, c.Worktree} {
		if s == nil {
			continue
		}
		for _, g := range s.PathGlobs() {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	return out
}

// TaskPlanItems returns the plan items of one copy of a story: its tasks.
func TaskPlanItems(s *Story) []plan.Item {
	items := make([]plan.Item, 0, len(s.Tasks))
	for _, t := range s.Tasks {
		items = append(items, plan.Item{ID: t.ID, Subject: t.Subject, Status: t.Status, Priority: t.Priority,
			BlockedBy: refIDs(t.BlockedBy), Broken: brokenProblem(t.File)})
	}
	return items
}

// Broken returns the finding that makes the file's content untrustworthy —
// it could not be read (missing, over-size, binary), or is not valid JSON
// of its kind (empty, unparsable, schema-invalid) — and whether there is
// one. plan and status show such a task as broken, never as a task.
func (f *File) Broken() (Diagnostic, bool) {
	if f != nil {
		for _, d := range f.Local {
			switch d.Code {
			case CodeUnreadableFile, CodeJSONSyntax, CodeSchema:
				return d, true
			}
		}
	}
	return Diagnostic{}, false
}

// brokenProblem is Broken's finding as `check` prints it, "" for none.
func brokenProblem(f *File) string {
	if d, ok := f.Broken(); ok {
		return d.String()
	}
	return ""
}

func storyTitle(s *Story) string {
	if s.Title != "" {
		return s.Title
	}
	return s.ID
}

// RolledUp is the status of a whole made of parts (a story of its tasks, an
// epic of its stories): completed when there are parts and every one is, in
// progress when one has started, else pending.
func RolledUp[P any](parts []P, status func(P) string) string {
	done, started := 0, false
	for _, p := range parts {
		switch status(p) {
		case StatusCompleted:
			done++
			started = true
		case StatusInProgress:
			started = true
		}
	}
	switch {
	case len(parts) > 0 && done == len(parts):
		return StatusCompleted
	case started:
		return StatusInProgress
	}
	return StatusPending
}

// EffectiveStatus is the story's status as the tasks show it: completed when
// every task is, in progress when any has started, else story.json's status
// or pending.
func (s *Story) EffectiveStatus() string {
	if len(s.Tasks) > 0 {
		if st := RolledUp(s.Tasks, func(t *Task) string { return t.Status }); st != StatusPending {
			return st
		}
	}
	if s.Status == StatusInProgress || s.Status == StatusCompleted {
		return s.Status
	}
	return StatusPending
}
