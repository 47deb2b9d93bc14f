// Package readmodel owns the one read model of runs: the state of a story
// (story_state.go: Evidence.Story — run records, events, locks, its worktree
// copy and branches — the story refs and their history not in HEAD as git
// lists them, in refs.go; the branches' story folders kept by tip for a
// long-lived reader, and on disk for `status <epic>`, in branches.go — with
// a dry run's DryState and its PR's review loop as recorded, ReviewState
// (review.go), beside it), of an epic and its stories with the next step
// (epic_state.go: EpicState over one EpicQuery, ViewQuery for every face;
// epic_text.go its text and JSON; served.go the epic's state as its live runner
// answers it on a socket), a story run on GitHub Actions read from GitHub
// (actions.go: the Actions interface runs/github implements, Dispatched),
// the names of where a story's worker runs (BackendTmux, BackendGitHub) and
// what a face follows after a start (Started). status, plan, the language
// server, the dashboard, the epic runner and the live watcher (runs/watch)
// read it; starting and stopping runs is runs/control's, above it.
package readmodel
