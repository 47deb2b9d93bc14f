package workspace

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

	"github.com/saga-ai/saga-lsp/fswatch"
	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/store"
)

// settle is the quiet time before a batch of events is read: an atomic
// write (temp file, rename) is read once.
const settle = 15 * time.Millisecond

// Options configure Open.
type Options struct {
	Parser *store.Parser // required
	Log    *slog.Logger  // nil discards
	// Watch: the service watches .saga itself. Off when an editor watches
	// for the face and hands its events to DidModifyFiles.
	Watch bool
	// WatchAdd stands between the watcher and each watch it adds (tests
	// inject a watch limit through it).
	WatchAdd func(dir string, add func(string) error) error
	// WatchLimit is told, once, the first folder the system's limit of
	// watches left unwatched.
	WatchLimit func(dir string)

	// A face that keeps its own snapshot (the language server: buffers
	// over disk) sets Base and Apply: a change is read against Base() and
	// handed to Apply, files Skip names left out. Without Apply the
	// service keeps the snapshot itself (Workspace) and tells Changed the
	// files it affected.
	Base    func() *store.Workspace
	Skip    func(rel string) bool
	Apply   func(Change)
	Changed func(c Change, affected []string)
}

// Service is one repository's .saga on disk: its load, its watch and the
// funnel of its changes.
type Service struct {
	root string
	o    Options
	ws   atomic.Pointer[store.Workspace] // without Options.Apply

	funnel sync.Mutex // one change read and applied at a time; never taken by a request

	fsw       *fswatch.Watcher
	limitMu   sync.Mutex
	unwatched map[string]bool // folders the watch limit left unwatched

	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// Open starts the service for the workspace at root (the folder that holds
// or will hold .saga/): its watches are in place when it returns, so a
// file written after it is seen. Load reads the workspace.
func Open(root string, o Options) *Service {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	s := &Service{root: root, o: o, unwatched: map[string]bool{}, done: make(chan struct{})}
	s.ws.Store(store.Build(root, nil, nil))
	if o.Watch {
		fsw, err := fswatch.New(fswatch.Options{Add: o.WatchAdd})
		if err != nil {
			o.Log.Warn("file watching unavailable; changes made outside show when files are opened", "err", err)
		} else {
			s.fsw = fsw
			s.add(root)
			s.addTree(filepath.Join(root, ".saga"))
			s.wg.Add(1)
			go s.run()
		}
	}
	return s
}

// Load reads the whole workspace from disk (an empty one without .saga/).
// A service that keeps its snapshot takes it as its own.
func (s *Service) Load() (*store.Workspace, error) {
	ws := store.Build(s.root, nil, nil)
	if _, err := os.Stat(filepath.Join(s.root, ".saga")); err == nil {
		loaded, err := s.o.Parser.Load(s.root)
		if err != nil {
			return ws, err
		}
		ws = loaded
	}
	if s.o.Apply == nil {
		s.funnel.Lock()
		s.ws.Store(ws)
		s.funnel.Unlock()
	}
	return ws, nil
}

// Workspace is the snapshot the service keeps (without Options.Apply).
func (s *Service) Workspace() *store.Workspace { return s.ws.Load() }

// Root is the workspace root.
func (s *Service) Root() string { return s.root }

// DidModifyFiles is the funnel: paths (files or folders, absolute) changed
// on disk. What they hold now is read — no lock of the face held — and
// applied; batches are applied in order.
func (s *Service) DidModifyFiles(paths []string) {
	if len(paths) == 0 {
		return
	}
	s.funnel.Lock()
	defer s.funnel.Unlock()
	base := s.ws.Load()
	if s.o.Base != nil {
		base = s.o.Base()
	}
	changed, removed := reread(s.o.Parser, base, paths, s.o.Skip)
	c := Change{Paths: paths, Changed: changed, Removed: removed}
	if s.o.Apply != nil {
		s.o.Apply(c)
		return
	}
	if c.Empty() {
		if s.o.Changed != nil {
			s.o.Changed(c, nil)
		}
		return
	}
	ws, affected := base.Update(changed, removed)
	s.ws.Store(ws)
	if s.o.Changed != nil {
		s.o.Changed(c, affected)
	}
}

// ReadFile is the confined read of one model file of this workspace (nil:
// it does not exist).
func (s *Service) ReadFile(rel string) *store.File { return ReadFile(s.o.Parser, s.root, rel) }

// Unwatched: the folder dir, or one above it (whose new subfolders were
// never seen), was left unwatched by the watch limit; a face re-reads such
// a folder when a file in it is opened or saved.
func (s *Service) Unwatched(dir string) bool {
	s.limitMu.Lock()
	defer s.limitMu.Unlock()
	if len(s.unwatched) == 0 {
		return false
	}
	for d := dir; len(d) > len(s.root); d = filepath.Dir(d) {
		if s.unwatched[d] {
			return true
		}
	}
	return false
}

// Close stops watching.
func (s *Service) Close() {
	s.once.Do(func() {
		close(s.done)
		if s.fsw != nil {
			s.fsw.Close()
		}
		s.wg.Wait()
	})
}

func (s *Service) add(dir string) {
	err := s.fsw.Add(dir)
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
	case fswatch.IsLimit(err):
		s.limitMu.Lock()
		first := len(s.unwatched) == 0
		s.unwatched[dir] = true
		s.limitMu.Unlock()
		if first && s.o.WatchLimit != nil {
			s.o.WatchLimit(dir)
		}
	default:
		s.o.Log.Debug("watch", "dir", dir, "err", err)
	}
}

