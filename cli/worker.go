package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/saga-ai/saga-lsp/store/runs"
	"github.com/saga-ai/saga-lsp/worker"
)

const workerSynopsis = "worker <story> [--max-cycles N] [--max-time MIN] [--model M] [--output-file PATH] [--permission-mode MODE] [--base BRANCH] [--keep-tasks] [--dry-run]"

// runWorker executes a story (normally inside the tmux session `run` made).
// SIGINT/SIGTERM stop the current run; the worker then cleans up and exits 1.
func runWorker(env *Env, args []string) int {
	fs := newFlagSet(env, "worker", workerSynopsis)
	var wf runs.WorkerFlags
	wf.Register(fs, "")
	outputFile := fs.String("output-file", "", "also write the log here; events go to "+runs.EventsFile("<PATH>"))
	session := fs.String("session", "", "session name for events (default: $"+runs.EnvSession+" or "+runs.StorySessionPrefix+"<story>-<ms>)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitUsage
	}
	if err := wf.Validate(); err != nil {
		fmt.Fprintf(env.Stderr, "saga-lsp worker: %v\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return worker.Run(ctx, worker.Options{
		Story: pos[0], Dir: env.Dir, WorkerFlags: wf, OutputFile: *outputFile, Session: *session,
		Stdout: env.Stdout, Env: os.Getenv,
	})
}
