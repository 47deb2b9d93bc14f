package lsp

import (
	"encoding/json"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/saga-ai/saga-lsp/store"
)

// publisher pushes textDocument/publishDiagnostics. Changes queue the paths
// they affect; one goroutine publishes them from the newest snapshot, so a
// burst of keystrokes coalesces and stale diagnostics are never sent after
// fresh ones.
type publisher struct {
	s       *Server
	mu      sync.Mutex
	pending map[string]bool
	all     bool
	wake    bell
	done    chan struct{}
	stopped chan struct{}
	// shown: files whose last publication was non-empty, so they can be
	// cleared when their problems go away.
	shown map[string]bool
}

func newPublisher(s *Server) *publisher {
	p := &publisher{s: s, pending: map[string]bool{}, wake: newBell(),
		done: make(chan struct{}), stopped: make(chan struct{}), shown: map[string]bool{}}
	go p.run()
	return p
}

func (p *publisher) queue(rels []string) {
	if len(rels) == 0 {
		return
	}
	p.mu.Lock()
	for _, r := range rels {
		p.pending[r] = true
	}
	p.mu.Unlock()
	p.signal()
}

// queueAll republishes every file (after the initial load).
func (p *publisher) queueAll() {
	p.mu.Lock()
	p.all = true
	p.mu.Unlock()
	p.signal()
}

func (p *publisher) signal() { p.wake.ring() }

func (p *publisher) close() {
	select {
	case <-p.done:
	default:
		close(p.done)
	}
	<-p.stopped
}

func (p *publisher) run() {
	defer close(p.stopped)
	for {
		select {
		case <-p.done:
			return
		case <-p.wake:
		}
		p.mu.Lock()
		pending, all := p.pending, p.all
		p.pending, p.all = map[string]bool{}, false
		p.mu.Unlock()
		snap := p.s.current()
		// Before the disk scan ends, cross-file findings would be wrong (every
		// sibling looks missing); the load publishes everything when done.
		if !snap.Loaded {
			continue
		}
		if all {
			p.publishAll(snap)
		}
		// The open documents first: the one being typed in is answered
		// before the files a run's worktree writes touched.
		for _, open := range []bool{true, false} {
			for rel := range pending {
				if (snap.DocByRel(rel) != nil) == open {
					p.publish(snap, rel, p.fileDiagnostics(snap, rel))
				}
			}
		}
	}
}

// fileDiagnostics is what one file shows: the workspace's findings plus
// the LSP-only ones that depend on live run state (live_diagnostics.go:
// stale-task, story-blocked, story-held, check-failed), which also cover the
// files of worktree copies. The latter read the run watcher's published
// State: no lock, no I/O.
func (p *publisher) fileDiagnostics(snap *Snapshot, rel string) []store.Diagnostic {
	ds := snap.WS.FileDiagnostics(rel)
	if extra := p.s.live.diagnostics(snap, rel); len(extra) > 0 {
		ds = append(ds, extra...)
		store.SortDiagnostics(ds)
	}
	return ds
}

// publishAll sends every file that has diagnostics or had them, and every
// open document (so its version is acknowledged).
func (p *publisher) publishAll(snap *Snapshot) {
	byFile := map[string][]store.Diagnostic{}
	for _, d := range snap.WS.Diagnostics() {
		byFile[d.File] = append(byFile[d.File], d)
	}
	touched := map[string]bool{}
	for _, d := range p.s.live.allDiagnostics(snap) {
		byFile[d.File] = append(byFile[d.File], d)
		touched[d.File] = true
	}
	for rel := range touched {
		store.SortDiagnostics(byFile[rel])
	}
	// The open documents first, as in run.
	done := map[string]bool{}
	for _, d := range snap.Docs {
		if d.Rel != "" && !done[d.Rel] {
			done[d.Rel] = true
			p.publish(snap, d.Rel, byFile[d.Rel])
		}
	}
	for rel, ds := range byFile {
		if !done[rel] {
			p.publish(snap, rel, ds)
		}
	}
	for rel := range p.shown {
		if _, ok := byFile[rel]; !ok && !done[rel] {
			p.publish(snap, rel, nil)
		}
	}
}

func (p *publisher) publish(snap *Snapshot, rel string, ds []store.Diagnostic) {
	version := snap.Version(rel)
	if len(ds) == 0 && !p.shown[rel] && version < 0 {
		return // nothing shown, nothing to say
	}
	params := &protocol.PublishDiagnosticsParams{URI: snap.URIOf(rel), Diagnostics: toProtocolDiagnostics(ds)}
	if version >= 0 {
		params.Version = protocol.NewOptional(version)
	}
	p.shown[rel] = len(ds) > 0
	p.s.notify("textDocument/publishDiagnostics", params)
}

// diagnosticData travels in Diagnostic.data so quick fixes need not
// recompute what the rules found.
type diagnosticData struct {
	Fix *store.Fix `json:"fix,omitempty"`
}

func toProtocolDiagnostics(ds []store.Diagnostic) []protocol.Diagnostic {
	out := make([]protocol.Diagnostic, 0, len(ds)) // [] never null
	for _, d := range ds {
		pd := protocol.Diagnostic{
			Range:    toRange(d.Range),
			Severity: protocol.DiagnosticSeverity(d.Severity),
			Code:     protocol.String(string(d.Code)),
			Source:   protocol.NewOptional("saga"),
			Message:  protocol.String(d.Message),
		}
		if d.Fix != nil {
			if raw, err := json.Marshal(diagnosticData{Fix: d.Fix}); err == nil {
				pd.Data = raw
			}
		}
		out = append(out, pd)
	}
	return out
}

func toRange(r store.Range) protocol.Range {
	return protocol.Range{
		Start: protocol.Position{Line: uint32(r.Start.Line), Character: uint32(r.Start.Character)},
		End:   protocol.Position{Line: uint32(r.End.Line), Character: uint32(r.End.Character)},
	}
}
