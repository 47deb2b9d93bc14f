package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/store"
)

// A restack that conflicted (docs/restack.md#a-conflict) left the story's
// branch as it was and wrote a conflict-resolution task into its worktree.
// The story's next run takes it in before any agent runs: the task,
// recognised by the digest the record keeps (an agent's or a person's file
// is not it), is committed; each new tip is merged and the merge committed
// as git leaves it — conflict markers included — with the tip as its second
// parent, so the branch holds the blocker's new work from then on. The
// agent resolves the markers as the task asks; the task's check
// (control.ConflictMarkersCheck) refuses its completion while one is left,
// and every task's checks gate the end as always.

// readRestack commits the task a recorded restack conflict wrote for the
// branch's tip, before the guard of .saga/ runs (to it, an uncommitted task
// file is an agent's): nil when there is none, or it is not saga-lsp's.
func (r *run) readRestack(ctx context.Context) *restackTask {
	rec, ok := runs.ReadRecord(r.root, r.o.Story)
	if !ok || rec.Restack == nil || len(rec.Restack.Conflicts) == 0 || rec.Restack.Task == "" {
		return nil
	}
	rs := rec.Restack
	tip, err := r.wtGit.Run(ctx, "rev-parse", "--verify", "-q", r.branchRef()+"^{commit}")
	if err != nil || tip != rs.Head {
		return nil // the branch moved since the restack: its task is stale
	}
	rel := store.TaskFileRel(r.o.Story, rs.Task)
	data, err := filesafe.ReadInside(r.wt, rel)
	if err != nil {
		r.j.Warn(runs.StepWorktree, "the restack task %s is gone (%v): `saga-lsp restack %s` writes it again", rs.Task, err, r.o.Story)
		return nil
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != rs.Digest {
		r.j.Warn(runs.StepWorktree, "%s is not the restack task saga-lsp wrote (its content changed): not taken in; `saga-lsp restack %s` writes it again", rel, r.o.Story)
		return nil
	}
	// Committed at once, alone in the index: the guard then keeps it as
	// the branch's.
	if _, err := r.wtGit.Run(ctx, "add", "--", rel); err != nil {
		r.j.Warn(runs.StepWorktree, "the restack task: %v", err)
		return nil
	}
	if _, err := r.commitIndex(ctx, fmt.Sprintf("saga(%s): restack task %s", r.o.Story, rs.Task)); err != nil {
		r.j.Warn(runs.StepWorktree, "commit the restack task: %v", err)
		return nil
	}
	return &restackTask{rec: *rs}
}

// restackTask is a restack conflict taken in: its task committed.
type restackTask struct{ rec runs.RestackRecord }

// holds tells whether a new tip of the restack conflict taken in holds
// commit c.
func (rt *restackTask) holds(ctx context.Context, r *run, c string) bool {
	if rt == nil || c == "" {
		return false
	}
	for _, t := range rt.rec.Tips {
		if r.wtGit.OK(ctx, "merge-base", "--is-ancestor", c, t) {
			return true
		}
	}
	return false
}

// takeRestack merges each new tip of a restack conflict taken in (after
// the guard and the reference commit's merge).
func (r *run) takeRestack(ctx context.Context, rt *restackTask) error {
	if rt == nil {
		return nil
	}
	if st, err := r.wtGit.Run(ctx, "status", "--porcelain"); err != nil || st != "" {
		return fmt.Errorf("%s must take in the new tip of %s, but its worktree %s has uncommitted changes:\n%s\ncommit or discard them (`git -C %s status`), then run the story again",
			r.branch, strings.Join(rt.rec.Onto, " and "), r.wt, st, r.wt)
	}
	for i, t := range rt.rec.Tips {
		if r.wtGit.OK(ctx, "merge-base", "--is-ancestor", t, "HEAD") {
			continue
		}
		if err := r.mergeTip(ctx, rt.rec.Onto[i], t); err != nil {
			return err
		}
	}
	return nil
}

// mergeTip merges branch's tip t into the story branch and commits the
// merge as git leaves it, conflicts included.
func (r *run) mergeTip(ctx context.Context, branch, t string) error {
	args := append(r.commitIdentity(ctx), "merge", "--no-commit", "--no-ff", t)
	_, mergeErr := r.wtGit.Run(ctx, args...)
	conflicts, _ := r.wtGit.Run(ctx, "diff", "--name-only", "--diff-filter=U")
	if mergeErr != nil && conflicts == "" {
		r.wtGit.Run(ctx, "merge", "--abort")
		return fmt.Errorf("merge %s (%s) into %s: %w", branch, verify.Short(t), r.branch, mergeErr)
	}
	if _, err := r.wtGit.Run(ctx, "add", "-A"); err != nil {
		r.wtGit.Run(ctx, "merge", "--abort")
		return err
	}
	tree, err := r.wtGit.Run(ctx, "write-tree")
	if err != nil {
		return err
	}
	parent, err := r.wtGit.Run(ctx, "rev-parse", "--verify", "-q", r.branchRef()+"^{commit}")
	if err != nil {
		return err
	}
	files := strings.Fields(conflicts)
	msg := fmt.Sprintf("saga(%s): build on the new tip of %s (%s)", r.o.Story, branch, verify.Short(t))
	if len(files) > 0 {
		msg += " — conflicts left for this run's agent in " + strings.Join(files, ", ")
	}
	if _, err := r.commitTree(ctx, tree, parent, msg, t); err != nil {
		return err
	}
	// The merge is committed: git forgets it, index and files as they are.
	if _, err := r.wtGit.Run(ctx, "merge", "--quit"); err != nil {
		return err
	}
	r.j.Step(runs.StepWorktree, "%s", strings.TrimPrefix(msg, "saga("+r.o.Story+"): "))
	return nil
}
