// Command saga-lsp-hook is `saga-lsp hook` on its own: the same hook, in a
// program a fifth of saga-lsp's size without the checks' code (a completion
// with checks goes to the saga-lsp beside it), for Claude Code to run at
// every tool call. The worker and install use it when it sits beside
// saga-lsp, from the same build (docs/hooks.md#the-hook-program); main only
// hands over to the hook package.
package main

import (
	"os"

	"github.com/saga-ai/saga-lsp/hook"
)

func main() {
	os.Exit(hook.Main(os.Args[1:], os.Stdin, os.Getenv, os.Stdout, os.Stderr))
}
