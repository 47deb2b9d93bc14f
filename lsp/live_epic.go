package lsp

// story-held (docs/protocol-extensions.md#epic-runs): the LSP-only
// diagnostic on the children[] entry of a story its epic's run holds, with
// what holds it, from the epic's state as the watcher last derived it.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/watch"
	"github.com/saga-ai/saga-lsp/store"
)

// epicDiagnostics is story-held on the child entries of an epic file whose
// epic has a run: a held story, with what holds it.
func epicDiagnostics(st *watch.State, rel string, f *store.File) []store.Diagnostic {
	e := st.Epic(f.Owner)
	if f.Epic == nil || e == nil || e.Status == nil || e.Status.Session == "" {
		return nil
	}
	by := make(map[string]readmodel.EpicStory, len(e.Status.Stories))
	for _, s := range e.Status.Stories {
		by[s.ID] = s
	}
	var out []store.Diagnostic
	for _, c := range f.Epic.Children {
		s, ok := by[c.ID]
		if !ok || s.State != readmodel.EpicHeld || c.Node == nil {
			continue
		}
		out = append(out, liveDiagnostic(rel, f, c.Node.Start(), c.Node.End(), store.CodeStoryHeld, heldMessage(e.ID, s, by)))
	}
	return out
}

// epicFileDiagnostics is every epic file's story-held diagnostics.
func epicFileDiagnostics(snap *Snapshot, st *watch.State) []store.Diagnostic {
	var out []store.Diagnostic
	for _, id := range slices.Sorted(maps.Keys(st.Epics)) {
		for _, f := range snap.WS.EpicDefinitions(id) {
			out = append(out, epicDiagnostics(st, f.Rel, f)...)
		}
	}
	return out
}

// heldMessage says what holds a story and what to do.
func heldMessage(epic string, s readmodel.EpicStory, by map[string]readmodel.EpicStory) string {
	if len(s.Conflicts) > 0 {
		return fmt.Sprintf("story %s is held: the branches of its blockers %s conflict in %s — merge them by hand, then run epic %s again",
			s.ID, strings.Join(s.HeldBy, ", "), strings.Join(s.Conflicts, ", "), epic)
	}
	what := func(b string) string {
		switch by[b].State {
		case runs.StatusFailed:
			return "failed"
		case runs.StatusBlocked:
			return "is blocked"
		case runs.StatusTimeout:
			return "timed out"
		case runs.StatusStopped:
			return "was stopped"
		case readmodel.EpicHeld:
			return "is held"
		}
		return by[b].State
	}
	if len(s.HeldBy) == 1 {
		b := s.HeldBy[0]
		return fmt.Sprintf("story %s is held: its blocker %s %s — see why (`saga-lsp status %s`, its output), fix it, then run epic %s again",
			s.ID, b, what(b), b, epic)
	}
	parts := make([]string, len(s.HeldBy))
	for i, b := range s.HeldBy {
		parts[i] = fmt.Sprintf("%s (%s)", b, what(b))
	}
	return fmt.Sprintf("story %s is held: its blockers %s did not complete — see why (`saga-lsp status <story>`, their output), fix them, then run epic %s again",
		s.ID, strings.Join(parts, ", "), epic)
}
