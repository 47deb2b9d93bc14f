package store

import (
	"fmt"

	"github.com/saga-ai/saga-lsp/store/plan"
)

// PlanItems returns what `plan` orders for name: a story's tasks, or an
// epic's child stories (a story wins when both share the name). noun is
// "tasks" or "stories".
func PlanItems(ws *Workspace, name string) (items []plan.Item, title, noun string, err error) {
	if s := ws.Stories[name]; s != nil {
		for _, t := range s.Tasks {
			items = append(items, plan.Item{ID: t.ID, Subject: t.Subject, Status: t.Status, Priority: t.Priority, BlockedBy: refIDs(t.BlockedBy)})
		}
		return items, storyTitle(s), "tasks", nil
	}
	if e := ws.Epics[name]; e != nil {
		seen := map[string]bool{}
		for _, c := range e.Children {
			if seen[c.ID] {
				continue
			}
			seen[c.ID] = true
			it := plan.Item{ID: c.ID, Status: StatusPending, BlockedBy: refIDs(c.BlockedBy)}
			if s := ws.Stories[c.ID]; s != nil {
				it.Subject, it.Status = s.Title, s.EffectiveStatus()
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
