package worker

import (
	"context"
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/verify"
)

// One reference commit per run (docs/worker.md#the-reference-commit): R is
// the base's tip as fetched when the run starts (no remote, or a failed
// fetch: the local base branch), read before any agent of this run has
// run, and recorded by its hash. For a stacked story, whose base is a
// blocker's branch, it is the epic's base (verify.EpicBase): its code comes
// from the blocker, its definitions and checks never do. The worker brings
// R into the story branch, so R is the branch's fork point, and reads what
// counts at R's hash — never at a ref an agent could have moved.

// referenceCommit finds R for the run: the tip of base on origin, fetched
// now, when there is a remote; else (or when the fetch fails) the local
// branch. from says where it was read.
func (r *run) referenceCommit(ctx context.Context, base string, remote bool) (sha, from string, err error) {
	if remote {
		// An explicit refspec: the remote-tracking ref is what this fetch
		// brought, whatever the remote's configured refspecs are.
		_, ferr := r.repo.Retry(ctx, "fetch", "--no-tags", "origin", "+refs/heads/"+base+":refs/remotes/origin/"+base)
		if ferr == nil {
			if sha, err := r.repo.Commit(ctx, "refs/remotes/origin/"+base); err == nil {
				return sha, "origin/" + base, nil
			}
		}
		r.j.Warn(runs.StepWorktree, "fetch origin %s: %v; the run's reference commit is the local %s", base, ferr, base)
	}
	for _, ref := range []string{"refs/heads/" + base, base} {
		if sha, err := r.repo.Commit(ctx, ref); err == nil {
			return sha, base, nil
		}
	}
	return "", "", fmt.Errorf("the base %s is neither a branch of this repository nor of origin: pass an existing branch with --base", base)
}

// fromOrigin makes local what this clone has of the run only on origin:
// a stacked story's base (its blocker's branch, pushed from another
// machine) and, in a GitHub Actions job — always a fresh clone — the
// story's own pushed branch, which the run continues as a local run
// continues its branch: an earlier attempt's work, or the merge of its
// blockers the dispatch pushed (docs/github-actions.md#stacked-stories).
func (r *run) fromOrigin(ctx context.Context) {
	if r.base != r.refBase {
		control.FetchBranch(ctx, r.repo, r.base)
	}
	if !r.o.DryRun && runs.Getenv(r.o.Env, "GITHUB_ACTIONS") == "true" &&
		!r.repo.OK(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+r.branch) && control.FetchBranch(ctx, r.repo, r.branch) {
		r.j.Step(runs.StepWorktree, "continuing %s as pushed to origin", r.branch)
	}
}

// bringIn merges R into the story branch when the branch does not hold it
// yet (the base moved since the branch was made, or a stacked story's
// blocker forked from an older base), so that R is the fork point. A
// conflict refuses the run: the merge is undone, and the files and the
// step to take are named. So is an unfinished worktree, where git would
// refuse the merge.
func (r *run) bringIn(ctx context.Context) error {
	if r.wtGit.OK(ctx, "merge-base", "--is-ancestor", r.reference, "HEAD") {
		return nil
	}
	short := verify.Short(r.reference)
	if st, err := r.wtGit.Run(ctx, "status", "--porcelain"); err != nil || st != "" {
		return fmt.Errorf("%s must take in %s (%s, the run's reference commit), but its worktree %s has uncommitted changes (left by an interrupted run?):\n%s\ncommit or discard them (`git -C %s status`), then run the story again",
			r.branch, r.referenceFrom, short, r.wt, st, r.wt)
	}
	msg := fmt.Sprintf("saga(%s): take in %s at %s", r.o.Story, r.referenceFrom, short)
	args := append(r.commitIdentity(ctx), "merge", "--no-edit", "-m", msg, r.reference)
	if _, err := r.wtGit.Run(ctx, args...); err != nil {
		conflicts, _ := r.wtGit.Run(ctx, "diff", "--name-only", "--diff-filter=U")
		r.wtGit.Run(ctx, "merge", "--abort")
		if conflicts == "" {
			return fmt.Errorf("merge %s (%s) into %s: %w", r.referenceFrom, short, r.branch, err)
		}
		return fmt.Errorf("%s conflicts with %s at %s (the run's reference commit) in %s; no agent ran. Merge it yourself — `git -C %s merge %s`, resolve the conflicts and commit — then run the story again",
			r.branch, r.referenceFrom, short, strings.Join(strings.Fields(conflicts), ", "), r.wt, r.reference)
	}
	r.j.Step(runs.StepWorktree, "took %s at %s into %s: the run's reference commit is the branch's fork point", r.referenceFrom, short, r.branch)
	return nil
}
