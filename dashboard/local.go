package dashboard

// Local: a repository the dashboard loads and watches itself (`saga-lsp
// dashboard`): the workspace service (workspace) loads it, watches .saga/
// and reads each change through the one funnel the language server uses
// too, keeping the snapshot; the live-run watcher (runs/watch) runs over
// it, and both become Change notices.

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/saga-ai/saga-lsp/runs/watch"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/workspace"
)

// Local is a repository loaded and watched by the dashboard itself.
type Local struct {
	root   string
	disk   *workspace.Service
	w      atomic.Pointer[watch.Watcher] // set once loaded; the funnel may run before
	notify atomic.Pointer[func(Change)]
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
	l := &Local{root: root}
	// Watching starts before the load: a file saved meanwhile is read again.
	l.disk = workspace.Open(root, workspace.Options{Parser: o.Parser, Log: o.Log, Watch: true, Changed: l.diskChanged})
	if _, err := l.disk.Load(); err != nil {
		l.disk.Close()
		return nil, err
	}
	w := watch.Start(watch.Options{Root: root, Env: o.Env, Parser: o.Parser, Log: o.Log,
		Workspace: l.Workspace, Sink: ChangeSink{Root: root, Notify: l.send}})
	l.w.Store(w)
	w.Scan()
	return l, nil
}

// Workspace is the workspace as last read from disk.
func (l *Local) Workspace() *store.Workspace { return l.disk.Workspace() }

// Watcher is the repository's live-run watcher.
func (l *Local) Watcher() *watch.Watcher { return l.w.Load() }

// Source is what a dashboard serves of the repository.
func (l *Local) Source() Source {
	return Source{Root: l.root, Workspace: l.Workspace, Watcher: l.w.Load(),
		Bind: func(notify func(Change)) { l.notify.Store(&notify) }}
}

// Close stops watching.
func (l *Local) Close() {
	l.once.Do(func() {
		l.disk.Close()
		if w := l.w.Load(); w != nil {
			w.Close()
		}
	})
}

func (l *Local) send(c Change) {
	if n := l.notify.Load(); n != nil {
		(*n)(c)
	}
}

// diskChanged: the funnel applied a change; the pages hear of the files it
// affected, and the run watcher of the paths (worktree copies, main
// journals).
func (l *Local) diskChanged(c workspace.Change, affected []string) {
	if !c.Empty() {
		rels := affected
		for _, f := range c.Changed {
			rels = append(rels, f.Rel)
		}
		rels = append(rels, c.Removed...)
		l.send(ChangeFromFiles(l.root, rels))
	}
	if w := l.w.Load(); w != nil {
		w.DiskChanged(c.Paths)
	}
}
