package watch

// Finding the runs to follow: at start-up, when the session dir changes,
// and when the face starts one itself.

import (
	"cmp"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// rescanSession looks at every events file of the session dir not yet
// known: the newest few per story are read; live workers of this workspace
// are followed, and the newest finished run is remembered for the faces.
func (w *Watcher) rescanSession(ws *store.Workspace, ef *effects) {
	des, err := os.ReadDir(w.sessionDir)
	if err != nil {
		return
	}
	type cand struct {
		path, session string
		ms            int64
	}
	by := map[string][]cand{}    // story → its runs
	epics := map[string][]cand{} // epic → its runs
	for _, de := range des {
		if de.IsDir() || !runs.IsEventsFile(de.Name()) {
			continue
		}
		name, _ := runs.SessionOfEvents(de.Name())
		kind, id, ms, ok := runs.ParseSession(name)
		if !ok {
			continue
		}
		path := filepath.Join(w.sessionDir, de.Name())
		if w.skip[path] || w.runs[name] != nil {
			continue
		}
		if kind == runs.KindEpic {
			epics[id] = append(epics[id], cand{path, name, ms})
			continue
		}
		by[id] = append(by[id], cand{path, name, ms})
	}
	// Each epic's newest run (the one the faces show).
	for _, id := range slices.Sorted(maps.Keys(epics)) {
		cs := epics[id]
		newest := slices.MaxFunc(cs, func(a, b cand) int { return cmp.Compare(a.ms, b.ms) })
		for _, c := range cs {
			if c != newest {
				w.skip[c.path] = true
			}
		}
		if e := w.epics[id]; e == nil || e.run == nil || e.run.Session != newest.session {
			w.epicSessionFile(ws, newest.path, newest.session, id, newest.ms, epicScanned)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(by)) {
		cs := by[id]
		slices.SortFunc(cs, func(a, b cand) int { return cmp.Compare(b.ms, a.ms) }) // newest first
		for i, c := range cs {
			if i >= 3 {
				w.skip[c.path] = true
				continue
			}
			w.discover(ws, c.path, c.session, id, c.ms, ef)
		}
	}
}

// sessionFile handles a file event of the session dir.
func (w *Watcher) sessionFile(ws *store.Workspace, path string, ef *effects) {
	name, isEvents := runs.SessionOfEvents(path)
	if r := w.runs[name]; r != nil {
		if !r.Ended {
			w.readEvents(ws, r, ef)
		}
		// An ended run whose events are gone was reset or cleaned: it
		// is no longer the story's, here as in `status` (the read model
		// reads the same files).
		if _, err := os.Lstat(r.EventsFile); r.Ended && isEvents && errors.Is(err, fs.ErrNotExist) {
			delete(w.runs, name)
			w.storyRels(ws, r.Story, ef)
			ef.refresh = true
			w.storyMoved(r.Story, true) // its epics' states too
		}
		return
	}
	if w.skip[path] {
		return
	}
	if kind, epic, ms, ok := runs.ParseSession(name); ok && kind == runs.KindEpic && isEvents {
		w.epicSessionFile(ws, path, name, epic, ms, epicSeen)
		return
	}
	_, ms, ok := runs.ParseSessionName(name)
	if !ok || !isEvents {
		return
	}
	// A new events file: a worker starting now. It is read like a followed
	// run, line by line with reports, and verified to belong here when its
	// worker.start names the pid (readEvents).
	r := w.newRun(path, ms)
	w.runs[name] = r
	w.readEvents(ws, r, ef)
}

// discover reads an events file found by a scan (at start-up, or when the
// session dir appears): its history is replayed silently. A run whose
// worker is alive and belongs to this workspace is then followed (its
// current state reported once); one that ended is kept as its story's
// last run; others are skipped for good.
func (w *Watcher) discover(ws *store.Workspace, path, session, id string, ms int64, ef *effects) {
	r := w.newRun(path, ms)
	replay(r)
	switch {
	case r.Backend != "":
		// Dispatched to another machine: no process here; the dispatching
		// workspace says whose it is.
		if !w.belongs(r) {
			w.skip[path] = true
			return
		}
	case r.PID == 0 && !r.Ended:
		// Nothing readable yet (the worker is writing its first line), or a
		// worker that never started: give it the start grace.
		if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > startGrace {
			w.skip[path] = true
			return
		}
	case !w.belongs(r):
		w.skip[path] = true
		return
	case r.Ended:
		if last := w.lastRun(id); last != nil && last.ms > r.ms {
			w.skip[path] = true
			return
		}
	case !filesafe.ProcessAlive(r.PID):
		// Died without a worker.end: remembered as its story's last run.
		r.Died()
		if last := w.lastRun(id); last != nil && last.ms > r.ms {
			w.skip[path] = true
			return
		}
	}
	w.runs[session] = r
	if r.PID == 0 && !r.Ended && r.Backend == "" {
		return // verified when its worker.start arrives (readEvents)
	}
	r.verified = true
	st := w.ensureStory(ws, id)
	if r.Ended || r.Backend != "" {
		ef.refresh = true
		return
	}
	// A live worker: follow it from here on, as if it had just started.
	w.watchList(r, ef)
	w.restatus(st, runs.SourceClaude, ef)
	w.progressUpdate(r, ef)
	w.storyRels(ws, id, ef)
	ef.refresh = true
}

// replay reads an events file from its start without reporting anything.
func replay(r *run) {
	for {
		if n, err := r.tail.Read(r.Apply); n == 0 || err != nil {
			return
		}
	}
}

// FollowStory follows a worker the face just started (control.StartStory);
// it returns once the run is in the State.
func (w *Watcher) FollowStory(st *readmodel.Started) {
	w.do(func() {
		w.step(func(ws *store.Workspace, ef *effects) { w.followStoryLocked(ws, st, ef) })
	})
}

func (w *Watcher) followStoryLocked(ws *store.Workspace, st *readmodel.Started, ef *effects) {
	w.watchLocked(w.sessionDir)
	r := w.runs[st.Session]
	if r == nil {
		_, ms, _ := runs.ParseSessionName(st.Session)
		r = w.newRun(st.EventsFile, ms)
		r.OutputFile = st.OutputFile
		w.runs[st.Session] = r
		delete(w.skip, st.EventsFile)
	}
	r.ours, r.verified = true, true
	if r.PID == 0 {
		r.PID = st.PID
	}
	s := w.ensureStory(ws, st.Story)
	w.readEvents(ws, r, ef)
	w.restatus(s, runs.SourceClaude, ef)
	w.progressUpdate(r, ef)
	w.storyRels(ws, st.Story, ef)
	ef.refresh = true
}

// belongs tells whether a run is a worker of this workspace: started by the
// face, or its worktree (from its events) is this workspace's, or its
// process works inside this workspace.
func (w *Watcher) belongs(r *run) bool {
	if r.ours {
		return true
	}
	if r.Backend != "" || r.Root != "" { // the repository it recorded (runs.Run.In)
		return r.Root != "" && runs.SamePath(r.Root, w.realRoot)
	}
	if r.Worktree != "" {
		return runs.SamePath(r.Worktree, store.WorktreeDir(w.realRoot, r.Story)) ||
			runs.SamePath(r.Worktree, store.DryWorktreeDir(w.realRoot, r.Story))
	}
	if r.Ended || r.PID <= 0 {
		return false
	}
	if !runs.LooksLikeWorker(r.PID, r.Story) {
		return false
	}
	cwd, err := os.Readlink("/proc/" + strconv.Itoa(r.PID) + "/cwd")
	if err != nil {
		// No /proc: trust the name when the story is ours.
		_, err := os.Stat(filepath.Join(w.root, filepath.FromSlash(store.StoryFileRel(r.Story))))
		return err == nil
	}
	return runs.Within(w.realRoot, cwd)
}

// ensureStory returns the story's record, creating it with the main copy's
// statuses as its base.
func (w *Watcher) ensureStory(ws *store.Workspace, id string) *story {
	st := w.stories[id]
	if st == nil {
		st = &story{id: id, subject: map[string]string{}}
		w.stories[id] = st
	}
	if st.base == nil {
		st.base = map[string]string{}
		if s := ws.Story(id); s != nil {
			for _, t := range s.Tasks {
				st.base[t.ID] = statusOf(t.Status)
				st.subject[t.ID] = t.Subject
			}
		}
	}
	if st.view == nil {
		st.view = w.computeView(st)
	}
	return st
}
