// Package control starts, stops and reports on runs — of one story or of an
// epic — for the CLI and the language server alike (the server never runs a
// process itself; it calls these):
//
//   - run.go, preflight.go, branch.go, stop.go, tmux.go: starting a story's
//     worker in tmux (refused before anything is created when it cannot
//     work; an epic's story on its blockers' branches) and stopping it;
//   - epic_run.go, epic_state.go, epic_text.go: starting, stopping and
//     reading the state of an epic run (the scheduler itself is runs/epic);
//   - status.go, status_text.go: a story's tasks and worker state, as a
//     model and as text;
//   - story_state.go: the one derivation of a story's state (Evidence.Story)
//     that plan, status, run, the epic runner and the editor all read;
//     actions.go: a story run on GitHub Actions, its state from GitHub
//     (the Actions interface, which runs/github implements);
//   - backend.go, branch_pushed.go: where a story's worker runs (tmux or
//     another backend) and, for a worker on another machine, its base on
//     its blockers' pushed branches;
//   - review.go: a story branch's changes against its base;
//   - clean*.go: removing what finished or abandoned runs left behind;
//     reset.go: discarding a story's attempt (and run --again's reset).
//
// The run protocol they read and write (sessions, events, locks, records,
// branch names, programs) is package runs'; control combines it with git
// (internal/git), tmux and gh.
package control
