package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/protocol"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Symbol kinds, shared by document and workspace symbols so an item looks
// the same in the outline and in "Go to Symbol in Workspace":
//
//   - an epic is a Module (it groups stories),
//   - a story is a Class (it groups tasks; epic children name stories, so
//     they are Classes too),
//   - a task is a Function (a unit of work a worker runs),
//   - a blockedBy entry is a Key (a reference to a sibling by id),
//   - a story property shown in the outline (title, status, epic) is a
//     Property.
const (
	symbolKindEpic     = protocol.SymbolKindModule
	symbolKindStory    = protocol.SymbolKindClass
	symbolKindTask     = protocol.SymbolKindFunction
	symbolKindRef      = protocol.SymbolKindKey
	symbolKindProperty = protocol.SymbolKindProperty
)

// storyOutlineProperties are the story.json members listed under the story.
var storyOutlineProperties = []string{"title", "status", "epic"}

// documentSymbol answers textDocument/documentSymbol: the task, story or
// epic a file defines, with its references (blockedBy entries, epic
// children) or main properties as children. Clients announcing
// hierarchicalDocumentSymbolSupport get DocumentSymbol[]; others get the
// same tree flattened to SymbolInformation[] with containerName set.
func documentSymbol(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error) {
	var p protocol.DocumentSymbolParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	hierarchical := s.client.hierarchicalSymbols
	s.mu.Unlock()

	u := p.TextDocument.URI
	syms := documentSymbolsOf(snap, snap.FileAt(u))
	if hierarchical {
		if syms == nil {
			syms = []protocol.DocumentSymbol{}
		}
		return syms, nil
	}
	flat := []protocol.SymbolInformation{}
	var walk func(list []protocol.DocumentSymbol, container string)
	walk = func(list []protocol.DocumentSymbol, container string) {
		for _, d := range list {
			si := protocol.SymbolInformation{
				BaseSymbolInformation: protocol.BaseSymbolInformation{Name: d.Name, Kind: d.Kind},
				Location:              protocol.Location{URI: u, Range: d.Range},
			}
			if container != "" {
				si.ContainerName = new(container)
			}
			flat = append(flat, si)
			walk(d.Children, d.Name)
		}
	}
	walk(syms, "")
	return flat, nil
}

// documentSymbolsOf builds the symbol tree of one parsed file (nil when the file
// is not a task, story or epic, or has no top-level object).
func documentSymbolsOf(snap *Snapshot, f *store.File) []protocol.DocumentSymbol {
	root := f.Root()
	if root == nil {
		return nil
	}
	switch {
	case f.Kind == store.KindTask && f.Task != nil:
		return []protocol.DocumentSymbol{taskDocumentSymbol(snap, f, root)}
	case f.Kind == store.KindStory && f.Story != nil:
		return []protocol.DocumentSymbol{storyDocumentSymbol(f, root)}
	case f.Kind == store.KindEpic && f.Epic != nil:
		return []protocol.DocumentSymbol{epicDocumentSymbol(snap, f, root)}
	}
	return nil
}

// taskDocumentSymbol: name = the task's id, detail = "subject · status", one Key
// child per blockedBy entry (detail: the referenced task's subject and
// status, or "no such task").
func taskDocumentSymbol(snap *Snapshot, f *store.File, root *jsonc.Node) protocol.DocumentSymbol {
	t := f.Task
	sym := symbolOfObject(f, root, symbolName(t.IDValue, f.Name), symbolKindTask, symbolDetail(t.Subject, t.Status))
	story := snap.WS.StoryOf(f)
	for _, r := range t.BlockedBy {
		if r.Node == nil {
			continue
		}
		detail := "no such task"
		if story != nil {
			if b := story.Task(r.ID); b != nil {
				detail = symbolDetail(b.Subject, symbolStatus(b.Status))
			}
		}
		sym.Children = append(sym.Children, symbolOfNode(f, r.Node, r.Node, symbolName(r.ID, `""`), symbolKindRef, detail))
	}
	return sym
}

