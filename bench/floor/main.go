// Command floor is the budget's reference program (docs/architecture.md#budgets): one pass
// of bench/floorpass over a workspace's .saga folder, and nothing else.
// `saga-lsp check` is measured against it.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/saga-ai/saga-lsp/bench/floorpass"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: floor <workspace-root>")
		os.Exit(2)
	}
	files, decoded, err := floorpass.Run(filepath.Join(os.Args[1], ".saga"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(files, decoded)
}
