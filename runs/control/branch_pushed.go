package control

// Where a story run on another machine starts (GitHub Actions:
// docs/github-actions.md#stacked-stories): a pushed branch, whoever ran
// its blockers — the same rule as storyBranch, read from origin. No
// unmerged blocker: the base. One: its pushed branch. Several: their merge,
// made here and pushed as the story's own branch, which the job continues
// (its worker resumes a story branch only origin has: FetchBranch).

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// FetchBranch makes a branch that only origin has a local one (no branch
// of this clone is ever moved); it tells whether the branch is local now.
func FetchBranch(ctx context.Context, g git.Repo, branch string) bool {
	if g.OK(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch) {
		return true
	}
	if !g.HasRemote(ctx) || !g.OK(ctx, "ls-remote", "--exit-code", "--heads", "origin", "refs/heads/"+branch) {
		return false
	}
	_, err := g.Retry(ctx, "fetch", "-q", "origin", "refs/heads/"+branch+":refs/heads/"+branch)
	return err == nil
}

// PushedBase returns the base a story dispatched to another machine
// starts from (its worker's --base), from is the epic's base (default the
// current branch). A story with several unmerged blockers gets their merge
// pushed as origin's story/<story>, unless origin has that branch already
// (an earlier attempt, continued).
func PushedBase(ctx context.Context, root string, ws *store.Workspace, story, from string) (string, error) {
	g := git.Repo{Dir: root}
	if from == "" {
		b, err := g.Run(ctx, "symbolic-ref", "--short", "HEAD")
		if err != nil {
			return "", fmt.Errorf("%s: no current branch to start from: pass --base with a pushed branch", root)
		}
		from = b
	}
	if !g.HasRemote(ctx) {
		return "", fmt.Errorf("the repository has no origin remote: a story run elsewhere starts from a pushed branch")
	}
	if _, err := g.Retry(ctx, "fetch", "-q", "origin", "+refs/heads/"+from+":refs/remotes/origin/"+from,
		"+refs/heads/"+runs.StoryBranchPrefix+"*:refs/remotes/origin/"+runs.StoryBranchPrefix+"*"); err != nil {
		return "", fmt.Errorf("git fetch origin %s: %w (is %s pushed?)", from, err, from)
	}
	target := "refs/remotes/origin/" + from
	var onTop []string
	for _, b := range ws.EpicBlockers(story) {
		bb := runs.StoryBranch(b)
		remote := "refs/remotes/origin/" + bb
		if !g.OK(ctx, "rev-parse", "--verify", "--quiet", remote) {
			if g.OK(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+bb) && !g.OK(ctx, "merge-base", "--is-ancestor", bb, target) {
				return "", fmt.Errorf("story %s builds on %s, which is not on origin: push it (`git push origin %s`) — the runner sees only what is pushed", story, bb, bb)
			}
			continue // never run, or merged and deleted: its work is on the base
		}
		if g.OK(ctx, "merge-base", "--is-ancestor", remote, target) {
			continue // merged into the base
		}
		onTop = append(onTop, bb)
	}
	switch {
	case len(onTop) == 0:
		return from, nil
	case len(onTop) == 1:
		return onTop[0], nil
	case g.OK(ctx, "rev-parse", "--verify", "--quiet", "refs/remotes/origin/"+runs.StoryBranch(story)):
		return from, nil // its merge (and perhaps more) is pushed already
	}
	return from, pushMerge(ctx, g, story, target, onTop)
}

// pushMerge merges the blockers' pushed branches onto target in a
// temporary worktree and pushes the result as origin's story/<story>.
func pushMerge(ctx context.Context, g git.Repo, story, target string, onTop []string) error {
	tmp, err := os.MkdirTemp("", "saga-merge-")
	if err != nil {
		return err
	}
	os.Remove(tmp) // git worktree add makes it
	undo := context.WithoutCancel(ctx)
	defer func() {
		g.Worktree(undo, "remove", "--force", tmp)
		os.RemoveAll(tmp)
	}()
	if _, err := g.AddWorktree(ctx, "-q", "--detach", tmp, target); err != nil {
		return err
	}
	w := g.In(tmp)
	for _, bb := range onTop {
		args := append(w.Identity(ctx), "merge", "-q", "--no-ff", "--no-edit", "-m",
			fmt.Sprintf("saga(%s): build on %s", story, bb), "refs/remotes/origin/"+bb)
		if _, err := w.Run(ctx, args...); err != nil {
			files, _ := w.Run(undo, "diff", "--name-only", "--diff-filter=U")
			w.Run(undo, "merge", "--abort")
			if list := strings.Fields(files); len(list) > 0 {
				var blockers []string
				for _, b := range onTop {
					s, _, _ := runs.StoryOfRunBranch(b)
					blockers = append(blockers, s)
				}
				return &ConflictError{Story: story, Blockers: blockers, Files: list}
			}
			return fmt.Errorf("merge %s for story %s: %w", bb, story, err)
		}
	}
	if _, err := w.Retry(ctx, "push", "-q", "origin", "HEAD:refs/heads/"+runs.StoryBranch(story)); err != nil {
		return fmt.Errorf("push the merge of %s as %s: %w", strings.Join(onTop, ", "), runs.StoryBranch(story), err)
	}
	return nil
}
