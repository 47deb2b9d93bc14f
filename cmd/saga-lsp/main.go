// Command saga-lsp is SAGA's language server, worker, hook and CLI in one
// binary; main only hands the arguments to the cli package.
package main

import (
	"os"

	"github.com/saga-ai/saga-lsp/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], &cli.Env{Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin}))
}
