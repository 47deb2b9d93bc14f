// Command empty is the hook budget's reference (docs/architecture.md#budgets): a Go program
// that starts and exits, so the hook's cost is measured against the bare
// process start on the same machine.
package main

func main() {}
