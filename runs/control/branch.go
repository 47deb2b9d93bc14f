package control

// Where a story of an epic starts (docs/commands.md#epic-runs-run--follow--status--stop-epic): a dependent story builds
// on its blockers' work. No unmerged blocker: the base. One: the blocker's
// branch (a stacked PR). Several: a merge of their branches, made here as
// the story's branch before the worker starts, the PR against the base.
// The epic runner and `saga-lsp run <story>` both start stories through
// StartStory, so the rule is the same whoever starts the story.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// ConflictError refuses a story whose blockers' branches do not merge: the
// runner holds the story with the files listed. Nothing is left behind.
type ConflictError struct {
	Story    string
	Blockers []string
	Files    []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("not starting story %s: the branches of its blockers %s conflict in %s — merge them by hand (or finish one on the base first), then run it again",
		e.Story, strings.Join(e.Blockers, ", "), strings.Join(termtext.Escapes(e.Files), ", ")) // the files' names are the repository's
}

// storyBranch prepares where the story's worker starts and returns the
// worker's --base: the base itself (the current branch when base is
// empty), a blocker's branch, or the base with the merge already on the
// story's new branch. A story whose branch exists already resumes on it,
// from the base its last run recorded. A dry run works on the story's dry
// branch and worktree and builds on its blockers' dry branches where they
// have one (docs/worker.md#dry-runs); a real run never reads a dry one.
// refs are the repository's local branches as listed a moment before.
func storyBranch(ctx context.Context, root string, ws *store.Workspace, refs git.Refs, story, base string, dry bool) (string, error) {
	g := git.Repo{Dir: root}
	branch := runs.RunBranch(story, dry)
	from := base
	if from == "" {
		if from = refs.HeadBranch(); from == "" {
			return "", fmt.Errorf("%s: no current branch to start from: pass --base", root)
		}
	}
	if refs.Has("refs/heads/" + branch) {
		rec, ok := runs.ReadRecord(root, story)
		if dry {
			rec, ok = runs.ReadDryRecord(root, story)
		}
		if ok && base == "" && rec.Base != "" {
			return rec.Base, nil
		}
		return from, nil
	}
	// Merged blockers are judged against the base as the remote has it.
	target := from
	if g.HasRemote(ctx) {
		if _, err := g.Retry(ctx, "fetch", "-q", "origin", from); err == nil && g.OK(ctx, "rev-parse", "--verify", "--quiet", "origin/"+from) {
			target = "origin/" + from
		}
	}
	onTop := blockersOnTop(ctx, g, ws, refs, story, target, dry, true)
	switch len(onTop) {
	case 0:
		return from, nil
	case 1:
		return onTop[0], nil
	}
	// Several: their merges made without a worktree (merge-tree, then
	// commit-tree: no checkout, and not the repository's worktree lock,
	// which the running workers' worktree steps hold in turn — seconds
	// under load: docs/architecture.md#an-epic-of-200-stories), the branch
	// made at the end, whole or not at all. The worker adds its worktree
	// on it as on any story's existing branch.
	tip, err := g.Run(ctx, "rev-parse", "--verify", "--quiet", target+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%s: %w", target, err)
	}
	identity := g.Identity(ctx)
	for _, bb := range onTop {
		if g.OK(ctx, "merge-base", "--is-ancestor", bb, tip) {
			continue // in already, through an earlier blocker's branch: git merge makes no commit either
		}
		tree, files, err := g.MergeTree(ctx, tip, bb)
		if err != nil {
			return "", fmt.Errorf("merge %s into %s: %w", bb, branch, err)
		}
		if len(files) > 0 {
			var blockers []string
			for _, b := range onTop {
				s, _, _ := runs.StoryOfRunBranch(b)
				blockers = append(blockers, s)
			}
			return "", &ConflictError{Story: story, Blockers: blockers, Files: files}
		}
		args := append(slices.Clone(identity), "commit-tree", tree, "-p", tip, "-p", bb, "-m", fmt.Sprintf("saga(%s): build on %s", story, bb))
		if tip, err = g.Run(ctx, args...); err != nil {
			return "", fmt.Errorf("merge %s into %s: %w", bb, branch, err)
		}
	}
	// Made only where no branch of the story's is (the empty old value):
	// a run that made it meanwhile keeps its own.
	if _, err := g.Run(ctx, "update-ref", "-m", "saga: build on its blockers", "refs/heads/"+branch, tip, ""); err != nil {
		return "", err
	}
	return from, nil
}

// blockersOnTop are the branches of the story's blockers its branch builds
// on: those with a branch (fetched from origin when fetch is set and it is
// only there) not merged into target, in the epic's order. refs are the
// local branches as listed a moment before.
func blockersOnTop(ctx context.Context, g git.Repo, ws *store.Workspace, refs git.Refs, story, target string, dry, fetch bool) []string {
	var onTop []string
	for _, b := range ws.EpicBlockers(story) {
		bb := runs.StoryBranch(b)
		if db := runs.DryBranch(b); dry && refs.Has("refs/heads/"+db) {
			bb = db
		}
		local := refs.Has("refs/heads/" + bb)
		if !local && !dry && fetch {
			// A blocker run elsewhere (GitHub Actions) has its branch on origin only.
			local = FetchBranch(ctx, g, bb)
		}
		if !local {
			continue // never run, or merged and deleted: its work is on the base
		}
		if g.OK(ctx, "merge-base", "--is-ancestor", bb, target) {
			continue // merged into the base
		}
		onTop = append(onTop, bb)
	}
	return onTop
}
