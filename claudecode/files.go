package claudecode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
)

// taskPath is where Claude Code keeps task id of the list in dir.
func taskPath(dir, id string) string {
	return filepath.Join(dir, Sanitize(id)+".json")
}

// Hydrate writes tasks as a new task list in dir, in Claude Code's stored
// format, before any claude run uses it: it validates every task (an id that
// is its own sanitised file name, unique; a valid status), creates dir
// (0755, as Node's mkdir under the usual umask) and the empty .lock file,
// takes the list lock (waiting until ctx ends) and writes every task
// atomically: <id>.json.tmp.<8 hex>, then rename, so a reader never sees a
// partial file; the directory is fsynced once at the end.
//
// Unlike Update, Hydrate does not fsync each file before its rename (docs/architecture.md#writes-and-locks
// asks for it; the 50 ms budget of docs/architecture.md#budgets for 200 tasks does not leave room for
// 200 fsyncs on a slow disk, and they buy nothing here): a hydrated list
// serves one worker run only, and after a crash the worker hydrates a new
// list (a new <unixMillis>) from .saga, never reading the old one again.
//
// .highwatermark is not written: Claude Code reads a missing one as 0, it
// numbers new tasks past the highest numeric task file anyway, and SAGA task
// ids are slugs (a numeric slug is a numeric file name and counts as such).
//
// Any failure returns an error naming the file (or task) at fault; files
// already renamed into place stay, temp files do not. The caller aborts
// before any run and may Remove(dir).
func Hydrate(ctx context.Context, dir string, tasks []Task) error {
	return hydrate(ctx, dir, tasks, claudeTiming())
}

func hydrate(ctx context.Context, dir string, tasks []Task, tm lockTiming) error {
	data := make([][]byte, len(tasks))
	seen := make(map[string]bool, len(tasks))
	for i, t := range tasks {
		if t.ID == "" || Sanitize(t.ID) != t.ID {
			return fmt.Errorf("hydrate %s: task id %q: Claude Code finds a task only at its sanitised name; use [a-zA-Z0-9_-]", dir, t.ID)
		}
		if seen[t.ID] {
			return fmt.Errorf("hydrate %s: task id %q given twice", dir, t.ID)
		}
		seen[t.ID] = true
		b, err := Encode(t)
		if err != nil {
			return fmt.Errorf("hydrate %s: %w", taskPath(dir, t.ID), err)
		}
		data[i] = b
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("hydrate: create task list directory: %w", err)
	}
	release, err := acquireListLock(ctx, dir, tm)
	if err != nil {
		return fmt.Errorf("hydrate: %w", err)
	}
	defer release()

	// Temp files are written on a few goroutines (creating a file is most
	// of the cost, in the kernel), then renamed in order.
	tmps := make([]string, len(tasks))
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(4, len(tasks)) {
		wg.Go(func() {
			for i := range next {
				if err := ctx.Err(); err != nil {
					errs[i] = err
					continue
				}
				tmps[i], errs[i] = writeTemp(taskPath(dir, tasks[i].ID), data[i], false)
			}
		})
	}
	for i := range tasks {
		next <- i
	}
	close(next)
	wg.Wait()
	cleanup := func() {
		for _, tmp := range tmps {
			if tmp != "" {
				_ = os.Remove(tmp)
			}
		}
	}
	for i, err := range errs {
		if err != nil {
			cleanup()
			return fmt.Errorf("hydrate: write %s: %w", taskPath(dir, tasks[i].ID), err)
		}
	}
	for i, t := range tasks {
		path := taskPath(dir, t.ID)
		if err := os.Rename(tmps[i], path); err != nil {
			cleanup()
			return fmt.Errorf("hydrate: write %s: %w", path, err)
		}
		tmps[i] = ""
	}
	if err := filesafe.SyncDir(dir); err != nil {
		return fmt.Errorf("hydrate: sync %s: %w", dir, err)
	}
	return nil
}

