package dashboard

// Local: a repository the dashboard loads and watches itself (`saga-lsp
// dashboard`), as the language server does without a client's file
// events: store's loader once, then fsnotify on .saga/ (one watch per
// folder, new folders added as they appear; of a worktree, only the
// folders leading to its copy of its story), each batch of events read
// again into the next snapshot by Workspace.Update — and the live-run
// watcher (runs/watch) over it, whose Sink calls become Change notices.

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/saga-ai/saga-lsp/runs/watch"
	"github.com/saga-ai/saga-lsp/store"
)

// settle is the quiet time before a batch of .saga file events is read:
// an atomic write (temp file, rename) is read once.
const settle = 15 * time.Millisecond

// Local is a repository loaded and watched by the dashboard itself.
type Local struct {
	root   string
	parser *store.Parser
	log    *slog.Logger
	ws     atomic.Pointer[store.Workspace]
	w      *watch.Watcher
	fsw    *fsnotify.Watcher
	notify atomic.Pointer[func(Change)]
	done   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
}

// LocalOptions configure OpenLocal.
type LocalOptions struct {
	Parser *store.Parser       // default store.NewParser()
	Env    func(string) string // the run protocol's variables; nil is os.Getenv
	Log    *slog.Logger        // nil discards
}

// OpenLocal loads the workspace at root (which holds .saga/), starts
// watching its files and its runs, and returns once the watcher's
// start-up scan is done.
func OpenLocal(root string, o LocalOptions) (*Local, error) {
	if o.Parser == nil {
		p, err := store.NewParser()
		if err != nil {
			return nil, err
		}
		o.Parser = p
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	l := &Local{root: root, parser: o.Parser, log: o.Log, done: make(chan struct{})}
	// Watch before loading: a file saved meanwhile is read again.
	if fsw, err := fsnotify.NewWatcher(); err != nil {
		l.log.Warn("dashboard: file watching unavailable; saved edits show after a restart", "err", err)
	} else {
		l.fsw = fsw
		l.add(root)
		l.addTree(filepath.Join(root, ".saga"))
	}
	ws, err := o.Parser.Load(root)
	if err != nil {
		if l.fsw != nil {
			l.fsw.Close()
		}
		return nil, err
	}
	l.ws.Store(ws)
	l.w = watch.Start(watch.Options{Root: root, Env: o.Env, Parser: o.Parser, Log: o.Log,
		Workspace: l.Workspace, Sink: ChangeSink{Root: root, Notify: l.send}})
	l.w.Scan()
	if l.fsw != nil {
		l.wg.Add(1)
		go l.run()
	}
	return l, nil
}

// Workspace is the workspace as last read from disk.
func (l *Local) Workspace() *store.Workspace { return l.ws.Load() }

// Watcher is the repository's live-run watcher.
func (l *Local) Watcher() *watch.Watcher { return l.w }

// Source is what a dashboard serves of the repository.
func (l *Local) Source() Source {
	return Source{Root: l.root, Workspace: l.Workspace, Watcher: l.w,
		Bind: func(notify func(Change)) { l.notify.Store(&notify) }}
}

// Close stops watching.
func (l *Local) Close() {
	l.once.Do(func() {
		close(l.done)
		if l.fsw != nil {
			l.fsw.Close()
		}
		l.wg.Wait()
		l.w.Close()
	})
}

func (l *Local) send(c Change) {
	if n := l.notify.Load(); n != nil {
		(*n)(c)
	}
}

func (l *Local) add(dir string) {
	if err := l.fsw.Add(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.log.Debug("dashboard: watch", "dir", dir, "err", err)
	}
}

// addTree watches a .saga folder and its subfolders at their fixed
// depths; of a worktree, only the folders leading to its story's copy.
// Symbolic links are not followed.
func (l *Local) addTree(dir string) {
	rel, err := filepath.Rel(l.root, dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return
	}
	rel = filepath.ToSlash(rel)
	if copyDir, inWorktree := worktreeCopyDir(rel); inWorktree {
		if copyDir == "" && rel != store.WorktreesRel {
			return
		}
	} else if strings.Count(rel, "/") > 2 {
		return
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return
	}
	l.add(dir)
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if de.IsDir() {
			l.addTree(filepath.Join(dir, de.Name()))
		}
	}
}

