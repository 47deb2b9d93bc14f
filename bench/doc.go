// Package bench owns the performance benchmarks of design.md §10 on workload
// W: the floor F (read and decode every file on 2 goroutines, also as the
// program bench/floor), `saga-lsp check` (in-process, as the binary, and
// paired with the floor program), the language server (initialize → all
// diagnostics, keystroke → diagnostics latency, peak RSS) beside VS Code's
// JSON server, the hook and hydration. `make bench` runs them and
// bench/report summarises them against the budgets.
package bench
