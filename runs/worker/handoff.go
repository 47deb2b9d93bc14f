package worker

// The handoff between the stories of an epic (docs/commands.md#epic-runs-run--follow--status--stop-epic): what the
// story builds on goes into its prompt (with the decisions its blockers'
// journals record) and into its PR body (prbody.go).

import (
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// loadHandoff reads, from the worktree (its branch holds the blockers'
// work), what the story builds on; a blocker's PR comes from its run record
// when its story.json has none.
func (r *run) loadHandoff() {
	ws, err := r.p.Load(r.wt)
	if err != nil {
		r.j.Warn(runs.StepContext, "read the worktree's .saga: %v; the prompt names no blockers", err)
		return
	}
	if e := ws.EpicOf(r.o.Story); e != nil {
		r.epic = e.ID
	}
	r.handoffs = store.Handoffs(ws, r.o.Story)
	for i, h := range r.handoffs {
		if h.PR == "" {
			if rec, ok := runs.ReadRecord(r.root, h.Story); ok {
				r.handoffs[i].PR = rec.PR
			}
		}
	}
}

// handoffPrompt is the prompt's part on what the story builds on; empty
// for a story without blockers.
func handoffPrompt(hs []store.Handoff) string {
	if len(hs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nThis story builds on these stories of its epic; their work is already on this branch — build on it, do not redo it, and honour their decisions:\n")
	for _, h := range hs {
		fmt.Fprintf(&b, "- %s%s%s\n", h.Story, quoted(h.Title), paren(h.PR))
		for _, d := range h.Decisions {
			fmt.Fprintf(&b, "  - decision: %s\n", d)
		}
	}
	return b.String()
}

func quoted(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf(" %q", s)
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
