package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// taskUpdateResponse is the part of TaskUpdate's result the sync reads.
type taskUpdateResponse struct {
	Success      *bool           `json:"success"`
	TaskID       json.RawMessage `json:"taskId"`
	StatusChange *struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"statusChange"`
}

// postToolUse writes the status a TaskUpdate changed into the story's task
// file. Anything that is not a successful status change of a SAGA story's
// task is none of its business and passes silently.
func (h *hookRun) postToolUse(p *HookPayload) {
	if p.ToolName != "TaskUpdate" {
		return
	}
	var resp taskUpdateResponse
	if err := json.Unmarshal(p.ToolResponse, &resp); err != nil {
		h.warnf("TaskUpdate tool_response is not the expected object (%v); status not synced", err)
		return
	}
	if resp.Success == nil || !*resp.Success || resp.StatusChange == nil {
		return
	}
	status := resp.StatusChange.To
	switch status {
	case "deleted":
		return // Claude Code removed its copy; the SAGA task stays
	case store.StatusPending, store.StatusInProgress, store.StatusCompleted:
	default:
		h.warnf("TaskUpdate statusChange.to %q is not pending, in_progress or completed; status not synced", status)
		return
	}

	story, ok := h.syncStory("status not synced")
	if !ok {
		return
	}

	var input struct {
		TaskID json.RawMessage `json:"taskId"`
	}
	_ = json.Unmarshal(p.ToolInput, &input) // a bad tool_input leaves the response's id
	task := taskIDFromJSON(input.TaskID)
	if task == "" {
		task = taskIDFromJSON(resp.TaskID)
	}
	if task == "" {
		h.warnf("TaskUpdate payload has no taskId; status not synced")
		return
	}
	if !store.ValidID(task) {
		h.warnf("task id %q is not a valid SAGA task id; status not synced", task)
		return
	}

	dir := h.getenv(runs.EnvProjectDir)
	if dir == "" {
		dir = h.getenv(claudecode.EnvProjectDir)
	}
	if dir == "" {
		dir = h.hookCwd(p)
	}
	root, err := store.FindRoot(absPathFrom(p.Cwd, dir))
	if err != nil {
		h.warnf("status of %s/%s not synced: %v", story, task, err)
		return
	}
	ctx, cancel := context.WithTimeout(h.ctx, h.limits.lock)
	defer cancel()
	if _, err := store.MirrorTaskStatus(ctx, root, story, task, status); err != nil && !errors.Is(err, store.ErrNoFile) {
		h.warnf("status of %s/%s not synced: %v", story, task, err)
	}
}

// taskIDFromJSON reads a task id given as a JSON string or number.
func taskIDFromJSON(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if _, err := strconv.ParseUint(n.String(), 10, 64); err == nil {
			return n.String()
		}
	}
	return ""
}

// syncStory is the story whose task a TaskUpdate changed: runs.EnvStoryID,
// else the story of a SAGA task list (claudecode.EnvTaskListID). ok is false
// for a session that is none of SAGA's, or whose two sources disagree (a
// warning ending in consequence says so).
func (h *hookRun) syncStory(consequence string) (story string, ok bool) {
	list := h.getenv(claudecode.EnvTaskListID)
	listStory, listOK := claudecode.StoryOfList(list)
	if claudecode.IsSagaList(list) && !listOK {
		h.warnf("task list id %q is not a valid SAGA story task list id; %s", list, consequence)
		return "", false
	}
	story = h.getenv(runs.EnvStoryID)
	switch {
	case story == "":
		return listStory, listOK // not a SAGA story's task list: nothing to do
	case !store.ValidCanonical(story):
		h.warnf("%s %q is not a valid story name; %s", runs.EnvStoryID, story, consequence)
		return "", false
	case listOK && listStory != story:
		// The worker sets both to the same story; a SAGA list of another
		// story holds other tasks, whose ids could name the wrong file.
		h.warnf("task list %q is not story %s's; %s", list, story, consequence)
		return "", false
	}
	return story, true
}
