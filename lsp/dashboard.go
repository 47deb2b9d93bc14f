package lsp

// saga.openDashboard: the dashboard (package dashboard) served from the
// language server's own process — its snapshots (the editor's view, unsaved
// buffers included) and its live-run watcher, so nothing is loaded or
// watched twice. One per server (one workspace), started on the first
// call, answered with the same URL after, closed when the server exits.
// The client opens the URL (VS Code externally, Neovim with vim.ui.open).

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/saga-ai/saga-lsp/dashboard"
	"github.com/saga-ai/saga-lsp/store"
)

// lspDashboard is the server's dashboard, when it has one.
type lspDashboard struct {
	mu     sync.Mutex
	srv    *dashboard.Server
	closed bool
	// notify is the started dashboard's Notify: the Sink's and the
	// snapshot's changes go there without taking mu.
	notify atomic.Pointer[func(dashboard.Change)]
}

// dashboardResult is what openDashboard answers.
type dashboardResult struct {
	URL     string `json:"url"`
	Started bool   `json:"started"` // this call started it (else it was running)
}

// cmdOpenDashboard starts the workspace's dashboard unless it runs, and
// returns its URL (with its access token).
func cmdOpenDashboard(ctx context.Context, s *Server, snap *Snapshot, _ string, _ []json.RawMessage) (any, error) {
	d := &s.dash
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, &rpcError{code: codeRequestFailed, msg: "openDashboard: the server is shutting down"}
	}
	if d.srv != nil {
		return &dashboardResult{URL: d.srv.URL()}, nil
	}
	setup := s.runSetupFor(snap.Root) // the server's: one per root
	srv, err := dashboard.Start(dashboard.Options{
		Sources: []dashboard.Source{{Root: snap.Root, Workspace: func() *store.Workspace { return s.current().WS }, Watcher: s.live.w.Load(),
			Setup: &setup}},
		Env: s.env, Parser: s.parser, Log: s.log,
	})
	if err != nil {
		return nil, &rpcError{code: codeRequestFailed, msg: "openDashboard: " + err.Error()}
	}
	d.srv = srv
	notify := srv.Notify
	d.notify.Store(&notify)
	s.log.Info("dashboard", "url", srv.URL())
	return &dashboardResult{URL: srv.URL(), Started: true}, nil
}

// sink is where the watcher's Sink calls are forwarded for the dashboard
// (a no-op without one).
func (d *lspDashboard) sink(root string) dashboard.ChangeSink {
	cs := dashboard.ChangeSink{Root: root}
	if n := d.notify.Load(); n != nil {
		cs.Notify = *n
	}
	return cs
}

// filesChanged tells the dashboard that the snapshot's files at rels
// changed.
func (d *lspDashboard) filesChanged(root string, rels []string) {
	if n := d.notify.Load(); n != nil && len(rels) > 0 {
		(*n)(dashboard.ChangeFromFiles(root, rels))
	}
}

// close stops the dashboard with the server.
func (d *lspDashboard) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	d.notify.Store(nil)
	if d.srv != nil {
		d.srv.Close()
	}
}
