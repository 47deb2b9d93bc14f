package lsp

// File events of the live state: the server's own watcher of the session
// dir, worktree copies and task lists, and the client's events for the
// worktree copies when it watches .saga/** for us.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// batch is what a burst of file events asks to re-read.
type liveBatch struct {
	session   map[string]bool // events files
	lists     map[string]bool // sessions whose task list changed
	worktrees map[string]bool // stories whose worktree copy changed
	rescanWT  bool            // the worktrees folder appeared
}

func newBatch() *liveBatch {
	return &liveBatch{session: map[string]bool{}, lists: map[string]bool{}, worktrees: map[string]bool{}}
}

func (b *liveBatch) empty() bool {
	return len(b.session) == 0 && len(b.lists) == 0 && len(b.worktrees) == 0 && !b.rescanWT
}

// classify files one fsnotify event into the batch.
func (l *live) classify(ev fsnotify.Event, b *liveBatch) {
	name := filepath.Clean(ev.Name)
	dir := filepath.Dir(name)
	l.mu.Lock()
	defer l.mu.Unlock()
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		// A watched folder that goes away takes its watch with it; it is
		// watched again when it comes back (the tick polls the session dir).
		delete(l.watched, name)
	}
	switch {
	case dir == l.sessionDir || name == l.sessionDir:
		if runs.IsEventsFile(filepath.Base(name)) {
			b.session[name] = true
		}
		return
	case l.lists[dir] != "":
		b.lists[l.lists[dir]] = true
		return
	case l.lists[name] != "":
		b.lists[l.lists[name]] = true
		return
	}
	rel, err := filepath.Rel(l.root, name)
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
	}
}

// watchLocked adds a watch on dir; it reports whether dir is watched.
func (l *live) watchLocked(dir string) bool {
	if l.watched[dir] {
		return true
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	if l.fsw != nil {
		if err := l.fsw.Add(dir); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				l.s.log.Warn("live: watch", "dir", dir, "err", err)
			}
			return false
		}
	}
	l.watched[dir] = true
	return true
}

func (l *live) unwatchLocked(dir string) {
	if !l.watched[dir] {
		return
	}
	delete(l.watched, dir)
	if l.fsw != nil {
		_ = l.fsw.Remove(dir)
	}
}

// clientChanged takes the client's file events for worktree copies (when it
// watches .saga/** for us): the same re-read as our own watcher's.
func (l *live) clientChanged(paths []string) {
	l.mu.Lock()
	ok := l.started && !l.closed
	l.mu.Unlock()
	if !ok {
		return
	}
	b := newBatch()
	for _, p := range paths {
		l.classify(fsnotify.Event{Name: p, Op: fsnotify.Write}, b)
	}
	if b.empty() {
		return
	}
	select {
	case l.ops <- func() { l.process(b) }:
	default: // busy: our own watcher sees the same change
	}
}
