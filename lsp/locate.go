package lsp

import (
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// targetKind says what a position in a .saga file points at.
type targetKind int

const (
	targetNone        targetKind = iota
	targetTaskRef                // a task's blockedBy entry → a sibling task (Name)
	targetTaskID                 // a task's id value → the task itself
	targetStoryID                // story.json id value → the story
	targetStoryEpic              // story.json epic value → an epic (Name)
	targetEpicID                 // epic id value → the epic
	targetChild                  // epic children[].id → a story (Name)
	targetChildRef               // epic children[].blockedBy entry → a sibling story (Name)
	targetPropertyKey            // a property name (Key)
	targetValue                  // some other value (Key: its property)
)

// target is the thing under the cursor, resolved against the snapshot.
type target struct {
	kind   targetKind
	file   *store.File
	node   *jsonc.Node    // the string/value node (or key node for targetPropertyKey)
	loc    jsonc.Location // the full location from the parser
	name   string         // the referenced task/story/epic id
	key    string         // property name for targetPropertyKey/targetValue
	story  *store.Story   // the story the file belongs to (task and story files)
	epic   *store.Epic    // the epic the file defines (epic files)
	offset int
}

// targetAt resolves a document position.
func (s *Snapshot) targetAt(u uri.URI, pos protocol.Position) target {
	f := s.FileAt(u)
	if f == nil || f.Doc == nil {
		return target{}
	}
	off := f.Doc.Lines().Offset(jsonc.Position{Line: int(pos.Line), Character: int(pos.Character)})
	loc := f.Doc.LocationAt(off)
	t := target{file: f, loc: loc, node: loc.Node, offset: off}
	switch f.Kind {
	case store.KindTask, store.KindStory:
		t.story = s.WS.StoryOf(f)
	case store.KindEpic:
		t.epic = s.WS.Epic(f.Owner)
		if t.epic == nil || t.epic.File != f {
			t.epic = f.Epic
		}
	}
	path := loc.Path
	if len(path) == 0 || loc.Node == nil {
		return t
	}
	last := path[len(path)-1]
	if last.IsKey {
		t.kind, t.key = targetPropertyKey, last.Key
		return t
	}
	str := loc.Node.Kind == jsonc.String
	t.kind, t.key = targetValue, propertyOf(path)
	switch {
	case f.Kind == store.KindTask && len(path) == 2 && path[0].Key == "blockedBy" && str:
		t.kind, t.name = targetTaskRef, loc.Node.Str()
	case f.Kind == store.KindTask && len(path) == 1 && path[0].Key == "id" && str:
		t.kind, t.name = targetTaskID, f.Name
	case f.Kind == store.KindStory && len(path) == 1 && path[0].Key == "id" && str:
		t.kind, t.name = targetStoryID, f.Owner
	case f.Kind == store.KindStory && len(path) == 1 && path[0].Key == "epic" && str:
		t.kind, t.name = targetStoryEpic, loc.Node.Str()
	case f.Kind == store.KindEpic && len(path) == 1 && path[0].Key == "id" && str:
		t.kind, t.name = targetEpicID, f.Owner
	case f.Kind == store.KindEpic && len(path) == 3 && path[0].Key == "children" && path[2].Key == "id" && str:
		t.kind, t.name = targetChild, loc.Node.Str()
	case f.Kind == store.KindEpic && len(path) == 4 && path[0].Key == "children" && path[2].Key == "blockedBy" && str:
		t.kind, t.name = targetChildRef, loc.Node.Str()
	}
	return t
}

// propertyOf returns the nearest object key on a path ("blockedBy" for
// blockedBy/0).
func propertyOf(path []jsonc.PathElem) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Index < 0 && path[i].Key != "" {
			return path[i].Key
		}
	}
	return ""
}

// nodeRange converts a node's span in f to an LSP range.
func nodeRange(f *store.File, n *jsonc.Node) protocol.Range {
	return spanRange(f, n.Start(), n.End())
}

func spanRange(f *store.File, start, end int) protocol.Range {
	return toRange(store.SpanRange(f.Doc, start, end))
}

// fileLocation points at the start of a file (for definitions of whole
// files), or at its id value when it has one.
func (s *Snapshot) fileLocation(f *store.File) protocol.Location {
	r := protocol.Range{}
	if obj := f.Root(); obj != nil {
		if id := obj.Get("id"); id != nil {
			r = nodeRange(f, id)
		}
	}
	return protocol.Location{URI: s.URIOf(f.Rel), Range: r}
}
