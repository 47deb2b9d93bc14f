package control

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/store"
)

// A story's definition comes from its base (docs/worker.md#the-reference-commit):
// a run reads it at the base's tip and puts back anything else in the
// worktree's copy, where only the journal and the statuses are a run's to
// change. An edit found there before a run — a person fixing a check in
// the copy they were looking at — is not reverted silently: the run is
// refused, naming the file and printing the change to make on the base.

// maxEditLines bounds the diff a refusal quotes.
const maxEditLines = 40

// WorktreeEdits reports the definition edits in the story's worktree copy
// (changed, added or deleted files of its folder beyond the journal and
// the fields runs write: store.RunFields), each with the change to make
// on the base instead; nil when the story has no worktree.
func (p Preflight) WorktreeEdits(ctx context.Context, story string) []string {
	wt := store.WorktreeDir(p.Root, story)
	if fi, err := os.Lstat(wt); err != nil || !fi.IsDir() {
		return nil
	}
	g := git.Repo{Dir: wt}
	dir := store.StoryDirRel(story)
	out, err := g.Raw(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", dir)
	if err != nil || out == "" {
		return nil
	}
	branch := "refs/heads/" + runs.StoryBranch(story)
	wtRel := store.WorktreeDirRel(story)
	undo := func(rel string) string {
		return fmt.Sprintf("`git -C %s checkout %s -- %s`", wtRel, runs.StoryBranch(story), rel)
	}
	var reasons []string
	entries := strings.Split(strings.TrimRight(out, "\x00"), "\x00")
	for i := 0; i < len(entries); i++ {
		e := entries[i]
		if len(e) < 4 {
			continue
		}
		code, rel := e[:2], e[3:]
		if code[0] == 'R' || code[0] == 'C' { // the source path follows
			i++
		}
		if rel == store.JournalFileRel(story) || path.Dir(rel) != dir || code == "??" && isRestackTask(p.Root, wt, story, rel) {
			continue
		}
		shown := esc(path.Join(wtRel, rel))
		switch {
		case code == "??" || code[0] == 'A':
			reasons = append(reasons, fmt.Sprintf("%s is new in the story's worktree copy, where a run takes the definition from the base and would remove it: add it on the base instead (%s), commit it, then remove the copy's (`rm %s`) and run again",
				shown, esc(rel), shown))
		case code[0] == 'D' || code[1] == 'D':
			reasons = append(reasons, fmt.Sprintf("%s was deleted in the story's worktree copy, where a run takes the definition from the base and would bring it back: delete %s on the base instead, commit it, then %s and run again",
				shown, esc(rel), undo(rel)))
		default:
			cur, err := filesafe.ReadInside(wt, rel)
			if err != nil {
				continue // not a regular file: the worker's guard removes it
			}
			was, err := g.Raw(ctx, "show", branch+":"+rel)
			if err != nil || store.SameDefinition(rel, cur, []byte(was)) {
				continue
			}
			diff, _ := g.Run(ctx, "diff", branch, "--", rel)
			reasons = append(reasons, fmt.Sprintf("%s was edited in the story's worktree copy, where a run takes the definition from the base and would revert it: make the change on the base instead, in %s, and commit it; then %s and run again. The change:\n      %s",
				shown, esc(rel), undo(rel), termtext.Block(clipLines(diff, maxEditLines), "      ")))
		}
	}
	return reasons
}

// clipLines is s cut to its first n lines.
func clipLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n[… %d more lines]", len(lines)-n)
}

// BaseConflicts reports, for a story whose branch exists (its caller
// listed the branches: StartStory), the files in which the branch
// conflicts with its base's tip as this repository last saw it (origin's
// when it has one): the run brings that tip in as its reference commit
// before any agent runs, and could not. workerBase is the
// worker's --base (a stacked story's blocker branch: its definitions come
// from the epic's base). Nothing when the branch merges cleanly.
func (p Preflight) BaseConflicts(ctx context.Context, story, workerBase string) []string {
	g := git.Repo{Dir: p.Root}
	branch := runs.StoryBranch(story)
	base := verify.EpicBase(ctx, g, p.Root, workerBase)
	tip := base
	if g.OK(ctx, "rev-parse", "--verify", "--quiet", "refs/remotes/origin/"+base) {
		tip = "origin/" + base
	}
	if !g.OK(ctx, "rev-parse", "--verify", "--quiet", tip+"^{commit}") || g.OK(ctx, "merge-base", "--is-ancestor", tip, "refs/heads/"+branch) {
		return nil
	}
	if restackTakesIn(ctx, g, p.Root, story, tip) {
		return nil // the run merges it, its conflicts left for its agent (docs/landing.md#a-conflict)
	}
	files, err := g.MergeConflicts(ctx, "refs/heads/"+branch, tip)
	if err != nil || len(files) == 0 {
		return nil // clean, or git cannot tell (older than 2.38): the worker's merge decides
	}
	return []string{fmt.Sprintf("%s conflicts with %s in %s: a run takes %s in first (its reference commit) and could not. Merge it yourself — `git -C %s merge %s`, resolve the conflicts, commit — then run again",
		branch, tip, strings.Join(termtext.Escapes(files), ", "), tip, store.WorktreeDirRel(story), tip)}
}

// restackTakesIn tells whether the story's recorded restack conflict —
// land's follow of the default branch — left the branch where it was, on
// a new tip holding tip: the worker's start merges that tip with the
// conflicts committed for its agent (runs/worker/restack.go), so a
// conflict with it is the run's work, not a refusal.
func restackTakesIn(ctx context.Context, g git.Repo, root, story, tip string) bool {
	rec, ok := runs.ReadRecord(root, story)
	if !ok || rec.Restack == nil || len(rec.Restack.Conflicts) == 0 || rec.Restack.Task == "" {
		return false
	}
	head, err := g.Run(ctx, "rev-parse", "--verify", "-q", "refs/heads/"+runs.StoryBranch(story)+"^{commit}")
	if err != nil || head != rec.Restack.Head {
		return false
	}
	for _, t := range rec.Restack.Tips {
		if g.OK(ctx, "merge-base", "--is-ancestor", tip, t) {
			return true
		}
	}
	return false
}

// isRestackTask tells whether rel, new in the story's worktree wt, is the
// conflict-resolution task a restack wrote (its recorded digest): the
// worker's start commits it (runs/worker/restack.go), it is no edit of the
// definition.
func isRestackTask(root, wt, story, rel string) bool {
	rec, ok := runs.ReadRecord(root, story)
	if !ok || rec.Restack == nil || rec.Restack.Task == "" || rel != store.TaskFileRel(story, rec.Restack.Task) {
		return false
	}
	data, err := filesafe.ReadInside(wt, rel)
	sum := sha256.Sum256(data)
	return err == nil && hex.EncodeToString(sum[:]) == rec.Restack.Digest
}
