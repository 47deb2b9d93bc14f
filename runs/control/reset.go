package control

// `saga-lsp reset <story>` (docs/commands.md#reset): the way back. It
// discards a story's attempt — unfinished, failed, timed out, or a dry run
// — that clean keeps because it is not finished with: its worktrees, its
// local branches, its run records, its runs' files (and so their check
// results) and the task lists they hydrated. With Remote, also its pushed
// branch and pull request. The story's files on the checkout (its
// definition and statuses) are never touched, and nothing is removed while
// a worker of the story lives or a dependent's branch is built on its
// branch. `run --again` resets the local attempt the same way.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// Kinds of reset items beside clean's (CleanWorktree, CleanBranch,
// CleanRecord, CleanTaskList, CleanRunFiles, CleanShares).
const (
	ResetRemoteBranch = "remote-branch" // origin's story/<story>
	ResetPR           = "pull-request"  // its open pull request, closed
)

// ResetOptions configure Reset.
type ResetOptions struct {
	Setup  // the root's, resolved once by the caller
	Story  string
	Yes    bool // remove; otherwise only list
	Remote bool // also delete the pushed branch and close the pull request
	// KeepPR leaves the pushed branch's pull request open: `run --again`
	// reuses it.
	KeepPR bool
	Tmux   *Tmux         // default Setup.FindTmux
	Parser *store.Parser // default store.NewParser()
}

// ResetResult is what Reset found and did: clean's items and warnings.
type ResetResult = CleanResult

// ResetRefusedError is a reset that cannot be done now: nothing was
// removed.
type ResetRefusedError struct {
	Story  string
	Reason string
}

func (e *ResetRefusedError) Error() string {
	return fmt.Sprintf("not resetting story %s: %s", e.Story, e.Reason)
}

// Reset lists (and with o.Yes removes) the story's attempt. An invalid or
// unknown story is a *UsageError (with the closest name); a live worker or
// a dependent built on its branch is a *ResetRefusedError.
func Reset(ctx context.Context, o ResetOptions) (*ResetResult, error) {
	if err := store.CheckName("story name", o.Story, true, false); err != nil {
		return nil, err
	}
	c, err := newCleaner(ctx, CleanOptions{Setup: o.Setup, Stories: []string{o.Story}, Yes: o.Yes,
		Tmux: o.Tmux, Parser: o.Parser})
	if err != nil {
		return nil, err
	}
	defer c.unlock()
	if _, err := c.selectStories([]string{o.Story}); err != nil {
		return nil, err
	}
	id := o.Story
	if live := c.liveReason(id); live != "" {
		return nil, &ResetRefusedError{Story: id, Reason: live}
	}
	if dep := c.builtOn(ctx, id); dep != "" {
		return nil, &ResetRefusedError{Story: id, Reason: dep}
	}
	p := &storyPlan{id: id}
	c.planReset(ctx, p, o)
	if o.Yes && len(p.items) > 0 {
		// No worker starts on what goes: reset holds the story's lock.
		l, ok, err := filesafe.TryLock(o.Root, runs.WorkerLockName(id))
		switch {
		case err != nil:
			return nil, err
		case !ok:
			pid, _ := runs.WorkerHolder(o.Root, id)
			return nil, &ResetRefusedError{Story: id, Reason: fmt.Sprintf("a worker of %s started meanwhile (pid %d)", id, pid)}
		}
		p.lock = l
		c.locks = append(c.locks, l)
	}
	c.execute(ctx, p, p.items)
	return c.res, nil
}

// newCleaner gathers what clean and reset look at.
func newCleaner(ctx context.Context, o CleanOptions) (*cleaner, error) {
	var err error
	if o.SessionDir, err = readmodel.SessionDirOf(o.SessionDir, o.Env); err != nil {
		return nil, err
	}
	if o.Parser == nil {
		if o.Parser, err = store.NewParser(); err != nil {
			return nil, err
		}
	}
	if o.Tmux == nil {
		t, err := o.Setup.FindTmux(ctx)
		if err != nil && !errors.Is(err, ErrNoTmux) {
			return nil, err
		}
		o.Tmux = t
	}
	c := &cleaner{o: o, g: git.Repo{Dir: o.Root},
		res: &CleanResult{DryRun: !o.Yes, Items: []CleanItem{}, Left: []CleanLeft{}, Warnings: []string{}, Named: o.Stories}}
	return c, c.gather(ctx)
}

// builtOn names a dependent of the story (its epic sibling blocked by it)
// whose branch is built on the story's (its real branch on story/<id>,
// its dry branch on saga-dry/<id>) and what to do;
// "" when none is. Resetting under it would leave its dependent on commits
// no branch of the story holds.
func (c *cleaner) builtOn(ctx context.Context, id string) string {
	for _, dry := range []bool{false, true} {
		b := runs.RunBranch(id, dry)
		if c.rev(ctx, "refs/heads/"+b) == "" {
			continue
		}
		has := c.branches
		if dry {
			has = c.dryBranches
		}
		for _, d := range slices.Sorted(maps.Keys(has)) {
			db := runs.RunBranch(d, dry)
			if !slices.Contains(c.ws.EpicBlockers(d), id) || !c.g.OK(ctx, "merge-base", "--is-ancestor", b, db) {
				continue
			}
			// Only a branch that stacks on this one's own commits: one both
			// forked from the same base holds none of them.
			if c.g.OK(ctx, "merge-base", "--is-ancestor", b, c.baseRef(ctx)) {
				continue
			}
			return fmt.Sprintf("%s is built on %s: reset %s first (`saga-lsp reset %s`), or merge %s",
				db, b, d, d, b)
		}
	}
	return ""
}

