package control

// What `clean` looks at, and how it tells what is this repository's: the
// story runs whose events name one of its worktrees (or only its root),
// the epic runs that started such runs, the tmux sessions started in its
// root.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// cleaner is one Clean call's view of the repository and its runs.
type cleaner struct {
	o   CleanOptions
	g   git.Repo
	ws  *store.Workspace
	res *CleanResult

	remote    bool
	worktrees []git.Worktree  // git's registrations
	branches  map[string]bool // stories with a story/<s> branch
	dirs      map[string]bool // stories with a folder in .saga/worktrees
	trash     map[string]bool // stories with an interrupted removal (.removing-<s>)
	// What dry runs left: saga-dry/<s> branches, .saga/worktrees/<s>.dry
	// folders, interrupted removals of them.
	dryBranches, dryDirs, dryTrash map[string]bool
	runs                           map[string][]*runs.Run // this repository's story runs, oldest first
	epicRuns                       map[string][]*runs.Run // this repository's epic runs, oldest first
	named                          map[string]bool        // task lists (by name) some run in the session dir names
	// tmux sessions of this repository: dead ones to kill, live ones by
	// story (the newest).
	storySessions map[string][]string
	epicSessions  map[string][]string
	liveSessions  map[string]string

	merged    map[string]string // story → why its branch counts as merged
	pushed    map[string]bool   // story → story/<s> is as origin has it
	wtPlanned map[string]bool   // stories whose worktree this (dry) run removes
	locks     []*filesafe.Lock
}

