package control

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// NoConflictError refuses `land --resolve` of a story without an open
// conflict-resolution task: nothing was started.
type NoConflictError struct {
	Story string
	Why   string // what there is instead, and the next step
}

func (e *NoConflictError) Error() string {
	return fmt.Sprintf("story %s has no open conflict to resolve: %s", e.Story, e.Why)
}

// Resolve starts the worker of a story whose restack — or land's follow of
// the default branch — stopped on a conflict, on its conflict-resolution
// task (docs/landing.md#a-conflict): the run `saga-lsp run <story>` starts
// (StartStory), after checking that the task is open — recorded, taken in
// by no run since, the branch where the conflict left it, the task file
// saga-lsp's as written. Else *NoConflictError, and nothing runs.
func Resolve(ctx context.Context, o RunOptions) (*readmodel.Started, error) {
	if err := store.CheckName("story name", o.Story, true, true); err != nil {
		return nil, err
	}
	if err := storyExists(o.Root, o.Story); err != nil {
		return nil, err
	}
	var err error
	if o.SessionDir, err = readmodel.SessionDirOf(o.SessionDir, o.Env); err != nil {
		return nil, err
	}
	if err := o.openConflict(ctx); err != nil {
		return nil, err
	}
	return StartStory(ctx, o)
}

// openConflict is nil when the story has an open conflict task the
// worker's start takes in (runs/worker/restack.go's conditions).
func (o *RunOptions) openConflict(ctx context.Context) error {
	refuse := func(format string, args ...any) error {
		return &NoConflictError{Story: o.Story, Why: fmt.Sprintf(format, args...)}
	}
	st, err := o.state(ctx)
	if err != nil {
		return err
	}
	c := st.Conflict
	if c == nil {
		rec, ok := runs.ReadRecord(o.Root, o.Story)
		switch {
		case st.State == readmodel.EpicRunning:
			return refuse("it runs now (`saga-lsp follow %s`)", o.Story)
		case ok && rec.Restack != nil && len(rec.Restack.Conflicts) > 0:
			return refuse("the conflict in %s of its last restack is stale — a run took it in, or story/%s moved since — so `saga-lsp land` (or `saga-lsp restack %s`) looks again",
				strings.Join(rec.Restack.Conflicts, ", "), o.Story, o.Story)
		}
		return refuse("no restack and no land stopped it on a conflict (`saga-lsp status %s` says where it stands)", o.Story)
	}
	rel := store.TaskFileRel(o.Story, c.Task)
	rec, _ := runs.ReadRecord(o.Root, o.Story)
	data, err := filesafe.ReadInside(store.WorktreeDir(o.Root, o.Story), rel)
	if err != nil {
		return refuse("its task %s is gone from its worktree (%v): `saga-lsp land` (or `saga-lsp restack %s`) writes it again", c.Task, err, o.Story)
	}
	if sum := sha256.Sum256(data); rec.Restack == nil || hex.EncodeToString(sum[:]) != rec.Restack.Digest {
		return refuse("%s is not the task saga-lsp wrote (its content changed): `saga-lsp land` (or `saga-lsp restack %s`) writes it again", rel, o.Story)
	}
	return nil
}
