package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os/signal"
	"slices"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/supervise"
)

// onFlags choose where run starts the worker.
type onFlags struct {
	backend *string
	wait    *time.Duration
}

func addOnFlags(c *cmdLine) onFlags {
	return onFlags{
		backend: c.String("on", readmodel.BackendTmux, "where the worker runs (`BACKEND`): tmux (this machine) or github (a GitHub Actions job of "+github.WorkflowFile+")"),
		wait:    c.Duration("dispatch-wait", github.DefaultAppearWait, "with --on github: how long the dispatched run may take to show up (`DURATION`)"),
	}
}

// onGitHubFlags are run's flags that --on github takes: the workflow
// runs the worker with its defaults, from a base.
var onGitHubFlags = []string{"on", "dispatch-wait", "base", "root", "format", "follow", "story",
	"max-parallel", "after", "max-cost", "poll", "epic", // an epic's: its runner runs here
	"review", "watch", "watch-every", // a review round is a dispatch with the input review
	"max-review-rounds"} // kept here (github.Dispatch)

// check refuses what --on github cannot do.
func (o onFlags) check(c *cmdLine) error {
	if err := oneOf("--on", *o.backend, readmodel.BackendTmux, readmodel.BackendGitHub); err != nil {
		return err
	}
	if *o.backend != readmodel.BackendGitHub {
		if c.isSet("dispatch-wait") {
			return usagef("--dispatch-wait goes with --on github")
		}
		return nil
	}
	if c.isSet("dry-run") {
		return usagef("--on github takes no --dry-run: a dry run stays on this machine (leave out --on github)")
	}
	if *o.wait <= 0 {
		return usagef("--dispatch-wait must be > 0, got %s", *o.wait)
	}
	var bad error
	c.Visit(func(f *flag.Flag) {
		if bad == nil && !slices.Contains(onGitHubFlags, f.Name) {
			bad = usagef("--%s does not reach a GitHub Actions job (the workflow runs the worker with its defaults): leave it out, or leave out --on github", f.Name)
		}
	})
	return bad
}

// runOnGitHub dispatches a story to GitHub Actions, and with --follow
// follows its run until it ends (exit 0 when it succeeded).
func runOnGitHub(env *Env, c *cmdLine, t resolved, name string, wf *runs.WorkerFlags, on onFlags, jsonOut, follow bool) int {
	for _, f := range []string{"max-parallel", "after", "max-cost", "poll"} {
		if c.isSet(f) {
			return c.fail(env, usagef("--%s is for an epic; %s is a story", f, name))
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), supervise.StopSignals()...)
	defer stop()
	d, err := github.Dispatch(ctx, github.DispatchOptions{Root: t.root, Story: name, Base: wf.Base, Review: wf.Review, MaxReviewRounds: wf.MaxReviewRounds, Workspace: t.ws, Workflow: releaseWorkflow(), Env: env.Getenv, Wait: *on.wait})
	var de *github.DispatchError
	var nf *github.NotFoundError
	var re *control.RunningError
	var ce *control.ConflictError
	var ue *control.UnreachableError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(env.Stderr, "saga-lsp run: %v — GitHub may have taken the dispatch all the same: `saga-lsp status %s` shows it; running it again refuses while its run is live\n", err, name)
		return exitFindings
	case errors.As(err, &de), errors.As(err, &nf), errors.As(err, &re), errors.As(err, &ce):
		fmt.Fprintf(env.Stderr, "saga-lsp run: %v\n", err)
		return exitFindings
	case err != nil:
		return c.fail(env, err)
	}
	for _, w := range d.Warnings {
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	if jsonOut {
		if err := printJSON(env.Stdout, d); err != nil {
			return c.fail(env, fmt.Errorf("write output: %w", err))
		}
	} else {
		fmt.Fprintf(env.Stdout, "dispatched story %s to GitHub Actions (base %s)\nrun %s (%s)\nfollow: gh run watch %d  |  saga-lsp status %s\n",
			name, d.Base, d.URL, d.Status, d.ActionsRun, name)
	}
	if !follow {
		return exitOK
	}
	return followActions(ctx, env, "run", t.root, name, d.ActionsRun, jsonOut)
}

// followActions follows a GitHub Actions run until it completes (`run
// --on github --follow`, `follow <story>` of a dispatched story): exit 0
// when it succeeded.
//
// Having asked GitHub, it records what it saw of the end in the story's
// local events (readmodel.Evidence with Actions), as status's network step
// does: every face — the language server's watcher, the dashboard — then
// renders the end without asking GitHub (docs/architecture.md#one-read-model-of-a-run).
func followActions(ctx context.Context, env *Env, cmd, root, story string, id int64, jsonOut bool) int {
	gh, err := runs.LookProgram(env.Getenv, runs.ProgramGH)
	if err != nil {
		fmt.Fprintf(env.Stderr, "saga-lsp %s: gh (GitHub's CLI) is not installed: %v\n", cmd, err)
		return exitFindings
	}
	r, err := github.Follow(ctx, gh, root, id, 0, func(r github.RunInfo, step string) {
		if jsonOut {
			printJSON(env.Stdout, struct {
				Status, Conclusion, Step string
			}{r.Status, r.Conclusion, step})
			return
		}
		switch {
		case r.Status == "completed":
			fmt.Fprintf(env.Stdout, "completed: %s%s\n", r.Conclusion, ifStep(" (at %s)", step))
		default:
			fmt.Fprintf(env.Stdout, "%s%s\n", r.Status, ifStep(": %s", step))
		}
	})
	if err != nil {
		if ctx.Err() != nil {
			return exitOK // detached; the run goes on
		}
		fmt.Fprintf(env.Stderr, "saga-lsp %s: %v\n", cmd, err)
		return exitFindings
	}
	if p, ws, err := workspaceAt(root); err == nil {
		setup := github.NewSetup(root, env.Getenv)
		ev := readmodel.NewEvidence(ctx, root, setup.SessionDir, p)
		ev.Actions = setup.Actions
		ev.Story(ctx, ws, story) // records the end (a record that cannot be written: the next look asks again)
	}
	if r.Conclusion != readmodel.ActionsSuccess {
		return exitFindings
	}
	return exitOK
}

func ifStep(format, step string) string {
	if step == "" {
		return ""
	}
	return fmt.Sprintf(format, step)
}
