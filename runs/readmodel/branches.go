package readmodel

import (
	"sync"
)

// BranchFolders keeps the story folders read from story branches between
// derivations, by ref, with the commit each was read at: a long-lived
// reader (the epic runner at every step, a face's live watcher) reads
// from git again only the branches whose tip moved since — during a run,
// one or two of an epic's, not all 200 (docs/architecture.md#an-epic-of-200-stories).
// A commit names its content, so a kept folder is never stale: a moved
// tip is another commit, read anew. The zero value is ready; a nil one
// keeps nothing.
type BranchFolders struct {
	mu    sync.Mutex
	byRef map[string]branchFolder
}

// branchFolder is a story folder's files as committed at commit (nil: no
// such folder there, or it could not be read).
type branchFolder struct {
	commit string
	files  map[string][]byte
}

// at returns the folder kept for ref when it was read at commit.
func (c *BranchFolders) at(ref, commit string) (map[string][]byte, bool) {
	if c == nil || commit == "" {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.byRef[ref]
	if !ok || f.commit != commit {
		return nil, false
	}
	return f.files, true
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
			}
		}
	}
	for ref, f := range read {
		if f.commit != "" {
			c.byRef[ref] = f
		}
	}
}
