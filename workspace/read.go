package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/store"
)

// Change is what a batch of disk changes did to the model files: the files
// read again (parsed; a refused one as its unreadable-file finding) and the
// files that are gone.
type Change struct {
	Paths   []string      // the changed paths as reported (absolute)
	Changed []*store.File // read again
	Removed []string      // gone (root-relative, slash-separated)
}

// Empty: nothing in the model changed.
func (c Change) Empty() bool { return len(c.Changed) == 0 && len(c.Removed) == 0 }

// reread reads the model files at or under paths (files or folders) as
// they are on disk now, against what base knew: the one reading of a disk
// change. skip names files a face holds otherwise (an editor's open
// buffer wins over disk); nil skips none. Links out of the workspace are
// refused for files and folders alike.
func reread(p *store.Parser, base *store.Workspace, paths []string, skip func(rel string) bool) (changed []*store.File, removed []string) {
	root := base.Root
	seen := map[string]bool{}
	// What base knew under a folder: a range of its files sorted by path,
	// listed once per batch — a branch switch hands hundreds of paths, and
	// listing (and sorting) every file for each made the batch quadratic.
	var all []*store.File
	under := func(rel string) []*store.File {
		if all == nil {
			all = base.Files()
		}
		prefix := rel + "/"
		i, _ := slices.BinarySearchFunc(all, prefix, func(f *store.File, p string) int { return strings.Compare(f.Rel, p) })
		j := i
		for j < len(all) && strings.HasPrefix(all[j].Rel, prefix) {
			j++
		}
		return all[i:j]
	}
	// Whether a path leads out through a link, its folder's answer kept
	// for the batch: a file that is no link, in a folder that resolves
	// inside, is inside — one lstat instead of resolving the root and the
	// whole path again for each of a branch switch's hundreds of files.
	// What is read is checked again by its descriptor (ReadFile).
	insideDir := map[string]bool{}
	outside := func(rel, abs string) string {
		dir := path.Dir(rel)
		in, known := insideDir[dir]
		if !known {
			in = filesafe.OutsideWorkspace(root, dir) == ""
			insideDir[dir] = in
		}
		if in {
			if fi, err := os.Lstat(abs); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				return ""
			}
		}
		return filesafe.OutsideWorkspace(root, rel)
	}
	consider := func(rel string) {
		if seen[rel] || !store.IsModelFile(rel) || (skip != nil && skip(rel)) {
			return
		}
		seen[rel] = true
		if f := ReadFile(p, root, rel); f != nil {
			changed = append(changed, f)
		} else if base.File(rel) != nil {
			removed = append(removed, rel)
		}
	}
	for _, abs := range paths {
		rel := relOf(root, abs)
		if rel == "" || !strings.HasPrefix(rel, ".saga/") {
			continue
		}
		// Of a worktree only its copy of its story is read.
		copyDir, inWorktree := WorktreeCopyDir(rel)
		if inWorktree && copyDir == "" {
			continue
		}
		// A link out of the workspace: one finding for it, nothing read
		// through it, and what we knew under it is gone.
		if why := outside(rel, abs); why != "" {
			seen[rel] = true
			changed = append(changed, store.Unreadable(rel, why))
			for _, f := range under(rel) {
				if skip == nil || !skip(f.Rel) {
					removed = append(removed, f.Rel)
				}
			}
			continue
		}
		// A folder refused as a whole (such a link, a loop): its finding
		// goes once the path is gone or a folder again.
		if f := base.File(rel); f != nil && f.ReadErr != "" && !store.IsModelFile(rel) && folderFixed(abs) {
			removed = append(removed, rel)
		}
		// A folder: what it holds now, and what we knew under it.
		if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
			list := rel
			if inWorktree {
				list = copyDir
			}
			for _, f := range store.ListModelFiles(root, list) {
				consider(f)
			}
		}
		for _, f := range under(rel) {
			consider(f.Rel)
		}
		consider(rel)
	}
	return changed, removed
}

// relOf is abs relative to root, slash-separated; "" when outside.
func relOf(root, abs string) string {
	r, err := filepath.Rel(root, abs)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return ""
	}
	return filepath.ToSlash(r)
}

// folderFixed: the path is gone, or a folder that can be listed.
func folderFixed(p string) bool {
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return true
	}
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// ReadFile parses the model file rel of the workspace at root from disk as
// the loader does: never through a link out of the workspace (the
// unreadable-file finding instead), bounded; nil when it does not exist.
// The one confined reader of a single file for every face.
func ReadFile(p *store.Parser, root, rel string) *store.File {
	abs := filepath.Join(root, filepath.FromSlash(rel))
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if kind, _, _ := store.Classify(rel); kind == store.KindJournal || kind == store.KindMisplaced {
		return p.Parse(rel, nil, -1) // presence is what matters
	}
	src, why := filesafe.ReadWorkspaceFile(root, rel)
	if why != "" {
		return store.Unreadable(rel, why)
	}
	return p.Parse(rel, src, -1)
}

// WorktreeCopyDir tells whether rel is under .saga/worktrees/ and, if so,
// the story copy folder it is in or leads to (the worktree itself, its
// .saga/, .saga/stories/, the copy's folder or a file in it); "" for the
// rest of the worktree's checkout, which is never read nor watched.
func WorktreeCopyDir(rel string) (dir string, inWorktree bool) {
	rest, ok := strings.CutPrefix(rel, store.WorktreesRel+"/")
	if !ok {
		return "", rel == store.WorktreesRel
	}
	story, _, _ := strings.Cut(rest, "/")
	copyDir := store.WorktreeStoryDirRel(story)
	if rel == copyDir || strings.HasPrefix(copyDir, rel+"/") || strings.HasPrefix(rel, copyDir+"/") {
		return copyDir, true
	}
	return "", true
}
