package store

import (
	"fmt"

	"github.com/saga-ai/saga-lsp/store/plan"
)

// PlanItems returns what `plan` orders for name: a story's tasks, or an
// epic's child stories (a story wins when both share the name). noun is
// "tasks" or "stories". Statuses come from each story's live copy (its
// worktree's while it has one), so a story completed in its worktree is
// planned as completed. A task whose file cannot be trusted (empty,
// unreadable, unparsable, schema-invalid) is a broken item, and so is an
// epic's child story holding such a file.
func PlanItems(ws *Workspace, name string) (items []plan.Item, title, noun string, err error) {
	if s := ws.Story(name); s != nil {
		return TaskPlanItems(s), storyTitle(s), "tasks", nil
	}
	if e := ws.Epic(name); e != nil {
		seen := map[string]bool{}
		for _, c := range e.Children {
			if seen[c.ID] {
				continue
			}
			seen[c.ID] = true
			it := plan.Item{ID: c.ID, Status: StatusPending, BlockedBy: refIDs(c.BlockedBy)}
			if s := ws.Story(c.ID); s != nil {
				it.Subject, it.Status = s.Title, s.EffectiveStatus()
				for _, f := range s.StoryFiles() {
					if it.Broken = brokenProblem(f); it.Broken != "" {
						break
					}
				}
			}
			items = append(items, it)
		}
		title = e.Title
		if title == "" {
			title = e.ID
		}
		return items, title, "stories", nil
	}
	return nil, "", "", fmt.Errorf("no story or epic named %q%s: `saga-lsp check` lists problems, .saga/stories/ and .saga/epics/ hold the names",
		name, suggest(name, append(ws.SortedStoryIDs(), ws.SortedEpicIDs()...)))
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

// EffectiveStatus is the story's status as the tasks show it: completed when
// every task is, in progress when any has started, else story.json's status
// or pending.
func (s *Story) EffectiveStatus() string {
	if len(s.Tasks) > 0 {
		done, started := 0, false
		for _, t := range s.Tasks {
			switch t.Status {
			case StatusCompleted:
				done++
				started = true
			case StatusInProgress:
				started = true
			}
		}
		switch {
		case done == len(s.Tasks):
			return StatusCompleted
		case started:
			return StatusInProgress
		}
	}
	if s.Status == StatusInProgress || s.Status == StatusCompleted {
		return s.Status
	}
	return StatusPending
}
