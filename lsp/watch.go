package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/workspace"
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
	}
	// The one funnel of disk changes (workspace): the client's events or
	// the service's own watch, read with no lock held and laid under the
	// open buffers by applyDisk.
	disk := workspace.Open(snap.Root, workspace.Options{
		Parser:     s.parser,
		Log:        s.log,
		Watch:      !ci.watchedFilesDynamic,
		WatchAdd:   s.watchAdd,
		WatchLimit: s.warnWatchLimit,
		Base:       func() *store.Workspace { return s.current().WS },
		Skip:       func(rel string) bool { return s.current().DocByRel(rel) != nil },
		Apply:      s.applyDisk,
	})
	s.mu.Lock()
	s.disk = disk
	s.mu.Unlock()
	s.live.start(snap.Root)
	s.bg.Go(func() { s.load(disk) })
	return nil
}

// load scans the workspace from disk, then lays the open buffers over it and
// publishes everything.
func (s *Server) load(disk *workspace.Service) {
	began := time.Now()
	root := disk.Root()
	prog := s.beginProgress("Loading .saga", "")
	ws, err := disk.Load()
	if err != nil {
		s.log.Error("load workspace", "root", root, "err", err)
		s.showMessage(protocol.MessageTypeError, "saga-lsp: "+err.Error())
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
	return nil
}

// diskChanged hands paths (files or folders) that changed on disk to the
// funnel.
func (s *Server) diskChanged(paths []string) {
	if d := s.diskService(); d != nil {
		d.DidModifyFiles(paths)
	}
}

// applyDisk lays a change read from disk into the next snapshot: open
// buffers win over disk until they are closed. Only the swap is under the
// lock; the reading was done before it. The lenses are refreshed (a
// story's counts follow its task files, and an editor asks for lenses
// again only when told), and the run watcher is told too (worktree
// copies, main journals: runs/watch).
func (s *Server) applyDisk(c workspace.Change) {
	if !c.Empty() {
		swapped := false
		defer func() {
			if swapped {
				s.live.bell.ring()
			}
		}()
		s.update(func(old *Snapshot) (*Snapshot, []string) {
			changed := make([]*store.File, 0, len(c.Changed))
			for _, f := range c.Changed {
				if old.DocByRel(f.Rel) == nil { // opened meanwhile: the buffer wins
					changed = append(changed, f)
				}
			}
			var removed []string
			for _, rel := range c.Removed {
				if old.DocByRel(rel) == nil {
					removed = append(removed, rel)
				}
			}
			if len(changed) == 0 && len(removed) == 0 {
				return old, nil
			}
			snap := old.clone()
			var affected []string
			snap.WS, affected = old.WS.Update(changed, removed)
			swapped = true
			return snap, affected
		})
	}
	s.live.diskChanged(c.Paths)
}

// diskService is the workspace service (nil before initialized).
func (s *Server) diskService() *workspace.Service {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.disk
}

// warnWatchLimit tells the user, once, that the system's watch limit left
// folders unwatched, and how to raise it.
func (s *Server) warnWatchLimit(dir string) {
	s.log.Warn("inotify watch limit reached; folders past it are re-read on open and save", "dir", dir)
	s.showMessage(protocol.MessageTypeWarning, "saga-lsp: the inotify watch limit (fs.inotify.max_user_watches) is reached, "+
		"so changes made outside the editor to some .saga folders are not seen as they happen; saga-lsp re-reads such a folder "+
		"when you open or save a file in it. To watch them all, raise the limit: "+
		"sudo sysctl fs.inotify.max_user_watches=524288 (to keep it, put that setting in /etc/sysctl.d/90-inotify.conf), "+
		"then restart the language server.")
}

// reReadUnwatched re-reads the folder of a file just opened or saved when
// no watch covers it: the editor's own buffer is current, its neighbours
// may have changed on disk unseen.
func (s *Server) reReadUnwatched(u uri.URI) {
	d := s.diskService()
	if d == nil {
		return
	}
	if dir := filepath.Dir(u.FsPath()); d.Unwatched(dir) {
		d.DidModifyFiles([]string{dir})
	}
}
