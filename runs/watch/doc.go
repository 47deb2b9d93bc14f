// Package watch is the live-run watcher, below the faces: it follows the
// story workers and epic runners of one workspace from what they leave on
// disk, and keeps what a face shows of them. The language server adapts it
// to LSP (lsp/live*.go: progress, saga/* notifications, lens refreshes, the
// LSP-only diagnostics); a browser dashboard can adapt it the same way. It
// imports no face.
//
// What it owns:
//   - watching (its own file watcher through fswatch, and polling what that misses) the
//     session dir (runs.SessionDir) and each worker's events file, folded by
//     runs.Run line by line; each story's worktree copy (store.WorktreeDir),
//     where a running worker and its hooks write statuses and the journal;
//     the run records' folder (runs.RecordDir: a record written alone — a
//     watcher's read of a review, a restack — refreshes the faces);
//     the hydrated task list of a running worker (claudecode), named by its
//     hydrate event; the main checkout's journals, as the face reports them
//     changed (DiskChanged);
//   - liveness: a followed worker's or runner's pid (a worker killed with
//     SIGKILL writes nothing more), and the workers' and runners' locks of
//     the repository — their folder listed when a lock's file changes (or
//     every few seconds), those recording a holder probed on the
//     watcher's own goroutine at every tick;
//   - epic runners: which run of an epic is shown, whether it lives, and
//     its state as readmodel.EpicState derives it, paced (epic_state.go);
//   - the state: each story's run, task statuses (the live view), worktree
//     copy and journal, each task's last check result, each epic's state.
//
// Design. One goroutine (the loop) reads the files and owns the state; a
// second paces the epics' derivations; mu serialises them with EpicStatus,
// FollowStory and FollowEpic. After every step the loop rebuilds an
// immutable State and publishes it through an atomic pointer, and only then
// tells the Sink what changed, in order. Readers (a diagnostics publisher
// on the keystroke path, lenses, commands) call State: one atomic load —
// they never take mu, probe a lock, read a file or parse. What the faces
// need that costs I/O (lock probes, journals, worktree copies parsed) is
// done on the watcher's goroutines and carried by the State.
//
// The watcher reads these files; it never writes them.
package watch
