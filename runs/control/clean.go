package control

// `saga-lsp clean [<story>…]`: removes what finished or abandoned story runs
// left behind — the worktrees of finished stories, their merged local
// branches, the task lists and session files of dead workers, tmux sessions
// whose worker has exited — and never what holds uncommitted work or what a
// live worker uses. Without Yes it only says what it would remove.
//
// Only what is provably this repository's is touched: its
// .saga/worktrees, its story/* branches, and the session files, task lists
// and tmux sessions of runs whose events name a worktree of this repository
// (the session dir, Claude Code's task lists and the tmux server are shared
// by every checkout on the machine, and two clones have the same story
// names). Every removal can be interrupted and run again: a worktree is
// moved aside before git deletes it, so a half-deleted one is recognised
// and finished; a task list goes before the events file that names it.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/store"
)

// Kinds of CleanItem and CleanLeft.
const (
	CleanWorktree = "worktree"     // .saga/worktrees/<story>
	CleanBranch   = "branch"       // story/<story>
	CleanTaskList = "task-list"    // <claude config>/tasks/saga__<story>__<ms>
	CleanRunFiles = "run-files"    // <session dir>/<session>.log and its .events.jsonl
	CleanTmux     = "tmux-session" // saga-story-… or saga-epic-… with no live pane
	CleanCache    = "build-cache"  // buildcache.CachePath, buildcache.ChecksCachePath: its sandboxed runs' and checks' Go, npm, pip caches
	CleanShares   = "check-shares" // <session dir>/checks/*--<story>--*: check results its hooks shared
	CleanRecord   = "run-record"   // <git common dir>/saga-lsp/runs/<story>[.dry].json (a dry run's with clean; either with reset)
)

// CleanOptions configure Clean.
type CleanOptions struct {
	Setup                 // the root's, resolved once by the caller
	Stories []string      // the stories to clean; none: every story with leftovers (and epic runners')
	Yes     bool          // remove; otherwise only list
	Tmux    *Tmux         // default Setup.FindTmux; without tmux no session is listed
	Parser  *store.Parser // default store.NewParser()
}

// CleanItem is one thing Clean removes, removed, or would remove but kept
// because that is unsafe now.
type CleanItem struct {
	Story   string `json:"story"`   // "" for an epic runner's
	Epic    string `json:"epic"`    // the epic of an epic runner's files and session; "" otherwise
	Kind    string `json:"kind"`    // CleanWorktree, CleanBranch, …
	Path    string `json:"path"`    // absolute path; the branch's name; the tmux session's name
	Reason  string `json:"reason"`  // why it goes; when Kept, why it stays
	Removed bool   `json:"removed"` // removed by this run (Yes)
	Kept    bool   `json:"kept"`    // left in place because removing it is unsafe (or failed)
}