func (l *Local) run() {
	defer l.wg.Done()
	var batch []string
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-l.done:
			return
		case ev, ok := <-l.fsw.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) {
				l.addTree(ev.Name) // a new story folder, or .saga itself
			}
			batch = append(batch, ev.Name)
			timer.Reset(settle)
		case err, ok := <-l.fsw.Errors:
			if !ok {
				return
			}
			l.log.Warn("dashboard: file watcher", "err", err)
		case <-timer.C:
			paths := batch
			batch = nil
			l.diskChanged(paths)
		}
	}
}

// diskChanged reads again what changed under paths (files or folders),
// makes the next snapshot, hands the paths to the run watcher (worktree
// copies, main journals) and says what changed.
func (l *Local) diskChanged(paths []string) {
	old := l.ws.Load()
	changed, removed := rereadPaths(l.parser, old, paths)
	if len(changed) > 0 || len(removed) > 0 {
		nw, affected := old.Update(changed, removed)
		l.ws.Store(nw)
		rels := affected
		for _, f := range changed {
			rels = append(rels, f.Rel)
		}
		rels = append(rels, removed...)
		l.send(ChangeFromFiles(l.root, rels))
	}
	l.w.DiskChanged(paths)
}

// rereadPaths reads the model files at or under paths from disk: the ones
// there now (changed) and the ones ws knew that are gone (removed).
func rereadPaths(p *store.Parser, ws *store.Workspace, paths []string) (changed []*store.File, removed []string) {
	root := ws.Root
	seen := map[string]bool{}
	consider := func(rel string) {
		if seen[rel] || !store.IsModelFile(rel) {
			return
		}
		seen[rel] = true
		if f := readDisk(p, root, rel); f != nil {
			changed = append(changed, f)
		} else if ws.File(rel) != nil {
			removed = append(removed, rel)
		}
	}
	for _, abs := range paths {
		r, err := filepath.Rel(root, abs)
		if err != nil || strings.HasPrefix(r, "..") {
			continue
		}
		rel := filepath.ToSlash(r)
		if !strings.HasPrefix(rel, ".saga/") {
			continue
		}
		copyDir, inWorktree := worktreeCopyDir(rel)
		if inWorktree && copyDir == "" {
			continue // the rest of a worktree's checkout is never read
		}
		fi, err := os.Lstat(abs)
		switch {
		case err == nil && fi.Mode().IsRegular():
			consider(rel)
			continue
		case err == nil && fi.IsDir():
			list := rel
			if inWorktree {
				list = copyDir
			}
			for _, f := range store.ListModelFiles(root, list) {
				consider(f)
			}
		}
		// A folder, or something gone: what we knew under it.
		for _, f := range ws.Files() {
			if strings.HasPrefix(f.Rel, rel+"/") {
				consider(f.Rel)
			}
		}
		consider(rel)
	}
	return changed, removed
}

// readDisk parses a file from disk as the loader does; nil when it does
// not exist.
func readDisk(p *store.Parser, root, rel string) *store.File {
	abs := filepath.Join(root, filepath.FromSlash(rel))
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if kind, _, _ := store.Classify(rel); kind == store.KindJournal || kind == store.KindMisplaced {
		return p.Parse(rel, nil, -1) // presence is what matters
	}
	src, why := store.ReadBounded(abs, rel)
	if why != "" {
		return store.Unreadable(rel, why)
	}
	return p.Parse(rel, src, -1)
}

// worktreeCopyDir tells whether rel is under .saga/worktrees/ and, if so,
// the story copy folder it is in or leads to; "" for the rest of the
// worktree's checkout.
func worktreeCopyDir(rel string) (dir string, inWorktree bool) {
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
