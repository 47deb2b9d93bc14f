// Package commands holds the operations the CLI and the language server's
// executeCommand share, each in its own files:
//
//   - new.go: scaffolding new stories, tasks and epics;
//   - run.go, preflight.go, branch.go, stop.go, tmux.go: starting a story's
//     worker in tmux (refused before anything is created when it cannot
//     work, on its blockers' branches in an epic) and stopping it;
//   - epic_run.go, epic_state.go, epic_text.go: starting, stopping and
//     reading the state of an epic run (the runner itself is epicrunner);
//   - status.go, status_text.go: a story's tasks and worker state, as a
//     model and as text;
//   - review.go: a story branch's changes against its base;
//   - clean*.go: removing what finished or abandoned runs left behind.
//
// The run protocol they read and write (sessions, events, locks, records)
// is runs'; commands only combine it with git, tmux and gh.
package control
