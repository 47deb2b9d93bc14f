// Package control starts, stops and cleans up runs — of one story or of an
// epic — for the CLI and the language server alike (the server never runs a
// process itself; it calls these):
//
//   - run.go, preflight.go, branch.go, stop.go, tmux.go: starting a story's
//     worker in tmux (refused before anything is created when it cannot
//     work; an epic's story on its blockers' branches) and stopping it;
//   - epic_run.go: starting and stopping an epic run (the scheduler itself
//     is runs/epic);
//   - status.go, status_text.go: a story's tasks and worker state with its
//     tmux sessions, as a model and as text;
//   - backend.go, branch_pushed.go: where a story's worker runs (tmux or
//     another backend) and, for a worker on another machine, its base on
//     its blockers' pushed branches;
//   - review.go: a story branch's changes against its base;
//   - review_watch.go, review_actions.go, restack.go: watching the stories'
//     pull requests for review and starting rounds, taking in what their
//     runs on GitHub Actions left (record, pushed branch), and rebuilding a
//     stacked story whose base moved;
//   - clean*.go: removing what finished or abandoned runs left behind;
//     reset.go: discarding a story's attempt (and run --again's reset);
//   - pr_open.go, prbody.go: a completed story's missing PR, and the parts
//     of a PR description saga-lsp owns.
//
// The state of a story or an epic that all of this reads is
// runs/readmodel's; the run protocol they read and write (sessions,
// events, locks, records, branch names, programs) is package runs';
// control combines them with git (internal/git), tmux and gh.
package control
