package control

// `clean`'s git side: when a story's worktree and branch are finished with,
// and their removal — `git worktree remove` (which refuses a checkout with
// changes) and `git branch -d` (which refuses an unmerged branch), never a
// forced form.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// trashPrefix names a worktree being removed: .saga/worktrees/.removing-<story>.
// No story has that name, so the loader and the language server skip it,
// and a removal that was interrupted is recognised and finished.
const trashPrefix = ".removing-"

func trashDir(root, story string, dry bool) string {
	return filepath.Join(root, filepath.FromSlash(store.WorktreesRel), trashPrefix+filepath.Base(store.RunWorktreeDir(root, story, dry)))
}

// judgeBranches decides, for the stories with a branch, whether it is
// merged and whether it is pushed: against origin, fetched first, when
// there is one.
func (c *cleaner) judgeBranches(ctx context.Context, ids []string) {
	var with []string
	for _, id := range ids {
		if c.branches[id] {
			with = append(with, id)
		}
	}
	if len(with) == 0 {
		return
	}
	if c.remote {
		fctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		if _, err := c.g.Retry(fctx, "fetch", "-q", "origin"); err != nil {
			c.warn("could not fetch origin (%v): branches are judged by origin's state as last fetched", err)
		}
		cancel()
	}
	def := c.defaultBranch(ctx)
	for _, id := range with {
		b := "refs/heads/" + runs.StoryBranch(id)
		head := c.rev(ctx, b)
		remote := c.rev(ctx, "refs/remotes/origin/"+runs.StoryBranch(id))
		c.pushed[id] = head != "" && head == remote
		for _, t := range c.targets(id, def) {
			for _, ref := range []string{"refs/remotes/origin/" + t, "refs/heads/" + t} {
				if c.rev(ctx, ref) != "" && c.g.OK(ctx, "merge-base", "--is-ancestor", b, ref) {
					// Also true of a branch a dead worker made and never
					// committed on: nothing is lost either way.
					c.merged[id] = fmt.Sprintf("everything on %s is in %s", runs.StoryBranch(id), strings.TrimPrefix(strings.TrimPrefix(ref, "refs/remotes/"), "refs/heads/"))
					break
				}
			}
			if c.merged[id] != "" {
				break
			}
		}
		// A squash or rebase merge leaves the branch outside the base: ask
		// the forge, for branches it has.
		if c.merged[id] == "" && remote != "" && readmodel.Merged(ctx, c.o.Root, id, c.o.Env) {
			c.merged[id] = fmt.Sprintf("the pull request of %s is merged", runs.StoryBranch(id))
		}
	}
}

// rev is the commit ref names, "" when it does not exist.
func (c *cleaner) rev(ctx context.Context, ref string) string {
	out, err := c.g.Run(ctx, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return ""
	}
	return out
}

