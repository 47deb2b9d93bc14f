package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/protocol"
)

// textDocument/definition: a blockedBy entry goes to the task file, an epic
// child (or a child's blockedBy entry) to the story's story.json, a story's
// `epic` value to the epic file (either dialect). The location is the target
// file's `id` value, or the file start when it has none. An unknown target
// gives null, never an error.

func definition(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error) {
	var p protocol.DefinitionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	locs := snap.definitionsOf(snap.targetAt(p.TextDocument.URI, p.Position))
	switch len(locs) {
	case 0:
		return nil, nil
	case 1:
		return &locs[0], nil
	}
	return locs, nil
}

// definitions returns where the target is defined: one location, or several
// when an epic is (wrongly) defined in both dialects.
func (s *Snapshot) definitionsOf(t target) []protocol.Location {
	switch t.kind {
	case targetTaskRef:
		if t.story == nil {
			return nil
		}
		if task := t.story.Task(t.name); task != nil && task.File != nil {
			return []protocol.Location{s.fileLocation(task.File)}
		}
	case targetChild, targetChildRef:
		if st := s.WS.Story(t.name); st != nil && st.File != nil {
			return []protocol.Location{s.fileLocation(st.File)}
		}
	case targetStoryEpic:
		var out []protocol.Location
		for _, f := range s.WS.EpicDefinitions(t.name) {
			out = append(out, s.fileLocation(f))
		}
		if len(out) == 0 {
			if e := s.WS.Epic(t.name); e != nil && e.File != nil {
				out = append(out, s.fileLocation(e.File))
			}
		}
		return out
	}
	return nil
}
