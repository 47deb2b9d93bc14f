package watch

// File events: the watcher's own of the session dir, worktree copies and
// task lists, and the face's (DiskChanged) for the worktree copies and the
// main checkout's journals.

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/fswatch"
	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// batch is what a burst of file events asks to re-read.
type batch struct {
	session     map[string]bool // events files
	lists       map[string]bool // sessions whose task list changed
	worktrees   map[string]bool // stories whose worktree copy changed
	journals    map[string]bool // stories whose main journal changed
	allJournals bool            // a folder above the stories' changed
	rescanWT    bool            // the worktrees folder appeared
	records     bool            // a run record was written
	locks       bool            // a worker's or runner's lock was taken or released
}

func newBatch() *batch {
	return &batch{session: map[string]bool{}, lists: map[string]bool{}, worktrees: map[string]bool{}, journals: map[string]bool{}}
}

func (b *batch) empty() bool {
	return len(b.session) == 0 && len(b.lists) == 0 && len(b.worktrees) == 0 && len(b.journals) == 0 &&
		!b.allJournals && !b.rescanWT && !b.records && !b.locks
}

// classify files one file event into the batch.
func (w *Watcher) classify(ev fswatch.Event, b *batch) {
	name := filepath.Clean(ev.Path)
	dir := filepath.Dir(name)
	w.mu.Lock()
	defer w.mu.Unlock()
	if ev.Has(fswatch.Remove) || ev.Has(fswatch.Rename) {
		// A watched folder that goes away takes its watch with it; it is
		// watched again when it comes back (the tick polls the session dir).
		delete(w.watched, name)
	}
	switch {
	case w.lockDir != "" && dir == w.lockDir:
		lock, ok := filesafe.LockNameOf(filepath.Base(name))
		b.locks = b.locks || ok && isRunLock(lock)
		return
	case w.recordDir != "" && dir == w.recordDir:
		b.records = b.records || strings.HasSuffix(name, ".json")
		return
	case dir == w.sessionDir || name == w.sessionDir:
		if runs.IsEventsFile(filepath.Base(name)) {
			b.session[name] = true
		}
		return
	case w.lists[dir] != "":
		b.lists[w.lists[dir]] = true
		return
	case w.lists[name] != "":
		b.lists[w.lists[name]] = true
		return
	}
	rel, err := filepath.Rel(w.root, name)
	if err != nil {
		return
	}
	rel = filepath.ToSlash(rel)
	switch {
	case rel == store.WorktreesRel:
		b.rescanWT = true
	case strings.HasPrefix(rel, store.WorktreesRel+"/"):
		story, rest, _ := strings.Cut(strings.TrimPrefix(rel, store.WorktreesRel+"/"), "/")
		if store.ValidCanonical(story) && (rest == "" || rest == ".saga" || strings.HasPrefix(rest, ".saga/")) {
			b.worktrees[story] = true
		}
	case rel == ".saga" || rel == ".saga/stories":
		b.allJournals = true
	case strings.HasPrefix(rel, ".saga/stories/"):
		// A main journal, or a story folder that came or went with it.
		story, rest, _ := strings.Cut(strings.TrimPrefix(rel, ".saga/stories/"), "/")
		if store.ValidCanonical(story) && (rest == "" || rel == store.JournalFileRel(story)) {
			b.journals[story] = true
		}
	}
}

// processLocked reads what the batch names.
func (w *Watcher) processLocked(ws *store.Workspace, b *batch, ef *effects) {
	if b.rescanWT {
		w.watchLocked(filepath.Join(w.root, filepath.FromSlash(store.WorktreesRel)))
		for _, id := range w.worktreeDirs() {
			b.worktrees[id] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(b.session)) {
		w.sessionFile(ws, name, ef)
	}
	for _, session := range slices.Sorted(maps.Keys(b.lists)) {
		if r := w.runs[session]; r != nil {
			w.readList(r, ef)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b.worktrees)) {
		w.loadWorktree(ws, id, false, ef)
	}
	if b.allJournals {
		for _, id := range mainJournalStories(ws) {
			b.journals[id] = true
		}
		for id := range w.journals {
			b.journals[id] = true
		}
	}
	if len(b.journals) > 0 {
		w.readMainJournals(slices.Sorted(maps.Keys(b.journals)), false, ef)
	}
	if b.locks {
		w.locksDirty = true
		w.probeLocks(ws, ef)
	}
	if b.records {
		// What the read model derives from a record (a review's state, a
		// restack's, a PR's, a land's) is the faces' to read again, and
		// the epics' states to derive again.
		ef.refresh = true
		for _, e := range w.epics {
			if e.status != nil {
				w.epicChanged(e)
			}
		}
	}
}

// watchLocked adds a watch on dir; it reports whether dir is watched.
func (w *Watcher) watchLocked(dir string) bool {
	if w.watched[dir] {
		return true
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	if w.fsw != nil {
		if err := w.fsw.Add(dir); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				w.log.Warn("live: watch", "dir", dir, "err", err)
			}
			return false
		}
	}
	w.watched[dir] = true
	return true
}

func (w *Watcher) unwatchLocked(dir string) {
	if !w.watched[dir] {
		return
	}
	delete(w.watched, dir)
	if w.fsw != nil {
		_ = w.fsw.Remove(dir)
	}
}
