package lsp

// protected-file-changed (docs/worker.md#protected-files): the LSP-only
// diagnostic of a story whose last run found that it changed protected
// files it may not (its PR stays a draft). It sits on each of the story's
// task files — on its "checks" key, else its "id" — in the main copy and
// the worktree copy, naming the files and what to do.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/runs/watch"
	"github.com/saga-ai/saga-lsp/store"
)

// protectedChanged is the protected-file-changed diagnostic of a task file,
// if any.
func protectedChanged(st *watch.State, rel string, f *store.File, story string) []store.Diagnostic {
	obj := f.Root()
	ss := st.Story(story)
	if f.Kind != store.KindTask || obj == nil || ss == nil || ss.Run == nil || len(ss.Run.Protected) == 0 {
		return nil
	}
	m := obj.Member("checks")
	if m == nil {
		m = obj.Member("id")
	}
	if m == nil {
		return nil
	}
	files := make([]string, len(ss.Run.Protected))
	for i, p := range ss.Run.Protected {
		files[i] = p.Path + " (" + p.Change + ")"
	}
	msg := fmt.Sprintf("story %s changed protected files: %s. Their versions at the run's reference commit are what its checks count, and its pull request stays a draft: revert them, or allow it with \"mayChangeTests\" in a task on the base",
		story, strings.Join(files, ", "))
	return []store.Diagnostic{liveDiagnostic(rel, f, m.Key.Start(), m.Key.End(), store.CodeProtectedFileChanged, msg)}
}

// protectedFiles lists the task files, in both copies, of the stories whose
// last run found protected files changed.
func protectedFiles(snap *Snapshot, st *watch.State) map[string]*store.File {
	out := map[string]*store.File{}
	for _, id := range slices.Sorted(maps.Keys(st.Stories)) {
		ss := st.Stories[id]
		if ss.Run == nil || len(ss.Run.Protected) == 0 {
			continue
		}
		if s := snap.WS.Copies(id).Main; s != nil {
			for _, t := range s.Tasks {
				if t.File != nil {
					out[t.File.Rel] = t.File
				}
			}
		}
		if ss.Worktree != nil {
			for rel, f := range ss.Worktree.Files {
				if f != nil && f.Kind == store.KindTask {
					out[rel] = f
				}
			}
		}
	}
	return out
}
