package cli

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/runs/land"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/runs/verify"
)

const landSynopsis = `land <story-or-epic> [--root DIR] [--format text|json] [--epic] [--story] [--method merge|squash|rebase] [--dry-run] [--watch [--watch-every DURATION]] [--allow-unconfined-checks]
land --resolve <story> [--root DIR] [--format text|json] [--story] [--allow-unconfined-checks]`

// runLand is `saga-lsp land`: merge the ready stories' pull requests in
// dependency order, their dependents following the default branch
// (docs/landing.md). Exit 1 when a story is left unlanded.
func runLand(env *Env, args []string) int {
	c := newCmdLine("land")
	target := addTargetArg(c, "output `FORMAT`: text or json")
	method := c.String("method", "", "merge with `METHOD`: merge, squash or rebase (default: the first the repository allows, in that order)")
	dry := c.Bool("dry-run", false, "say what would land, how, and why the others would not; change nothing")
	watch := c.Bool("watch", false, "stay, and land each story as it becomes ready, until every story landed (Ctrl-C stops)")
	every := c.Duration("watch-every", land.DefaultEvery, "with --watch: look every `DURATION` (at least "+control.MinWatchEvery.String()+": GitHub's rate limits)")
	unconfined := c.Bool("allow-unconfined-checks", false, "run a rebuilt dependent's checks (with --resolve: the worker's) unconfined where bubblewrap cannot confine them")
	resolve := c.Bool("resolve", false, "start the story's run on its conflict-resolution task (its follow of the default branch, or a restack, conflicted), as `run` starts it; a later land lands it once ready")
	pos, err := c.parse(args)
	if *resolve {
		return runLandResolve(env, c, target, pos, err, *unconfined)
	}
	var checks []error
	switch {
	case *watch && *dry:
		checks = append(checks, usagef("--dry-run does not go with --watch"))
	case !*watch && c.isSet("watch-every"):
		checks = append(checks, usagef("--watch-every goes with --watch"))
	case *watch && *every < control.MinWatchEvery:
		checks = append(checks, usagef("--watch-every must be at least %s (GitHub's secondary rate limits), got %s", control.MinWatchEvery, *every))
	}
	if *method != "" {
		checks = append(checks, oneOf("method", *method, land.Methods...))
	}
	t, err := target.resolve(env, pos, err, checks...)
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
	o := land.Options{Setup: github.NewSetup(t.root, env.Getenv), Target: pos[0], Epic: t.kind == runs.KindEpic, Workspace: ws, Parser: p,
		Method: *method, DryRun: *dry, Watch: *watch, Every: *every, Policy: verify.Policy{AllowUnconfined: *unconfined}}
	if *watch && !target.json() {
		o.Passed = func(p land.Pass) { writeLandPass(env.Stdout, p) }
	}
	res, err := land.Land(ctx, o)
	if res != nil {
		if target.json() {
			if perr := printJSON(env.Stdout, res); perr != nil && err == nil {
				err = fmt.Errorf("write output: %w", perr)
			}
		} else {
			writeLandText(env.Stdout, res, *dry, *watch)
		}
	}
	if err != nil {
		return c.fail(env, err)
	}
	for _, s := range res.Stories {
		if s.State != land.Landed && !*dry {
			return exitFindings
		}
	}
	return exitOK
}

// writeLandPass is one --watch pass's actions, as they happen.
func writeLandPass(w io.Writer, p land.Pass) {
	for _, a := range p.Actions {
		fmt.Fprintf(w, "%s pass %d: %s %s: %s\n", time.Now().Format("15:04:05"), p.N, termtext.Escape(a.Did), termtext.Escape(a.Story), termtext.Escape(a.Detail))
	}
	if p.Err != nil {
		fmt.Fprintf(w, "%s pass %d: %s\n", time.Now().Format("15:04:05"), p.N, termtext.Escape(p.Err.Error()))
	}
}

// writeLandText says what land did (or would do) and where each story
// stands.
func writeLandText(w io.Writer, r *land.Result, dry, watched bool) {
	if rp := r.Repository; rp != nil {
		if r.Method == "queue" {
			fmt.Fprintf(w, "method: the merge queue of %s (each ready story enqueued; the queue's own method merges)\n", termtext.Escape(rp.Default))
		} else {
			fmt.Fprintf(w, "method: %s (the repository allows: %s; --method chooses)\n", termtext.Escape(r.Method), termtext.Escape(strings.Join(rp.Methods, ", ")))
		}
	}
	if !watched {
		for _, a := range r.Actions {
			fmt.Fprintf(w, "%s %s: %s\n", termtext.Escape(a.Did), termtext.Escape(a.Story), termtext.Escape(a.Detail))
		}
	}
	for _, s := range r.Stories {
		line := fmt.Sprintf("%s: %s", termtext.Escape(s.Story), termtext.Escape(s.State))
		if s.State == land.Ready && dry {
			would := "merge"
			if r.Method == "queue" {
				would = "enqueue"
			}
			line += " (would " + would + ")"
		}
		if s.Why != "" {
			line += " — " + termtext.Escape(s.Why)
		}
		fmt.Fprintln(w, line)
		if s.Next != "" {
			fmt.Fprintf(w, "  next: %s\n", termtext.Escape(s.Next))
		}
	}
}
