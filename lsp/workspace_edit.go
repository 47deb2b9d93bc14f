package lsp

import (
	"unicode/utf8"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Building WorkspaceEdits for rename and code actions. The server never
// writes files for these features: the client applies the edit, and the
// watcher (or didChange) brings the result back.

// editBuilder collects the changes of one WorkspaceEdit in the order the
// client must apply them.
type editBuilder struct {
	snap *Snapshot
	// documentChanges: emit documentChanges (versioned TextDocumentEdits and
	// resource operations); otherwise plain `changes`.
	documentChanges bool

	ops     []protocol.DocumentChange
	docEdit map[uri.URI]*protocol.TextDocumentEdit // open TextDocumentEdit per URI, until a resource operation
	changes map[uri.URI][]protocol.TextEdit
}

func newEditBuilder(snap *Snapshot, documentChanges bool) *editBuilder {
	return &editBuilder{snap: snap, documentChanges: documentChanges,
		docEdit: map[uri.URI]*protocol.TextDocumentEdit{}, changes: map[uri.URI][]protocol.TextEdit{}}
}

// edit adds text edits to the file at rel (non-overlapping, in the
// coordinates of the file's current text).
func (b *editBuilder) edit(rel string, edits ...protocol.TextEdit) {
	if len(edits) == 0 {
		return
	}
	u := b.snap.URIOf(rel)
	if !b.documentChanges {
		b.changes[u] = append(b.changes[u], edits...)
		return
	}
	td := b.docEdit[u]
	if td == nil {
		td = &protocol.TextDocumentEdit{TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{
			TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u},
		}}
		// A version pins the edit to the buffer it was computed from; null
		// means "the file on disk" (the file is not open).
		if v := b.snap.Version(rel); v >= 0 {
			td.TextDocument.Version = &v
		}
		b.docEdit[u] = td
		b.ops = append(b.ops, td)
	}
	for i := range edits {
		td.Edits = append(td.Edits, &edits[i])
	}
}

// createFile adds a CreateFile of rel followed by the insertion of its
// content. It needs documentChanges and resource create support; the
// creation fails on the client when the file already exists.
func (b *editBuilder) createFile(rel string, content []byte) {
	u := b.snap.URIOf(rel)
	b.ops = append(b.ops, &protocol.CreateFile{
		ResourceOperation: protocol.ResourceOperation{Kind: "create"},
		Kind:              "create",
		URI:               u,
	})
	b.ops = append(b.ops, &protocol.TextDocumentEdit{
		TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}},
		Edits:        []protocol.TextDocumentEditElement{&protocol.TextEdit{NewText: string(content)}},
	})
	delete(b.docEdit, u)
}

// renameFile adds a RenameFile; text edits to oldRel must come before it.
func (b *editBuilder) renameFile(oldRel, newRel string) {
	oldURI, newURI := b.snap.URIOf(oldRel), b.snap.URIOf(newRel)
	b.ops = append(b.ops, &protocol.RenameFile{
		ResourceOperation: protocol.ResourceOperation{Kind: "rename"},
		Kind:              "rename",
		OldURI:            oldURI,
		NewURI:            newURI,
	})
	delete(b.docEdit, oldURI)
	delete(b.docEdit, newURI)
}

// empty tells whether nothing was added.

func (b *editBuilder) build() *protocol.WorkspaceEdit {
	if !b.documentChanges {
		return &protocol.WorkspaceEdit{Changes: b.changes}
	}
	return &protocol.WorkspaceEdit{DocumentChanges: b.ops}
}

// replaceEdit replaces the byte span [start, end) of f.
func replaceEdit(f *store.File, start, end int, text string) protocol.TextEdit {
	return protocol.TextEdit{Range: spanRange(f, start, end), NewText: text}
}

// diffEdit turns a whole new text of f into one text edit covering only
// the bytes that differ, so the client keeps cursors, folds and undo for
// the rest. The span is widened to whole runes and whole line breaks.
func diffEdit(f *store.File, newSrc []byte) protocol.TextEdit {
	old := f.Src
	prefix := 0
	for prefix < len(old) && prefix < len(newSrc) && old[prefix] == newSrc[prefix] {
		prefix++
	}
	suffix := 0
	for suffix < len(old)-prefix && suffix < len(newSrc)-prefix && old[len(old)-1-suffix] == newSrc[len(newSrc)-1-suffix] {
		suffix++
	}
	start, end := prefix, len(old)-suffix
	for start > 0 && start < len(old) && (!utf8.RuneStart(old[start]) || (old[start] == '\n' && old[start-1] == '\r')) {
		start--
	}
	for end < len(old) && end > 0 && (!utf8.RuneStart(old[end]) || (old[end] == '\n' && old[end-1] == '\r')) {
		end++
	}
	newEnd := len(newSrc) - (len(old) - end)
	return replaceEdit(f, start, end, string(newSrc[start:newEnd]))
}

// spanEdits converts spans of f to text edits.
func spanEdits(f *store.File, spans []jsonc.Edit) []protocol.TextEdit {
	out := make([]protocol.TextEdit, len(spans))
	for i, sp := range spans {
		out[i] = replaceEdit(f, sp.Start, sp.End, sp.Text)
	}
	return out
}

// keepsSyntax tells whether applying spans to f leaves no more JSON syntax
// errors than it has: a fix must never break the file.
func keepsSyntax(f *store.File, spans []jsonc.Edit) bool {
	after := jsonc.Parse(jsonc.Apply(f.Src, spans...))
	return len(after.Errors) <= len(f.Doc.Errors)
}

// nodeChain returns the chain of nodes from root to the node spanning
// exactly [start, end) (the last element), or nil.
func nodeChain(root *jsonc.Node, start, end int) []*jsonc.Node {
	if root == nil || start < root.Start || end > root.End {
		return nil
	}
	if root.Start == start && root.End == end {
		return []*jsonc.Node{root}
	}
	var kids []*jsonc.Node
	switch root.Kind {
	case jsonc.Object:
		for _, m := range root.Members {
			if m.Value != nil {
				kids = append(kids, m.Value)
			}
		}
	case jsonc.Array:
		kids = root.Elems
	}
	for _, k := range kids {
		if k == nil || start < k.Start || end > k.End {
			continue
		}
		if p := nodeChain(k, start, end); p != nil {
			return append([]*jsonc.Node{root}, p...)
		}
	}
	return nil
}

// memberWithKey finds the member of an object in the tree whose key spans
// [start, end), with its object.
func memberWithKey(root *jsonc.Node, start, end int) (*jsonc.Node, *jsonc.Member) {
	if root == nil || start < root.Start || end > root.End {
		return nil, nil
	}
	switch root.Kind {
	case jsonc.Object:
		for i := range root.Members {
			m := &root.Members[i]
			if m.Key.Start == start && m.Key.End == end {
				return root, m
			}
			if m.Value != nil {
				if o, mm := memberWithKey(m.Value, start, end); mm != nil {
					return o, mm
				}
			}
		}
	case jsonc.Array:
		for _, e := range root.Elems {
			if o, mm := memberWithKey(e, start, end); mm != nil {
				return o, mm
			}
		}
	}
	return nil, nil
}
