package worker

// The handoff between the stories of an epic (design.md §11): what the
// story builds on goes into its prompt (with the decisions its blockers'
// journals record) and, with the epic's graph, into its PR body.

import (
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/plan"
	"github.com/saga-ai/saga-lsp/store/runs"
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

// prBody is the pull request's description: the story's description, what
// it builds on, and the epic's graph with each story's state as this
// branch has it (state is this story's own: running, then completed).
func (r *run) prBody(s *store.Story, state string) string {
	var b strings.Builder
	if s != nil && s.Description != "" {
		b.WriteString(s.Description + "\n\n")
	}
	if len(r.handoffs) > 0 {
		switch {
		case len(r.handoffs) == 1 && r.base == "story/"+r.handoffs[0].Story:
			fmt.Fprintf(&b, "Stacked on `%s`: this branch starts from that story's work.\n\n", r.base)
		case strings.HasPrefix(r.base, "story/"):
			fmt.Fprintf(&b, "Stacked on `%s`. Builds on:\n\n", r.base)
		default:
			b.WriteString("Builds on (their work is merged into this branch):\n\n")
		}
		for _, h := range r.handoffs {
			fmt.Fprintf(&b, "- `%s`%s%s\n", h.Story, quoted(h.Title), paren(h.PR))
		}
		b.WriteString("\n")
	}
	if g := r.epicGraph(state); g != "" {
		fmt.Fprintf(&b, "Epic `%s`:\n\n```mermaid\n%s```\n\n", r.epic, g)
	}
	fmt.Fprintf(&b, "Story `%s`, executed by saga-lsp worker.", r.o.Story)
	return b.String()
}

// epicGraph is the story's epic as a mermaid flowchart, the story itself
// drawn in state; empty for a story of no epic.
func (r *run) epicGraph(state string) string {
	if r.epic == "" {
		return ""
	}
	ws, err := r.p.Load(r.wt)
	if err != nil {
		return ""
	}
	planned, err := store.PlanFor(ws, r.epic, store.NameEpic)
	if err != nil {
		return ""
	}
	states := plan.States(planned.Items)
	states[r.o.Story] = state
	var b strings.Builder
	if err := plan.WriteMermaid(&b, planned.Items, states); err != nil {
		return ""
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
