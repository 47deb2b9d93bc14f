package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// textDocument/prepareRename and textDocument/rename: a task id, from its
// `id` value or from any blockedBy entry naming it. The rename edits the
// task's id, every blockedBy entry of the story naming it, and renames
// <old>.json to <new>.json (when the client can rename files).

// renameRequestFailed is LSP's RequestFailed: the request was valid but
// cannot be carried out (not a renameable thing, a bad or taken name).
const renameRequestFailed = -32803

func renameFailed(format string, args ...any) error {
	return &rpcError{code: renameRequestFailed, msg: fmt.Sprintf(format, args...)}
}

// renameSubject is the task a rename position resolves to.
type renameSubject struct {
	story *store.Story
	task  *store.Task
	file  *store.File // the file the position is in
	node  *jsonc.Node // the string under the cursor
}

func renameSubjectAt(snap *Snapshot, u uri.URI, pos protocol.Position) (renameSubject, error) {
	t := snap.targetAt(u, pos)
	var rs renameSubject
	switch t.kind {
	case targetTaskID, targetTaskRef:
	default:
		return rs, renameFailed("only task ids can be renamed: put the cursor on a task's \"id\" value or on a \"blockedBy\" entry")
	}
	if t.story == nil {
		return rs, renameFailed("this task is not part of a loaded story yet; try again once the workspace has loaded")
	}
	task := t.story.Task(t.name)
	if task == nil {
		return rs, renameFailed("no task %q in story %q to rename", t.name, t.story.ID)
	}
	return renameSubject{story: t.story, task: task, file: t.file, node: t.node}, nil
}

// quotedSpan is the span of a string node's text inside its quotes.
func quotedSpan(n *jsonc.Node) (int, int) {
	start, end := n.Start()+1, n.End()
	if n.Closed {
		end--
	}
	return start, max(start, end)
}

func prepareRename(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error) {
	var p protocol.PrepareRenameParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	rs, err := renameSubjectAt(snap, p.TextDocument.URI, p.Position)
	if err != nil {
		return nil, err
	}
	start, end := quotedSpan(rs.node)
	return &protocol.PrepareRenamePlaceholder{Range: spanRange(rs.file, start, end), Placeholder: rs.task.ID}, nil
}

func rename(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error) {
	var p protocol.RenameParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	rs, err := renameSubjectAt(snap, p.TextDocument.URI, p.Position)
	if err != nil {
		return nil, err
	}
	oldID, newID := rs.task.ID, p.NewName
	if !store.ValidID(newID) {
		hint := store.Slugify(newID, false)
		if hint == "" {
			hint = "write-tests"
		}
		return nil, renameFailed("%q is not a valid task id: use lowercase letters, digits and single dashes (e.g. %s); \"--\" is reserved for the story hierarchy", newID, hint)
	}
	if err := store.CheckNameLength("task id", newID); err != nil {
		return nil, renameFailed("%v", err)
	}
	if newID == oldID {
		return &protocol.WorkspaceEdit{}, nil
	}
	if err := renameTargetFree(snap, rs.story, newID); err != nil {
		return nil, err
	}
	s.mu.Lock()
	ci := s.client
	s.mu.Unlock()
	renameFiles := ci.documentChanges && ci.resourceRename
	b := newEditBuilder(snap, ci.documentChanges)
	oldRel := rs.task.File.Rel
	for _, f := range rs.story.StoryFiles() {
		if f.Kind != store.KindTask || f.Doc == nil {
			continue
		}
		edits := renameEdits(f, oldID, newID, f.Name == oldID)
		b.edit(f.Rel, edits...)
	}
	if renameFiles {
		// After the text edits, which address the old URI.
		b.renameFile(oldRel, store.TaskFileRel(rs.story.ID, newID))
	}
	return b.build(), nil
}

// renameTargetFree refuses a new id whose file would land on one that
// exists — a task, a file the snapshot holds, anything on disk — or whose
// name the format reserves (store.ReservedTaskID): renaming a task to
// "story" would otherwise move its file over story.json, and a client
// that honours no options would destroy the story.
func renameTargetFree(snap *Snapshot, story *store.Story, newID string) error {
	if other := story.Task(newID); other != nil {
		return renameFailed("story %q already has a task %q (%s); pick another name", story.ID, newID, other.File.Rel)
	}
	if store.ReservedTaskID(newID) {
		return renameFailed("%s", store.ReservedTaskIDProblem("task id", newID))
	}
	rel := store.TaskFileRel(story.ID, newID)
	_, err := os.Lstat(filepath.Join(snap.Root, filepath.FromSlash(rel)))
	if snap.WS.File(rel) != nil || snap.DocByRel(rel) != nil || !errors.Is(err, fs.ErrNotExist) {
		return renameFailed("%s already exists; a rename never replaces a file: pick another name, or move that file away first", rel)
	}
	return nil
}

// renameEdits replaces, inside the quotes, every blockedBy entry of f naming
// oldID and, for the renamed task's own file, its id value.
func renameEdits(f *store.File, oldID, newID string, own bool) []protocol.TextEdit {
	var out []protocol.TextEdit
	replace := func(n *jsonc.Node) {
		st, en := quotedSpan(n)
		out = append(out, replaceEdit(f, st, en, newID))
	}
	obj := f.Root()
	if own {
		if n := obj.Get("id"); n != nil && n.Kind == jsonc.String {
			replace(n)
		}
	}
	if f.Task != nil {
		for _, r := range f.Task.BlockedBy {
			if r.ID == oldID && r.Node != nil {
				replace(r.Node)
			}
		}
	}
	return out
}