// baseRef is the ref stories' work lands in: the default branch (origin's
// when there is one).
func (c *cleaner) baseRef(ctx context.Context) string {
	def := c.defaultBranch(ctx)
	if c.remote && c.rev(ctx, "refs/remotes/origin/"+def) != "" {
		return "refs/remotes/origin/" + def
	}
	return "refs/heads/" + def
}

// planReset lists everything of the story's attempt.
func (c *cleaner) planReset(ctx context.Context, p *storyPlan, o ResetOptions) {
	id := p.id
	for _, dry := range []bool{false, true} {
		label := ""
		if dry {
			label = "dry run: "
		}
		wt := store.RunWorktreeDir(c.o.Root, id, dry)
		if _, err := os.Lstat(wt); err == nil {
			if _, registered := c.registration(wt); registered {
				p.add(CleanWorktree, wt, label+"its worktree, with whatever it holds", func(ctx context.Context) error {
					_, err := c.g.Worktree(ctx, "remove", "--force", "--force", wt)
					return err
				})
			} else {
				p.keep(CleanWorktree, wt, label+"git does not list it as a worktree: look at it and remove it by hand")
			}
		}
		if trash := trashDir(c.o.Root, id, dry); exists(trash) {
			p.add(CleanWorktree, trash, label+"an earlier clean was interrupted while removing it",
				func(ctx context.Context) error { return c.finishTrash(ctx, id, dry) })
		}
		b := runs.RunBranch(id, dry)
		why := "its local branch: its work is lost unless pushed"
		if dry {
			why = "dry run: its local branch, never pushed"
		}
		if c.rev(ctx, "refs/heads/"+b) != "" {
			p.add(CleanBranch, b, why, func(ctx context.Context) error {
				_, err := c.g.Run(ctx, "branch", "-D", b)
				return err
			})
		}
	}
	if files, err := runs.RecordFiles(c.o.Root, id); err == nil {
		for _, f := range files {
			if exists(f) {
				p.add(CleanRecord, f, "what its last run ended with", func(context.Context) error { return os.Remove(f) })
			}
		}
	}
	for _, r := range c.runs[id] {
		if dir, ok := c.taskListOf(id, r); ok {
			p.add(CleanTaskList, dir, fmt.Sprintf("hydrated by run %s", r.Session), func(context.Context) error { return removeTaskList(dir) })
		}
	}
	for _, r := range c.runs[id] {
		ef := r.EventsFile
		p.add(CleanRunFiles, runs.OutputOfEvents(ef), "its run's log, events and check results",
			func(context.Context) error { return removeRunFiles(ef) })
	}
	for _, s := range c.storySessions[id] {
		p.add(CleanTmux, s, "its worker has exited; remain-on-exit keeps its dead pane",
			func(ctx context.Context) error { return c.o.Tmux.KillSession(ctx, s) })
	}
	c.planShares(p)
	if o.Remote {
		c.planRemote(ctx, p, o.KeepPR)
	}
}

// planRemote: origin's story/<id> is deleted and the story's open pull
// request closed (gh).
func (c *cleaner) planRemote(ctx context.Context, p *storyPlan, keepPR bool) {
	b := runs.StoryBranch(p.id)
	if !c.remote {
		return
	}
	if !keepPR {
		if pr := c.openPR(ctx, b); pr != "" {
			p.add(ResetPR, pr, "its open pull request, closed", func(ctx context.Context) error {
				out, err := runs.GHCommand(ctx, runs.Program(c.o.Env, runs.ProgramGH), c.o.Root, "pr", "close", pr, "--comment",
					"Closed by `saga-lsp reset "+p.id+"`: the attempt was discarded.").CombinedOutput()
				if err != nil {
					return fmt.Errorf("gh pr close %s: %v: %s", pr, err, strings.TrimSpace(string(out)))
				}
				return nil
			})
		}
	}
	if out, err := c.g.Run(ctx, "ls-remote", "--heads", "origin", "refs/heads/"+b); err == nil && strings.TrimSpace(out) != "" {
		p.add(ResetRemoteBranch, "origin/"+b, "its pushed branch", func(ctx context.Context) error {
			_, err := c.g.Run(ctx, "push", "-q", "origin", "--delete", b)
			return err
		})
	} else if err != nil {
		c.warn("could not ask origin for %s: %v", b, err)
	}
}

// openPR is the URL of the open pull request of branch, "" when none (or
// gh cannot tell: a warning).
func (c *cleaner) openPR(ctx context.Context, branch string) string {
	out, err := runs.GHCommand(ctx, runs.Program(c.o.Env, runs.ProgramGH), c.o.Root, "pr", "list", "--head", branch,
		"--state", "open", "--json", "url", "--limit", "1").Output()
	if err != nil {
		c.warn("gh cannot list the pull requests of %s (%v): close it by hand", branch, err)
		return ""
	}
	var prs []struct{ URL string }
	if json.Unmarshal(out, &prs) != nil || len(prs) == 0 {
		return ""
	}
	return prs[0].URL
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
