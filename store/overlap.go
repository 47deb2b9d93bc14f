package store

import (
	"fmt"

	"github.com/saga-ai/saga-lsp/store/plan"
)

// overlapDiags are the paths-overlap findings of an epic's children
// (docs/landing.md#conflicts-foreseen): for each pair plan.Overlaps finds,
// one on each story's task holding the glob, naming the other story and
// the two globs, with the fix that makes the order explicit — the later
// in plan order blocked by the earlier — unless that would close a cycle.
// Pairs of one epic only, computed with its other rules (when one of its
// stories or the epic changes), never across the workspace.
func (w *Workspace) overlapDiags(epic string, kids []*Child, pos map[string]int32, g depGraph) []Diagnostic {
	items := make([]plan.Item, 0, len(kids))
	stories := make(map[string]*Story, len(kids))
	for _, c := range kids {
		s := w.Story(c.ID)
		it := plan.Item{ID: c.ID, BlockedBy: refIDs(c.BlockedBy)}
		if s != nil {
			stories[c.ID] = s
			it.Status, it.Paths = s.EffectiveStatus(), w.StoryPaths(c.ID)
		}
		items = append(items, it)
	}
	var out []Diagnostic
	for _, wt := range plan.Overlaps(items, true) {
		if stories[wt.ID] == nil || stories[wt.For] == nil {
			continue
		}
		var fix *Fix
		if !g.reaches(pos[wt.For], pos[wt.ID]) {
			fix = &Fix{Epic: epic, Story: wt.ID, Ref: wt.For}
		}
		pair := fmt.Sprintf("%s of %s, %s of %s", wt.Glob, wt.ID, wt.ForGlob, wt.For)
		if wt.Glob == wt.ForGlob {
			pair = fmt.Sprintf("both touch %s", wt.Glob)
		}
		order := fmt.Sprintf("make the order explicit with %s blockedBy %s in epic %s (docs/landing.md#conflicts-foreseen)", wt.ID, wt.For, epic)
		if d, ok := w.globDiag(wt.ID, wt.Glob, fmt.Sprintf(
			"paths overlap with story %s (%s): an epic run starts this story only once %s has ended; %s", wt.For, pair, wt.For, order), fix); ok {
			out = append(out, d)
		}
		if d, ok := w.globDiag(wt.For, wt.ForGlob, fmt.Sprintf(
			"paths overlap with story %s (%s): an epic run starts %s only once this story has ended; %s", wt.ID, pair, wt.ID, order), fix); ok {
			out = append(out, d)
		}
	}
	return out
}

// globDiag is a paths-overlap finding on the first of the story's tasks
// whose paths hold pattern, on that glob: in its live copy, else the other.
func (w *Workspace) globDiag(story, pattern, msg string, fix *Fix) (Diagnostic, bool) {
	c := w.Copies(story)
	for _, s := range []*Story{c.Live(), c.Main, c.Worktree} {
		if s == nil {
			continue
		}
		for _, t := range s.Tasks {
			for _, g := range t.Paths {
				if g.Pattern == pattern && g.Node != nil {
					return newDiagnostic(t.File, CodePathsOverlap, g.Node.Start(), g.Node.End(), msg, fix), true
				}
			}
		}
	}
	return Diagnostic{}, false
}
