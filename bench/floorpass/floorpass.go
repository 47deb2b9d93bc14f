// Package floorpass is the work of the budget's floor F (docs/architecture.md#budgets):
// list every file under a .saga folder, read each and decode it with
// encoding/json on Workers goroutines, and nothing else. The program
// bench/floor makes one pass as a process; BenchmarkFloor makes them
// in-process.
package floorpass

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// Workers is the floor's goroutine count.
const Workers = 2

// Run makes one pass over sagaDir and returns how many files it read and
// how many of them decoded (W's deliberate breaks fail to decode and still
// count as read).
func Run(sagaDir string) (files, decoded int, err error) {
	var paths []string
	err = filepath.WalkDir(sagaDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	var next, ok atomic.Int64
	errs := make([]error, Workers)
	var wg sync.WaitGroup
	for g := range Workers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(paths)); i = next.Add(1) - 1 {
				src, err := os.ReadFile(paths[i])
				if err != nil {
					errs[g] = err
					return
				}
				var v any
				if json.Unmarshal(src, &v) == nil {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return len(paths), int(ok.Load()), errors.Join(errs...)
}
