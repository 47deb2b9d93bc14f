package cli

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/supervise"
)

const runSynopsis = `run <story> [--root DIR] [--format text|json] [--follow] [--force] [--again] [--dry-run] [--max-cycles N] [--max-time MIN] [--model MODEL] [--permission-mode MODE] [--base BRANCH] [--keep-tasks] [--allow-unsandboxed-bash] [--allow-unconfined-checks] [--max-cost USD] [--max-check-failures N] [--story]
run <story> --review [--max-review-rounds N] [the same flags for its worker]
run <story> --on github [--review] [--base BRANCH] [--dispatch-wait DURATION] [--root DIR] [--format text|json] [--follow]
run <story|epic> --review [--max-review-rounds N] --watch [--watch-every DURATION] [--on github] [--root DIR] [--format text|json] [the worker's flags]
run <epic> [--max-parallel K] [--after ready|merged] [--max-cost USD] [--epic] [the same flags for its workers]
run <epic> --on github [--max-parallel K] [--after ready|merged] [--max-cost USD] [--root DIR] [--format text|json] [--follow] [--epic]`

// runRun starts a story's worker, or an epic's runner, in a detached tmux
// session.
func runRun(env *Env, args []string) int {
	c := newCmdLine("run")
	target := addTargetArg(c, "output `FORMAT`: text or json ({\"session\",\"outputFile\",\"eventsFile\",\"story\" or \"epic\",\"pid\"})")
	wf := addWorkerFlags(c)
	var ef runs.EpicFlags
	ef.Register(c.FlagSet)
	force := c.Bool("force", false, "start a story although its epic blockers are not completed")
	again := c.Bool("again", false, "run a completed story again: its local attempt (worktree, branch, run records) is discarded first, and the new run starts from the base's tip, reusing its open pull request (back to draft)")
	follow := c.Bool("follow", false, "then show the run's progress until it ends (Ctrl-C detaches; the run goes on)")
	on := addOnFlags(c)
	watch := addWatchFlags(c)
	pos, err := c.parse(args)
	t, err := target.resolve(env, pos, err, checkWorkerFlags(c, wf), on.check(c), watch.check(c, wf))
	if err != nil {
		return c.fail(env, err)
	}
	if *watch.on {
		return runWatch(env, t, pos[0], wf, watch, on, target.json())
	}
	if *on.backend == readmodel.BackendGitHub && t.kind != runs.KindEpic {
		return runOnGitHub(env, c, t, pos[0], wf, on, target.json(), *follow)
	}
	if *on.backend == readmodel.BackendGitHub {
		// What every job needs is checked once, before the runner starts.
		ef.On = readmodel.BackendGitHub
		rd, err := github.CheckReady(context.Background(), t.root, env.Getenv, releaseWorkflow())
		if err != nil {
			fmt.Fprintf(env.Stderr, "saga-lsp run: %v\n", err)
			return exitFindings
		}
		for _, w := range rd.Warnings {
			fmt.Fprintf(env.Stderr, "warning: %s\n", w)
		}
	}
	// Ctrl-C while a story's branch is prepared cancels it cleanly (a
	// half-merged branch is taken away again) instead of killing run there.
	ctx, stop := signal.NotifyContext(context.Background(), supervise.StopSignals()...)
	defer stop()
	// The root's setup, resolved once for this command: the session dir,
	// tmux, the GitHub Actions backend.
	setup := github.NewSetup(t.root, env.Getenv)
	var st *readmodel.Started
	if t.kind == runs.KindEpic {
		if *again {
			return c.fail(env, usagef("--again is for a story; %s is an epic (run each completed story with `saga-lsp run <story> --again`)", pos[0]))
		}
		if c.isSet("max-parallel") && ef.MaxParallel < 1 {
			return c.fail(env, usagef("--max-parallel must be ≥ 1, got %d", ef.MaxParallel))
		}
		ef.TakeMaxCost(wf)
		if err := ef.Validate(); err != nil {
			return c.fail(env, usagef("%v", err))
		}
		st, err = control.StartEpic(ctx, control.EpicRunOptions{Setup: setup, Epic: pos[0], Flags: ef, Worker: *wf, FlagsValidated: true,
			Workspace: t.ws, Parser: t.parser})
	} else {
		for _, f := range []string{"max-parallel", "after"} {
			if c.isSet(f) {
				return c.fail(env, usagef("--%s is for an epic; %s is a story", f, pos[0]))
			}
		}
		if *again && wf.DryRun {
			return c.fail(env, usagef("--again is for a real run: a dry run never touches the story's attempt"))
		}
		st, err = control.StartStory(ctx, control.RunOptions{Setup: setup, Story: pos[0], Worker: *wf, FlagsValidated: true, Force: *force, Again: *again,
			Workspace: t.ws, Parser: t.parser})
	}
	stop() // a Ctrl-C from now on is follow's (detach)
	var done *control.CompletedError
	if errors.As(err, &done) {
		switch {
		case target.json() && done.Epic != "":
			err = printJSON(env.Stdout, map[string]any{"epic": done.Epic, "state": runs.StatusCompleted, "done": done.Done, "total": done.Total})
		case target.json():
			res := map[string]any{"story": done.Story, "state": runs.StatusCompleted, "done": done.Done, "total": done.Total, "pr": done.PR}
			if done.Opened != nil {
				res["opened"] = done.Opened
			}
			if n := done.NotOpened; n != nil {
				res["noPR"] = map[string]string{"why": n.Why, "next": n.Next}
			}
			err = printJSON(env.Stdout, res)
		default:
			_, err = fmt.Fprintln(env.Stdout, done.Error())
		}
		if err != nil {
			return c.fail(env, fmt.Errorf("write output: %w", err))
		}
		return exitOK
	}
	if err != nil {
		return runFailed(c, env, err)
	}
	if target.json() {
		if err := printJSON(env.Stdout, st); err != nil {
			return c.fail(env, fmt.Errorf("write output: %w", err))
		}
	} else {
		what := "story " + st.Story
		if st.Epic != "" {
			what = "epic " + st.Epic
		}
		fmt.Fprintf(env.Stdout, "session %s\noutput %s\nfollow: saga-lsp follow %s  |  %s  |  tail -f %s\n",
			st.Session, st.OutputFile, pos[0], st.Attach, st.OutputFile)
		if st.Finished {
			fmt.Fprintf(env.Stdout, "the run of %s already finished: see the output file, or `saga-lsp status %s`\n", what, pos[0])
		}
	}
	if *follow {
		return followRun(env, st.EventsFile, target.json(), pos[0], t.ws)
	}
	return exitOK
}

// runFailed reports why a run did not start (`run`, `land --resolve`):
// refused by its preflight or for want of a conflict to resolve, a worker
// that died at once (its output first), one already running — exit 1; a
// usage or I/O problem — exit 2.
func runFailed(c *cmdLine, env *Env, err error) int {
	var se *control.StartError
	var re *control.RunningError
	var ref *control.RefusedError
	var ce *control.ConflictError
	var np *control.NoPRError
	var nc *control.NoConflictError
	switch {
	case errors.As(err, &se):
		if out := se.Output; strings.TrimSpace(out) != "" {
			fmt.Fprint(env.Stderr, out)
			if !strings.HasSuffix(out, "\n") {
				fmt.Fprintln(env.Stderr)
			}
		}
	case errors.As(err, &ref), errors.As(err, &ce), errors.As(err, &re), errors.As(err, &np), errors.As(err, &nc):
	default:
		return c.fail(env, err)
	}
	fmt.Fprintf(env.Stderr, "saga-lsp %s: %v\n", c.name, err)
	return exitFindings
}
