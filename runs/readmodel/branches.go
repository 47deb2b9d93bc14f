package readmodel

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
)

// BranchFolders keeps the story folders read from story branches between
// derivations, by ref, with the commit each was read at: a long-lived
// reader (the epic runner at every step, a face's live watcher) reads
// from git again only the branches whose tip moved since — during a run,
// one or two of an epic's, not all 200 (docs/architecture.md#an-epic-of-200-stories).
// A commit names its content, so a kept folder is never stale: a moved
// tip is another commit, read anew. The zero value is ready; a nil one
// keeps nothing. One loaded with LoadBranchFolders is kept on disk too,
// for a one-shot reader (`status <epic>`).
type BranchFolders struct {
	mu    sync.Mutex
	byRef map[string]branchFolder
	file  string // where Save writes; "" keeps nothing on disk
	dirty bool   // changed since loaded
}

// branchFolder is a story folder's files as committed at commit (nil: no
// such folder there, or it could not be read).
type branchFolder struct {
	Commit string            `json:"commit"`
	Files  map[string][]byte `json:"files"`
}

// branchFoldersFile is the file format of the folders kept on disk.
type branchFoldersFile struct {
	Version int                     `json:"version"`
	ByRef   map[string]branchFolder `json:"byRef"`
}

const (
	branchFoldersVersion  = 1
	branchFoldersName     = "branch-folders.json"
	branchFoldersMaxBytes = 64 << 20 // larger is not a file this code wrote
)

// LoadBranchFolders is the folders kept on disk for the repository at
// root by the last one-shot reader. A cache: a file that is missing,
// unreadable or of another version keeps nothing, and Save writes it anew.
func LoadBranchFolders(root string) *BranchFolders {
	dir, err := runs.ReadCacheDir(root)
	if err != nil {
		return &BranchFolders{} // kept in memory only: the folder is not trusted
	}
	c := &BranchFolders{file: filepath.Join(dir, branchFoldersName)}
	data, err := filesafe.ReadRegularFile(c.file, branchFoldersMaxBytes)
	if err != nil {
		return c
	}
	var f branchFoldersFile
	if json.Unmarshal(data, &f) == nil && f.Version == branchFoldersVersion {
		c.byRef = f.ByRef
	}
	return c
}

// Save writes the folders to the file they were loaded from, when they
// changed (atomically: a reader at the same time sees the old or the new).
func (c *BranchFolders) Save() error {
	if c == nil || c.file == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	data, err := json.Marshal(branchFoldersFile{Version: branchFoldersVersion, ByRef: c.byRef})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.file), 0o700); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if err := filesafe.WriteFileAtomic(c.file, data, 0o600); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	c.dirty = false
	return nil
}

// at returns the folder kept for ref when it was read at commit.
func (c *BranchFolders) at(ref, commit string) (map[string][]byte, bool) {
	if c == nil || commit == "" {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.byRef[ref]
	if !ok || f.Commit != commit {
		return nil, false
	}
	return f.Files, true
}

// keep notes the folders just read, by ref at its commit, and forgets the
// refs that are gone (live: the refs listed now; nil when the listing
// failed, which names no branch gone).
func (c *BranchFolders) keep(read map[string]branchFolder, live map[string]bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byRef == nil {
		c.byRef = map[string]branchFolder{}
	}
	if live != nil {
		for ref := range c.byRef {
			if !live[ref] {
				delete(c.byRef, ref)
				c.dirty = true
			}
		}
	}
	for ref, f := range read {
		if f.Commit != "" {
			c.byRef[ref] = f
			c.dirty = true
		}
	}
}
