package lsp

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
	"github.com/saga-ai/saga-lsp/store/plan"
)

// codeLens answers textDocument/codeLens with the static, informational
// lenses (the ▶ Run / ■ Stop lenses come with the worker):
//
//   - story.json, on the id line: "3/7 tasks done · status: in_progress"
//     (the story's effective status, as its tasks show it);
//   - a task file, on the id line: "status: pending · wave 2/4" (the wave
//     from the story's plan), "status: completed", or "… · blocked (cycle)"
//     for a task on a dependency cycle and "… · blocked (behind a cycle)"
//     for one waiting on a cycle;
//   - an epic, on each children[] entry: "in_progress · 3/7 tasks", or
//     "no such story".
//
// Informational lenses carry a Command with an empty command id: VS Code
// renders such a lens as plain, unclickable text (and never tries to run
// it), and other clients show the title too. No command that does not
// exist is ever named.
func codeLens(ctx context.Context, s *Server, snap *Snapshot, params json.RawMessage) (any, error) {
	var p protocol.CodeLensParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	lenses := []protocol.CodeLens{}
	f := snap.FileAt(p.TextDocument.URI)
	root := f.Root()
	if root == nil {
		return lenses, nil
	}
	switch {
	case f.Kind == store.KindStory && f.Story != nil:
		lenses = append(lenses, lensStory(snap, f, root))
	case f.Kind == store.KindTask && f.Task != nil:
		lenses = append(lenses, lensTask(snap, f, root))
	case f.Kind == store.KindEpic && f.Epic != nil:
		lenses = append(lenses, lensEpic(snap, f)...)
	}
	return lenses, nil
}

// lensStory: done/total tasks and the effective status.
func lensStory(snap *Snapshot, f *store.File, root *jsonc.Node) protocol.CodeLens {
	st := snap.WS.Stories[f.Owner]
	if st == nil { // a story.json outside the workspace: its own fields, no tasks
		st = f.Story
	}
	title := fmt.Sprintf("%d/%d tasks done · status: %s", st.Done(), len(st.Tasks), st.EffectiveStatus())
	return lensInfo(lensIDRange(f, root), title)
}

// lensTask: the task's status and its wave in the story's plan.
func lensTask(snap *Snapshot, f *store.File, root *jsonc.Node) protocol.CodeLens {
	t := f.Task
	status := symbolStatus(t.Status)
	title := "status: " + status
	if st := snap.WS.Stories[f.Owner]; st != nil && t.Status != store.StatusCompleted {
		if items, _, _, err := store.PlanItems(snap.WS, st.ID); err == nil {
			title += lensWaveText(plan.Compute(items, 0), t.ID)
		}
	}
	return lensInfo(lensIDRange(f, root), title)
}

// lensWaveText says where a task sits in a plan: " · wave n/m", " ·
// blocked (cycle)" or " · blocked (behind a cycle)"; "" when it is not
// planned (completed).
func lensWaveText(p plan.Plan, id string) string {
	if w := p.WaveOf[id]; w > 0 {
		return fmt.Sprintf(" · wave %d/%d", w, p.WaveCount)
	}
	by := make(map[string][]string, len(p.Blocked))
	for _, b := range p.Blocked {
		by[b.ID] = b.By
	}
	if _, stuck := by[id]; !stuck {
		return ""
	}
	if lensOnCycle(by, id) {
		return " · blocked (cycle)"
	}
	return " · blocked (behind a cycle)"
}

// lensOnCycle reports whether id can reach itself through the stuck
// blockers of the plan: it is on a cycle, not merely behind one. (Plan
// reports one cycle path per strongly connected component; a task can be on
// another cycle of the same component.)
func lensOnCycle(by map[string][]string, id string) bool {
	seen := map[string]bool{}
	stack := append([]string(nil), by[id]...)
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if v == id {
			return true
		}
		if seen[v] {
			continue
		}
		seen[v] = true
		stack = append(stack, by[v]...)
	}
	return false
}

// lensEpic: one per children[] entry, with that story's status and
// done/total tasks.
func lensEpic(snap *Snapshot, f *store.File) []protocol.CodeLens {
	var out []protocol.CodeLens
	for _, c := range f.Epic.Children {
		if c.Node == nil {
			continue
		}
		title := "no such story"
		if st := snap.WS.Stories[c.ID]; st != nil {
			title = fmt.Sprintf("%s · %d/%d tasks", st.EffectiveStatus(), st.Done(), len(st.Tasks))
		}
		out = append(out, lensInfo(lensSingleLine(nodeRange(f, c.Node)), title))
	}
	return out
}

// lensIDRange is where a file's lens goes: the id value, else the opening
// brace of the top-level object.
func lensIDRange(f *store.File, root *jsonc.Node) protocol.Range {
	if id := root.Get("id"); id != nil {
		return lensSingleLine(nodeRange(f, id))
	}
	return spanRange(f, root.Start, root.Start+1)
}

// lensSingleLine trims a range to its first line: a lens should span one line
// (an unterminated string can run on).
func lensSingleLine(r protocol.Range) protocol.Range {
	if r.End.Line != r.Start.Line {
		r.End = r.Start
	}
	return r
}

// lensInfo is a lens that only shows text (see codeLens).
func lensInfo(r protocol.Range, title string) protocol.CodeLens {
	return protocol.CodeLens{Range: r, Command: protocol.Command{Title: title, Command: ""}}
}
