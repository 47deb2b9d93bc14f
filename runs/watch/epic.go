package watch

// Following epic runs the way the rest of the package follows workers: the
// runner's events file in the session dir (saga-epic-<epic>-<ms>), folded
// by runs.Run, and its pid for liveness. The stories it starts are
// ordinary workers, followed as any other. What each story's state is
// comes from readmodel.EpicState (epic_state.go), never from a model of our
// own: this file only decides which run of an epic is shown, whether it
// lives, and when its state must be derived again.

import (
	"cmp"
	"maps"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// epic is one epic the watcher shows: the newest run of it in the session
// dir (nil before any), and its state as last derived.
type epic struct {
	id         string
	run        *runs.Run // the fold of the newest run's events
	tail       runs.Tail
	ms         int64 // from the run's session name
	ours       bool  // started by the face (FollowEpic)
	alive      bool  // the runner lives: followed, its liveness polled
	announce   bool  // EpicProgress is reported for this run
	followedAt time.Time

	status *readmodel.EpicStatus // the last derived state (never modified once stored)
	// dry is a dry run's own progress (the dry runner's schedule,
	// readmodel.EpicQuery.DryRun): what its EpicProgress reports, never
	// the stories' states the faces show (status). nil for a real run.
	dry     *readmodel.EpicStatus
	key     epicInputs // the workspace it was derived from
	gen     uint64     // bumped by every change on disk that may move the state
	doneGen uint64     // the gen the stored status covers

	sent *EpicProgress // the last EpicProgress reported (without its First/Ended)
}

// ensureEpic returns the epic's record, creating an empty one.
func (w *Watcher) ensureEpic(id string) *epic {
	e := w.epics[id]
	if e == nil {
		e = &epic{id: id}
		w.epics[id] = e
	}
	return e
}

// How an epic run came to be known.
type epicSighting int

const (
	epicScanned epicSighting = iota // by a scan of the session dir (at start-up): its history is not news
	epicSeen                        // by a file event: a run starting now
	epicOurs                        // started by the face
)

// epicSessionFile handles an epic runner's events file.
func (w *Watcher) epicSessionFile(ws *store.Workspace, path, session, id string, ms int64, how epicSighting) {
	if ws.Epic(id) == nil {
		w.skip[path] = true // another workspace's epic
		return
	}
	e := w.ensureEpic(id)
	switch {
	case e.run != nil && e.run.Session == session:
		w.readEpicEvents(e)
		return
	case e.run != nil && e.ms > ms:
		w.skip[path] = true // an older run: the newest one is shown
		return
	}
	if e.run != nil {
		w.skip[e.run.EventsFile] = true
	}
	e.run, e.ms, e.ours, e.followedAt = runs.NewRun(path), ms, how == epicOurs, time.Now()
	e.sent = nil // a new run: announced from its start
	e.tail = runs.Tail{Path: path, Bad: func(line, why string) {
		w.log.Warn("live: epic events line skipped", "file", path, "why", why, "line", clipText(line, 200))
	}}
	for {
		if n, err := e.tail.Read(e.run.Apply); n == 0 || err != nil {
			break
		}
	}
	switch {
	case e.run.Ended:
		e.alive = false
	case e.run.PID == 0:
		// The runner is writing its first line, or never started: given the
		// start grace (tickEpics).
		e.alive = how != epicScanned || time.Since(fileTime(path)) < startGrace
	case !e.run.Alive():
		e.alive = false
	case !w.runnerBelongs(e):
		w.skip[path] = true
		e.run = nil
		return
	default:
		e.alive = true
	}
	// A run seen starting is news, even one that ended already; one found
	// at start-up is announced while it lives.
	e.announce = e.alive || how != epicScanned
	w.epicChanged(e)
}

func fileTime(path string) time.Time {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// runnerBelongs tells whether a live runner is this workspace's: it holds
// the epic's lock in this repository, or works inside the workspace.
func (w *Watcher) runnerBelongs(e *epic) bool {
	if e.ours {
		return true
	}
	if pid, held, err := runs.EpicLock(w.root, e.id, false); err == nil && held && pid == e.run.PID {
		return true
	}
	cwd, err := os.Readlink("/proc/" + strconv.Itoa(e.run.PID) + "/cwd")
	return err == nil && runs.Within(w.realRoot, cwd)
}

// readEpicEvents applies the lines appended to a run's events file.
func (w *Watcher) readEpicEvents(e *epic) {
	if e.run == nil {
		return
	}
	read := 0
	for {
		n, err := e.tail.Read(e.run.Apply)
		if n == 0 || err != nil {
			break
		}
		read += n
	}
	if read == 0 {
		return
	}
	if e.run.Ended {
		e.alive = false
	} else if e.run.PID > 0 && !e.alive && e.run.Alive() && w.runnerBelongs(e) {
		e.alive, e.announce = true, true
	}
	w.epicChanged(e)
}

// tickEpics polls the live runners: events the watcher missed, and a
// runner that died without its epic.end (SIGKILL).
func (w *Watcher) tickEpics() {
	for _, id := range slices.Sorted(maps.Keys(w.epics)) {
		e := w.epics[id]
		if !e.alive {
			continue
		}
		w.readEpicEvents(e)
		switch {
		case !e.alive:
		case e.run.PID == 0 && time.Since(e.followedAt) > startGrace,
			e.run.PID > 0 && !e.run.Alive():
			w.readEpicEvents(e) // it may have written its end just before exiting
			if e.alive {
				e.alive = false
				w.epicChanged(e)
			}
		}
	}
}

// epicChanged notes that something on disk may have moved the epic's state:
// it is derived again (at most every epicMinInterval).
func (w *Watcher) epicChanged(e *epic) {
	e.gen++
	w.epicBell.ring()
}

// storyMoved is called when a worker's run changed: the epics listing the
// story derive their state again when the run's state moved, and report
// their progress again when only its task counts did.
func (w *Watcher) storyMoved(story string, stateMoved bool) {
	for _, e := range w.epics {
		if e.status == nil {
			continue
		}
		i := slices.IndexFunc(e.status.Stories, func(s readmodel.EpicStory) bool { return s.ID == story })
		if i < 0 {
			continue
		}
		if stateMoved || e.status.Stories[i].State != readmodel.EpicRunning {
			w.epicChanged(e)
		} else if e.announce {
			w.epicBell.ring()
		}
	}
}

// FollowEpic follows a runner the face just started (control.StartEpic);
// it returns once the run is in the State.
func (w *Watcher) FollowEpic(st *readmodel.Started) {
	w.do(func() {
		w.step(func(ws *store.Workspace, ef *effects) {
			w.watchLocked(w.sessionDir)
			_, _, ms, _ := runs.ParseSession(st.Session)
			e := w.ensureEpic(st.Epic)
			if e.run == nil || e.run.Session != st.Session {
				delete(w.skip, st.EventsFile)
				w.epicSessionFile(ws, st.EventsFile, st.Session, st.Epic, ms, epicOurs)
			}
			if e.run != nil && e.run.Session == st.Session {
				e.ours, e.announce = true, true
				e.run.PID = cmp.Or(e.run.PID, st.PID)
				w.epicChanged(e)
			}
		})
	})
}