// CleanLeft is something of a story's runs that Clean leaves alone because
// the story is not finished with it, and why.
type CleanLeft struct {
	Story  string `json:"story"`
	Kind   string `json:"kind"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// CleanResult is what Clean found and did.
type CleanResult struct {
	DryRun   bool        `json:"dryRun"` // nothing was removed (no Yes)
	Items    []CleanItem `json:"items"`
	Left     []CleanLeft `json:"left"`
	Warnings []string    `json:"warnings"`
	// Named are the stories asked for (none: all).
	Named []string `json:"-"`
}

// Kept counts the items kept because removing them was unsafe or failed.
func (r *CleanResult) Kept() int {
	n := 0
	for _, it := range r.Items {
		if it.Kept {
			n++
		}
	}
	return n
}

// Clean finds (and with o.Yes removes) what finished or abandoned runs
// left behind; see the file comment and docs/commands.md "clean". An
// invalid or unknown story name is a *UsageError.
func Clean(ctx context.Context, o CleanOptions) (*CleanResult, error) {
	for _, s := range o.Stories {
		if err := store.CheckName("story name", s, true, false); err != nil {
			return nil, err
		}
	}
	c, err := newCleaner(ctx, o)
	if err != nil {
		return nil, err
	}
	ids, err := c.selectStories(o.Stories)
	if err != nil {
		return nil, err
	}
	defer c.unlock()
	c.judgeBranches(ctx, ids)
	if len(o.Stories) == 0 {
		c.orphanTaskLists(append(c.ws.SortedStoryIDs(), ids...))
	} else {
		c.orphanTaskLists(ids)
	}

	// Worktrees, branches, task lists and tmux sessions first; then the
	// epic runners' files (whose owner is told by the story runs they
	// name); the story runs' files last.
	plans := make([]*storyPlan, 0, len(ids))
	for _, id := range ids {
		p := c.planStory(ctx, id)
		c.execute(ctx, p, p.items)
		plans = append(plans, p)
	}
	keptEpicSessions := map[string]bool{}
	if len(o.Stories) == 0 {
		for _, epic := range slices.Sorted(maps.Keys(c.epicRuns)) {
			c.cleanEpic(ctx, epic, keptEpicSessions)
		}
	}
	for _, p := range plans {
		c.execute(ctx, p, c.planRunFiles(p, keptEpicSessions))
	}
	return c.res, nil
}

// storyPlan is what Clean does for one story.
type storyPlan struct {
	id    string
	live  string // why the story counts as running ("" when it does not)
	lock  *filesafe.Lock
	items []planned
}

// planned is an item with the removal that makes it true.
type planned struct {
	item   CleanItem
	remove func(context.Context) error
}

// execute reports the plan's items and, with Yes, removes them under the
// story's worker lock (so that no worker starts on what is being removed).
func (c *cleaner) execute(ctx context.Context, p *storyPlan, items []planned) {
	for _, it := range items {
		if it.item.Kept || !c.o.Yes {
			c.res.Items = append(c.res.Items, it.item)
			continue
		}
		if p != nil && p.lock == nil && p.live == "" {
			l, ok, err := filesafe.TryLock(c.o.Root, runs.WorkerLockName(p.id))
			switch {
			case err != nil:
				p.live = fmt.Sprintf("cannot take the worker lock of %s: %v", p.id, err)
			case !ok:
				pid, _ := runs.WorkerHolder(c.o.Root, p.id)
				p.live = fmt.Sprintf("a worker of %s started meanwhile (pid %d)", p.id, pid)
			default:
				p.lock = l
				c.locks = append(c.locks, l)
			}
		}
		if p != nil && p.live != "" {
			it.item.Kept, it.item.Reason = true, p.live
		} else if err := it.remove(ctx); err != nil {
			it.item.Kept, it.item.Reason = true, err.Error()
		} else {
			it.item.Removed = true
		}
		c.res.Items = append(c.res.Items, it.item)
	}
}

func (c *cleaner) unlock() {
	for _, l := range c.locks {
		_ = l.Unlock()
	}
}

func (c *cleaner) left(story, kind, path, reason string) {
	c.res.Left = append(c.res.Left, CleanLeft{Story: story, Kind: kind, Path: path, Reason: reason})
}

func (c *cleaner) warn(format string, args ...any) {
	c.res.Warnings = append(c.res.Warnings, fmt.Sprintf(format, args...))
}

// selectStories returns the named stories, or every story with leftovers.
// A name that is neither a story of the workspace nor one with leftovers
// is a *UsageError with the closest name.
func (c *cleaner) selectStories(named []string) ([]string, error) {
	known := map[string]bool{}
	for _, id := range c.ws.SortedStoryIDs() {
		known[id] = true
	}
	withLeftovers := c.leftoverStories()
	if len(named) == 0 {
		return withLeftovers, nil
	}
	var out []string
	for _, s := range named {
		if !known[s] && !slices.Contains(withLeftovers, s) {
			all := slices.Sorted(maps.Keys(known))
			all = append(all, withLeftovers...)
			return nil, store.Usagef("no story %q in %s%s: .saga/stories/ holds the stories (`saga-lsp status` lists them), and no worktree, branch or run of it is left",
				s, c.o.Root, store.DidYouMean(s, all))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// planStory decides the story's worktree, branch, task lists and tmux
// sessions (its run files come later: planRunFiles).
func (c *cleaner) planStory(ctx context.Context, id string) *storyPlan {
	p := &storyPlan{id: id, live: c.liveReason(id)}
	c.planWorktree(ctx, p)
	c.planCache(p)
	c.planBranch(p)
	c.planDry(ctx, p)
	c.planShares(p)
	for _, r := range c.runs[id] {
		if r.TaskListDir == "" || (!r.Ended && r.Alive()) {
			continue
		}
		dir, ok := c.taskListOf(id, r)
		if !ok {
			continue
		}
		p.add(CleanTaskList, dir, fmt.Sprintf("hydrated by run %s, whose worker is gone", r.Session),
			func(context.Context) error { return removeTaskList(dir) })
	}
	for _, s := range c.storySessions[id] {
		p.add(CleanTmux, s, "its worker has exited; remain-on-exit keeps its dead pane",
			func(ctx context.Context) error { return c.o.Tmux.KillSession(ctx, s) })
	}
	if p.live != "" {
		for i := range p.items {
			p.items[i].item.Kept, p.items[i].item.Reason = true, p.live
		}
	}
	return p
}

// planCache: the story's build caches go with its worktree (planned for
// removal, or gone already): a finished story builds nothing more.
// Those of its checks outside the runs go too, and those an earlier
// saga-lsp kept in the git dir.
func (c *cleaner) planCache(p *storyPlan) {
	if _, err := os.Lstat(store.WorktreeDir(c.o.Root, p.id)); err == nil && !c.wtPlanned[p.id] {
		return // its worktree stays: its runs may build again
	}
	agent, err1 := buildcache.CachePath(c.o.Root, p.id, c.o.Env)
	checks, err2 := buildcache.ChecksCachePath(c.o.Root, p.id, c.o.Env)
	legacy, err3 := buildcache.LegacyCachePath(c.o.Root, p.id)
	for _, d := range []struct {
		dir, why string
		err      error
	}{
		{agent, "the build caches of its runs; its worktree goes", err1},
		{checks, "the build caches of its checks; its worktree goes", err2},
		{legacy, "the build caches of its runs, where an earlier saga-lsp kept them; its worktree goes", err3},
	} {
		if d.err != nil {
			continue
		}
		if _, err := os.Lstat(d.dir); err != nil {
			continue
		}
		dir := d.dir
		p.add(CleanCache, dir, d.why, func(context.Context) error { return removeCache(dir) })
	}
}

// planShares: the check results the story's TaskCompleted hooks shared
// (runs.CheckShare) are worth nothing once those hooks are done; one
// whose lock a hook holds stays.
func (c *cleaner) planShares(p *storyPlan) {
	bases := runs.CheckSharesOf(c.o.SessionDir, p.id)
	if len(bases) == 0 {
		return
	}
	dir := filepath.Dir(bases[0])
	p.add(CleanShares, dir, termtext.Count(len(bases), "check result", "check results")+" its hooks shared, of finished completions",
		func(context.Context) error { return removeShares(bases) })
}

// removeShares removes shared check results whose lock nobody holds.
func removeShares(bases []string) error {
	for _, b := range bases {
		if _, err := os.Lstat(b + ".lock"); err != nil {
			continue // gone meanwhile
		}
		if l, free, err := filesafe.TryLockFile(b + ".lock"); err == nil && free {
			os.Remove(b + ".json")
			os.Remove(b + ".lock")
			_ = l.Unlock()
		}
	}
	return nil
}

// removeCache removes a build cache; Go's module cache makes its folders
// read-only, so they are made writable first.
// The chmods stay below dir (filesafe.Beneath): a folder an agent process
// swaps for a link meanwhile never has what the link names made writable.
func removeCache(dir string) error {
	if b, err := filesafe.OpenBeneath(dir); err == nil {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if rel, rerr := filepath.Rel(dir, p); err == nil && rerr == nil && d.IsDir() {
				b.Chmod(filepath.ToSlash(rel), 0o755)
			}
			return nil
		})
		b.Close()
	}
	return os.RemoveAll(dir)
}

func (p *storyPlan) add(kind, path, reason string, remove func(context.Context) error) {
	p.items = append(p.items, planned{item: CleanItem{Story: p.id, Kind: kind, Path: path, Reason: reason}, remove: remove})
}

func (p *storyPlan) keep(kind, path, reason string) {
	p.items = append(p.items, planned{item: CleanItem{Story: p.id, Kind: kind, Path: path, Reason: reason, Kept: true}})
}

// liveReason says why a story counts as running: its worker lock is held,
// a run of it is alive, a tmux session of it has a live pane, or its
// epic's runner is alive (it may start the story again).
func (c *cleaner) liveReason(id string) string {
	if pid, held, err := runs.WorkerLock(c.o.Root, id, false); err != nil {
		return fmt.Sprintf("cannot read the worker lock of %s: %v", id, err)
	} else if held {
		return fmt.Sprintf("a worker of %s is running (pid %d): stop it first (`saga-lsp stop %s`) or let it finish", id, pid, id)
	}
	for _, r := range c.runs[id] {
		if !r.Ended && r.Alive() {
			return fmt.Sprintf("a worker of %s is running (pid %d): stop it first (`saga-lsp stop %s`) or let it finish", id, r.PID, id)
		}
	}
	if s := c.liveSessions[id]; s != "" {
		return fmt.Sprintf("its tmux session %s is live: stop it first (`saga-lsp stop %s`)", s, id)
	}
	if s := c.ws.Story(id); s != nil && s.EpicID() != "" {
		if pid, held, err := runs.EpicLock(c.o.Root, s.EpicID(), false); err == nil && held {
			return fmt.Sprintf("the runner of epic %s is running (pid %d) and may start %s: stop it first (`saga-lsp stop %s`) or let it finish",
				s.EpicID(), pid, id, s.EpicID())
		}
	}
	return ""
}

// planRunFiles decides the session files of the story's dead runs: every
// run but the latest, and the latest too once the story's worktree is gone
// (while it stays, `status` shows that run's result). A run an epic run
// that stays names stays too: it is how that epic run is known to be this
// repository's.
func (c *cleaner) planRunFiles(p *storyPlan, keptEpicSessions map[string]bool) []planned {
	rs := c.runs[p.id]
	var out []planned
	for i, r := range rs {
		if !r.Ended && r.Alive() {
			continue
		}
		latest := i == len(rs)-1
		switch {
		case latest && c.worktreeStays(p.id):
			c.left(p.id, CleanRunFiles, runs.OutputOfEvents(r.EventsFile),
				fmt.Sprintf("the latest run of %s, whose result status shows: it goes when the worktree goes", p.id))
			continue
		case keptEpicSessions[r.Session]:
			c.left(p.id, CleanRunFiles, runs.OutputOfEvents(r.EventsFile), "started by an epic run whose files stay")
			continue
		}
		why := "a " + runOutcome(r) + " run"
		if latest {
			why += ", the latest, and its worktree goes too"
		} else {
			why += fmt.Sprintf(", not the latest of %s", p.id)
		}
		it := planned{item: CleanItem{Story: p.id, Kind: CleanRunFiles, Path: runs.OutputOfEvents(r.EventsFile), Reason: why},
			remove: func(context.Context) error { return removeRunFiles(r.EventsFile) }}
		if p.live != "" {
			it.item.Kept, it.item.Reason = true, p.live
		}
		out = append(out, it)
	}
	return out
}

// cleanEpic removes the dead tmux sessions and the session files of an
// epic's runner: every dead run but the latest, and the latest once none
// of the worktrees of the stories it started is left.
func (c *cleaner) cleanEpic(ctx context.Context, epic string, keptSessions map[string]bool) {
	live := ""
	if pid, held, err := runs.EpicLock(c.o.Root, epic, false); err == nil && held {
		live = fmt.Sprintf("the runner of epic %s is running (pid %d)", epic, pid)
	}
	var items []planned
	add := func(kind, path, reason string, remove func(context.Context) error) {
		it := planned{item: CleanItem{Epic: epic, Kind: kind, Path: path, Reason: reason}, remove: remove}
		if live != "" {
			it.item.Kept, it.item.Reason = true, live
		}
		items = append(items, it)
	}
	for _, s := range c.epicSessions[epic] {
		add(CleanTmux, s, "its runner has exited; remain-on-exit keeps its dead pane",
			func(ctx context.Context) error { return c.o.Tmux.KillSession(ctx, s) })
	}
	rs := c.epicRuns[epic]
	for i, r := range rs {
		if !r.Ended && r.Alive() {
			continue
		}
		if i == len(rs)-1 {
			var stays []string
			for _, s := range slices.Sorted(maps.Keys(r.Stories)) {
				if c.worktreeStays(s) {
					stays = append(stays, s)
				}
			}
			if len(stays) > 0 {
				for _, s := range r.Stories {
					keptSessions[s.Session] = true
				}
				c.res.Left = append(c.res.Left, CleanLeft{Kind: CleanRunFiles, Path: runs.OutputOfEvents(r.EventsFile),
					Reason: fmt.Sprintf("the latest run of epic %s, whose state status shows: it goes when the worktrees of %s go", epic, strings.Join(stays, ", "))})
				continue
			}
		}
		why := fmt.Sprintf("a %s run of epic %s", runOutcome(r), epic)
		if i < len(rs)-1 {
			why += ", not the latest"
		} else {
			why += ", the latest, and the worktrees of its stories go too"
		}
		add(CleanRunFiles, runs.OutputOfEvents(r.EventsFile), why, func(context.Context) error { return removeRunFiles(r.EventsFile) })
	}
	c.execute(ctx, nil, items)
}

// runOutcome names how a dead run ended.
func runOutcome(r *runs.Run) string {
	if !r.Ended {
		return "killed"
	}
	return cmp.Or(r.State, "ended")
}

// removeRunFiles removes a run's output and checks files, then its events
// file (the record that tells whose the others are); any may be gone
// already.
func removeRunFiles(eventsFile string) error {
	for _, p := range runs.RunFiles(eventsFile) {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", p, err)
		}
	}
	return nil
}
