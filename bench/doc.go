// Package bench owns the performance benchmarks of design.md §10: the floor F
// (read and decode every file of workload W on 2 goroutines) and `saga-lsp
// check` on W, in-process and as the built binary, run with `make bench` and
// summarised against the budgets by bench/report.
package bench
