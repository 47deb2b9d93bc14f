// Package dashboard is saga-lsp's browser face: `saga-lsp dashboard` and
// the language server's saga.openDashboard serve the backlog and its runs
// as web pages on a loopback address — each repository's epics and stories
// with their state, an epic's dependency graph with the run's states and
// the critical path, a story's tasks, journal, runs, live output and
// changes, and check's diagnostics — updated live while workers run.
//
// What it owns, and what it takes from below:
//
//   - the data: a Source per repository — the workspace as its face holds
//     it (store's loader and Workspace.Update: Local loads and watches
//     .saga/ itself; the language server hands its snapshots) and the
//     live-run watcher (runs/watch), whose immutable State every page reads
//     with one atomic load. Nothing here reads the run protocol but through
//     runs (the one fold) and runs/watch.
//   - live updates: what the watcher's Sink reports and what .saga/ file
//     events change become Change notices, coalesced, sent to the open pages
//     over server-sent events (hub.go); a page fetches itself again and
//     takes back the parts of it that changed (parts.go: a page written as
//     a frame and parts, summed, the page holding the sums). A
//     running worker's output file is watched (fswatch) while it runs
//     (output.go). No timer polls anything, and nothing here calls gh or
//     tmux except the actions below.
//   - the actions: Run and Stop of a story or an epic, Run again, Review —
//     the very runs/control calls the CLI and the language server make,
//     confirmed in the page and sent as same-origin POSTs.
//   - security (security.go): a random token (a cookie after the first
//     visit), the Host header checked against the bound address
//     (DNS rebinding), same-origin POSTs, no CORS, a strict
//     Content-Security-Policy, paths from the URL never leaving the
//     workspace, agent output and titles escaped (html.go), at most 32
//     event streams and 1 MiB queued for each.
//   - the pages: written by Go code that escapes every value by
//     construction (html.go, render.go), output shown as lines
//     (termtext.Lines) and a journal's Markdown rendered (markdown.go) with its
//     raw HTML as text (files.go), served by net/http's server behind a gate
//     that keeps connections without the token from starving the user's
//     (httpd.go, gate.go), a little JavaScript of our own — the tabs of a
//     browser share one event stream through a SharedWorker (events.js) —
//     the graph laid out by dagre and a live page updated in place by
//     morphdom (both vendored by `go generate`), all
//     embedded: the page asks nothing of the network but the dashboard
//     itself.
package dashboard
