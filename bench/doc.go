// Package bench owns the performance benchmarks of docs/architecture.md#budgets on workload
// W: the floor F (read and decode every file on 2 goroutines, also as the
// program bench/floor), `saga-lsp check` (in-process, as the binary, and
// paired with the floor program), the language server (initialize → all
// diagnostics, keystroke → diagnostics latency, peak RSS) beside VS Code's
// JSON server, the hook and hydration, and the scale budgets (scale_test.go:
// the server on W and 4W side by side, check/plan/status and an edit in a
// 100,000-task story, a 10,000-task cycle), and the epic runner's
// (epic_test.go: a story's end → its dependents started, the runner's RSS,
// status on a 200-story epic), and the worker in a repository of 100,000
// files against git's own floors (repo100k_test.go). `make bench` runs them and
// bench/report summarises them against the budgets.
package bench