// addTree watches a .saga folder and its subfolders at their fixed
// depths; of a worktree, only the folders leading to its copy of its
// story. Never a watch (nor a listing) through a link out of the
// workspace.
func (s *Service) addTree(dir string) {
	rel := relOf(s.root, dir)
	if rel == "" {
		return
	}
	if copyDir, inWorktree := WorktreeCopyDir(rel); inWorktree {
		if copyDir == "" && rel != store.WorktreesRel {
			return
		}
	} else if strings.Count(rel, "/") > 2 {
		return
	}
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 && filesafe.OutsideWorkspace(s.root, rel) != "" {
		return
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return
	}
	s.add(dir)
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if de.IsDir() {
			s.addTree(filepath.Join(dir, de.Name()))
		}
	}
}

// everything is every path of .saga a change may have touched — each file
// the snapshot knows, the stories' and epics' folders, the files directly
// in .saga and each worktree's copy of its story — for the funnel to read
// again whole when the system lost events (a queue overflow).
func (s *Service) everything() []string {
	base := s.ws.Load()
	if s.o.Base != nil {
		base = s.o.Base()
	}
	saga := filepath.Join(s.root, ".saga")
	paths := []string{filepath.Join(saga, "stories"), filepath.Join(saga, "epics")}
	for _, f := range base.Files() {
		paths = append(paths, filepath.Join(s.root, filepath.FromSlash(f.Rel)))
	}
	if filesafe.OutsideWorkspace(s.root, ".saga") == "" {
		des, _ := os.ReadDir(saga)
		for _, de := range des {
			paths = append(paths, filepath.Join(saga, de.Name()))
		}
	}
	if filesafe.OutsideWorkspace(s.root, store.WorktreesRel) == "" {
		des, _ := os.ReadDir(filepath.Join(s.root, filepath.FromSlash(store.WorktreesRel)))
		for _, de := range des {
			paths = append(paths, filepath.Join(s.root, filepath.FromSlash(store.WorktreeStoryDirRel(de.Name()))))
		}
	}
	return paths
}

// run batches the watcher's events and hands each batch to the funnel.
func (s *Service) run() {
	defer s.wg.Done()
	var batch []string
	lost := false // events were lost: the batch is everything
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	events, errs := s.fsw.Events(), s.fsw.Errors()
	for {
		select {
		case <-s.done:
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			if ev.Has(fswatch.Overflow) {
				s.o.Log.Warn("file watcher: events lost (the system's queue overflowed); reading .saga again")
				lost = true
				timer.Reset(settle)
				continue
			}
			if ev.Has(fswatch.Create) {
				s.addTree(ev.Path) // a new story folder, or .saga itself
			}
			batch = append(batch, ev.Path)
			timer.Reset(settle)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			s.o.Log.Warn("file watcher", "err", err)
		case <-timer.C:
			paths := batch
			if lost {
				paths = append(paths, s.everything()...)
			}
			batch, lost = nil, false
			s.DidModifyFiles(paths)
		}
	}
}
