package runs

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
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

// Subcommands whose processes LooksLike recognises.
const (
	CommandWorker     = "worker"
	CommandEpicRunner = "epic-runner"
)

// LooksLike checks, where /proc exists, that pid runs saga-lsp's
// subcommand for id: a pid read from an old events file may have been
// reused by another program.
func LooksLike(pid int, subcommand, id string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		_, statErr := os.Stat("/proc/self/cmdline")
		return statErr != nil // no /proc: cannot tell
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	return slices.Contains(args, id) && (slices.Contains(args, subcommand) || slices.Contains(args, "--"+subcommand))
}

// LooksLikeWorker is LooksLike for a story's worker.
func LooksLikeWorker(pid int, story string) bool { return LooksLike(pid, CommandWorker, story) }

// SameProcess tells whether pid is still the process whose start
// (ProcStart's) was recorded with it. Without a recorded start (an earlier
// version's events) or where the system cannot tell, only the pid is
// known: true.
func SameProcess(pid int, start uint64) bool {
	if start == 0 || !procStartKnown {
		return true
	}
	now, ok := ProcStart(pid)
	return ok && now == start
}

// SelfStart is the running process's ProcStart (0 where unknown), for the
// events that record who a worker or runner is.
func SelfStart() uint64 {
	start, _ := ProcStart(os.Getpid())
	return start
}

// Alive tells whether the run's process still runs and is the one the run
// recorded: the same pid and start time (SameProcess), running saga-lsp's
// worker or runner for the run's story or epic (LooksLike). A run's record
// is in the session dir, which no agent writes; a lock file's pid is never
// trusted on its own.
func (r *Run) Alive() bool {
	if r.PID <= 0 || !filesafe.ProcessAlive(r.PID) || !SameProcess(r.PID, r.ProcStart) {
		return false
	}
	if r.Epic != "" {
		return LooksLike(r.PID, CommandEpicRunner, r.Epic)
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

// StopSignals are the signals that ask a saga-lsp process to stop: ^C and
// TerminateSignal.
func StopSignals() []os.Signal { return []os.Signal{os.Interrupt, TerminateSignal()} }
