package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/saga-ai/saga-lsp/worker"
)

const workerSynopsis = "worker <story> [--max-cycles N] [--max-time MIN] [--model M] [--output-file PATH] [--permission-mode MODE] [--base BRANCH] [--keep-tasks] [--dry-run]"

// runWorker executes a story (normally inside the tmux session `run` made).
// SIGINT/SIGTERM stop the current run; the worker then cleans up and exits 1.
func runWorker(env *Env, args []string) int {
	fs := newFlagSet(env, "worker", workerSynopsis)
	maxCycles := fs.Int("max-cycles", 10, "stop after N headless runs")
	maxTime := fs.Int("max-time", 60, "stop after MIN minutes")
	model := fs.String("model", "opus", "model for the headless runs")
	outputFile := fs.String("output-file", "", "also write the log here; events go to <PATH>.events.jsonl")
	permission := fs.String("permission-mode", "acceptEdits", "permission mode for the headless runs")
	base := fs.String("base", "", "base branch of story/<story> (default: the current branch)")
	keep := fs.Bool("keep-tasks", false, "keep the hydrated task list after the end")
	dryRun := fs.Bool("dry-run", false, "use the built-in simulated agent instead of claude (demos, set-up checks)")
	session := fs.String("session", "", "session name for events (default: $SAGA_SESSION or saga-story-<story>-<ms>)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return worker.Run(ctx, worker.Options{
		Story: pos[0], Dir: env.Dir, MaxCycles: *maxCycles, MaxTime: time.Duration(*maxTime) * time.Minute,
		Model: *model, PermissionMode: *permission, Base: *base, OutputFile: *outputFile, Session: *session,
		KeepTasks: *keep, DryRun: *dryRun, Stdout: env.Stdout, Env: os.Getenv,
	})
}
