package control

import (
	"context"
	"slices"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// Conflicts foreseen from branches (docs/landing.md#conflicts-foreseen):
// a story's branch merged in memory (git merge-tree, git ≥ 2.38) with the
// branch of each sibling — a story of the same epic that is neither its
// blocker nor its dependent, directly or not, and has a branch. The epic
// runner warns before it starts a story again; land stops a story that
// conflicts with a sibling landing before it.

// ForeseeConflicts merges story's branch with each sibling's for which
// want says yes (nil: every sibling), in the epic's order, and returns the
// siblings whose branches conflict with it, with the files. Nothing when
// the story has no branch yet, is in no epic, or git cannot tell (older
// than 2.38: doctor says so).
func ForeseeConflicts(ctx context.Context, root string, ws *store.Workspace, story string, want func(sibling string) bool) []runs.Foreseen {
	e := ws.EpicOf(story)
	if e == nil {
		return nil
	}
	g := git.Repo{Dir: root}
	// One listing for every branch asked (an epic of 200 stories asked 200).
	refs, err := g.ListRefs(ctx, "refs/heads/"+runs.StoryBranchPrefix, "refs/remotes/origin/"+runs.StoryBranchPrefix)
	ours := branchRef(refs, story)
	if err != nil || ours == "" {
		return nil
	}
	related := relatives(e, story)
	var out []runs.Foreseen
	for _, c := range e.Children {
		if c.ID == story || related[c.ID] || want != nil && !want(c.ID) || slices.ContainsFunc(out, func(f runs.Foreseen) bool { return f.With == c.ID }) {
			continue
		}
		theirs := branchRef(refs, c.ID)
		if theirs == "" {
			continue
		}
		files, err := g.MergeConflicts(ctx, ours, theirs)
		if err == nil && len(files) > 0 {
			out = append(out, runs.Foreseen{With: c.ID, Files: files})
		}
	}
	return out
}

// branchRef is the story's branch, local or as origin has it; "" when it
// has none.
func branchRef(refs git.Refs, story string) string {
	for _, ref := range []string{"refs/heads/", "refs/remotes/origin/"} {
		if ref += runs.StoryBranch(story); refs.Has(ref) {
			return ref
		}
	}
	return ""
}

// relatives are the story's blockers and dependents in the epic, directly
// or not: their branches hold one another's work, so they are no siblings.
func relatives(e *store.Epic, story string) map[string]bool {
	blockers, dependents := map[string][]string{}, map[string][]string{}
	for _, c := range e.Children {
		for _, b := range c.BlockedBy {
			blockers[c.ID] = append(blockers[c.ID], b.ID)
			dependents[b.ID] = append(dependents[b.ID], c.ID)
		}
	}
	out := map[string]bool{}
	for _, edges := range []map[string][]string{blockers, dependents} {
		stack := []string{story}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, w := range edges[v] {
				if !out[w] && w != story {
					out[w] = true
					stack = append(stack, w)
				}
			}
		}
	}
	return out
}
