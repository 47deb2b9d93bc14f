package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/saga-ai/saga-lsp/store"
)

// initialized starts the disk scan and file watching.
func initialized(ctx context.Context, s *Server, params json.RawMessage) error {
	snap := s.current()
	s.mu.Lock()
	ci := s.client
	s.mu.Unlock()
	if snap.Root == "" {
		return nil
	}
	if ci.watchedFilesDynamic {
		s.bg.Go(func() { s.registerWatchers() })
	} else {
		w, err := newWatcher(s, snap.Root)
		if err != nil {
			s.log.Warn("file watching unavailable; external edits show up when files are opened", "err", err)
		} else {
			s.mu.Lock()
			s.watcher = w
			s.mu.Unlock()
		}
	}
	s.live.start(snap.Root)
	s.bg.Go(func() { s.load(snap.Root) })
	return nil
}

// load scans the workspace from disk, then lays the open buffers over it and
// publishes everything.
func (s *Server) load(root string) {
	began := time.Now()
	prog := s.beginProgress("Loading .saga", "")
	var ws *store.Workspace
	if _, err := os.Stat(filepath.Join(root, ".saga")); err == nil {
		loaded, err := s.parser.Load(root)
		if err != nil {
			s.log.Error("load workspace", "root", root, "err", err)
			s.showMessage(protocol.MessageTypeError, "saga-lsp: "+err.Error())
			loaded = store.Build(root, nil, nil)
		}
		ws = loaded
	} else {
		ws = store.Build(root, nil, nil)
	}
	s.update(func(old *Snapshot) (*Snapshot, []string) {
		snap := old.clone()
		var overlays []*store.File
		for _, d := range snap.Docs {
			if d.File != nil {
				overlays = append(overlays, d.File)
			}
		}
		snap.WS, _ = ws.Update(overlays, nil)
		snap.Loaded = true
		return snap, nil
	})
	// Workers already running (started from a terminal) and worktree
	// copies, before the first publication: stale-task depends on them.
	s.live.scan()
	msg := fmt.Sprintf("saga-lsp: loaded %d stories and %d epics from %s in %s",
		ws.StoryCount(), ws.EpicCount(), root, time.Since(began).Round(time.Millisecond))
	prog.end(msg)
	// The message first, then the diagnostics: a client reads the
	// publications after it as the loaded workspace's.
	s.notify("window/logMessage", &protocol.LogMessageParams{Type: protocol.MessageTypeLog, Message: msg})
	s.pub.queueAll()
	// Lenses asked for while loading showed an empty workspace: refresh them.
	s.live.Refresh()
	// Sized after the diagnostics are queued: its collection of the load's
	// garbage runs beside their publication instead of before it.
	if s.loaded != nil {
		s.loaded(ws.SrcBytes())
	}
}

