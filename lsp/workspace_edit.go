package lsp

import (
	"sort"
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
		// A create never replaces a file that appeared meanwhile.
		Options: &protocol.CreateFileOptions{Overwrite: new(false), IgnoreIfExists: new(false)},
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
		// Said explicitly: a client must fail the edit rather than
		// replace a file that appeared since the rename was computed.
		Options: &protocol.RenameFileOptions{Overwrite: new(false), IgnoreIfExists: new(false)},
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
// errors than it has: a fix must never break the file. When the edited
// stretch of the innermost container — from the sibling where the first
// span starts to the sibling where the last ends — parses cleanly on its
// own, only that stretch is checked, so offering fixes for thousands of
// diagnostics in one big array costs each fix its neighbourhood, not the
// whole file; otherwise the whole edited file is parsed.
func keepsSyntax(f *store.File, spans []jsonc.Edit) bool {
	if w, ok := editWindowOf(f.Doc, spans); ok {
		if before := w.parse(f.Src[w.lo:w.hi]); len(before.Errors) == 0 {
			local := make([]jsonc.Edit, len(spans))
			for i, sp := range spans {
				local[i] = jsonc.Edit{Start: sp.Start - w.lo, End: sp.End - w.lo, Text: sp.Text}
			}
			after := w.parse(jsonc.Apply(f.Src[w.lo:w.hi], local...))
			for _, m := range after.Root.Members() {
				if w.keysOutside[m.Key.Str()] {
					return false // a duplicate key with a member outside the window
				}
			}
			return len(after.Errors) == 0 && (!w.needsElement || childCount(after.Root) > 0)
		}
	}
	after := jsonc.Parse(jsonc.Apply(f.Src, spans...))
	return len(after.Errors) <= len(f.Doc.Errors)
}

// editWindow is a stretch [lo, hi) of a container's members or elements,
// starting and ending at sibling boundaries (or the brackets).
type editWindow struct {
	lo, hi      int
	open, close byte // the container's brackets, to parse the stretch alone
	// needsElement: siblings remain outside the window, so the edited
	// stretch must keep at least one element between their separators.
	needsElement bool
	// keysOutside are an object's member keys outside the window: a key the
	// edit writes must not repeat one of them.
	keysOutside map[string]bool
}

func (w editWindow) parse(stretch []byte) *jsonc.Document {
	b := make([]byte, 0, len(stretch)+2)
	b = append(b, w.open)
	b = append(b, stretch...)
	return jsonc.Parse(append(b, w.close))
}

// editWindowOf finds the window of spans, or ok false when they do not
// lie inside one container.
func editWindowOf(doc *jsonc.Document, spans []jsonc.Edit) (editWindow, bool) {
	if len(spans) == 0 || doc == nil {
		return editWindow{}, false
	}
	lo, hi := spans[0].Start, spans[0].End
	for _, sp := range spans[1:] {
		lo, hi = min(lo, sp.Start), max(hi, sp.End)
	}
	// The innermost container whose inside holds [lo, hi).
	var c *jsonc.Node
	for n := doc.Root; n != nil && (n.Kind == jsonc.Object || n.Kind == jsonc.Array) && n.Start() < lo && hi <= innerEnd(n); n = childHolding(n, lo, hi) {
		c = n
	}
	if c == nil {
		return editWindow{}, false
	}
	w := editWindow{lo: c.Start() + 1, hi: innerEnd(c), open: '[', close: ']'}
	if c.Kind == jsonc.Object {
		w.open, w.close = '{', '}'
	}
	n := childCount(c)
	// The last sibling starting at or before lo, the first ending at or after hi.
	if i := sort.Search(n, func(i int) bool { return siblingSpan(c, i).start > lo }) - 1; i >= 0 {
		w.lo = siblingSpan(c, i).start
		w.needsElement = i > 0
	}
	if j := sort.Search(n, func(j int) bool { return siblingSpan(c, j).end >= hi }); j < n {
		w.hi = siblingSpan(c, j).end
		w.needsElement = w.needsElement || j < n-1
	}
	if c.Kind == jsonc.Object && w.needsElement {
		w.keysOutside = map[string]bool{}
		for _, m := range c.Members() {
			if m.Key.Start() < w.lo || m.Key.Start() >= w.hi {
				w.keysOutside[m.Key.Str()] = true
			}
		}
	}
	return w, w.lo <= lo && hi <= w.hi
}

// childCount is the number of members or elements of a container.
func childCount(n *jsonc.Node) int {
	if n == nil {
		return 0
	}
	return len(n.Members()) + len(n.Elems())
}

// innerEnd is where a container's inside ends: before its closing bracket.
func innerEnd(n *jsonc.Node) int {
	if n.Closed {
		return n.End() - 1
	}
	return n.End()
}

// siblingSpan is the span of member or element i of a container: a
// member from its key to the end of its value.
func siblingSpan(c *jsonc.Node, i int) struct{ start, end int } {
	if c.Kind == jsonc.Object {
		m := c.Members()[i]
		end := m.Key.End()
		if m.Value != nil {
			end = m.Value.End()
		} else if m.Colon() >= 0 {
			end = m.Colon() + 1
		}
		return struct{ start, end int }{m.Key.Start(), end}
	}
	e := c.Elems()[i]
	return struct{ start, end int }{e.Start(), e.End()}
}

// childHolding returns the member value or element of n whose span holds
// [start, end), or nil. Children are in source order: a binary search, so
// walking down to one of 60,000 entries costs no scan of the others.
func childHolding(n *jsonc.Node, start, end int) *jsonc.Node {
	var k *jsonc.Node
	switch n.Kind {
	case jsonc.Object:
		ms := n.Members()
		i := sort.Search(len(ms), func(i int) bool { return ms[i].Key.Start() > start }) - 1
		if i >= 0 {
			k = ms[i].Value
		}
	case jsonc.Array:
		i := sort.Search(len(n.Elems()), func(i int) bool { return n.Elems()[i].Start() > start }) - 1
		if i >= 0 {
			k = n.Elems()[i]
		}
	}
	if k == nil || start < k.Start() || end > k.End() {
		return nil
	}
	return k
}

// nodeChain returns the chain of nodes from root to the node spanning
// exactly [start, end) (the last element), or nil.
func nodeChain(root *jsonc.Node, start, end int) []*jsonc.Node {
	var chain []*jsonc.Node
	for n := root; n != nil && start >= n.Start() && end <= n.End(); n = childHolding(n, start, end) {
		chain = append(chain, n)
		if n.Start() == start && n.End() == end {
			return chain
		}
	}
	return nil
}

// memberWithKey finds the member of an object in the tree whose key spans
// [start, end), with its object.
func memberWithKey(root *jsonc.Node, start, end int) (*jsonc.Node, *jsonc.Member) {
	for n := root; n != nil && start >= n.Start() && end <= n.End(); n = childHolding(n, start, end) {
		if n.Kind != jsonc.Object {
			continue
		}
		ms := n.Members()
		i := sort.Search(len(ms), func(i int) bool { return ms[i].Key.Start() > start }) - 1
		if i >= 0 && ms[i].Key.Start() == start && ms[i].Key.End() == end {
			return n, &ms[i]
		}
	}
	return nil, nil
}
