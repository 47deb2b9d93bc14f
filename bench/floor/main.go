// Command floor is the budget's reference program (design.md §10): it reads
// every file under a .saga folder and decodes it with encoding/json on 2
// goroutines, and does nothing else. `saga-lsp check` is measured against it.
package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: floor <workspace-root>")
		os.Exit(2)
	}
	var paths []string
	err := filepath.WalkDir(filepath.Join(os.Args[1], ".saga"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var next, decoded atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(paths)); i = next.Add(1) - 1 {
				src, err := os.ReadFile(paths[i])
				if err != nil {
					continue
				}
				var v any
				if json.Unmarshal(src, &v) == nil {
					decoded.Add(1)
				}
			}
		})
	}
	wg.Wait()
	fmt.Println(len(paths), decoded.Load())
}
