// The Task tools: TaskList, TaskGet, TaskCreate and TaskUpdate over the
// session's task list, with Claude Code's results and text forms.

package agentsim

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

func (s *session) taskList() toolResult {
	all, err := s.store.list()
	if err != nil {
		return errResult(err.Error())
	}
	completed := map[string]bool{}
	for _, t := range all {
		if t.Status == statusCompleted {
			completed[t.ID] = true
		}
	}
	tasks := []any{}
	var lines []string
	for _, t := range all {
		if t.hidden() {
			continue
		}
		open := []string{}
		for _, b := range t.BlockedBy {
			if !completed[b] {
				open = append(open, b)
			}
		}
		e := newObj("id", t.ID, "subject", t.Subject, "status", t.Status)
		if t.Owner != nil {
			e.set("owner", *t.Owner)
		}
		e.set("blockedBy", open)
		tasks = append(tasks, e)
		line := fmt.Sprintf("#%s [%s] %s", t.ID, t.Status, t.Subject)
		if t.Owner != nil && *t.Owner != "" {
			line += " (" + *t.Owner + ")"
		}
		if len(open) > 0 {
			line += " [blocked by #" + strings.Join(open, ", #") + "]"
		}
		lines = append(lines, line)
	}
	text := "No tasks found"
	if len(lines) > 0 {
		text = strings.Join(lines, "\n")
	}
	return toolResult{structured: newObj("tasks", tasks), text: text}
}

// taskGet shows the model a task's subject, status, description and links,
// never its metadata (what the model must read belongs in the description).
func (s *session) taskGet(in *obj) toolResult {
	t, err := s.store.read(in.str("taskId"))
	if err != nil {
		if errors.Is(err, errTaskNotFound) {
			return toolResult{structured: newObj("task", nil), text: "Task not found"}
		}
		return errResult(err.Error())
	}
	o := newObj("id", t.ID, "subject", t.Subject, "description", t.Description, "status", t.Status,
		"blocks", nonNil(t.Blocks), "blockedBy", nonNil(t.BlockedBy))
	text := fmt.Sprintf("Task #%s: %s\nStatus: %s\nDescription: %s", t.ID, t.Subject, t.Status, t.Description)
	if len(t.BlockedBy) > 0 {
		text += "\nBlocked by: #" + strings.Join(t.BlockedBy, ", #")
	}
	if len(t.Blocks) > 0 {
		text += "\nBlocks: #" + strings.Join(t.Blocks, ", #")
	}
	return toolResult{structured: newObj("task", o), text: text}
}

func (s *session) taskCreate(in *obj) toolResult {
	t := &task{Subject: in.str("subject"), Description: in.str("description")}
	if v, ok := in.get("activeForm"); ok {
		af := v.(string)
		t.ActiveForm = &af
	}
	if v, ok := in.get("metadata"); ok {
		m := v.(*obj).clone()
		for _, k := range append([]string(nil), m.keys...) {
			if m.vals[k] == nil {
				m.del(k)
			}
		}
		t.Metadata = m
	}
	if err := s.store.create(t); err != nil {
		return errResult(err.Error())
	}
	p := s.basePayload("TaskCreated")
	p.set("task_id", t.ID)
	p.set("task_subject", t.Subject)
	if t.Description != "" {
		p.set("task_description", t.Description)
	}
	s.runHooks("TaskCreated", "", p)
	return toolResult{structured: newObj("task", newObj("id", t.ID, "subject", t.Subject, "description", t.Description)),
		text: fmt.Sprintf("Task #%s created successfully: %s", t.ID, t.Subject)}
}

