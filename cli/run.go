package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/commands"
)

const runSynopsis = "run <story> [--root DIR] [--format text|json] [--dry-run] [--max-cycles N] [--max-time MIN] [--model M] [--permission-mode MODE] [--base BRANCH] [--keep-tasks]"

// runRun starts the story's worker in a detached tmux session.
func runRun(env *Env, args []string) int {
	fs := newFlagSet(env, "run", runSynopsis)
	root := fs.String("root", "", "workspace root (default: nearest folder above the working directory with .saga/)")
	format := fs.String("format", "text", "output format: text or json ({\"session\",\"outputFile\",\"eventsFile\",\"story\",\"pid\"})")
	var wf commands.WorkerFlags
	fs.BoolVar(&wf.DryRun, "dry-run", false, "worker: use the built-in simulated agent instead of claude")
	fs.IntVar(&wf.MaxCycles, "max-cycles", 0, "worker: stop after N headless runs (default 10)")
	fs.IntVar(&wf.MaxTime, "max-time", 0, "worker: stop after MIN minutes (default 60)")
	fs.StringVar(&wf.Model, "model", "", "worker: model for the headless runs (default opus)")
	fs.StringVar(&wf.PermissionMode, "permission-mode", "", "worker: permission mode for the headless runs (default acceptEdits)")
	fs.StringVar(&wf.Base, "base", "", "worker: base branch of story/<story> (default: the current branch)")
	fs.BoolVar(&wf.KeepTasks, "keep-tasks", false, "worker: keep the hydrated task list after the end")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 || (*format != "text" && *format != "json") {
		fs.Usage()
		return exitUsage
	}
	r, err := resolveRoot(env, *root, false)
	if err != nil {
		return fail(env, err)
	}
	st, err := commands.StartStory(context.Background(), commands.RunOptions{Root: r, Story: pos[0], Worker: wf})
	if err != nil {
		var se *commands.StartError
		var re *commands.RunningError
		switch {
		case errors.As(err, &se):
			if out := se.Output; strings.TrimSpace(out) != "" {
				fmt.Fprint(env.Stderr, out)
				if !strings.HasSuffix(out, "\n") {
					fmt.Fprintln(env.Stderr)
				}
			}
			fmt.Fprintf(env.Stderr, "saga-lsp run: %v\n", err)
			return exitFindings
		case errors.As(err, &re):
			fmt.Fprintf(env.Stderr, "saga-lsp run: %v\n", err)
			return exitFindings
		}
		fmt.Fprintf(env.Stderr, "saga-lsp run: %v\n", err)
		return exitUsage
	}
	if *format == "json" {
		return printJSON(env, st)
	}
	fmt.Fprintf(env.Stdout, "session %s\noutput %s\nfollow: %s  |  tail -f %s\n", st.Session, st.OutputFile, st.Attach, st.OutputFile)
	if st.Finished {
		fmt.Fprintf(env.Stdout, "the worker already finished: see the output file, or `saga-lsp status %s`\n", st.Story)
	}
	return exitOK
}
