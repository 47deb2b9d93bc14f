package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"

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
	s.setDocument(td.URI, td.Version, []byte(td.Text), false)
	s.reReadUnwatched(td.URI)
	return nil
}

// didChangeParams is textDocument/didChange's params with each content
// change kept raw: go.lsp.dev/protocol decodes a change whose range is
// unusable as a whole-document replacement, which would silently make the
// server's copy diverge from the editor's. Each change is checked by
// parseContentChange instead.
type didChangeParams struct {
	TextDocument struct {
		URI     uri.URI `json:"uri"`
		Version int32   `json:"version"`
	} `json:"textDocument"`
	ContentChanges []json.RawMessage `json:"contentChanges"`
}

func didChange(ctx context.Context, s *Server, params json.RawMessage) error {
	var p didChangeParams
	if err := json.Unmarshal(params, &p); err != nil {
		return invalidParams(err)
	}
	u, version := p.TextDocument.URI, p.TextDocument.Version
	s.mu.Lock()
	doc := s.snap.Docs[u]
	s.mu.Unlock()
	if doc == nil {
		return fmt.Errorf("didChange for %s, which is not open", u)
	}
	changes := make([]contentChange, len(p.ContentChanges))
	errs := make([]error, len(p.ContentChanges))
	for i, raw := range p.ContentChanges {
		changes[i], errs[i] = parseContentChange(raw)
		// An incremental change older than what we hold cannot be placed
		// reliably: keep the buffer and say so (the client will resend or
		// the next full sync repairs it).
		if errs[i] == nil && !changes[i].whole && version <= doc.Version {
			s.log.Warn("out-of-order didChange ignored", "uri", u, "version", version, "have", doc.Version)
			return nil
		}
	}
	text, refused := applyChanges(doc.Text, doc.Lines(), changes, errs)
	warned := doc.warnedRefusal
	if len(refused) > 0 {
		s.log.Warn("didChange: refused changes with an invalid range; the text keeps its last good state",
			"uri", u, "version", version, "refused", refused)
		if !warned {
			warned = true
			s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf(
				"saga-lsp: %s: refused an edit with an invalid range (%s). The server keeps the text as it was before that edit, "+
					"which may now differ from the editor's: close and reopen the file to resynchronise.", doc.name(), refused[0]))
		}
	}
	s.setDocument(u, version, text, warned)
	return nil
}

// applyChanges applies a didChange's content changes in order to text
// (lines is its index). A change that failed to parse (errs[i]) is
// refused, never guessed: the text stays as it was and the changes after
// it still apply to it. It returns the new text and what was refused.
func applyChanges(text []byte, lines *jsonc.LineIndex, changes []contentChange, errs []error) ([]byte, []string) {
	var refused []string
	for i, c := range changes {
		switch {
		case errs[i] != nil:
			refused = append(refused, fmt.Sprintf("change %d: %v", i+1, errs[i]))
		case c.whole:
			text, lines = []byte(c.text), nil
		default:
			if lines == nil {
				lines = jsonc.NewLineIndex(text)
			}
			text, lines = applyEdit(text, lines, c.start, c.end, c.text), nil
		}
	}
	return text, refused
}

// contentChange is one checked entry of didChange's contentChanges.
type contentChange struct {
	whole      bool // no range: the whole text is replaced
	start, end jsonc.Position
	text       string
}

// parseContentChange checks a change as LSP defines it: an object with a
// string "text" and, unless it replaces the whole document, a "range" of
// two positions whose line and character are integers from 0 to 2^31-1.
func parseContentChange(raw json.RawMessage) (contentChange, error) {
	var c contentChange
	m, err := rawObject(raw)
	if err != nil {
		return c, fmt.Errorf("the change %w", err)
	}
	t, ok := m["text"]
	if !ok || json.Unmarshal(t, &c.text) != nil || bytes.Equal(bytes.TrimSpace(t), []byte("null")) {
		return c, errors.New(`the change has no string "text"`)
	}
	r, ok := m["range"]
	if !ok {
		c.whole = true
		return c, nil
	}
	rm, err := rawObject(r)
	if err != nil {
		return c, fmt.Errorf(`"range" %w`, err)
	}
	for _, end := range []struct {
		name string
		pos  *jsonc.Position
	}{{"start", &c.start}, {"end", &c.end}} {
		pm, err := rawObject(rm[end.name])
		if err != nil {
			return c, fmt.Errorf(`"range.%s" %w`, end.name, err)
		}
		if end.pos.Line, err = uinteger(pm["line"]); err != nil {
			return c, fmt.Errorf(`"range.%s.line" %w`, end.name, err)
		}
		if end.pos.Character, err = uinteger(pm["character"]); err != nil {
			return c, fmt.Errorf(`"range.%s.character" %w`, end.name, err)
		}
	}
	return c, nil
}

