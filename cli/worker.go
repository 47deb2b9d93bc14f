package cli

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/runs/worker"
)

const workerSynopsis = "worker <story> [--max-cycles N] [--max-time MIN] [--model MODEL] [--output-file PATH] [--permission-mode MODE] [--base BRANCH] [--keep-tasks] [--dry-run] [--allow-unsandboxed-bash] [--allow-unconfined-checks] [--max-cost USD] [--max-check-failures N] [--session NAME]"

// addWorkerFlags defines the worker's options (runs.WorkerFlags, their one
// definition), shared by worker and run (which passes them on). Zero values
// leave the worker's defaults.
func addWorkerFlags(c *cmdLine) *runs.WorkerFlags {
	var wf runs.WorkerFlags
	wf.Register(c.FlagSet, "")
	return &wf
}

// checkWorkerFlags refuses limits that would stop the worker before it
// starts; an unset limit is the worker's default.
func checkWorkerFlags(c *cmdLine, wf *runs.WorkerFlags) error {
	if c.isSet("max-cycles") {
		if err := atLeast("max-cycles", wf.MaxCycles, 1); err != nil {
			return err
		}
	}
	if c.isSet("max-time") && wf.MaxTime <= 0 {
		return usagef("--max-time must be > 0 minutes, got %g", wf.MaxTime)
	}
	if err := wf.Validate(); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// runWorker executes a story (normally inside the tmux session `run` made).
// SIGINT/SIGTERM stop the current run; the worker then cleans up and exits 1.
func runWorker(env *Env, args []string) int {
	c := newCmdLine("worker")
	wf := addWorkerFlags(c)
	outputFile := c.String("output-file", "", "also write the log to `PATH`; events go to "+runs.EventsFile("<PATH>"))
	session := c.String("session", "", "session `name` for events (default: $"+runs.EnvSession+" or "+runs.StorySessionPrefix+"<story>-<ms>)")
	pos, err := c.parse(args)
	if err := cmp.Or(err, wantArgs(pos, "<story>"), checkWorkerFlags(c, wf)); err != nil {
		return c.fail(env, err)
	}
	if err := supervise.Supervised(); err != nil {
		return c.fail(env, err)
	}
	ctx, stopped := stopOnSignal(env)
	defer stopped()
	return worker.Run(ctx, worker.Options{
		Story: pos[0], Dir: env.Dir, WorkerFlags: *wf,
		Process: runs.Process{OutputFile: *outputFile, Session: *session, Stdout: env.Stdout, Env: env.Getenv},
	})
}

// stopGrace bounds a stopped worker's end step (commit, push): a worker
// still running that long after SIGINT or SIGTERM exits at once.
const stopGrace = 60 * time.Second

// stopOnSignal is the worker's context, cancelled by the first SIGINT or
// SIGTERM, after which the worker ends its run. A stop always ends the
// process: a second signal ends it at once, and so does stopGrace passing.
// done is called when the worker returns.
func stopOnSignal(env *Env) (ctx context.Context, done func()) {
	sigs := make(chan os.Signal, 2) // the second is never dropped
	signal.Notify(sigs, supervise.StopSignals()...)
	ctx, cancel := context.WithCancel(context.Background())
	finished := make(chan struct{})
	go func() {
		select {
		case <-finished:
			return
		case <-sigs:
		}
		cancel()
		fmt.Fprintln(env.Stdout, "saga-lsp worker: stopping: the run ends and its work is committed (another SIGINT or SIGTERM exits at once)")
		why := ""
		select {
		case <-finished:
			return
		case s := <-sigs:
			why = fmt.Sprintf("stopped again (%v)", s)
		case <-time.After(stopGrace):
			why = fmt.Sprintf("stopped, and the end step did not finish within %s", stopGrace)
		}
		fmt.Fprintf(env.Stdout, "saga-lsp worker: %s; exiting now without finishing the end step (run the story again to finish it)\n", why)
		os.Exit(runs.ExitFailed)
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(finished)
		cancel()
	}
}