// defaultBranch is the branch stories merge into: origin's HEAD, else the
// branch checked out in the root (the worker's default base), else main or
// master.
func (c *cleaner) defaultBranch(ctx context.Context) string {
	if c.remote {
		if b, err := c.g.Run(ctx, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"); err == nil {
			return strings.TrimPrefix(b, "origin/")
		}
	}
	if b, err := c.g.Run(ctx, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil && !strings.HasPrefix(b, runs.StoryBranchPrefix) {
		return b
	}
	for _, b := range []string{"main", "master"} {
		if c.rev(ctx, "refs/heads/"+b) != "" {
			return b
		}
	}
	return ""
}

// targets are the branches a story's branch counts as merged into: the
// base its runs recorded (unless a blocker's story branch: that is not
// where the work lands) and the default branch.
func (c *cleaner) targets(id, def string) []string {
	var out []string
	base := ""
	if r := c.lastReal(id); r != nil {
		base = r.Base
	}
	if rec, ok := runs.ReadRecord(c.o.Root, id); ok && base == "" {
		base = rec.Base
	}
	if base != "" && !strings.HasPrefix(base, runs.StoryBranchPrefix) {
		out = append(out, base)
	}
	if def != "" && def != base {
		out = append(out, def)
	}
	return out
}

// lastOutcome is how the story's last run ended: its end status, "killed"
// for a dead run without an end, "running", or "" when none is known.
func (c *cleaner) lastOutcome(id string) string {
	if r := c.lastReal(id); r != nil {
		switch {
		case r.Ended:
			return r.State
		case r.Alive():
			return runs.StateRunning
		}
		return "killed"
	}
	if rec, ok := runs.ReadRecord(c.o.Root, id); ok {
		return rec.Status
	}
	return ""
}

// lastReal is the story's newest run that was not a dry run; nil when none.
func (c *cleaner) lastReal(id string) *runs.Run {
	rs := c.runs[id]
	for i := len(rs) - 1; i >= 0; i-- {
		if !rs[i].DryRun {
			return rs[i]
		}
	}
	return nil
}

// planDry decides what the story's dry run left (docs/worker.md#dry-runs):
// its worktree and branch go once no worker of the story lives — a dry
// run is never a result anything waits for — except a worktree with
// changes no dry run made (git refuses to remove it, and clean says so).
func (c *cleaner) planDry(ctx context.Context, p *storyPlan) {
	id := p.id
	wt, b := store.DryWorktreeDir(c.o.Root, id), runs.DryBranch(id)
	if c.dryTrash[id] {
		p.add(CleanWorktree, trashDir(c.o.Root, id, true), "dry run: an earlier clean was interrupted while removing it",
			func(ctx context.Context) error { return c.finishTrash(ctx, id, true) })
	}
	kept := false
	if c.dryDirs[id] {
		if _, registered := c.registration(wt); !registered {
			p.keep(CleanWorktree, wt, "dry run: git does not list it as a worktree: look at it and remove it by hand")
			kept = true
		} else if changes, err := c.changes(ctx, wt); err != nil || changes != "" {
			p.keep(CleanWorktree, wt, "dry run: "+cmpErr(err, changes))
			kept = true
		} else {
			p.add(CleanWorktree, wt, "dry run: what the simulated agent did, never a real result",
				func(ctx context.Context) error { return c.removeWorktree(ctx, id, true) })
		}
	}
	// Its record goes with it (a record without its worktree and branch
	// would keep status showing a dry attempt that is gone).
	if files, err := runs.RecordFiles(c.o.Root, id); err == nil && exists(files[1]) && !kept {
		rec := files[1]
		p.add(CleanRecord, rec, "dry run: what it ended with", func(context.Context) error { return os.Remove(rec) })
	}
	if c.dryBranches[id] {
		p.add(CleanBranch, b, "dry run: never pushed, never a real result", func(ctx context.Context) error {
			if c.rev(ctx, "refs/heads/"+b) == "" {
				return nil // gone already
			}
			if _, err := os.Lstat(wt); err == nil {
				return fmt.Errorf("its dry-run worktree %s stays", wt)
			}
			_, err := c.g.Run(ctx, "branch", "-D", b)
			return err
		})
	}
}

// finished says why the story's worktree can go ("" when it cannot): its
// branch is merged, or its last run completed and the branch is pushed.
func (c *cleaner) finished(id string) string {
	if why := c.merged[id]; why != "" {
		return why
	}
	if c.lastOutcome(id) == runs.StatusCompleted && c.pushed[id] {
		return fmt.Sprintf("its last run completed and %s is pushed to origin", runs.StoryBranch(id))
	}
	return ""
}

// unfinished says why a story's worktree stays.
func (c *cleaner) unfinished(id string) string {
	b := runs.StoryBranch(id)
	if !c.branches[id] {
		return b + " does not exist, so whether its work landed cannot be told"
	}
	why := b + " is not merged"
	switch out := c.lastOutcome(id); {
	case out == runs.StatusCompleted && !c.remote:
		why += ", and there is no origin to push it to"
	case out == runs.StatusCompleted:
		why += " and not pushed as it is"
	case out == "":
		why += ", and no run of it is known"
	case out == "killed":
		why += ", and its last run was killed"
	case out == runs.StateRunning:
		why += ", and a run of it is going on"
	default:
		why += ", and its last run ended " + out
	}
	return why
}

// planWorktree decides the story's worktree (and an interrupted removal of
// it).
func (c *cleaner) planWorktree(ctx context.Context, p *storyPlan) {
	id := p.id
	wt := store.WorktreeDir(c.o.Root, id)
	if c.trash[id] {
		p.add(CleanWorktree, trashDir(c.o.Root, id, false), "an earlier clean was interrupted while removing it",
			func(ctx context.Context) error { return c.finishTrash(ctx, id, false) })
	}
	if !c.dirs[id] {
		return
	}
	reg, registered := c.registration(wt)
	fi, err := os.Lstat(wt)
	switch {
	case err != nil && registered:
		c.wtPlanned[id] = true
		p.add(CleanWorktree, wt, "its folder is gone; git still lists it",
			func(ctx context.Context) error { return c.unregister(ctx, wt) })
		return
	case err != nil:
		return
	case !fi.IsDir():
		p.keep(CleanWorktree, wt, "not a folder: look at it and remove it by hand")
		return
	case !registered:
		p.keep(CleanWorktree, wt, "git does not list it as a worktree: look at it and remove it by hand")
		return
	case reg.Prunable:
		p.keep(CleanWorktree, wt, "its .git file is missing, so git cannot tell whether it holds changes: look at it and remove it by hand")
		return
	case reg.Branch != runs.StoryBranch(id):
		on := "a detached HEAD"
		if reg.Branch != "" {
			on = "branch " + reg.Branch
		}
		c.left(id, CleanWorktree, wt, fmt.Sprintf("it is on %s, not on %s", on, runs.StoryBranch(id)))
		return
	}
	why := c.finished(id)
	if why == "" {
		c.left(id, CleanWorktree, wt, c.unfinished(id))
		return
	}
	if reg.Locked {
		lock := "locked"
		if reg.Reason != "" {
			lock += " (" + reg.Reason + ")"
		}
		p.keep(CleanWorktree, wt, lock+": `git worktree unlock "+wt+"` lets clean remove it")
		return
	}
	if changes, err := c.changes(ctx, wt); err != nil || changes != "" {
		p.keep(CleanWorktree, wt, cmpErr(err, changes))
		return
	}
	c.wtPlanned[id] = p.live == ""
	p.add(CleanWorktree, wt, why, func(ctx context.Context) error { return c.removeWorktree(ctx, id, false) })
}

func cmpErr(err error, changes string) string {
	if err != nil {
		return "git cannot tell whether it holds changes: " + err.Error()
	}
	return "uncommitted changes: " + changes
}

// changes summarises `git status --porcelain` of a checkout: "" when it is
// clean.
func (c *cleaner) changes(ctx context.Context, dir string) (string, error) {
	out, err := c.g.In(dir).Raw(ctx, "status", "--porcelain")
	if err != nil {
		return "", err
	}
	var lines []string
	for line := range strings.Lines(out) {
		if line = strings.TrimRight(line, "\n"); line != "" {
			lines = append(lines, strings.TrimSpace(line))
		}
	}
	const shown = 5
	if len(lines) > shown {
		return strings.Join(lines[:shown], ", ") + fmt.Sprintf(" and %d more", len(lines)-shown), nil
	}
	return strings.Join(lines, ", "), nil
}

// planBranch decides the story's branch: deleted (git branch -d) once it
// is merged and no worktree that stays has it checked out.
func (c *cleaner) planBranch(p *storyPlan) {
	id, b := p.id, runs.StoryBranch(p.id)
	if !c.branches[id] {
		return
	}
	why := c.merged[id]
	if why == "" {
		reason := b + " is not merged"
		if c.pushed[id] {
			reason += " (its work is on origin until the pull request merges)"
		}
		c.left(id, CleanBranch, b, reason)
		return
	}
	for _, w := range c.worktrees {
		if w.Branch != b {
			continue
		}
		if sid, ok := c.worktreeStory(w.Path); ok && sid == id &&
			(c.wtPlanned[id] || p.live != "" || filepath.Base(w.Path) == trashPrefix+id) {
			continue // goes first (or the story is kept whole)
		}
		where := w.Path
		if rel, err := filepath.Rel(c.o.Root, w.Path); err == nil && !strings.HasPrefix(rel, "..") {
			where = filepath.ToSlash(rel)
		}
		p.keep(CleanBranch, b, fmt.Sprintf("checked out in %s, which stays", where))
		return
	}
	p.add(CleanBranch, b, why, func(ctx context.Context) error {
		if c.rev(ctx, "refs/heads/"+b) == "" {
			return nil // gone already
		}
		_, err := c.g.Run(ctx, "branch", "-d", b)
		return err
	})
}

// worktreeStays tells whether the story's worktree is there after this
// clean (a dry run counts what it would remove as gone).
func (c *cleaner) worktreeStays(id string) bool {
	if _, err := os.Lstat(store.WorktreeDir(c.o.Root, id)); err != nil {
		return false
	}
	return c.o.Yes || !c.wtPlanned[id]
}

// removeWorktree moves the worktree aside (git worktree move: one rename),
// then lets git remove it, which refuses if it holds changes by then (it
// is moved back). An interruption leaves .removing-<story>, which the next
// clean finishes.
func (c *cleaner) removeWorktree(ctx context.Context, id string, dry bool) error {
	wt, trash := store.RunWorktreeDir(c.o.Root, id, dry), trashDir(c.o.Root, id, dry)
	if _, err := os.Lstat(trash); err == nil {
		if err := c.finishTrash(ctx, id, dry); err != nil {
			return fmt.Errorf("an earlier removal of it is unfinished: %w", err)
		}
	}
	if _, err := os.Lstat(wt); errors.Is(err, fs.ErrNotExist) {
		return nil // removed meanwhile
	}
	if _, err := c.g.Worktree(ctx, "move", wt, trash); err != nil {
		return err
	}
	if _, err := c.g.Worktree(ctx, "remove", trash); err != nil {
		if _, back := c.g.Worktree(ctx, "move", trash, wt); back != nil {
			return fmt.Errorf("%v; moving it back failed too (%v): it is at %s", err, back, trash)
		}
		if changes, cerr := c.changes(ctx, wt); cerr == nil && changes != "" {
			return errors.New("uncommitted changes: " + changes) // made since it was checked
		}
		return err
	}
	return nil
}

// finishTrash finishes an interrupted removal of the story's worktree.
// With its .git file the checkout was moved aside but not deleted: git
// removes it (refusing if it holds changes: then it goes back). Without,
// git had found it clean and was deleting it: the rest goes.
func (c *cleaner) finishTrash(ctx context.Context, id string, dry bool) error {
	wt, trash := store.RunWorktreeDir(c.o.Root, id, dry), trashDir(c.o.Root, id, dry)
	if _, err := os.Lstat(trash); errors.Is(err, fs.ErrNotExist) {
		return c.unregister(ctx, trash)
	}
	if _, err := os.Lstat(filepath.Join(trash, ".git")); err == nil {
		if !c.registeredNow(ctx, trash) {
			// The move was interrupted between its rename and its
			// bookkeeping.
			if _, err := c.g.Worktree(ctx, "repair", trash); err != nil {
				return err
			}
		}
		changes, err := c.changes(ctx, trash)
		if err == nil && changes == "" {
			_, err = c.g.Worktree(ctx, "remove", trash)
			return err
		}
		if _, statErr := os.Lstat(wt); errors.Is(statErr, fs.ErrNotExist) {
			if _, back := c.g.Worktree(ctx, "move", trash, wt); back == nil {
				return fmt.Errorf("%s; moved back to %s", cmpErr(err, changes), wt)
			}
		}
		return fmt.Errorf("%s", cmpErr(err, changes))
	}
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("remove %s: %w", trash, err)
	}
	return c.unregister(ctx, trash)
}

// unregister removes git's registration of a worktree whose folder is gone
// (git worktree remove on a missing folder): only that one, where `git
// worktree prune` would forget every missing worktree of the repository.
func (c *cleaner) unregister(ctx context.Context, path string) error {
	if !c.registeredNow(ctx, path) {
		return nil
	}
	_, err := c.g.Worktree(ctx, "remove", path)
	return err
}

// registeredNow asks git afresh whether a worktree is registered at path.
func (c *cleaner) registeredNow(ctx context.Context, path string) bool {
	wts, err := c.g.Worktrees(ctx)
	if err != nil {
		return false
	}
	c.worktrees = wts
	_, ok := c.registration(path)
	return ok
}