// storyDocumentSymbol: name = the story's id, detail = its title, one Property
// child per present member of storyOutlineProperties.
func storyDocumentSymbol(f *store.File, root *jsonc.Node) protocol.DocumentSymbol {
	st := f.Story
	sym := symbolOfObject(f, root, symbolName(st.IDValue, f.Name), symbolKindStory, st.Title)
	for _, key := range storyOutlineProperties {
		m := root.Member(key)
		if m == nil {
			continue
		}
		end, detail := m.Key.End(), ""
		if m.Value != nil {
			end = m.Value.End()
			detail = symbolValueText(m.Value)
		}
		sym.Children = append(sym.Children, protocol.DocumentSymbol{
			Name:           key,
			Detail:         symbolDetailPtr(detail),
			Kind:           symbolKindProperty,
			Range:          spanRange(f, m.Key.Start(), end),
			SelectionRange: spanRange(f, m.Key.Start(), m.Key.End()),
		})
	}
	return sym
}

// epicDocumentSymbol: name = the epic's id, detail = its title, one Class child per
// children[] entry (name = story id, detail = that story's status or "no
// such story"), each with its blockedBy entries as Key children.
func epicDocumentSymbol(snap *Snapshot, f *store.File, root *jsonc.Node) protocol.DocumentSymbol {
	e := f.Epic
	sym := symbolOfObject(f, root, symbolName(e.IDValue, f.Name), symbolKindEpic, e.Title)
	for _, c := range e.Children {
		if c.Node == nil {
			continue
		}
		outer := c.Object
		if outer == nil {
			outer = c.Node
		}
		child := symbolOfNode(f, outer, c.Node, symbolName(c.ID, `""`), symbolKindStory, symbolStoryStatus(snap.WS, c.ID))
		for _, r := range c.BlockedBy {
			if r.Node == nil {
				continue
			}
			child.Children = append(child.Children, symbolOfNode(f, r.Node, r.Node, symbolName(r.ID, `""`), symbolKindRef, symbolStoryStatus(snap.WS, r.ID)))
		}
		sym.Children = append(sym.Children, child)
	}
	return sym
}

// symbolOfObject is the symbol of a whole file: its range is the top-level
// object, its selection the id value (the opening brace when there is no
// id).
func symbolOfObject(f *store.File, root *jsonc.Node, name string, kind protocol.SymbolKind, detail string) protocol.DocumentSymbol {
	sel := spanRange(f, root.Start(), root.Start()+1)
	if id := root.Get("id"); id != nil {
		sel = nodeRange(f, id)
	}
	return protocol.DocumentSymbol{
		Name:           name,
		Detail:         symbolDetailPtr(detail),
		Kind:           kind,
		Range:          nodeRange(f, root),
		SelectionRange: sel,
	}
}

func symbolOfNode(f *store.File, outer, sel *jsonc.Node, name string, kind protocol.SymbolKind, detail string) protocol.DocumentSymbol {
	return protocol.DocumentSymbol{
		Name:           name,
		Detail:         symbolDetailPtr(detail),
		Kind:           kind,
		Range:          nodeRange(f, outer),
		SelectionRange: nodeRange(f, sel),
	}
}

// symbolStoryStatus is a story's effective status, or "no such story".
func symbolStoryStatus(ws *store.Workspace, id string) string {
	if st := ws.Story(id); st != nil {
		return st.EffectiveStatus()
	}
	return "no such story"
}

// symbolName returns the first non-blank candidate: clients reject symbols
// with an empty or blank name.
func symbolName(candidates ...string) string {
	for _, c := range candidates {
		if !symbolBlank(c) {
			return c
		}
	}
	return "?"
}

func symbolBlank(s string) bool {
	for _, r := range s {
		if r != ' ' && r != '\t' && r != '\n' && r != '\r' {
			return false
		}
	}
	return true
}

// symbolDetail joins the non-empty parts with " · ".
func symbolDetail(parts ...string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out != "" {
			out += " · "
		}
		out += p
	}
	return out
}

func symbolDetailPtr(d string) *string {
	if d == "" {
		return nil
	}
	return new(d)
}

func symbolStatus(status string) string {
	if status == "" {
		return store.StatusPending
	}
	return status
}

// symbolValueText shows a property value in one line: strings as they are,
// literals as written, containers as {…} / […].
func symbolValueText(n *jsonc.Node) string {
	switch n.Kind {
	case jsonc.String:
		return n.Str()
	case jsonc.Number, jsonc.Bool, jsonc.Null:
		return n.Raw()
	case jsonc.Object:
		return "{…}"
	case jsonc.Array:
		return "[…]"
	}
	return ""
}
