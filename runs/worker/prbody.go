package worker

// The pull request's description: written when the draft is opened, then
// kept up to date in place at the end — the epic's graph with every story
// in its current state (this one in its final state), the digest of the
// final checks or why the story failed — leaving whatever a person wrote
// in it alone. The parts saga-lsp owns and how they are rewritten are
// runs/control's (prbody.go), which an epic runner uses too.

import (
	"context"
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// prBody is the pull request's description: the story's description, what
// it builds on, and the epic's graph with this story drawn in state.
func (r *run) prBody(ctx context.Context, s *store.Story, state string) string {
	var b strings.Builder
	if s != nil && s.Description != "" {
		b.WriteString(s.Description + "\n\n")
	}
	if len(r.handoffs) > 0 {
		switch {
		case len(r.handoffs) == 1 && r.base == runs.StoryBranch(r.handoffs[0].Story):
			fmt.Fprintf(&b, "Stacked on `%s`: this branch starts from that story's work.\n\n", r.base)
		case strings.HasPrefix(r.base, runs.StoryBranchPrefix):
			fmt.Fprintf(&b, "Stacked on `%s`. Builds on:\n\n", r.base)
		default:
			b.WriteString("Builds on (their work is in this branch):\n\n")
		}
		for _, h := range r.handoffs {
			fmt.Fprintf(&b, "- `%s`%s%s\n", h.Story, quoted(h.Title), paren(h.PR))
		}
		b.WriteString("\n")
	}
	b.WriteString(r.graphSection(ctx, state))
	fmt.Fprintf(&b, "Story `%s`, executed by saga-lsp worker.", r.o.Story)
	return b.String()
}

// graphSection is the epic's graph with every story in its current state
// and this one in state; "" for a story of no epic.
func (r *run) graphSection(ctx context.Context, state string) string {
	if r.epic == "" {
		return ""
	}
	ws, err := r.p.Load(r.root)
	if err != nil {
		return ""
	}
	st, err := readmodel.EpicState(ctx, ws, r.epicView())
	if err != nil {
		return ""
	}
	return control.EpicGraph(ws, st, map[string]string{r.o.Story: state})
}

// refreshPRBody brings the PR body up to date at the end: the graph with
// the story in its final state, and the checks' section — the final
// checks' digest, or the check that made the story fail.
func (r *run) refreshPRBody(ctx context.Context, gh, state, digest string) {
	graph := r.graphSection(ctx, state)
	edit := func(body string) string {
		body = control.WithGraph(body, graph)
		switch {
		case digest != "":
			body = control.WithChecks(body, "Checks (run by saga-lsp on the final tree)", digest)
		case r.failedCheck != "":
			body = control.WithChecks(body, "The story failed: a check kept refusing a task",
				"    "+strings.ReplaceAll(r.failedCheck, "\n", "\n    ")+"\n")
		default: // what an earlier run said is stale now
			body = control.WithChecks(body, "", "")
		}
		return body
	}
	changed, err := control.EditPRBody(ctx, r.root, r.o.Story, gh, r.wt, r.pr, edit)
	switch {
	case err != nil:
		r.j.Warn(runs.StepEnd, "the pull request's description: %v", err)
	case changed && digest != "":
		r.j.Step(runs.StepEnd, "the checks' digest is in the pull request's description")
	case changed && r.failedCheck != "":
		r.j.Step(runs.StepEnd, "why the story failed is in the pull request's description")
	}
}

// epicView is the epic's query as every face renders it (readmodel.ViewQuery)
// in this run's session dir.
func (r *run) epicView() readmodel.EpicQuery {
	q := readmodel.ViewQuery(r.root, r.epic, r.o.Env, r.p)
	q.SessionDir = r.o.SessionDir
	return q
}
