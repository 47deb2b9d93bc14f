package cli

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/runs/verify"
)

const restackSynopsis = "restack <story-or-epic> [--root DIR] [--format text|json] [--epic] [--story] [--allow-unconfined-checks]"

// runRestack is `saga-lsp restack`: rebuild a stacked story whose
// blocker's branch moved on the new tip, and run its checks again
// (docs/restack.md); an epic's base-moved stories in dependency order.
// Exit 1 when a story's checks fail or its rebuild conflicts.
func runRestack(env *Env, args []string) int {
	c := newCmdLine("restack")
	target := addTargetArg(c, "output `FORMAT`: text or json")
	unconfined := c.Bool("allow-unconfined-checks", false, "run the checks unconfined where bubblewrap cannot confine them")
	pos, err := c.parse(args)
	t, err := target.resolve(env, pos, err)
	if err == nil {
		err = t.typo(pos[0])
	}
	if err != nil {
		return c.fail(env, err)
	}
	p, ws, err := workspaceAt(t.root)
	if err != nil {
		return c.fail(env, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), supervise.StopSignals()...)
	defer stop()
	o := control.RestackOptions{Setup: github.NewSetup(t.root, env.Getenv), Story: pos[0], Workspace: ws, Parser: p,
		Policy: verify.Policy{AllowUnconfined: *unconfined}}
	var results []*control.RestackResult
	if t.kind == runs.KindEpic {
		results, err = control.RestackEpic(ctx, o)
	} else {
		var r *control.RestackResult
		if r, err = control.Restack(ctx, o); r != nil {
			results = append(results, r)
		}
	}
	if target.json() {
		if results == nil {
			results = []*control.RestackResult{}
		}
		if perr := printJSON(env.Stdout, map[string]any{"restacked": results}); perr != nil && err == nil {
			err = fmt.Errorf("write output: %w", perr)
		}
	} else {
		for _, r := range results {
			writeRestackText(env.Stdout, r)
		}
		if t.kind == runs.KindEpic && len(results) == 0 && err == nil {
			fmt.Fprintf(env.Stdout, "no story of epic %s is base moved: nothing to restack\n", termtext.Escape(pos[0]))
		}
	}
	if err != nil {
		return c.fail(env, err)
	}
	for _, r := range results {
		if r.Restacked && !r.Passed {
			return exitFindings
		}
	}
	return exitOK
}

// writeRestackText says what the restack did to one story.
func writeRestackText(w io.Writer, r *control.RestackResult) {
	id := termtext.Escape(r.Story)
	if !r.Restacked {
		fmt.Fprintf(w, "%s: %s\n", id, termtext.Escape(r.Why))
		return
	}
	onto := termtext.Escape(strings.Join(r.Onto, " and "))
	if len(r.Conflicts) > 0 {
		fmt.Fprintf(w, "%s: rebuilding on %s conflicts in %s; its branch is left as it was (%s)\n", id, onto,
			strings.Join(termtext.Escapes(r.Conflicts), ", "), verify.Short(r.Old))
		fmt.Fprintf(w, "  task:  %s\n", termtext.Escape(r.Task))
	} else {
		tips := make([]string, len(r.Tips))
		for i, t := range r.Tips {
			tips[i] = verify.Short(t)
		}
		fmt.Fprintf(w, "%s: rebuilt on %s (%s): %s → %s, %s replayed in %s\n", id, onto, strings.Join(tips, ", "),
			verify.Short(r.Old), verify.Short(r.New), termtext.Count(r.Replayed, "commit", "commits"), termtext.Escape(r.Where))
		for _, ch := range r.Checks {
			mark, how := "✓", ""
			if !ch.Passed {
				mark = "✗"
			}
			if ch.Protected {
				how = " (" + verify.ProtectedRun + ")"
			}
			fmt.Fprintf(w, "  %s %s%s: %s — %s\n", mark, termtext.Escape(ch.Task), how, termtext.Escape(ch.Command), termtext.Escape(ch.Outcome))
		}
		if len(r.Reset) > 0 {
			fmt.Fprintf(w, "  back to pending: %s\n", strings.Join(termtext.Escapes(r.Reset), ", "))
		}
		fmt.Fprintf(w, "  reference commit: %s\n", verify.Short(r.Reference))
		if r.Pushed {
			fmt.Fprintf(w, "  pushed to origin (with a lease on %s)\n", verify.Short(r.Old))
		}
	}
	if r.Draft {
		fmt.Fprintln(w, "  its pull request is a draft again")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", termtext.Escape(n))
	}
	if r.Next != "" {
		fmt.Fprintf(w, "  next: %s\n", termtext.Escape(r.Next))
	}
}
