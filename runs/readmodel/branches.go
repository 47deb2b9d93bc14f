package readmodel

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"strings"
	"sync"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
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
	mu       sync.Mutex
	byRef    map[string]branchFolder
	unmerged unmergedHistory // the local story branches' history not in HEAD (unmergedGraph)
	file     string          // where Save writes; "" keeps nothing on disk
	dirty    bool            // changed since loaded
}

// unmergedHistory is the local story branches' history not in HEAD as
// read when HEAD's commit was Head: each commit with its parents, and the
// tips whose whole history not in HEAD it holds. A commit names its
// parents for good and Head decides which commits are in HEAD, so what was
// read at Head stays true while HEAD is there.
type unmergedHistory struct {
	Head string          `json:"head"`
	Tips map[string]bool `json:"tips"`
	// Commits is never changed once kept — a tip read adds to a copy —
	// since derivations read it without the lock.
	Commits map[string][]string `json:"commits"`
}

// branchFolder is a story folder's files as committed at commit (nil: no
// such folder there, or it could not be read).
type branchFolder struct {
	Commit string            `json:"commit"`
	Files  map[string][]byte `json:"files"`
}

// branchFoldersFile is the file format of the folders kept on disk.
type branchFoldersFile struct {
	Version  int                     `json:"version"`
	ByRef    map[string]branchFolder `json:"byRef"`
	Unmerged unmergedHistory         `json:"unmerged"`
}

const (
	branchFoldersVersion  = 2
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
		c.byRef, c.unmerged = f.ByRef, f.Unmerged
	}
	return c
}

// Save writes the folders to the file they were loaded from, when they
// changed (runs.WriteReadCacheFile: a reader at the same time sees the old
// or the new).
func (c *BranchFolders) Save() error {
	if c == nil || c.file == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	data, err := json.Marshal(branchFoldersFile{Version: branchFoldersVersion, ByRef: c.byRef, Unmerged: c.unmerged})
	if err != nil {
		return err
	}
	if err := runs.WriteReadCacheFile(c.file, data); err != nil {
		return err
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

// refresh reads anew, with one git process, the folders kept for refs
// whose tip moved since they were read (the refs listed now, and their
// tips), so that the derivation that follows finds them kept:
// LoadEpicState has git read them while it loads the workspace.
func (c *BranchFolders) refresh(ctx context.Context, root string, listed bool, live map[string]bool, tips map[string]string) {
	if c == nil || !listed {
		return
	}
	var refs []string
	var dirs []git.RevDir
	c.mu.Lock()
	for ref, f := range c.byRef {
		tip := tips[ref]
		if story, ok := storyOfRef(ref); ok && tip != "" && tip != f.Commit {
			refs, dirs = append(refs, ref), append(dirs, git.RevDir{Rev: tip, Dir: store.StoryDirRel(story)})
		}
	}
	c.mu.Unlock()
	if len(dirs) == 0 {
		return
	}
	files, err := git.Repo{Dir: root}.FilesAtRevs(ctx, dirs)
	if err != nil {
		return // read again where a derivation asks
	}
	read := map[string]branchFolder{}
	for i, ref := range refs {
		read[ref] = branchFolder{Commit: tips[ref], Files: files[i]}
	}
	c.keep(read, live)
}

// unmergedGraph is the history of tips not in HEAD, whose commit is head,
// with each commit's parents (git.Repo.CommitsNotIn). Kept by head, git
// reads only the tips not read at it before — during a run the one or two
// that moved since the last derivation, none when nothing did: the process
// cost the runner, each face and `status <epic>` ≈ 30–50 ms of CPU at
// every derivation at 200 stories (docs/architecture.md#an-epic-of-200-stories).
// A HEAD that moved reads every tip again; without head (a detached HEAD)
// or a keeper, git reads every tip.
func (c *BranchFolders) unmergedGraph(ctx context.Context, root, head string, tips []string) (map[string][]string, error) {
	g := git.Repo{Dir: root}
	if c == nil || head == "" {
		return g.CommitsNotIn(ctx, tips, "HEAD")
	}
	c.mu.Lock()
	h := c.unmerged
	c.mu.Unlock()
	if h.Head != head {
		h = unmergedHistory{Head: head}
	}
	var fresh []string
	for _, t := range tips {
		if _, in := h.Commits[t]; !in && !h.Tips[t] {
			fresh = append(fresh, t)
		}
	}
	if len(fresh) == 0 && h.Commits != nil {
		return h.Commits, nil
	}
	read, err := g.CommitsNotIn(ctx, fresh, head)
	if err != nil {
		return nil, err
	}
	commits := maps.Clone(h.Commits)
	if commits == nil {
		commits = map[string][]string{}
	}
	maps.Copy(commits, read)
	listed := make(map[string]bool, len(tips)) // the tips gone are forgotten
	for _, t := range tips {
		listed[t] = true
	}
	c.mu.Lock()
	c.unmerged, c.dirty = unmergedHistory{Head: head, Tips: listed, Commits: commits}, true
	c.mu.Unlock()
	return commits, nil
}

// storyOfRef is the story of a story branch's full ref name, local or
// origin's (the refs whose folders are kept).
func storyOfRef(ref string) (string, bool) {
	for _, prefix := range []string{"refs/heads/", "refs/remotes/origin/"} {
		if branch, ok := strings.CutPrefix(ref, prefix); ok {
			return runs.StoryOfBranch(branch)
		}
	}
	return "", false
}
