package runs

// Ended runs' folds kept on disk for one-shot readers (docs/architecture.md#an-epic-of-200-stories):
// `status <epic>` is a new process at every call, and folding every
// story's last events file was a third of its CPU during a 200-story run.
// A run that ended folds to the same Run for as long as its events file is
// the same (events after the end change nothing: Apply), so its fold is
// kept beside the branches' folders, in the read cache.

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
)

const (
	runFoldsVersion  = 1
	runFoldsName     = "run-folds.json"
	runFoldsMaxBytes = 64 << 20 // larger is not a file this code wrote
)

// runFoldsFile is the file format of the folds kept on disk. Build names
// the saga-lsp build that folded them: another build folds again, so a
// change to Run or to Apply never reads an older fold.
type runFoldsFile struct {
	Version int                 `json:"version"`
	Build   string              `json:"build"`
	Runs    map[string]keptFold `json:"runs"` // by events file
}

// keptFold is an ended run's fold and the events file it was folded from.
type keptFold struct {
	Size    int64 `json:"size"`
	ModTime int64 `json:"mtime"` // ns
	Run     *Run  `json:"run"`
	// The fold's unexported state, which Progress reads.
	CompletedSince int    `json:"completedSince,omitempty"`
	Current        string `json:"current,omitempty"`
}

// LoadRunCache is a RunCache that also keeps ended runs' folds on disk for
// the repository at root, for the next one-shot reader: Save writes them.
// A cache: a file missing, unreadable, of another version or build keeps
// nothing; a folder that is not trusted (ReadCacheDir) keeps nothing on
// disk.
func LoadRunCache(root string) *RunCache {
	c := &RunCache{}
	dir, err := ReadCacheDir(root)
	build := thisBuild()
	if err != nil || build == "" {
		return c
	}
	c.foldsFile, c.build, c.kept = filepath.Join(dir, runFoldsName), build, map[string]keptFold{}
	data, err := filesafe.ReadRegularFile(c.foldsFile, runFoldsMaxBytes)
	if err != nil {
		return c
	}
	var f runFoldsFile
	if json.Unmarshal(data, &f) == nil && f.Version == runFoldsVersion && f.Build == build && f.Runs != nil {
		c.kept = f.Runs
	}
	return c
}

// thisBuild names the running saga-lsp build by its executable's size and
// modification time; "" when it cannot be told (then nothing is kept).
func thisBuild() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s %d %d", exe, fi.Size(), fi.ModTime().UnixNano())
}

// keptRun is the fold kept for path while fi is still the file it was
// folded from.
func (c *RunCache) keptRun(path string, fi fs.FileInfo) *Run {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.kept[path]
	if !ok || k.Run == nil || k.Size != fi.Size() || k.ModTime != fi.ModTime().UnixNano() {
		return nil
	}
	r := k.Run
	r.completedSince, r.current = k.CompletedSince, k.Current
	return r
}

// keep notes an ended run's fold for Save.
func (c *RunCache) keep(path string, fi fs.FileInfo, r *Run) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kept[path] = keptFold{Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), Run: r, CompletedSince: r.completedSince, Current: r.current}
	c.foldsDirty = true
}

// Save writes the kept folds when a new one was kept, less those whose
// events file is gone (atomically; without fsync, as the branches'
// folders: a crash loses a cache).
func (c *RunCache) Save() error {
	if c == nil || c.foldsFile == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.foldsDirty {
		return nil
	}
	for path := range c.kept {
		if _, err := os.Lstat(path); err != nil {
			delete(c.kept, path)
		}
	}
	data, err := json.Marshal(runFoldsFile{Version: runFoldsVersion, Build: c.build, Runs: c.kept})
	if err != nil {
		return err
	}
	if err := WriteReadCacheFile(c.foldsFile, data); err != nil {
		return err
	}
	c.foldsDirty = false
	return nil
}

// WriteReadCacheFile writes a file of the read cache (ReadCacheDir),
// making its folder private: atomically, and without fsync — a crash may
// lose the write or leave the file empty, which keeps nothing, and two
// fsyncs were a tenth of a `status <epic>` call.
func WriteReadCacheFile(file string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	dir, err := filesafe.OpenBeneath(filepath.Dir(file))
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	defer dir.Close()
	dir.NoSync = true
	if err := dir.WriteFileAtomic(filepath.Base(file), data, 0o600); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}
