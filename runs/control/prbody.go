package control

// A story's pull request description (docs/worker.md#the-pull-requests-description):
// saga-lsp owns the parts it marks with HTML comments — the epic's graph,
// its stories drawn in their current states with the epic's spend, and the
// checks' section (the final digest, or why the story failed) — and
// rewrites them in place, leaving whatever a person wrote alone. The
// worker writes its own story's; an epic runner rewrites every story's
// graph whenever a story of the epic changes state. One lock per story
// serialises the edits of a body, so a runner's graph never undoes a
// worker's digest.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/plan"
)

// Markers of the parts of a body saga-lsp rewrites.
const (
	graphStart   = "<!-- saga-lsp graph -->"
	graphEnd     = "<!-- /saga-lsp graph -->"
	checksMarker = "<!-- saga-lsp checks -->" // to the end of the body
)

// EpicGraph is the graph section of the PR bodies of an epic's stories:
// the stories drawn in the states st gives them (override wins, e.g. a
// worker's own story at its end) and the epic's spend; "" when the epic
// cannot be planned.
func EpicGraph(ws *store.Workspace, st *readmodel.EpicStatus, override map[string]string) string {
	planned, err := store.PlanFor(ws, st.ID, store.NameEpic)
	if err != nil {
		return ""
	}
	states := st.GraphStates(planned.Items)
	maps.Copy(states, override)
	var g strings.Builder
	if err := plan.WriteMermaid(&g, planned.Items, states); err != nil {
		return ""
	}
	spend := ""
	if st.Cost > 0 {
		spend = fmt.Sprintf(" (spent so far: $%.2f, every run of its stories)", st.Cost)
	}
	return fmt.Sprintf("%s\nEpic `%s`%s:\n\n```mermaid\n%s```\n%s\n\n", graphStart, st.ID, spend, g.String(), graphEnd)
}

// WithGraph is body with its graph section (if it has one) replaced by
// section.
func WithGraph(body, section string) string {
	i, j := strings.Index(body, graphStart), strings.Index(body, graphEnd)
	if i < 0 || j < i || section == "" {
		return body
	}
	rest := strings.TrimLeft(body[j+len(graphEnd):], "\n")
	return body[:i] + section + rest
}

// WithChecks is body with its checks section — from its marker to the end
// — replaced by one headed heading with text; removed when heading is "".
func WithChecks(body, heading, text string) string {
	i := strings.Index(body, checksMarker)
	if i >= 0 {
		body = strings.TrimRight(body[:i], "\n")
	}
	if heading == "" {
		return body
	}
	return strings.TrimRight(body, "\n") + "\n\n" + checksMarker + "\n### " + heading + "\n\n" + text
}

// EditPRBody rewrites the body of the story's pull request pr (a URL or
// number) with edit, holding the story's PR body lock; gh runs in dir. It
// reports whether the body changed.
func EditPRBody(ctx context.Context, root, story, gh, dir, pr string, edit func(string) string) (bool, error) {
	lctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	lock, err := filesafe.AcquireLock(lctx, root, runs.PRBodyLockName(story))
	if err != nil {
		return false, fmt.Errorf("lock the pull request's description: %w", err)
	}
	defer lock.Unlock()
	out, err := runs.GHCommand(ctx, gh, dir, "pr", "view", pr, "--json", "body").Output()
	if err != nil {
		return false, fmt.Errorf("gh pr view %s: %w", pr, ghError(err))
	}
	var v struct {
		Body string `json:"body"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return false, fmt.Errorf("gh pr view %s: %w", pr, err)
	}
	body := edit(v.Body)
	if body == v.Body {
		return false, nil
	}
	if out, err := runs.GHCommand(ctx, gh, dir, "pr", "edit", pr, "--body", body).CombinedOutput(); err != nil {
		return false, fmt.Errorf("gh pr edit %s: %s", pr, firstLineOf(string(out), err))
	}
	return true, nil
}

// ghError is err with gh's own first line of stderr, when it said one.
func ghError(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return errors.New(firstLineOf(string(ee.Stderr), err))
	}
	return err
}

func firstLineOf(out string, err error) string {
	if line, _, _ := strings.Cut(strings.TrimSpace(out), "\n"); line != "" {
		return line
	}
	return err.Error()
}
