package watch

// The repository's worker and runner locks, probed at every tick (and by
// Scan) so that no reader ever probes one: a worker whose events the
// watcher cannot see (another session dir) counts as alive while it holds
// its story's lock, a runner while it holds its epic's.

import (
	"maps"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// probeLocks reads which worker and runner locks are held; the files of a
// story whose lock came or went are named, its epics derived again (a
// locked story runs there as it is alive in the State) and the views
// refreshed, and the views when an epic's lock did.
func (w *Watcher) probeLocks(ws *store.Workspace, ef *effects) {
	workers, epics := w.heldLocks()
	if !maps.Equal(workers, w.workerLocks) {
		moved := func(story string) {
			w.storyRels(ws, story, ef)
			w.storyMoved(story, true)
			ef.refresh = true
		}
		for story := range w.workerLocks {
			if workers[story] == 0 {
				moved(story)
			}
		}
		for story := range workers {
			if w.workerLocks[story] == 0 {
				moved(story)
			}
		}
		w.workerLocks = workers
	}
	if !maps.Equal(epics, w.epicLocks) {
		w.epicLocks = epics
		ef.refresh = true
	}
}

// lockRelist is how often the lock folder is listed again without a file
// event naming a lock: what a watcher that missed events (a full inotify
// queue) still sees. Each listing stats every worker and runner lock file
// of the repository — two per story ever run — and the tick came four
// times a second in every face (docs/architecture.md#an-epic-of-200-stories).
const lockRelist = 5 * time.Second

// isRunLock tells a worker's or runner's lock name (runs.WorkerLockName,
// runs.EpicLockName) from the repository's other locks.
func isRunLock(name string) bool {
	return strings.HasPrefix(name, runs.WorkerLockName("")) || strings.HasPrefix(name, runs.EpicLockName(""))
}

// heldLocks lists the held worker locks (story → holder pid) and runner
// locks (epic → holder pid) of the workspace's repository. Only lock files
// with a holder recorded (filesafe.RecordedLocksIn) are probed, each at
// every call: a holder killed leaves its file as it was.
func (w *Watcher) heldLocks() (workers, epics map[string]int) {
	workers, epics = map[string]int{}, map[string]int{}
	root := w.root
	if w.lockDir == "" {
		d, err := filesafe.LockDir(root)
		if err != nil {
			w.log.Debug("live: locks", "root", root, "err", err)
			return workers, epics
		}
		w.lockDir = d
	}
	if w.fsw == nil || !w.watched[w.lockDir] || w.locksDirty || time.Since(w.locksListed) >= lockRelist {
		names, err := filesafe.RecordedLocksIn(w.lockDir, isRunLock)
		if err != nil {
			w.log.Debug("live: locks", "dir", w.lockDir, "err", err)
			return workers, epics
		}
		w.lockNames, w.locksListed, w.locksDirty = names, time.Now(), false
	}
	workerPrefix, epicPrefix := runs.WorkerLockName(""), runs.EpicLockName("")
	for _, name := range w.lockNames {
		story, isWorker := strings.CutPrefix(name, workerPrefix)
		epic, isEpic := strings.CutPrefix(name, epicPrefix)
		if (!isWorker || !store.ValidCanonical(story)) && (!isEpic || !store.ValidID(epic)) {
			continue
		}
		switch {
		case isWorker:
			// reset and clean hold a story's worker lock while they remove
			// its run (so that no worker starts meanwhile): a holder that is
			// no worker is no run — where a process's command line can be read.
			if pid, err := runs.WorkerHolderIn(w.lockDir, story); err == nil && pid > 0 && runs.LooksLikeWorker(pid, story) {
				workers[story] = pid
			}
		case isEpic:
			if pid, held, err := runs.EpicLock(root, epic, false); err == nil && held && pid > 0 {
				epics[epic] = pid
			}
		}
	}
	return workers, epics
}