// registerWatchers asks the client to watch .saga for us.
func (s *Server) registerWatchers() {
	kind := protocol.WatchKindCreate | protocol.WatchKindChange | protocol.WatchKindDelete
	opts := protocol.DidChangeWatchedFilesRegistrationOptions{Watchers: []protocol.FileSystemWatcher{
		{GlobPattern: protocol.Pattern("**/.saga/**"), Kind: kind},
	}}
	raw, err := encode(opts)
	if err != nil {
		return
	}
	params := protocol.RegistrationParams{Registrations: []protocol.Registration{{
		ID: "saga-watch", Method: "workspace/didChangeWatchedFiles", RegisterOptions: protocol.LSPAny(raw),
	}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.call(ctx, "client/registerCapability", params, nil); err != nil {
		s.log.Warn("client did not register file watchers", "err", err)
	}
}

func didChangeWatchedFiles(ctx context.Context, s *Server, params json.RawMessage) error {
	var p protocol.DidChangeWatchedFilesParams
	if err := decode(params, &p); err != nil {
		return err
	}
	paths := make([]string, 0, len(p.Changes))
	for _, c := range p.Changes {
		paths = append(paths, c.URI.FsPath())
	}
	s.diskChanged(paths)
	s.live.diskChanged(paths) // worktree copies and main journals: runs/watch
	return nil
}

// diskChanged re-reads paths (files or folders) that changed on disk. Open
// buffers win over disk until they are closed.
func (s *Server) diskChanged(paths []string) {
	s.update(func(old *Snapshot) (*Snapshot, []string) {
		var changed []*store.File
		var removed []string
		seen := map[string]bool{}
		consider := func(rel string) {
			if seen[rel] || old.DocByRel(rel) != nil || !store.IsModelFile(rel) {
				return
			}
			seen[rel] = true
			if f := s.readDisk(old.Root, rel); f != nil {
				changed = append(changed, f)
			} else if old.WS.File(rel) != nil {
				removed = append(removed, rel)
			}
		}
		for _, p := range paths {
			rel := old.RelOf(p)
			if rel == "" || !strings.HasPrefix(rel, ".saga/") {
				continue
			}
			// Of a worktree only its copy of its story is read.
			copyDir, inWorktree := worktreeCopyDir(rel)
			if inWorktree && copyDir == "" {
				continue
			}
			// A link out of the workspace: one diagnostic for it, nothing
			// read through it, and what we knew under it is gone.
			if why := store.OutsideWorkspace(old.Root, rel); why != "" {
				seen[rel] = true
				changed = append(changed, store.Unreadable(rel, why))
				for _, f := range old.WS.Files() {
					if strings.HasPrefix(f.Rel, rel+"/") && old.DocByRel(f.Rel) == nil {
						removed = append(removed, f.Rel)
					}
				}
				continue
			}
			// A folder the load refused as a whole (such a link, a loop):
			// its diagnostic goes once the path is gone or a folder again.
			if f := old.WS.File(rel); f != nil && f.ReadErr != "" && !store.IsModelFile(rel) && folderFixed(p) {
				removed = append(removed, rel)
			}
			// A folder: what it holds now, and what we knew under it.
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				list := rel
				if inWorktree {
					list = copyDir
				}
				for _, f := range store.ListModelFiles(old.Root, list) {
					consider(f)
				}
			}
			for _, f := range old.WS.Files() {
				if strings.HasPrefix(f.Rel, rel+"/") {
					consider(f.Rel)
				}
			}
			consider(rel)
		}
		if len(changed) == 0 && len(removed) == 0 {
			return old, nil
		}
		snap := old.clone()
		var affected []string
		snap.WS, affected = old.WS.Update(changed, removed)
		return snap, affected
	})
}

// folderFixed: the path is gone, or a folder that can be listed.
func folderFixed(p string) bool {
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return true
	}
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// worktreeCopyDir tells whether rel is under .saga/worktrees/ and, if so,
// the story copy folder it is in or leads to (the worktree itself, its
// .saga/, .saga/stories/, the copy's folder or a file in it); "" for the
// rest of the worktree's checkout, which is never read.
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

// readDisk parses a file from disk; nil when it does not exist.
func (s *Server) readDisk(root, rel string) *store.File {
	abs := filepath.Join(root, filepath.FromSlash(rel))
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if kind, _, _ := store.Classify(rel); kind == store.KindJournal || kind == store.KindMisplaced {
		return s.parser.Parse(rel, nil, -1) // presence is what matters
	}
	src, why := store.ReadWorkspaceFile(root, rel) // never through a link out of the workspace
	if why != "" {
		return store.Unreadable(rel, why)
	}
	return s.parser.Parse(rel, src, -1)
}

// watcher watches .saga with fsnotify when the client cannot: one watch per
// folder, new folders added as they appear. Events are batched for a few
// milliseconds so an atomic write (temp file + rename) is read once.
//
// On Linux each watch counts against the user's fs.inotify.max_user_watches.
// A folder the limit leaves unwatched (ENOSPC) is remembered; the user is
// told once how to raise the limit, and such a folder is re-read from disk
// when a file in it is opened or saved (reReadUnwatched).
type watcher struct {
	s     *Server
	fsw   *fsnotify.Watcher
	addFn func(dir string) error // fsw.Add, through Options.watchAdd in tests
	root  string
	once  sync.Once
	done  chan struct{}

	mu        sync.Mutex
	unwatched map[string]bool // folders the watch limit left unwatched
}

func newWatcher(s *Server, root string) (*watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{s: s, fsw: fsw, addFn: fsw.Add, root: root, done: make(chan struct{}), unwatched: map[string]bool{}}
	if seam := s.watchAdd; seam != nil {
		w.addFn = func(dir string) error { return seam(dir, fsw.Add) }
	}
	w.add(root)
	w.addTree(filepath.Join(root, ".saga"))
	go w.run()
	return w, nil
}

func (w *watcher) add(dir string) {
	err := w.addFn(dir)
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
	case isWatchLimit(err):
		w.mu.Lock()
		first := len(w.unwatched) == 0
		w.unwatched[dir] = true
		w.mu.Unlock()
		if first {
			w.s.log.Warn("inotify watch limit reached; folders past it are re-read on open and save", "dir", dir)
			w.s.showMessage(protocol.MessageTypeWarning, "saga-lsp: the inotify watch limit (fs.inotify.max_user_watches) is reached, "+
				"so changes made outside the editor to some .saga folders are not seen as they happen; saga-lsp re-reads such a folder "+
				"when you open or save a file in it. To watch them all, raise the limit: "+
				"sudo sysctl fs.inotify.max_user_watches=524288 (to keep it, put that setting in /etc/sysctl.d/90-inotify.conf), "+
				"then restart the language server.")
		}
	default:
		w.s.log.Debug("watch", "dir", dir, "err", err)
	}
}

