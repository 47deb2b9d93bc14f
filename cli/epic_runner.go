package cli

import (
	"cmp"
	"context"
	"os/signal"
	"runtime/debug"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/epic"
	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/store"
)

// runnerGCPercent is the epic runner's collector policy: it keeps little
// between steps (the live heap of a 200-story epic is ≈ 6 MB) and each
// step's reading is garbage, so the default, which lets the heap grow to
// twice the live heap, made that garbage most of its peak RSS; at 25 its
// peak was still a step's load and a quarter more, at 10 three MB less for
// no CPU the runner's figures show (docs/architecture.md#an-epic-of-200-stories).
const runnerGCPercent = 10

const epicRunnerSynopsis = "epic-runner <epic> [--max-parallel K] [--after ready|merged] [--max-cost USD] [--on tmux|github] [--output-file PATH] [--session NAME] [worker flags…]"

// runEpicRunner runs an epic (normally inside the tmux session `run
// <epic>` made). SIGINT/SIGTERM stop it and every worker it started.
func runEpicRunner(env *Env, args []string) int {
	c := newCmdLine("epic-runner")
	wf := addWorkerFlags(c)
	var ef runs.EpicFlags
	ef.Register(c.FlagSet)
	outputFile := c.String("output-file", "", "also write the log to `PATH`; events go to "+runs.EventsFile("<PATH>"))
	session := c.String("session", "", "session `name` for events (default: $"+runs.EnvSession+" or "+runs.EpicSessionPrefix+"<epic>-<ms>)")
	c.StringVar(&ef.On, "on", readmodel.BackendTmux, "where the stories run (`BACKEND`): tmux (this machine) or github (GitHub Actions jobs)")
	pos, err := c.parse(args)
	if err := cmp.Or(err, wantArgs(pos, "<epic>"), checkWorkerFlags(c, wf)); err != nil {
		return c.fail(env, err)
	}
	ef.TakeMaxCost(wf)
	if err := ef.Validate(); err != nil {
		return c.fail(env, usagef("%v", err))
	}
	if err := supervise.Supervised(); err != nil {
		return c.fail(env, err)
	}
	debug.SetGCPercent(runnerGCPercent)
	ctx, stop := signal.NotifyContext(context.Background(), supervise.StopSignals()...)
	defer stop()
	o := epic.Options{Epic: pos[0], Dir: env.Dir, EpicFlags: ef, Worker: *wf,
		Process: runs.Process{OutputFile: *outputFile, Session: *session, Stdout: env.Stdout, Env: env.Getenv}}
	// GitHub is asked about stories dispatched there — all of them when the
	// stories go there (readmodel.EpicQuery.Discover).
	root, err := store.FindRoot(cmp.Or(env.Dir, "."))
	if err != nil {
		return c.fail(env, err)
	}
	o.Setup = github.NewSetup(root, env.Getenv)
	if ef.On == readmodel.BackendGitHub {
		o.Backend = actionsBackend(0)
	}
	return epic.Run(ctx, o)
}

// actionsBackend is the GitHub Actions backend dispatching this build's
// workflow (wait: github.Backend.Wait): built here alone
// (test/architecture), for the epic runner and run --watch --on github.
func actionsBackend(wait time.Duration) github.Backend {
	return github.Backend{Workflow: releaseWorkflow(), Wait: wait}
}
