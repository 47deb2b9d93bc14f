package lsp

// Finding the runs to follow: at start-up, when the session dir changes,
// and when this server starts one itself.

import (
	"cmp"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/store"
)

// scan is the start-up discovery: the worktree copies there are, and the
// workers of the session dir that are still alive (a terminal's `saga-lsp
// run` is followed like the editor's own). It runs once the workspace is
// loaded, before its diagnostics are published.
func (l *live) scan() {
	l.do(func() {
		l.step(func(snap *Snapshot, ef *effects) {
			for _, id := range l.worktreeDirs() {
				l.loadWorktree(snap, id, true, ef)
			}
			l.rescanSession(snap, ef)
			l.scanned = true
		})
	})
}

// worktreeDirs lists the story worktrees.
func (l *live) worktreeDirs() []string {
	des, err := os.ReadDir(filepath.Join(l.root, filepath.FromSlash(store.WorktreesRel)))
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		if store.ValidCanonical(de.Name()) {
			if fi, err := os.Stat(store.WorktreeDir(l.root, de.Name())); err == nil && fi.IsDir() {
				out = append(out, de.Name())
			}
		}
	}
	return out
}

// rescanSession looks at every events file of the session dir not yet
// known: the newest few per story are read; live workers of this workspace
// are followed, and the newest finished run is remembered for the lenses.
func (l *live) rescanSession(snap *Snapshot, ef *effects) {
	des, err := os.ReadDir(l.sessionDir)
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
		path := filepath.Join(l.sessionDir, de.Name())
		if l.skip[path] || l.runs[name] != nil {
			continue
		}
		if kind == runs.KindEpic {
			epics[id] = append(epics[id], cand{path, name, ms})
			continue
		}
		by[id] = append(by[id], cand{path, name, ms})
	}
	// Each epic's newest run (the one its lenses show).
	for _, epic := range slices.Sorted(maps.Keys(epics)) {
		cs := epics[epic]
		newest := slices.MaxFunc(cs, func(a, b cand) int { return cmp.Compare(a.ms, b.ms) })
		for _, c := range cs {
			if c != newest {
				l.skip[c.path] = true
			}
		}
		if e := l.epics[epic]; e == nil || e.run == nil || e.run.Session != newest.session {
			l.epicSessionFile(snap, newest.path, newest.session, epic, newest.ms, epicScanned)
		}
	}
	for _, story := range slices.Sorted(maps.Keys(by)) {
		cs := by[story]
		slices.SortFunc(cs, func(a, b cand) int { return cmp.Compare(b.ms, a.ms) }) // newest first
		for i, c := range cs {
			if i >= 3 {
				l.skip[c.path] = true
				continue
			}
			l.discover(snap, c.path, c.session, story, c.ms, ef)
		}
	}
}

// sessionFile handles a file event of the session dir.
func (l *live) sessionFile(snap *Snapshot, path string, ef *effects) {
	name, isEvents := runs.SessionOfEvents(path)
	if r := l.runs[name]; r != nil {
		if !r.Ended {
			l.readEvents(r, ef)
		}
		return
	}
	if l.skip[path] {
		return
	}
	if kind, epic, ms, ok := runs.ParseSession(name); ok && kind == runs.KindEpic && isEvents {
		l.epicSessionFile(snap, path, name, epic, ms, epicSeen)
		return
	}
	_, ms, ok := runs.ParseSessionName(name)
	if !ok || !isEvents {
		return
	}
	// A new events file: a worker starting now. It is read like a followed
	// run, line by line with notifications, and verified to belong here
	// when its worker.start names the pid (readEvents).
	r := l.newRun(path, ms)
	l.runs[name] = r
	l.readEvents(r, ef)
}

