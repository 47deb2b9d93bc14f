package lsp

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"

	"go.lsp.dev/protocol"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// textDocument/references:
//   - a task (its id value, or a blockedBy entry naming it): every blockedBy
//     entry of the story naming it; the declaration is the task's id value.
//   - a story (story.json id, an epic child id or a child's blockedBy entry):
//     every epic children[].id and children[].blockedBy entry naming it, in
//     every epic file; the declaration is story.json's id value.
//   - an epic (its id value, or a story's `epic` value): the `epic` field of
//     every story naming it; the declaration is the epic file's id value
//     (each file, when both dialects define it).
//
// Sorted by file, then position. Null when the cursor is on none of these.

func references(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error) {
	var p protocol.ReferenceParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	t := snap.targetAt(p.TextDocument.URI, p.Position)
	refs := &navRefs{snap: snap}
	decl := p.Context.IncludeDeclaration
	switch t.kind {
	case targetTaskID, targetTaskRef:
		st := t.story
		if st == nil {
			return nil, nil
		}
		refs.taskRefs(st, t.name, decl)
	case targetStoryID, targetChild, targetChildRef:
		refs.storyRefs(t.name, decl)
	case targetEpicID, targetStoryEpic:
		refs.epicRefs(t.name, decl)
	default:
		return nil, nil
	}
	return refs.sorted(), nil
}

// navRefs gathers locations without duplicates.
type navRefs struct {
	snap *Snapshot
	locs []navRefLoc
}

// navRefLoc is a location with its file's rel path, the sort key.
type navRefLoc struct {
	rel string
	loc protocol.Location
}

func (c *navRefs) add(f *store.File, n *jsonc.Node) {
	if f == nil || f.Doc == nil || n == nil {
		return
	}
	c.locs = append(c.locs, navRefLoc{f.Rel, protocol.Location{URI: c.snap.URIOf(f.Rel), Range: nodeRange(f, n)}})
}

// addID adds a file's top-level id value (the declaration of what it defines).
func (c *navRefs) addID(f *store.File) {
	if obj := f.Root(); obj != nil {
		c.add(f, obj.Get("id"))
	}
}

func (c *navRefs) taskRefs(st *store.Story, id string, decl bool) {
	for _, task := range st.Tasks {
		if decl && task.ID == id {
			c.addID(task.File)
		}
		for _, r := range task.BlockedBy {
			if r.ID == id {
				c.add(task.File, r.Node)
			}
		}
	}
}

func (c *navRefs) storyRefs(id string, decl bool) {
	if st := c.snap.WS.Story(id); decl && st != nil && st.File != nil {
		c.addID(st.File)
	}
	for _, eid := range c.snap.WS.SortedEpicIDs() {
		for _, f := range c.snap.WS.EpicDefinitions(eid) {
			if f.Epic == nil {
				continue
			}
			for _, ch := range f.Epic.Children {
				if ch.ID == id {
					c.add(f, ch.Node)
				}
				for _, r := range ch.BlockedBy {
					if r.ID == id {
						c.add(f, r.Node)
					}
				}
			}
		}
	}
}

func (c *navRefs) epicRefs(id string, decl bool) {
	if decl {
		for _, f := range c.snap.WS.EpicDefinitions(id) {
			c.addID(f)
		}
	}
	for _, sid := range c.snap.WS.SortedStoryIDs() {
		st := c.snap.WS.Story(sid)
		if st.File != nil && st.Epic == id {
			c.add(st.File, st.EpicNode)
		}
	}
}

// sorted returns the locations by file, then position, without duplicates;
// never nil, so "no references" is [] rather than null.
func (c *navRefs) sorted() []protocol.Location {
	locs := slices.Clone(c.locs)
	slices.SortFunc(locs, func(a, b navRefLoc) int {
		return cmp.Or(
			cmp.Compare(a.rel, b.rel),
			cmp.Compare(a.loc.Range.Start.Line, b.loc.Range.Start.Line),
			cmp.Compare(a.loc.Range.Start.Character, b.loc.Range.Start.Character),
		)
	})
	out := make([]protocol.Location, 0, len(locs))
	for i, l := range locs {
		if i > 0 && l.loc == locs[i-1].loc {
			continue
		}
		out = append(out, l.loc)
	}
	return out
}
