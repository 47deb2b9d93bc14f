// Package review owns a story's pull-request review as saga-lsp reads it
// and turns it into work, and what saga-lsp says back (docs/review.md): the
// PR's review threads, reviews and comments read through the user's gh
// (GraphQL, one query; a watcher's poll of many PRs in one: poll.go), who
// counts (per comment: an author GitHub says can write to the repository,
// asked once per round), the review tasks saga-lsp writes into the story's
// folder — one per counted thread, review or comment, keyed by its GitHub
// id, bounded per round; an editor's comment the same way (editor.go) — and
// the replies: one per task revision in saga-lsp's template, the agent's
// words quoted and neutralised, done threads resolved, review asked again
// (answer.go). The agent never writes these tasks; the reviewers' words
// reach it as data.
package review
