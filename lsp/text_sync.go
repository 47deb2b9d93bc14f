package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// textDocument/didOpen, didChange, didClose, didSave: the open buffers are
// overlays that take the place of disk in the snapshot.

func didOpen(ctx context.Context, s *Server, params json.RawMessage) error {
	var p protocol.DidOpenTextDocumentParams
	if err := decode(params, &p); err != nil {
		return err
	}
	td := p.TextDocument
	s.setDocument(td.URI, td.Version, []byte(td.Text))
	return nil
}

func didChange(ctx context.Context, s *Server, params json.RawMessage) error {
	var p protocol.DidChangeTextDocumentParams
	if err := decode(params, &p); err != nil {
		return err
	}
	u := p.TextDocument.URI
	s.mu.Lock()
	doc := s.snap.Docs[u]
	s.mu.Unlock()
	if doc == nil {
		return fmt.Errorf("didChange for %s, which is not open", u)
	}
	text := doc.Text
	lines := doc.Lines()
	for i, ch := range p.ContentChanges {
		switch c := ch.(type) {
		case *protocol.TextDocumentContentChangeWholeDocument:
			text = []byte(c.Text)
		case *protocol.TextDocumentContentChangePartial:
			// An incremental change older than what we hold cannot be placed
			// reliably: keep the buffer and say so (the client will resend
			// or the next full sync repairs it).
			if p.TextDocument.Version <= doc.Version {
				s.log.Warn("out-of-order didChange ignored", "uri", u, "version", p.TextDocument.Version, "have", doc.Version)
				return nil
			}
			if i > 0 {
				lines = jsonc.NewLineIndex(text)
			}
			text = applyEdit(text, lines, c.Range, c.Text)
		}
	}
	s.setDocument(u, p.TextDocument.Version, text)
	return nil
}

func applyEdit(text []byte, lines *jsonc.LineIndex, r protocol.Range, newText string) []byte {
	start := lines.Offset(jsonc.Position{Line: int(r.Start.Line), Character: int(r.Start.Character)})
	end := lines.Offset(jsonc.Position{Line: int(r.End.Line), Character: int(r.End.Character)})
	if end < start {
		start, end = end, start
	}
	out := make([]byte, 0, len(text)-(end-start)+len(newText))
	out = append(out, text[:start]...)
	out = append(out, newText...)
	return append(out, text[end:]...)
}

func didClose(ctx context.Context, s *Server, params json.RawMessage) error {
	var p protocol.DidCloseTextDocumentParams
	if err := decode(params, &p); err != nil {
		return err
	}
	u := p.TextDocument.URI
	s.update(func(old *Snapshot) (*Snapshot, []string) {
		doc := old.Docs[u]
		if doc == nil {
			return old, nil
		}
		snap := old.clone()
		delete(snap.Docs, u)
		if doc.Rel == "" || !isModelFile(doc.Rel) {
			return snap, nil
		}
		// Back to what disk says.
		f := s.readDisk(snap.Root, doc.Rel)
		if f == nil {
			snap.WS, _ = snap.WS.Update(nil, []string{doc.Rel})
			return snap, []string{doc.Rel}
		}
		var affected []string
		snap.WS, affected = snap.WS.Update([]*store.File{f}, nil)
		return snap, affected
	})
	return nil
}

func didSave(ctx context.Context, s *Server, params json.RawMessage) error {
	return nil // the buffer is already the overlay; the watcher sees the write
}

// setDocument records a buffer's new text and reparses it.
func (s *Server) setDocument(u uri.URI, version int32, text []byte) {
	s.update(func(old *Snapshot) (*Snapshot, []string) {
		snap := old.clone()
		path := u.FsPath()
		doc := &Document{URI: u, Path: path, Rel: snap.RelOf(path), Version: version, Text: text}
		if doc.Rel != "" && isModelFile(doc.Rel) && filepath.Ext(path) == ".json" {
			doc.File = s.parser.Parse(doc.Rel, text, version)
		} else {
			doc.lines = jsonc.NewLineIndex(text)
		}
		snap.Docs[u] = doc
		if doc.File == nil {
			if _, _, ok := isWorktreeRel(doc.Rel); ok {
				return snap, []string{doc.Rel} // live diagnostics of a worktree copy (live.go)
			}
			return snap, nil
		}
		var affected []string
		snap.WS, affected = snap.WS.Update([]*store.File{doc.File}, nil)
		return snap, affected
	})
}

// update replaces the snapshot and queues diagnostics for what changed.
func (s *Server) update(f func(old *Snapshot) (*Snapshot, []string)) {
	s.mu.Lock()
	snap, affected := f(s.snap)
	s.snap = snap
	s.mu.Unlock()
	s.pub.queue(affected)
}

// current returns the snapshot in force.
func (s *Server) current() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap
}
