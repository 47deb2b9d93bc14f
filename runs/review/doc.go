// Package review owns a story's pull-request review as saga-lsp reads it
// and turns it into work (docs/review.md): the PR's review threads, reviews
// and comments read through the user's gh (GraphQL, one query), who counts
// (per comment: an author GitHub says can write to the repository, asked
// once per round), and the review tasks saga-lsp writes into the story's
// folder — one per counted thread, review or comment, keyed by its GitHub
// id, bounded per round. The agent never writes these tasks; the reviewers'
// words reach it as data.
package review