// writeTemp writes data to a new <path>.tmp.<8 hex> (Claude Code's temp
// naming, which its reader ignores: it does not end in .json), fsyncs it
// if sync, closes it, and returns its name. On error nothing is left behind.
func writeTemp(path string, data []byte, sync bool) (string, error) {
	var (
		f    *os.File
		name string
		err  error
	)
	for range 100 {
		name = fmt.Sprintf("%s.tmp.%08x", path, rand.Uint32())
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
		return "", err
	}
	return name, nil
}

// writeFileAtomic replaces path with data as docs/architecture.md#writes-and-locks asks: temp file,
// fsync, rename, fsync the directory.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := writeTemp(path, data, true)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return filesafe.SyncDir(filepath.Dir(path))
}

// Read returns the tasks of the list in dir, by id, as Claude Code sees
// them: every *.json entry that reads, decodes (see Decode) and whose id is
// its file name (which Sanitize leaves unchanged: Claude Code looks a task up
// by its sanitised id). Anything else (other names, lock directories,
// temp files, invalid tasks) is skipped. A missing dir is an empty list.
func Read(dir string) (map[string]Task, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Task{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read task list %s: %w", dir, err)
	}
	out := make(map[string]Task, len(entries))
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || id == "" || Sanitize(id) != id || e.IsDir() {
			continue
		}
		// Regular files only, bounded, never blocking, no link followed:
		// a FIFO or a link to /dev/zero in the list never stalls a reader.
		b, err := filesafe.ReadInside(dir, e.Name())
		if err != nil {
			continue
		}
		t, err := Decode(b)
		if err != nil || t.ID != id {
			continue
		}
		out[id] = t
	}
	return out, nil
}

// Remove deletes the task list directory dir and everything in it. As a
// guard against deleting the wrong tree, dir's last element must be a
// non-empty sanitised name other than "tasks" (as ListDir makes them).
func Remove(dir string) error {
	base := filepath.Base(filepath.Clean(dir))
	if dir == "" || base == "" || Sanitize(base) != base || base == "tasks" {
		return fmt.Errorf("remove task list %q: not a task list directory (<config>/tasks/<list id>)", dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove task list %s: %w", dir, err)
	}
	return nil
}

// Update changes task id of the list in dir as Claude Code's TaskUpdate
// does: under the task's lock it reads the task, lets fn change it, and
// writes it back atomically (nothing is written when fn fails or changes
// nothing). A missing task is an error wrapping fs.ErrNotExist; fn may not
// change the id.
func Update(ctx context.Context, dir, id string, fn func(*Task) error) error {
	return update(ctx, dir, id, fn, claudeTiming())
}

func update(ctx context.Context, dir, id string, fn func(*Task) error, tm lockTiming) error {
	release, err := acquireTaskLock(ctx, dir, id, tm)
	if err != nil {
		return fmt.Errorf("update task %q: %w", id, err)
	}
	defer release()
	path := taskPath(dir, id)
	old, err := filesafe.ReadInside(dir, filepath.Base(path))
	if err != nil {
		return fmt.Errorf("update task %q: %w", id, err)
	}
	t, err := Decode(old)
	if err != nil {
		return fmt.Errorf("update task %q: %s: %w", id, path, err)
	}
	if t.ID != id {
		return fmt.Errorf("update task %q: %s holds id %q", id, path, t.ID)
	}
	if err := fn(&t); err != nil {
		return fmt.Errorf("update task %q: %w", id, err)
	}
	if t.ID != id {
		return fmt.Errorf("update task %q: the id cannot change (to %q)", id, t.ID)
	}
	data, err := Encode(t)
	if err != nil {
		return fmt.Errorf("update task %q: %w", id, err)
	}
	if bytes.Equal(data, old) {
		return nil
	}
	if err := writeFileAtomic(path, data); err != nil {
		return fmt.Errorf("update task %q: write %s: %w", id, path, err)
	}
	return nil
}