// unwatchedDir: the folder dir, or one above it (whose new subfolders were
// never seen), was left unwatched by the watch limit.
func (w *watcher) unwatchedDir(dir string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.unwatched) == 0 {
		return false
	}
	for d := dir; len(d) > len(w.root); d = filepath.Dir(d) {
		if w.unwatched[d] {
			return true
		}
	}
	return false
}

// reReadUnwatched re-reads the folder of a file just opened or saved when
// no watch covers it: the editor's own buffer is current, its neighbours
// may have changed on disk unseen.
func (s *Server) reReadUnwatched(u uri.URI) {
	s.mu.Lock()
	w := s.watcher
	s.mu.Unlock()
	if w == nil {
		return
	}
	if dir := filepath.Dir(u.FsPath()); w.unwatchedDir(dir) {
		s.diskChanged([]string{dir})
	}
}

// addTree watches a .saga folder and its subfolders; of a worktree, only
// the folders leading to its copy of its story.
func (w *watcher) addTree(dir string) {
	rel, _ := filepath.Rel(w.root, dir)
	rel = filepath.ToSlash(rel)
	if copyDir, inWorktree := worktreeCopyDir(rel); inWorktree {
		if copyDir == "" && rel != store.WorktreesRel {
			return
		}
	} else if strings.Count(rel, "/") > 2 {
		return
	}
	// Never a watch (nor a listing) through a link out of the workspace.
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 && store.OutsideWorkspace(w.root, rel) != "" {
		return
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return
	}
	w.add(dir)
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if de.IsDir() {
			w.addTree(filepath.Join(dir, de.Name()))
		}
	}
}

func (w *watcher) run() {
	const settle = 15 * time.Millisecond
	var batch []string
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) {
				w.addTree(ev.Name) // a new story folder, or .saga itself
			}
			batch = append(batch, ev.Name)
			timer.Reset(settle)
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.s.log.Warn("file watcher", "err", err)
		case <-timer.C:
			paths := batch
			batch = nil
			w.s.diskChanged(paths)
			w.s.live.diskChanged(paths) // main journals (and worktree copies): runs/watch
		}
	}
}

func (w *watcher) close() {
	w.once.Do(func() {
		close(w.done)
		w.fsw.Close()
	})
}
