package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// syncLockTimeout bounds the wait for the story lock in PostToolUse.
var syncLockTimeout = 5 * time.Second

// ErrNoTaskFile is returned by SyncTaskStatus when the task has no file in
// the story (a task created at run time with TaskCreate): nothing to sync.
var ErrNoTaskFile = errors.New("task has no file in the story")

// TaskListPrefix starts the Claude Code task list ids of SAGA stories:
// saga__<story>__<unixMillis>.
const TaskListPrefix = "saga__"

// StoryFromTaskList returns the story of a SAGA task list id
// ("saga__<story>__<unixMillis>", or "saga__<story>" as the first SAGA
// design had it). ok is false for any other list.
func StoryFromTaskList(id string) (story string, ok bool) {
	rest, ok := strings.CutPrefix(id, TaskListPrefix)
	if !ok {
		return "", false
	}
	// Canonical names never hold "_", so the last "__" ends the story.
	if i := strings.LastIndex(rest, "__"); i >= 0 {
		ms := rest[i+2:]
		if ms == "" || strings.Trim(ms, "0123456789") != "" {
			return "", false
		}
		rest = rest[:i]
	}
	if !store.ValidCanonical(rest) {
		return "", false
	}
	return rest, true
}

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

	story := h.getenv("SAGA_STORY_ID")
	if story == "" {
		list := h.getenv("CLAUDE_CODE_TASK_LIST_ID")
		var ok bool
		if story, ok = StoryFromTaskList(list); !ok {
			if strings.HasPrefix(list, TaskListPrefix) {
				h.warnf("task list id %q is not saga__<story>__<unixMillis> with a valid story name; status not synced", list)
			}
			return // not a SAGA story's task list
		}
	} else if !store.ValidCanonical(story) {
		h.warnf("SAGA_STORY_ID %q is not a valid story name; status not synced", story)
		return
	} else if list := h.getenv("CLAUDE_CODE_TASK_LIST_ID"); strings.HasPrefix(list, TaskListPrefix) {
		// The worker sets both to the same story; a SAGA list of another
		// story holds other tasks, whose ids could name the wrong file.
		if s, ok := StoryFromTaskList(list); !ok || s != story {
			h.warnf("task list %q is not story %s's (saga__%s__<unixMillis>); status not synced", list, story, story)
			return
		}
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

	dir := h.getenv("SAGA_PROJECT_DIR")
	if dir == "" {
		dir = h.getenv("CLAUDE_PROJECT_DIR")
	}
	if dir == "" {
		dir = h.hookCwd(p)
	}
	root, err := store.FindRoot(absPathFrom(p.Cwd, dir))
	if err != nil {
		h.warnf("status of %s/%s not synced: %v", story, task, err)
		return
	}
	ctx, cancel := context.WithTimeout(h.ctx, syncLockTimeout)
	defer cancel()
	if _, err := SyncTaskStatus(ctx, root, story, task, status); err != nil && !errors.Is(err, ErrNoTaskFile) {
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

// SyncTaskStatus sets the status of task in story to status in
// <root>/.saga/stories/<story>/<task>.json: only the status value's bytes
// change (a missing status member is appended), written atomically while
// holding the story's lock ("story-<story>", shared by every worktree of the
// repository). changed is false when the file already had that status. A
// task without a file gives ErrNoTaskFile. Names are validated before any
// path is built.
func SyncTaskStatus(ctx context.Context, root, story, task, status string) (changed bool, err error) {
	if !store.ValidCanonical(story) {
		return false, fmt.Errorf("invalid story name %q", story)
	}
	if !store.ValidID(task) {
		return false, fmt.Errorf("invalid task id %q", task)
	}
	switch status {
	case store.StatusPending, store.StatusInProgress, store.StatusCompleted:
	default:
		return false, fmt.Errorf("invalid status %q: want pending, in_progress or completed", status)
	}
	rel := store.TaskFileRel(story, task)
	path := filepath.Join(root, filepath.FromSlash(rel))
	if err := checkSyncTarget(root, story, path, rel); err != nil {
		return false, err
	}
	lock, err := store.AcquireLock(ctx, root, "story-"+story)
	if err != nil {
		return false, fmt.Errorf("lock story %s: %w", story, err)
	}
	defer func() {
		if uerr := lock.Unlock(); err == nil && uerr != nil {
			err = uerr
		}
	}()
	err = store.UpdateFile(path, func(old []byte) ([]byte, error) {
		if old == nil {
			return nil, ErrNoTaskFile // removed while we waited
		}
		if len(old) > store.MaxFileSize {
			return nil, fmt.Errorf("%s is over the %d MB limit for SAGA files", rel, store.MaxFileSize>>20)
		}
		out, err := store.SetString(old, "status", status)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
		if doc := jsonc.Parse(out); len(doc.Errors) > 0 {
			return nil, fmt.Errorf("%s: setting the status would break the file (%s); left as it was", rel, doc.Errors[0].Message)
		}
		changed = !bytes.Equal(out, old)
		return out, nil
	})
	return changed, err
}

// checkSyncTarget: the task file must be a regular file (a write would
// replace a link with a copy); a missing file is ErrNoTaskFile, a missing
// story folder an error.
func checkSyncTarget(root, story, path, rel string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, derr := os.Stat(filepath.Join(root, filepath.FromSlash(store.StoryDirRel(story)))); derr != nil {
			return fmt.Errorf("no story folder %s in %s", store.StoryDirRel(story), root)
		}
		return ErrNoTaskFile
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file; SAGA task files are plain JSON files", rel)
	}
	return nil
}
