// Package runs owns the run protocol: the contract between the programs that
// run stories (the worker, `run`/`stop`/`status`, the language server, the
// epic runner, the hook): on-disk and process state about runs, below every
// package that starts, follows or stops one.
//
// What it owns, spelled nowhere else:
//   - the session: tmux session names saga-story-<story>-<unixMillis> and
//     saga-epic-<epic>-<unixMillis>, the session dir ($SAGA_SESSION_DIR,
//     default /tmp/saga-sessions-<uid>, the user's alone; the shared default
//     of earlier releases still read while safe: sessiondir.go), the output
//     file <session>.log and the events file <output file>.events.jsonl;
//   - the SAGA_* environment a worker sets for its headless runs and hands to
//     tmux (Claude Code's own variable names live in claudecode);
//   - the worker's command line (WorkerFlags: flags, defaults, argv);
//   - what a worker's or an epic runner's process takes from where it was
//     started, with its defaults (Process: log, session, environment, clock);
//   - the typed event records (Event, the Kind* and Step* names) and their one
//     writer (Writer);
//   - the one reader that folds an events file into a run's state (Run,
//     Tail, ReadRun), used by status, the language server and the epic
//     runner alike;
//   - listing the runs of a session dir;
//   - worker, epic runner and PR-body lock names, their holders and who a
//     recorded run's process is (Run.Alive: the same pid and start time,
//     running saga-lsp's worker or runner for it; proc.go);
//   - where the programs a run drives are found (Program, GHCommand) and
//     the story branch story/<id> (StoryBranch);
//   - the hook's command line as Claude Code's settings name it (command.go:
//     HookCommand, HookProgram);
//   - durable run records (record.go), ended runs' folds kept for the next
//     one-shot reader (foldcache.go), the checks manifest a worker writes
//     for its hook (checksfile.go), and the worker's and runner's flags
//     and exit codes.
//
// Supervising a process (its group, signals, exit, start time) is
// runs/supervise's, below this package; the stories' build caches are
// runs/buildcache's, above it. Of ours it imports store, the leaf
// internal/termtext, runs/supervise and internal/filesafe.
package runs