// taskUpdate follows Claude Code's TaskUpdate: fields that change are
// written (and listed in updatedFields); metadata keys merge and null
// deletes; "deleted" removes the file (and raises .highwatermark);
// statusChange only when the status changed; TaskCompleted hooks run before
// a completion is written and exit 2 vetoes it (completionFeedback);
// addBlocks / addBlockedBy link both tasks.
func (s *session) taskUpdate(in *obj) toolResult {
	id := in.str("taskId")
	res := newObj("success", true, "taskId", id)
	if st, _ := in.get("status"); st == statusCompleted {
		if feedback := s.completionFeedback(id); feedback != "" {
			res.set("success", false)
			res.set("updatedFields", []string{})
			res.set("error", feedback)
			return toolResult{structured: res, text: feedback}
		}
	}
	var fields []string
	var change *obj
	_, err := s.store.update(id, func(t *task) (bool, bool, error) {
		setStr := func(key string, dst *string) {
			if v, ok := in.get(key); ok && v.(string) != *dst {
				*dst = v.(string)
				fields = append(fields, key)
			}
		}
		setOpt := func(key string, dst **string) {
			if v, ok := in.get(key); ok && (*dst == nil || **dst != v.(string)) {
				sv := v.(string)
				*dst = &sv
				fields = append(fields, key)
			}
		}
		setStr("subject", &t.Subject)
		setStr("description", &t.Description)
		setOpt("activeForm", &t.ActiveForm)
		setOpt("owner", &t.Owner)
		if v, ok := in.get("metadata"); ok {
			m := t.Metadata.clone()
			if m == nil {
				m = newObj()
			}
			upd := v.(*obj)
			for _, k := range upd.keys {
				if upd.vals[k] == nil {
					m.del(k)
				} else {
					m.set(k, cloneValue(upd.vals[k]))
				}
			}
			t.Metadata = m
			fields = append(fields, "metadata")
		}
		if v, ok := in.get("status"); ok {
			st := v.(string)
			if st == "deleted" {
				change = newObj("from", t.Status, "to", "deleted")
				fields = append(fields, "deleted")
				return false, true, nil
			}
			if st != t.Status {
				change = newObj("from", t.Status, "to", st)
				t.Status = st
				fields = append(fields, "status")
			}
		}
		return len(fields) > 0, false, nil
	})
	switch {
	case errors.Is(err, errTaskNotFound):
		res.set("success", false)
		res.set("updatedFields", []string{})
		res.set("error", "Task not found")
		return toolResult{structured: res, text: "Task not found"}
	case err != nil:
		return errResult(err.Error())
	}
	if change != nil && change.str("to") == "deleted" {
		s.store.raiseWatermark(id)
		s.unlinkDeleted(id)
	}
	if v, ok := in.get("addBlocks"); ok && s.link(id, v.([]any), true) {
		fields = append(fields, "blocks")
	}
	if v, ok := in.get("addBlockedBy"); ok && s.link(id, v.([]any), false) {
		fields = append(fields, "blockedBy")
	}
	res.set("updatedFields", nonNil(fields))
	if change != nil {
		res.set("statusChange", change)
	}
	text := "Updated task #" + id + " " + strings.Join(fields, ", ")
	return toolResult{structured: res, text: text}
}

// completionFeedback runs the TaskCompleted hooks for a task TaskUpdate is
// about to complete (not one already completed), before the status is
// written and outside the task's lock (checks may take long). It returns
// what 2.1.330 answers when hooks block (exit 2): for each, in the order they
// finished, "TaskCompleted hook feedback:\n[<command>]: <stderr>" ("No
// stderr output" when empty), joined by newlines; "" when none blocked. A
// hook that fails otherwise, times out or is killed by an interrupt does not
// block.
func (s *session) completionFeedback(id string) string {
	t, err := s.store.read(id)
	if err != nil || t.Status == statusCompleted {
		return ""
	}
	p := s.basePayload("TaskCompleted")
	p.set("task_id", t.ID)
	p.set("task_subject", t.Subject)
	if t.Description != "" {
		p.set("task_description", t.Description)
	}
	runs := s.runHooks("TaskCompleted", "", p)
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].finished < runs[j].finished })
	var parts []string
	for _, r := range runs {
		if r.exitCode != 2 {
			continue
		}
		msg := r.stderr
		if strings.TrimSpace(msg) == "" {
			msg = "No stderr output"
		}
		parts = append(parts, "TaskCompleted hook feedback:\n["+r.cmd.command+"]: "+msg)
	}
	return strings.Join(parts, "\n")
}

// link records "id blocks others" (blocks=true) or "others block id" on
// both tasks of each pair. It reports whether anything changed.
func (s *session) link(id string, others []any, blocks bool) bool {
	changed := false
	add := func(list *[]string, v string) bool {
		for _, e := range *list {
			if e == v {
				return false
			}
		}
		*list = append(*list, v)
		return true
	}
	for _, ov := range others {
		other := ov.(string)
		if other == id {
			continue
		}
		if _, err := s.store.read(other); err != nil {
			continue
		}
		s.store.update(id, func(t *task) (bool, bool, error) {
			if blocks {
				changed = add(&t.Blocks, other) || changed
				return true, false, nil
			}
			changed = add(&t.BlockedBy, other) || changed
			return true, false, nil
		})
		s.store.update(other, func(t *task) (bool, bool, error) {
			if blocks {
				return add(&t.BlockedBy, id), false, nil
			}
			return add(&t.Blocks, id), false, nil
		})
	}
	return changed
}

// unlinkDeleted removes a deleted task from the others' blocks/blockedBy.
func (s *session) unlinkDeleted(id string) {
	all, _ := s.store.list()
	for _, t := range all {
		if !slices.Contains(t.Blocks, id) && !slices.Contains(t.BlockedBy, id) {
			continue
		}
		s.store.update(t.ID, func(t *task) (bool, bool, error) {
			t.Blocks = without(t.Blocks, id)
			t.BlockedBy = without(t.BlockedBy, id)
			return true, false, nil
		})
	}
}

func without(list []string, v string) []string {
	out := []string{}
	for _, e := range list {
		if e != v {
			out = append(out, e)
		}
	}
	return out
}
