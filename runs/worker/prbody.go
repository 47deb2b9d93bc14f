package worker

// The pull request's description: written when the draft is opened, then
// kept up to date in place at the end — the epic's graph with this story
// completed, the digest of the final checks — leaving whatever a person
// wrote in it alone. The parts saga-lsp owns are marked with HTML comments.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/plan"
)

// Markers of the parts of the body saga-lsp rewrites.
const (
	graphStart   = "<!-- saga-lsp graph -->"
	graphEnd     = "<!-- /saga-lsp graph -->"
	digestMarker = "<!-- saga-lsp checks -->" // to the end of the body
)

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
	b.WriteString(r.graphSection(state))
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

// graphSection is the epic's graph, marked, the story drawn in state; ""
// for a story of no epic.
func (r *run) graphSection(state string) string {
	g := r.epicGraph(state)
	if g == "" {
		return ""
	}
	return fmt.Sprintf("%s\nEpic `%s`:\n\n```mermaid\n%s```\n%s\n\n", graphStart, r.epic, g, graphEnd)
}

// withGraph is body with its graph section (if any) replaced by section.
func withGraph(body, section string) string {
	i, j := strings.Index(body, graphStart), strings.Index(body, graphEnd)
	if i < 0 || j < i {
		return body
	}
	rest := strings.TrimLeft(body[j+len(graphEnd):], "\n")
	return body[:i] + section + rest
}

// withDigest is body with its checks section replaced by digest.
func withDigest(body, digest string) string {
	if i := strings.Index(body, digestMarker); i >= 0 {
		body = body[:i]
	}
	return strings.TrimRight(body, "\n") + "\n\n" + digestMarker + "\n### Checks (run by saga-lsp on the final tree)\n\n" + digest
}

// refreshPRBody brings the PR body up to date at the end: the graph with
// the story completed, and the final checks' digest when there is one.
func (r *run) refreshPRBody(ctx context.Context, gh, digest string) {
	out, err := r.ghRun(ctx, gh, "pr", "view", r.pr, "--json", "body")
	if err != nil {
		r.j.Warn(runs.StepEnd, "gh pr view: %s", firstLine(out, err))
		return
	}
	var v struct {
		Body string `json:"body"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		r.j.Warn(runs.StepEnd, "gh pr view: %v", err)
		return
	}
	body := withGraph(v.Body, r.graphSection(store.StatusCompleted))
	if digest != "" {
		body = withDigest(body, digest)
	}
	if body == v.Body {
		return
	}
	if out, err := r.ghRun(ctx, gh, "pr", "edit", r.pr, "--body", body); err != nil {
		r.j.Warn(runs.StepEnd, "gh pr edit: %s", firstLine(out, err))
		return
	}
	if digest != "" {
		r.j.Step(runs.StepEnd, "the checks' digest is in the pull request's description")
	}
}
