package watch

// Following one worker run: its events file through the run protocol's
// fold (runs.Tail, runs.Run), its hydrated task list, and its liveness.

import (
	"cmp"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// run is one worker run, known from its events file.
type run struct {
	*runs.Run            // the fold of its events
	tail       runs.Tail // where reading its events file has got to
	ms         int64     // from the session name: runs of a story are ordered by it
	ours       bool      // started by the face (FollowStory): it belongs to this workspace
	verified   bool      // checked to belong to this workspace
	followedAt time.Time
	listDir    string
	list       map[string]string // task → status, from the hydrated task list
	sent       *WorkerProgress   // the last progress reported (without its First/Ended)
}

// newRun is a run known by its events file, not yet read.
func (w *Watcher) newRun(path string, ms int64) *run {
	r := &run{Run: runs.NewRun(path), ms: ms, followedAt: time.Now()}
	r.tail = runs.Tail{Path: path, Bad: func(line, why string) {
		w.log.Warn("live: events line skipped", "file", path, "why", why, "line", clipText(line, 200))
	}}
	return r
}

// readEvents reads the lines appended to a run's events file since the
// last pass and applies them, reporting as it goes.
func (w *Watcher) readEvents(ws *store.Workspace, r *run, ef *effects) {
	st := w.stories[r.Story]
	dropped := false
	r.tail.Read(func(e runs.Event) {
		if dropped {
			return
		}
		was := r.Ended
		r.Apply(e)
		if !r.verified {
			if r.PID == 0 && !r.Ended && r.Backend == "" {
				return
			}
			if !w.belongs(r) {
				// Another workspace's worker of a story with the same name.
				dropped = true
				delete(w.runs, r.Session)
				w.skip[r.EventsFile] = true
				return
			}
			r.verified = true
			st = w.ensureStory(ws, r.Story)
			w.restatus(st, runs.SourceClaude, ef)
			w.storyRels(ws, r.Story, ef)
		}
		if st != nil && e.Event == runs.KindTaskStatus && e.Task != "" {
			w.restatus(st, cmp.Or(e.Source, runs.SourceClaude), ef)
		}
		if e.Event == runs.KindCheckEnd || e.Event == runs.KindProtected { // a face's check-failed, protected-file-changed and task views follow them
			w.storyRels(ws, r.Story, ef)
			ef.refresh = true
		}
		if e.Event == runs.KindStep && e.Step == runs.StepHydrate {
			r.listDir = w.listDirOf(r.Run)
			w.watchList(r, ef)
		}
		if r.Ended && !was {
			w.finish(ws, r, ef)
			return
		}
		w.progressUpdate(r, ef)
	})
}

// listDirOf finds a run's hydrated task list: in the watcher's Claude
// config dir, else where the hydrate step says it wrote it.
func (w *Watcher) listDirOf(r *runs.Run) string {
	id := r.TaskList
	if id == "" {
		return ""
	}
	if w.configDir != "" {
		d := claudecode.ListDir(w.configDir, id)
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	if p := r.TaskListDir; filepath.IsAbs(p) && filepath.Base(p) == claudecode.Sanitize(id) {
		return filepath.Clean(p)
	}
	if w.configDir != "" {
		return claudecode.ListDir(w.configDir, id)
	}
	return ""
}

// watchList watches and reads a running worker's hydrated task list.
func (w *Watcher) watchList(r *run, ef *effects) {
	if r.listDir == "" || r.Ended {
		return
	}
	w.lists[r.listDir] = r.Session
	w.watchLocked(r.listDir)
	w.readList(r, ef)
}

// readList reads the task list's statuses (Claude Code's TaskUpdate writes
// there first).
func (w *Watcher) readList(r *run, ef *effects) {
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
	if st := w.stories[r.Story]; st != nil {
		w.restatus(st, runs.SourceClaude, ef)
		w.progressUpdate(r, ef)
	}
}

// checkAlive notices a worker that died without a worker.end (SIGKILL, a
// crash of the worker itself).
func (w *Watcher) checkAlive(ws *store.Workspace, r *run, ef *effects) {
	if r.Ended {
		return
	}
	dead := false
	switch {
	case r.PID > 0:
		dead = !r.Alive() // a reused pid is no worker
	default:
		dead = time.Since(r.followedAt) > startGrace
	}
	if !dead {
		return
	}
	w.readEvents(ws, r, ef) // it may have written its end just before exiting
	if r.Ended || w.runs[r.Session] != r {
		return
	}
	if !r.verified {
		delete(w.runs, r.Session)
		w.skip[r.EventsFile] = true
		return
	}
	r.Died()
	w.finish(ws, r, ef)
}

// finish is a run's end: its sources stop counting, its progress ends, the
// story's files named and the views refreshed.
func (w *Watcher) finish(ws *store.Workspace, r *run, ef *effects) {
	if r.listDir != "" {
		delete(w.lists, r.listDir)
		w.unwatchLocked(r.listDir)
	}
	if st := w.stories[r.Story]; st != nil {
		w.loadWorktree(ws, r.Story, false, ef)
		w.restatus(st, runs.SourceWorktree, ef)
	}
	w.progressUpdate(r, ef)
	w.storyRels(ws, r.Story, ef)
	ef.refresh = true
	// Older ended runs of the story are of no use any more.
	for session, o := range w.runs {
		if o.Story == r.Story && o.Ended && o.ms < r.ms {
			delete(w.runs, session)
			w.skip[o.EventsFile] = true
		}
	}
}

// progressUpdate reports a run's progress when what it shows has changed.
func (w *Watcher) progressUpdate(r *run, ef *effects) {
	if !r.verified {
		return
	}
	done, total := w.counts(r)
	p := WorkerProgress{Story: r.Story, Session: r.Session, State: r.State, Step: r.Step, Cycle: r.Cycle,
		Done: done, Total: total, Message: r.Message, OutputFile: r.OutputFile}
	if r.sent != nil && *r.sent == p {
		return
	}
	first := r.sent == nil
	moved := first || r.Ended || r.sent.State != p.State
	r.sent = &p
	ef.refresh = true
	w.storyMoved(r.Story, moved)
	sent := p
	sent.First, sent.Ended = first, r.Ended
	ef.add(func(s Sink) { s.WorkerProgress(sent) })
}

// storyRels names the story's files (main copy and worktree copy) for
// the Sink: their run-dependent state follows the worker.
func (w *Watcher) storyRels(ws *store.Workspace, id string, ef *effects) {
	copies := ws.Copies(id)
	for _, s := range []*store.Story{copies.Main, copies.Worktree} {
		if s == nil {
			continue
		}
		for _, f := range s.StoryFiles() {
			ef.rels[f.Rel] = true
		}
	}
	ef.rels[store.StoryFileRel(id)] = true
	if st := w.stories[id]; st != nil {
		for rel := range st.wtFiles {
			ef.rels[rel] = true
		}
	}
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
