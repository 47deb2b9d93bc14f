package cli

import (
	"cmp"
	"context"
	"os/signal"
	"syscall"
	"time"

	"github.com/saga-ai/saga-lsp/commands"
	"github.com/saga-ai/saga-lsp/worker"
)

const workerSynopsis = "worker <story> [--max-cycles N] [--max-time MIN] [--model M] [--output-file PATH] [--permission-mode MODE] [--base BRANCH] [--keep-tasks] [--dry-run] [--session NAME]"

// addWorkerFlags defines the worker's options, shared by worker and run
// (which passes them on). Zero values leave the worker's defaults.
func addWorkerFlags(c *cmdLine) *commands.WorkerFlags {
	var wf commands.WorkerFlags
	c.BoolVar(&wf.DryRun, "dry-run", false, "use the built-in simulated agent instead of claude (demos, set-up checks)")
	c.IntVar(&wf.MaxCycles, "max-cycles", 0, "stop after `N` headless runs (default 10)")
	c.IntVar(&wf.MaxTime, "max-time", 0, "stop after `MIN` minutes (default 60)")
	c.StringVar(&wf.Model, "model", "", "`model` for the headless runs (default opus)")
	c.StringVar(&wf.PermissionMode, "permission-mode", "", "permission `mode` for the headless runs (default acceptEdits)")
	c.StringVar(&wf.Base, "base", "", "base `branch` of story/<story> (default: the current branch)")
	c.BoolVar(&wf.KeepTasks, "keep-tasks", false, "keep the hydrated task list after the end")
	return &wf
}

// checkWorkerFlags refuses limits that would stop the worker before it
// starts; an unset limit is the worker's default.
func checkWorkerFlags(c *cmdLine, wf *commands.WorkerFlags) error {
	for _, l := range []struct {
		name string
		v    int
	}{{"max-cycles", wf.MaxCycles}, {"max-time", wf.MaxTime}} {
		if c.isSet(l.name) {
			if err := atLeast(l.name, l.v, 1); err != nil {
				return err
			}
		}
	}
	return nil
}

// runWorker executes a story (normally inside the tmux session `run` made).
// SIGINT/SIGTERM stop the current run; the worker then cleans up and exits 1.
func runWorker(env *Env, args []string) int {
	c := newCmdLine("worker")
	wf := addWorkerFlags(c)
	outputFile := c.String("output-file", "", "also write the log to `PATH`; events go to <PATH>.events.jsonl")
	session := c.String("session", "", "session `name` for events (default: $SAGA_SESSION or saga-story-<story>-<ms>)")
	pos, err := c.parse(args)
	if err := cmp.Or(err, wantArgs(pos, "<story>"), checkWorkerFlags(c, wf)); err != nil {
		return c.fail(env, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return worker.Run(ctx, worker.Options{
		Story: pos[0], Dir: env.Dir, MaxCycles: wf.MaxCycles, MaxTime: time.Duration(wf.MaxTime) * time.Minute,
		Model: wf.Model, PermissionMode: wf.PermissionMode, Base: wf.Base, OutputFile: *outputFile, Session: *session,
		KeepTasks: wf.KeepTasks, DryRun: wf.DryRun, Stdout: env.Stdout, Env: env.Getenv,
	})
}