// discover reads an events file found by a scan (at start-up, or when the
// session dir appears): its history is replayed silently. A run whose
// worker is alive and belongs to this workspace is then followed (its
// current state announced once); one that ended is kept as its story's
// last run; others are skipped for good.
func (l *live) discover(snap *Snapshot, path, session, story string, ms int64, ef *effects) {
	r := l.newRun(path, ms)
	l.replay(r)
	switch {
	case r.PID == 0 && !r.Ended:
		// Nothing readable yet (the worker is writing its first line), or a
		// worker that never started: give it the start grace.
		if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > liveStartGrace {
			l.skip[path] = true
			return
		}
	case !l.belongs(r):
		l.skip[path] = true
		return
	case r.Ended:
		if last := l.lastRun(story); last != nil && last.ms > r.ms {
			l.skip[path] = true
			return
		}
	case !store.ProcessAlive(r.PID):
		// Died without a worker.end: remembered as its story's last run.
		r.Died()
		if last := l.lastRun(story); last != nil && last.ms > r.ms {
			l.skip[path] = true
			return
		}
	}
	l.runs[session] = r
	if r.PID == 0 && !r.Ended {
		return // verified when its worker.start arrives (readEvents)
	}
	r.verified = true
	st := l.ensureStory(snap, story)
	if r.Ended {
		return
	}
	// A live worker: follow it from here on, as if it had just started.
	l.watchList(r, ef)
	l.restatus(st, runs.SourceClaude, ef)
	l.progressUpdate(r, ef)
	l.storyRels(snap, story, ef)
	ef.refresh = true
}

// replay reads an events file from its start without notifying anyone.
func (l *live) replay(r *liveRun) {
	for {
		if n, err := r.tail.Read(r.Apply); n == 0 || err != nil {
			return
		}
	}
}

// followStarted records a run this server just started with runStory.
func (l *live) followStarted(st *control.Started) {
	l.do(func() { l.step(func(snap *Snapshot, ef *effects) { l.followStartedLocked(snap, st, ef) }) })
}

func (l *live) followStartedLocked(snap *Snapshot, st *control.Started, ef *effects) {
	l.watchLocked(l.sessionDir)
	r := l.runs[st.Session]
	if r == nil {
		_, ms, _ := runs.ParseSessionName(st.Session)
		r = l.newRun(st.EventsFile, ms)
		r.OutputFile = st.OutputFile
		l.runs[st.Session] = r
		delete(l.skip, st.EventsFile)
	}
	r.ours, r.verified = true, true
	if r.PID == 0 {
		r.PID = st.PID
	}
	stl := l.ensureStory(snap, st.Story)
	l.readEvents(r, ef)
	l.restatus(stl, runs.SourceClaude, ef)
	l.progressUpdate(r, ef)
	l.storyRels(snap, st.Story, ef)
	ef.refresh = true
}

// belongs tells whether a run is a worker of this workspace: started here,
// or its worktree (from its events) is this workspace's, or its process
// works inside this workspace.
func (l *live) belongs(r *liveRun) bool {
	if r.ours {
		return true
	}
	want := store.WorktreeDir(l.realRoot, r.Story)
	if r.Worktree != "" {
		return sameFile(r.Worktree, want)
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
		_, err := os.Stat(filepath.Join(l.root, filepath.FromSlash(store.StoryFileRel(r.Story))))
		return err == nil
	}
	return within(l.realRoot, cwd)
}

func sameFile(a, b string) bool {
	if ra, err := filepath.EvalSymlinks(a); err == nil {
		a = ra
	}
	if rb, err := filepath.EvalSymlinks(b); err == nil {
		b = rb
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

func within(root, path string) bool {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ensureStory returns the story's live record, creating it with the main
// copy's statuses as its base.
func (l *live) ensureStory(snap *Snapshot, id string) *liveStory {
	st := l.stories[id]
	if st == nil {
		st = &liveStory{id: id, subject: map[string]string{}}
		l.stories[id] = st
	}
	if st.base == nil {
		st.base = map[string]string{}
		if s := snap.WS.Story(id); s != nil {
			for _, t := range s.Tasks {
				st.base[t.ID] = symbolStatus(t.Status)
				st.subject[t.ID] = t.Subject
			}
		}
	}
	if st.view == nil {
		st.view = l.computeView(st)
	}
	return st
}
