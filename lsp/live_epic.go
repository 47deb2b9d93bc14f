package lsp

// Following epic runs (docs/protocol-extensions.md#epic-runs) the way live.go follows workers: the
// runner's events file in the session dir (saga-epic-<epic>-<ms>), folded
// by runs.Run, and its pid for liveness. The stories it starts are
// ordinary workers, followed as any other. What each story's state is
// comes from control.EpicState (live_epic_state.go), never from a model of
// our own: this file only decides which run of an epic is shown, whether
// it lives, and when its state must be derived again.

import (
	"cmp"
	"context"
	"maps"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/store"
)

// liveEpic is one epic the server shows: the newest run of it in the
// session dir (nil before any), and its state as last derived.
type liveEpic struct {
	id         string
	run        *runs.Run // the fold of the newest run's events
	tail       runs.Tail
	ms         int64 // from the run's session name
	ours       bool  // started by this server's runEpic
	alive      bool  // the runner lives: followed, its liveness polled
	announce   bool  // saga/epicProgress and the work-done progress are sent for this run
	followedAt time.Time

	status  *control.EpicStatus // the last derived state (never modified once stored)
	key     epicInputs          // the workspace it was derived from
	gen     uint64              // bumped by every change on disk that may move the state
	doneGen uint64              // the gen the stored status covers

	sent *epicProgressParams // the last saga/epicProgress sent
	runProgress
}

func (e *liveEpic) progressOf() *runProgress { return &e.runProgress }

// stopper: cancelling an epic run's progress stops the epic, as `saga-lsp
// stop <epic>` does.
func (e *liveEpic) stopper(root string, env func(string) string) (string, func(context.Context) error) {
	if !e.alive {
		return "", nil
	}
	epic := e.id
	return "stop epic " + epic, func(ctx context.Context) error {
		_, err := control.StopEpic(ctx, control.StopOptions{Root: root, Story: epic, Env: env})
		return err
	}
}

// ensureEpic returns the epic's record, creating an empty one.
func (l *live) ensureEpic(id string) *liveEpic {
	e := l.epics[id]
	if e == nil {
		e = &liveEpic{id: id}
		l.epics[id] = e
	}
	return e
}

// How an epic run came to be known.
type epicSighting int

const (
	epicScanned epicSighting = iota // by a scan of the session dir (at start-up): its history is not news
	epicSeen                        // by a file event: a run starting now
	epicOurs                        // started by this server's runEpic
)

// epicSessionFile handles an epic runner's events file.
func (l *live) epicSessionFile(snap *Snapshot, path, session, epic string, ms int64, how epicSighting) {
	if snap.WS.Epic(epic) == nil {
		l.skip[path] = true // another workspace's epic
		return
	}
	e := l.ensureEpic(epic)
	switch {
	case e.run != nil && e.run.Session == session:
		l.readEpicEvents(e)
		return
	case e.run != nil && e.ms > ms:
		l.skip[path] = true // an older run: the newest one is shown
		return
	}
	if e.run != nil {
		l.skip[e.run.EventsFile] = true
	}
	e.run, e.ms, e.ours, e.followedAt = runs.NewRun(path), ms, how == epicOurs, time.Now()
	e.sent = nil // a new run: announced from its start
	e.tail = runs.Tail{Path: path, Bad: func(line, why string) {
		l.s.log.Warn("live: epic events line skipped", "file", path, "why", why, "line", clipText(line, 200))
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
		e.alive = how != epicScanned || time.Since(fileTime(path)) < liveStartGrace
	case !e.run.Alive():
		e.alive = false
	case !l.runnerBelongs(e):
		l.skip[path] = true
		e.run = nil
		return
	default:
		e.alive = true
	}
	// A run seen starting is news, even one that ended already; one found
	// at start-up is announced while it lives.
	e.announce = e.alive || how != epicScanned
	l.epicChanged(e)
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
func (l *live) runnerBelongs(e *liveEpic) bool {
	if e.ours {
		return true
	}
	if pid, held, err := runs.EpicLock(l.root, e.id, false); err == nil && held && pid == e.run.PID {
		return true
	}
	cwd, err := os.Readlink("/proc/" + strconv.Itoa(e.run.PID) + "/cwd")
	return err == nil && within(l.realRoot, cwd)
}

// readEpicEvents applies the lines appended to a run's events file.
func (l *live) readEpicEvents(e *liveEpic) {
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
	} else if e.run.PID > 0 && !e.alive && e.run.Alive() && l.runnerBelongs(e) {
		e.alive, e.announce = true, true
	}
	l.epicChanged(e)
}

// tickEpics polls the live runners: events the watcher missed, and a
// runner that died without its epic.end (SIGKILL).
func (l *live) tickEpics() {
	for _, id := range slices.Sorted(maps.Keys(l.epics)) {
		e := l.epics[id]
		if !e.alive {
			continue
		}
		l.readEpicEvents(e)
		switch {
		case !e.alive:
		case e.run.PID == 0 && time.Since(e.followedAt) > liveStartGrace,
			e.run.PID > 0 && !e.run.Alive():
			l.readEpicEvents(e) // it may have written its end just before exiting
			if e.alive {
				e.alive = false
				l.epicChanged(e)
			}
		}
	}
}

// epicChanged notes that something on disk may have moved the epic's state:
// it is derived again (at most every epicMinInterval).
func (l *live) epicChanged(e *liveEpic) {
	e.gen++
	l.epicBell.ring()
}

// storyMoved is called when a worker's run changed: the epics listing the
// story derive their state again when the run's state moved, and resend
// their progress when only its task counts did.
func (l *live) storyMoved(story string, stateMoved bool) {
	for _, e := range l.epics {
		if e.status == nil {
			continue
		}
		i := slices.IndexFunc(e.status.Stories, func(s control.EpicStory) bool { return s.ID == story })
		if i < 0 {
			continue
		}
		if stateMoved || e.status.Stories[i].State != control.EpicRunning {
			l.epicChanged(e)
		} else if e.announce {
			l.epicBell.ring()
		}
	}
}

// followStartedEpic records a run this server just started with runEpic.
func (l *live) followStartedEpic(st *control.Started) {
	l.do(func() {
		l.step(func(snap *Snapshot, ef *effects) {
			l.watchLocked(l.sessionDir)
			_, _, ms, _ := runs.ParseSession(st.Session)
			e := l.ensureEpic(st.Epic)
			if e.run == nil || e.run.Session != st.Session {
				delete(l.skip, st.EventsFile)
				l.epicSessionFile(snap, st.EventsFile, st.Session, st.Epic, ms, epicOurs)
			}
			if e.run != nil && e.run.Session == st.Session {
				e.ours, e.announce = true, true
				e.run.PID = cmp.Or(e.run.PID, st.PID)
				l.epicChanged(e)
			}
		})
	})
}

// epicRunning tells whether the epic's runner lives, as far as the server
// sees: a followed run, else its lock in this repository.
func (l *live) epicRunning(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.epics[id]; e != nil && e.alive {
		return true
	}
	if !store.ValidID(id) || l.root == "" {
		return false
	}
	_, held, err := runs.EpicLock(l.root, id, false)
	return err == nil && held
}
