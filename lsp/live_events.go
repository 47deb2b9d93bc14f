package lsp

// Following one run: its events file through the run protocol's fold
// (runs.Tail, runs.Run), its hydrated task list, and its liveness.

import (
	"cmp"
	"context"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
)

// liveRun is one worker run, known from its events file.
type liveRun struct {
	*runs.Run            // the fold of its events
	tail       runs.Tail // where reading its events file has got to
	ms         int64     // from the session name: runs of a story are ordered by it
	ours       bool      // started by this server's runStory: it belongs to this workspace
	verified   bool      // checked to belong to this workspace
	followedAt time.Time
	listDir    string
	list       map[string]string // task → status, from the hydrated task list
	sent       *workerProgressParams
	runProgress
}

func (r *liveRun) progressOf() *runProgress { return &r.runProgress }

// stopper: cancelling a worker's progress stops the worker, as `saga-lsp
// stop <story>` does.
func (r *liveRun) stopper(root string, env func(string) string) (string, func(context.Context) error) {
	if r.Ended {
		return "", nil
	}
	story := r.Story
	return "stop " + story, func(ctx context.Context) error {
		_, err := control.StopStory(ctx, control.StopOptions{Root: root, Story: story, Env: env})
		return err
	}
}

// newRun is a run known by its events file, not yet read.
func (l *live) newRun(path string, ms int64) *liveRun {
	r := &liveRun{Run: runs.NewRun(path), ms: ms, followedAt: time.Now()}
	r.tail = runs.Tail{Path: path, Bad: func(line, why string) {
		l.s.log.Warn("live: events line skipped", "file", path, "why", why, "line", clipText(line, 200))
	}}
	return r
}

// readEvents reads the lines appended to a run's events file since the
// last pass and applies them, notifying as it goes.
func (l *live) readEvents(r *liveRun, ef *effects) {
	st := l.stories[r.Story]
	dropped := false
	r.tail.Read(func(e runs.Event) {
		if dropped {
			return
		}
		was := r.Ended
		r.Apply(e)
		if !r.verified {
			if r.PID == 0 && !r.Ended {
				return
			}
			if !l.belongs(r) {
				// Another workspace's worker of a story with the same name.
				dropped = true
				delete(l.runs, r.Session)
				l.skip[r.EventsFile] = true
				return
			}
			r.verified = true
			snap := l.s.current()
			st = l.ensureStory(snap, r.Story)
			l.restatus(st, runs.SourceClaude, ef)
			l.storyRels(snap, r.Story, ef)
		}
		if st != nil && e.Event == runs.KindTaskStatus && e.Task != "" {
			l.restatus(st, cmp.Or(e.Source, runs.SourceClaude), ef)
		}
		if e.Event == runs.KindCheckEnd { // check-failed and the task lens follow it
			l.storyRels(l.s.current(), r.Story, ef)
			ef.refresh = true
		}
		if e.Event == runs.KindStep && e.Step == runs.StepHydrate {
			r.listDir = l.listDirOf(r.Run)
			l.watchList(r, ef)
		}
		if r.Ended && !was {
			l.finish(r, ef)
			return
		}
		l.progressUpdate(r, ef)
	})
}

// listDirOf finds a run's hydrated task list: in the server's Claude
// config dir, else where the hydrate step says it wrote it.
func (l *live) listDirOf(r *runs.Run) string {
	id := r.TaskList
	if id == "" {
		return ""
	}
	if l.configDir != "" {
		d := claudecode.ListDir(l.configDir, id)
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	if p := r.TaskListDir; filepath.IsAbs(p) && filepath.Base(p) == claudecode.Sanitize(id) {
		return filepath.Clean(p)
	}
	if l.configDir != "" {
		return claudecode.ListDir(l.configDir, id)
	}
	return ""
}

// watchList watches and reads a running worker's hydrated task list.
func (l *live) watchList(r *liveRun, ef *effects) {
	if r.listDir == "" || r.Ended {
		return
	}
	l.lists[r.listDir] = r.Session
	l.watchLocked(r.listDir)
	l.readList(r, ef)
}

// readList reads the task list's statuses (Claude Code's TaskUpdate writes
// there first).
func (l *live) readList(r *liveRun, ef *effects) {
	if r.listDir == "" || r.Ended {
		return
	}
	tasks, err := claudecode.Read(r.listDir)
	if err != nil {
		return
	}
	list := make(map[string]string, len(tasks))
	for id, t := range tasks {
		list[id] = t.Status
	}
	if maps.Equal(list, r.list) {
		return
	}
	r.list = list
	if st := l.stories[r.Story]; st != nil {
		l.restatus(st, runs.SourceClaude, ef)
		l.progressUpdate(r, ef)
	}
}

// checkAlive notices a worker that died without a worker.end (SIGKILL, a
// crash of the worker itself).
func (l *live) checkAlive(r *liveRun, ef *effects) {
	if r.Ended {
		return
	}
	dead := false
	switch {
	case r.PID > 0:
		dead = !r.Alive() // a reused pid is no worker
	default:
		dead = time.Since(r.followedAt) > liveStartGrace
	}
	if !dead {
		return
	}
	l.readEvents(r, ef) // it may have written its end just before exiting
	if r.Ended || l.runs[r.Session] != r {
		return
	}
	if !r.verified {
		delete(l.runs, r.Session)
		l.skip[r.EventsFile] = true
		return
	}
	r.Died()
	l.finish(r, ef)
}

// finish is a run's end: its sources stop counting, its progress ends, the
// story's diagnostics and lenses are refreshed.
func (l *live) finish(r *liveRun, ef *effects) {
	if r.listDir != "" {
		delete(l.lists, r.listDir)
		l.unwatchLocked(r.listDir)
	}
	snap := l.s.current()
	if st := l.stories[r.Story]; st != nil {
		l.loadWorktree(snap, r.Story, false, ef)
		l.restatus(st, runs.SourceWorktree, ef)
	}
	l.progressUpdate(r, ef)
	l.storyRels(snap, r.Story, ef)
	ef.refresh = true
	// Older ended runs of the story are of no use any more.
	for session, o := range l.runs {
		if o.Story == r.Story && o.Ended && o.ms < r.ms {
			delete(l.runs, session)
			l.skip[o.EventsFile] = true
		}
	}
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
