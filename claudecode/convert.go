package claudecode

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/store"
)

// Metadata keys that carry SAGA task fields Claude Code has no place for.
const (
	MetaGuidance = "guidance"
	MetaDoneWhen = "doneWhen"
)

// ToClaudeTask converts a SAGA task (the epic's toClaudeTask): id (the file
// name), subject, activeForm, status and blockedBy map directly; blocks is
// given by the caller (see FromStory); guidance and doneWhen go into
// metadata, only the non-empty ones, and with neither there is no metadata
// at all. Owner stays empty.
//
// Claude Code shows the model a task's subject, description, status and
// blockers, never its metadata, so the description is composed: the task's
// own description, then the non-empty guidance and doneWhen as labelled
// sections (Description).
func ToClaudeTask(t *store.Task, blocks []string) Task {
	blockedBy := make([]string, 0, len(t.BlockedBy))
	for _, r := range t.BlockedBy {
		blockedBy = append(blockedBy, r.ID)
	}
	out := Task{
		ID:          t.ID,
		Subject:     t.Subject,
		Description: Description(t),
		ActiveForm:  t.ActiveForm,
		Status:      t.Status,
		Blocks:      append(make([]string, 0, len(blocks)), blocks...),
		BlockedBy:   blockedBy,
	}
	if t.Guidance != "" || t.DoneWhen != "" {
		out.Metadata = make(map[string]any, 2)
		if t.Guidance != "" {
			out.Metadata[MetaGuidance] = t.Guidance
		}
		if t.DoneWhen != "" {
			out.Metadata[MetaDoneWhen] = t.DoneWhen
		}
	}
	return out
}

// Description is the hydrated description of t: what the model reads of
// the task. The .saga source keeps its fields apart; only this copy is
// composed: the description, guidance, doneWhen, and the checks that judge
// the task (the model should know how it is judged).
func Description(t *store.Task) string {
	var b strings.Builder
	b.WriteString(t.Description)
	section := func(label, text string) {
		if text = strings.TrimSpace(text); text != "" {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(label + ":\n" + text)
		}
	}
	section("Guidance", t.Guidance)
	section("Done when", t.DoneWhen)
	if len(t.Checks) > 0 {
		timeout := t.CheckTimeout
		if timeout <= 0 {
			timeout = store.DefaultCheckTimeout
		}
		var list strings.Builder
		for _, c := range t.Checks {
			list.WriteString("\n- " + c.Command)
		}
		section(fmt.Sprintf("Checks (each must exit 0, run with sh -c in the worktree within %s, before this task can be completed)", timeout), list.String())
	}
	return b.String()
}

// FromClaudeTask is the epic's fromClaudeTask: the status is the only field
// synced back into .saga (the rest is source-controlled there).
func FromClaudeTask(t Task) string { return t.Status }

// FromStory converts every task of s, sorted by id, for hydration: blocks of
// a task are the ids of the other tasks of s that list it in blockedBy
// (sorted, unique), and a task left in_progress (by a crashed run) is reset
// to pending (docs/worker.md#hydration).
func FromStory(s *store.Story) []Task {
	if s == nil {
		return nil
	}
	tasks := make([]*store.Task, 0, len(s.Tasks))
	for _, t := range s.Tasks {
		if t != nil {
			tasks = append(tasks, t)
		}
	}
	slices.SortStableFunc(tasks, func(a, b *store.Task) int { return cmp.Compare(a.ID, b.ID) })
	in := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		in[t.ID] = true
	}
	blocks := make(map[string][]string)
	for _, t := range tasks { // in id order, so every blocks list comes out sorted
		for _, r := range t.BlockedBy {
			if r.ID != t.ID && in[r.ID] {
				blocks[r.ID] = append(blocks[r.ID], t.ID)
			}
		}
	}
	out := make([]Task, 0, len(tasks))
	for _, t := range tasks {
		ct := ToClaudeTask(t, slices.Compact(blocks[t.ID]))
		if ct.Status == StatusInProgress {
			ct.Status = StatusPending
		}
		out = append(out, ct)
	}
	return out
}