// rawObject decodes a JSON object's members, refusing anything else.
func rawObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if len(raw) == 0 {
		return nil, errors.New("is missing")
	}
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, fmt.Errorf("is not an object: %s", shortJSON(raw))
	}
	return m, nil
}

// uinteger decodes LSP's uinteger: an integer from 0 to 2^31-1.
func uinteger(raw json.RawMessage) (int, error) {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return 0, errors.New("is missing")
	}
	if b[0] != '-' && (b[0] < '0' || b[0] > '9') {
		return 0, fmt.Errorf("is not a number: %s", shortJSON(b))
	}
	f, err := strconv.ParseFloat(string(b), 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("is not a number: %s", shortJSON(b))
	case f != math.Trunc(f):
		return 0, fmt.Errorf("is not an integer: %s", shortJSON(b))
	case f < 0:
		return 0, fmt.Errorf("is negative: %s", shortJSON(b))
	case err != nil || f > math.MaxInt32:
		return 0, fmt.Errorf("is beyond the uinteger range (2^31-1): %s", shortJSON(b))
	}
	return int(f), nil
}

// shortJSON quotes raw JSON in a message, cut to a readable length.
func shortJSON(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// applyEdit replaces the text between two positions. Positions past the end
// of a line or of the text are clamped to it (LineIndex.Offset), and a range
// whose end comes before its start is taken in order.
func applyEdit(text []byte, lines *jsonc.LineIndex, from, to jsonc.Position, newText string) []byte {
	start, end := lines.Offset(from), lines.Offset(to)
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
	// Back to what disk says, read before the lock is taken.
	var onDisk *store.File
	if doc := s.current().Docs[u]; doc != nil && doc.Rel != "" && store.IsModelFile(doc.Rel) {
		if d := s.diskService(); d != nil {
			onDisk = d.ReadFile(doc.Rel)
		}
	}
	s.update(func(old *Snapshot) (*Snapshot, []string) {
		doc := old.Docs[u]
		if doc == nil {
			return old, nil
		}
		snap := old.clone()
		delete(snap.Docs, u)
		if doc.Rel == "" || !store.IsModelFile(doc.Rel) {
			return snap, nil
		}
		if onDisk == nil || onDisk.Rel != doc.Rel {
			snap.WS, _ = snap.WS.Update(nil, []string{doc.Rel})
			return snap, []string{doc.Rel}
		}
		var affected []string
		snap.WS, affected = snap.WS.Update([]*store.File{onDisk}, nil)
		return snap, affected
	})
	return nil
}

func didSave(ctx context.Context, s *Server, params json.RawMessage) error {
	// The buffer is already the overlay and the watcher sees the write —
	// unless the watch limit left its folder unwatched.
	var p protocol.DidSaveTextDocumentParams
	if err := decode(params, &p); err != nil {
		return err
	}
	s.reReadUnwatched(p.TextDocument.URI)
	return nil
}

// setDocument records a buffer's new text and reparses it. warned says
// the user was told about a refused edit of this buffer.
func (s *Server) setDocument(u uri.URI, version int32, text []byte, warned bool) {
	s.update(func(old *Snapshot) (*Snapshot, []string) {
		snap := old.clone()
		path := u.FsPath()
		doc := &Document{URI: u, Path: path, Rel: snap.RelOf(path), Version: version, Text: text, warnedRefusal: warned}
		if doc.Rel != "" && store.IsModelFile(doc.Rel) && filepath.Ext(path) == ".json" {
			doc.File = s.parser.Parse(doc.Rel, text, version)
		}
		if doc.File == nil || doc.File.Doc == nil {
			// No syntax tree (not a SAGA file, over the size limit, binary):
			// the buffer still tracks every edit with its own line index.
			doc.lines = jsonc.NewLineIndex(text)
		}
		snap.Docs[u] = doc
		if doc.File == nil {
			if _, _, ok := isWorktreeRel(doc.Rel); ok {
				return snap, []string{doc.Rel} // live diagnostics of a worktree copy (live_diagnostics.go)
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
	s.dash.filesChanged(snap.Root, affected)
}

// current returns the snapshot in force.
func (s *Server) current() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap
}
