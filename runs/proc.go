package runs

import (
	"path/filepath"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs/supervise"
)

// WorkerLockName is the flock a live worker holds for its story, for its
// whole life (shared by all worktrees of the repository).
func WorkerLockName(story string) string { return "worker-" + story }

// EpicLockName is the flock a live epic runner holds.
func EpicLockName(epic string) string { return "epic-" + epic }

// PRBodyLockName is the flock held while a story's pull request body is
// read and rewritten (its worker and an epic runner both edit it).
func PRBodyLockName(story string) string { return "pr-" + story }

// WorkerHolder returns the pid recorded by the holder of the story's worker
// lock, 0 when it is free.
func WorkerHolder(root, story string) (int, error) {
	return filesafe.LockHolder(root, WorkerLockName(story))
}

// WorkerHolderIn is WorkerHolder in the repository's lock folder already
// found (filesafe.LockDir).
func WorkerHolderIn(lockDir, story string) (int, error) {
	return filesafe.LockHolderIn(lockDir, WorkerLockName(story))
}

// Subcommands whose processes supervise.LooksLike recognises.
const (
	CommandWorker     = "worker"
	CommandEpicRunner = "epic-runner"
)

// LooksLikeWorker is supervise.LooksLike for a story's worker.
func LooksLikeWorker(pid int, story string) bool {
	return supervise.LooksLike(pid, CommandWorker, story)
}

// Alive tells whether the run's process still runs and is the one the run
// recorded: the same pid and start time (supervise.SameProcess), running saga-lsp's
// worker or runner for the run's story or epic (supervise.LooksLike). A run's record
// is in the session dir, which no agent writes; a lock file's pid is never
// trusted on its own.
func (r *Run) Alive() bool {
	if r.PID <= 0 || !filesafe.ProcessAlive(r.PID) || !supervise.SameProcess(r.PID, r.ProcStart) {
		return false
	}
	if r.Epic != "" {
		return supervise.LooksLike(r.PID, CommandEpicRunner, r.Epic)
	}
	return LooksLikeWorker(r.PID, r.Story)
}

// WorkerLockFile is the story's worker lock file, for messages.
func WorkerLockFile(root, story string) string { return lockFile(root, WorkerLockName(story)) }

// EpicLockFile is the epic's runner lock file, for messages.
func EpicLockFile(root, epic string) string { return lockFile(root, EpicLockName(epic)) }

func lockFile(root, name string) string {
	dir, err := filesafe.LockDir(root)
	if err != nil {
		return name + ".lock"
	}
	return filepath.Join(dir, name+".lock")
}

// WorkerLock reports whether the story's worker lock is held, and the
// holder's pid when recorded. Non-strict, a lock without a recorded holder
// counts as free without being probed, so reading the state never makes a
// worker that starts at that moment fail its own TryLock; strict (before
// starting or stopping a worker) always probes with TryLock.
func WorkerLock(root, story string, strict bool) (pid int, held bool, err error) {
	return probeLock(root, WorkerLockName(story), strict)
}

// EpicLock is WorkerLock for an epic's runner.
func EpicLock(root, epic string, strict bool) (pid int, held bool, err error) {
	return probeLock(root, EpicLockName(epic), strict)
}

// WorkerLocks probes, non-strict, the worker locks of the stories asked
// about by one reader: the lock folder is listed once, and only a lock
// whose file records a holder is probed — WorkerLock counts any other as
// free without probing it.
type WorkerLocks struct {
	Root string
	// Held, when set, is the held locks (story → holder pid) as a long-lived
	// reader probed them last (the live watcher, at every tick): Probe
	// answers from it, touching no file.
	Held     map[string]int
	listed   bool
	recorded map[string]bool // nil: the folder could not be listed, every story is probed
}

// Probe is WorkerLock(root, story, false).
func (wl *WorkerLocks) Probe(story string) (pid int, held bool, err error) {
	if wl.Held != nil {
		pid = wl.Held[story]
		return pid, pid != 0, nil
	}
	if !wl.listed {
		wl.listed = true
		if names, err := filesafe.RecordedLocks(wl.Root); err == nil {
			wl.recorded = map[string]bool{}
			for _, n := range names {
				wl.recorded[n] = true
			}
		}
	}
	if wl.recorded != nil && !wl.recorded[WorkerLockName(story)] {
		return 0, false, nil
	}
	return WorkerLock(wl.Root, story, false)
}

func probeLock(root, name string, strict bool) (pid int, held bool, err error) {
	pid, err = filesafe.LockHolder(root, name)
	if err != nil {
		return 0, false, err
	}
	if pid == 0 && !strict {
		return 0, false, nil
	}
	l, ok, err := filesafe.TryLock(root, name)
	if err != nil {
		return 0, false, err
	}
	if ok {
		// Free: the recorded pid (if any) was a dead holder's; Unlock
		// clears it.
		_ = l.Unlock()
		return 0, false, nil
	}
	if pid == 0 {
		pid, _ = filesafe.LockHolder(root, name)
	}
	return pid, true, nil
}
