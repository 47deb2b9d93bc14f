package worker

import (
	"context"
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/termtext"
)

// The worker commits to one ref, the story branch (runs.StoryBranch), and
// never through HEAD: the agent can point its worktree's HEAD anywhere (git
// checkout main, git symbolic-ref, a detached HEAD), and a commit that
// followed it would put the story's work on another branch — local main —
// and leave the pull request empty. So HEAD is checked before every commit,
// put back on the branch (and that reported) when it names anything else,
// and the commit itself is made with plumbing on the branch's ref, from
// the tip the worker read (compare-and-swap): what HEAD names plays no
// part in where the work lands.

// branchRef is the story branch's full ref name.
func (r *run) branchRef() string { return "refs/heads/" + r.branch }

// ensureHead makes sure the worktree's HEAD names the story branch, putting
// it back when it names anything else. A branch ref that is itself a
// symbolic ref (to another branch) is refused: committing through it would
// move that branch.
func (r *run) ensureHead(ctx context.Context, step string) error {
	ref := r.branchRef()
	if target, err := r.wtGit.Run(ctx, "symbolic-ref", "-q", ref); err == nil {
		return fmt.Errorf("%s is a symbolic ref to %s, not a branch: the worker does not commit through it; "+
			"point it at the story's last commit (`git -C %s update-ref --no-deref %s <commit>`) and run the story again",
			ref, target, r.wt, ref)
	}
	head, err := r.wtGit.Run(ctx, "symbolic-ref", "-q", "HEAD")
	if err == nil && head == ref {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err() // stopped: HEAD was not read, so nothing is said of it
	}
	was := termtext.Escape(head) // what the agent wrote in HEAD
	if err != nil {
		was = "a detached commit"
		if sha, err := r.wtGit.Run(ctx, "rev-parse", "--short", "HEAD"); err == nil {
			was += " (" + sha + ")"
		}
	}
	if _, err := r.wtGit.Run(ctx, "symbolic-ref", "-m", "saga-lsp: back on "+r.branch, "HEAD", ref); err != nil {
		return fmt.Errorf("the worktree's HEAD names %s, not %s, and could not be put back: %w", was, ref, err)
	}
	msg := fmt.Sprintf("the worktree's HEAD named %s, not %s (moved by the agent?); put back on %s — the worker commits to %s only",
		was, ref, r.branch, r.branch)
	r.j.Warn(step, "%s", msg)
	r.journalNote(msg)
	return nil
}

// commitIndex commits the worktree's index on the story branch with
// message msg and returns the new commit; "" when the index holds the
// branch tip's tree already.
func (r *run) commitIndex(ctx context.Context, msg string) (string, error) {
	tree, err := r.wtGit.Run(ctx, "write-tree")
	if err != nil {
		return "", err
	}
	// The tip and its tree in one process (each one costs at 100,000
	// files on a loaded machine).
	out, err := r.wtGit.Run(ctx, "rev-parse", r.branchRef()+"^{commit}", r.branchRef()+"^{tree}")
	if err != nil {
		return "", fmt.Errorf("read %s: %w", r.branchRef(), err)
	}
	tip, tipTree, _ := strings.Cut(out, "\n")
	if tipTree == tree {
		return "", nil
	}
	return r.commitTree(ctx, tree, tip, msg)
}

// commitIdentity is git.Repo.Identity, asked once per run.
func (r *run) commitIdentity(ctx context.Context) []string {
	if !r.identityRead {
		r.identity, r.identityRead = r.wtGit.Identity(ctx), true
	}
	return r.identity
}

// commitEmpty commits the branch tip's own tree on the branch: a commit
// that changes nothing (the draft PR's start).
func (r *run) commitEmpty(ctx context.Context, msg string) (string, error) {
	tip, err := r.wtGit.Run(ctx, "rev-parse", "--verify", "-q", r.branchRef()+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("read %s: %w", r.branchRef(), err)
	}
	return r.commitTree(ctx, tip+"^{tree}", tip, msg)
}

// commitTree makes a commit of tree on parent (and the merged commits, for
// a merge) and moves the story branch to it only if the branch is still at
// parent (never through a symbolic ref).
func (r *run) commitTree(ctx context.Context, tree, parent, msg string, merged ...string) (string, error) {
	args := append(r.commitIdentity(ctx), "commit-tree", tree, "-p", parent)
	for _, m := range merged {
		args = append(args, "-p", m)
	}
	args = append(args, "-m", msg)
	commit, err := r.wtGit.Run(ctx, args...)
	if err != nil {
		return "", err
	}
	if _, err := r.wtGit.Run(ctx, "update-ref", "--no-deref", "-m", "saga-lsp: "+msg, r.branchRef(), commit, parent); err != nil {
		return "", err
	}
	return commit, nil
}