// gather reads the workspace, git's worktrees and branches, the session
// dir and the tmux server.
func (c *cleaner) gather(ctx context.Context) error {
	if _, err := c.g.Run(ctx, "rev-parse", "--git-dir"); err != nil {
		return fmt.Errorf("%s is not in a git repository: story runs need one, so no run left anything here to clean (%v)", c.o.Root, err)
	}
	ws, err := c.o.Parser.Load(c.o.Root)
	if err != nil {
		return err
	}
	c.ws = ws
	c.remote = c.g.HasRemote(ctx)
	if c.worktrees, err = c.g.Worktrees(ctx); err != nil {
		return err
	}
	c.branches = readmodel.StoryBranches(ctx, c.o.Root)
	c.dryBranches = readmodel.DryBranches(ctx, c.o.Root)
	c.dirs, c.trash, c.dryDirs, c.dryTrash = map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	des, err := os.ReadDir(filepath.Join(c.o.Root, filepath.FromSlash(store.WorktreesRel)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("list %s: %w", store.WorktreesRel, err)
	}
	for _, de := range des {
		name, trash := strings.CutPrefix(de.Name(), trashPrefix)
		id, dry := strings.CutSuffix(name, store.DrySuffix)
		switch {
		case !store.ValidCanonical(id):
		case trash && dry:
			c.dryTrash[id] = true
		case trash:
			c.trash[id] = true
		case dry:
			c.dryDirs[id] = true
		default:
			c.dirs[id] = true
		}
	}
	for _, w := range c.worktrees {
		if id, ok := c.worktreeStory(w.Path); ok && w.Prunable {
			c.dirs[id] = true // a registration whose folder is gone
		}
	}
	var paths map[string]string // tmux sessions and the folders they started in
	if c.o.Tmux != nil {
		if paths, err = c.o.Tmux.SessionPaths(ctx); err != nil {
			return err
		}
	}
	c.gatherRuns(paths)
	c.gatherSessions(ctx, paths)
	c.merged, c.pushed, c.wtPlanned = map[string]string{}, map[string]bool{}, map[string]bool{}
	return nil
}

// gatherRuns reads every events file of the session dir and keeps the runs
// that are this repository's: story runs whose events name one of its
// worktrees, or its root when they ended before their worktree step; epic runs started in its root (while their tmux session is
// there to tell) or that started one of its story runs (the story's last
// one by its durable record, when its events file is gone).
func (c *cleaner) gatherRuns(paths map[string]string) {
	c.runs, c.epicRuns, c.named = map[string][]*runs.Run{}, map[string][]*runs.Run{}, map[string]bool{}
	ours := map[string]bool{} // story sessions
	for id, files := range runs.ListRuns(c.o.SessionDir, runs.KindStory) {
		for _, f := range files {
			r := runs.ReadRun(f.EventsFile)
			if r == nil {
				continue
			}
			if r.TaskListDir != "" {
				c.named[filepath.Base(filepath.Clean(r.TaskListDir))] = true
			}
			// A run that ended before its worktree step names only its
			// root: it is this repository's too, as the read model counts
			// it (runs.Run.In).
			if c.isWorktreeOf(r.Worktree, id) || (r.Worktree == "" && r.Root != "" && r.In(c.o.Root)) {
				c.runs[id] = append(c.runs[id], r)
				ours[r.Session] = true
			}
		}
	}
	records := map[string]string{} // story → its record's session
	lastSession := func(story string) string {
		s, ok := records[story]
		if !ok {
			if rec, found := runs.ReadRecord(c.o.Root, story); found {
				s = rec.Session
			}
			records[story] = s
		}
		return s
	}
	for id, files := range runs.ListRuns(c.o.SessionDir, runs.KindEpic) {
		for _, f := range files {
			r := runs.ReadRun(f.EventsFile)
			if r == nil {
				continue
			}
			mine := sameDir(paths[r.Session], c.o.Root)
			for story, s := range r.Stories {
				mine = mine || ours[s.Session] || (s.Session != "" && lastSession(story) == s.Session)
			}
			if mine {
				c.epicRuns[id] = append(c.epicRuns[id], r)
			}
		}
	}
}

// gatherSessions lists the tmux sessions started in this repository's
// root (or named by its runs): the dead ones to kill, the live ones.
func (c *cleaner) gatherSessions(ctx context.Context, paths map[string]string) {
	c.storySessions, c.epicSessions, c.liveSessions = map[string][]string{}, map[string][]string{}, map[string]string{}
	ours := map[string]bool{}
	for _, rs := range c.runs {
		for _, r := range rs {
			ours[r.Session] = true
		}
	}
	for _, rs := range c.epicRuns {
		for _, r := range rs {
			ours[r.Session] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(paths)) {
		k, id, _, ok := runs.ParseSession(name)
		if !ok || !(ours[name] || sameDir(paths[name], c.o.Root)) {
			continue
		}
		alive, _ := c.o.Tmux.Panes(ctx, name)
		switch {
		case alive && k == runs.KindStory:
			c.liveSessions[id] = name
		case alive:
		case k == runs.KindStory:
			c.storySessions[id] = append(c.storySessions[id], name)
		default:
			c.epicSessions[id] = append(c.epicSessions[id], name)
		}
	}
}

// leftoverStories lists the stories that left anything: a worktree (or
// its registration), an interrupted removal, a branch, a run, a tmux
// session.
func (c *cleaner) leftoverStories() []string {
	set := map[string]bool{}
	for _, m := range []map[string]bool{c.dirs, c.trash, c.branches, c.dryDirs, c.dryTrash, c.dryBranches} {
		for id := range m {
			set[id] = true
		}
	}
	for id := range c.runs {
		set[id] = true
	}
	for id := range c.storySessions {
		set[id] = true
	}
	for id := range c.liveSessions {
		set[id] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// isWorktreeOf tells whether path (as a run recorded it) is story's
// worktree in this repository, however either spells its root.
func (c *cleaner) isWorktreeOf(path, story string) bool {
	if path == "" {
		return false
	}
	path = filepath.Clean(path)
	for _, dry := range []bool{false, true} { // a dry run's worktree too
		if path == store.RunWorktreeDir(c.o.Root, story, dry) {
			return true
		}
		rel := filepath.FromSlash(store.RunWorktreeDir("", story, dry))
		if root, ok := strings.CutSuffix(path, string(filepath.Separator)+rel); ok && sameDir(root, c.o.Root) {
			return true
		}
	}
	return false
}

// worktreeStory is the story whose worktree (or interrupted removal) git's
// registration path is, in this repository.
func (c *cleaner) worktreeStory(path string) (string, bool) {
	name := filepath.Base(path)
	id := strings.TrimPrefix(name, trashPrefix)
	if !store.ValidCanonical(id) || !sameDir(filepath.Dir(path), filepath.Join(c.o.Root, filepath.FromSlash(store.WorktreesRel))) {
		return "", false
	}
	return id, true
}

// registration is git's record of the worktree at path, if any.
func (c *cleaner) registration(path string) (git.Worktree, bool) {
	for _, w := range c.worktrees {
		if filepath.Clean(w.Path) == filepath.Clean(path) || sameDir(w.Path, path) {
			return w, true
		}
	}
	// A registration whose folder is gone cannot be resolved: compare the
	// folders holding them.
	for _, w := range c.worktrees {
		if filepath.Base(w.Path) == filepath.Base(path) && sameDir(filepath.Dir(w.Path), filepath.Dir(path)) {
			return w, true
		}
	}
	return git.Worktree{}, false
}

// taskListOf is the task list a run hydrated, when it is still there and
// is what a worker makes: <config>/tasks/saga__<story>__<ms>.
func (c *cleaner) taskListOf(story string, r *runs.Run) (string, bool) {
	dir := filepath.Clean(r.TaskListDir)
	if s, ok := claudecode.StoryOfList(filepath.Base(dir)); !ok || s != story || filepath.Base(filepath.Dir(dir)) != "tasks" {
		return "", false
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", false
	}
	return dir, true
}

// removeTaskList removes a hydrated task list (gone already is fine).
func removeTaskList(dir string) error {
	return claudecode.Remove(dir)
}

// orphanTaskLists notes the saga task lists of the given stories in the
// Claude Code config dir that no run in the session dir names: whose they
// are cannot be told (another checkout's worker may use one), so they are
// only listed.
func (c *cleaner) orphanTaskLists(stories []string) {
	cfg, err := claudecode.ConfigDir(c.o.Env)
	if err != nil {
		return
	}
	tasks := filepath.Join(cfg, "tasks")
	des, err := os.ReadDir(tasks)
	if err != nil {
		return
	}
	for _, de := range des {
		story, ok := claudecode.StoryOfList(de.Name())
		dir := filepath.Join(tasks, de.Name())
		if !ok || !de.IsDir() || !slices.Contains(stories, story) || c.named[de.Name()] {
			continue
		}
		c.left(story, CleanTaskList, dir, fmt.Sprintf("no run in %s names it (was the session dir emptied?), so whose it is cannot be told: remove it by hand once no worker of %s runs on this machine",
			c.o.SessionDir, story))
	}
}
