package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/saga-ai/saga-lsp/commands"
)

const stopSynopsis = "stop <story> [--root DIR] [--format text|json]"

// runStop sends SIGINT to the story's worker and ends its tmux session.
func runStop(env *Env, args []string) int {
	fs := newFlagSet(env, "stop", stopSynopsis)
	root := fs.String("root", "", "workspace root (default: nearest folder above the working directory with .saga/)")
	format := fs.String("format", "text", "output format: text or json")
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
	res, err := commands.StopStory(context.Background(), commands.StopOptions{Root: r, Story: pos[0]})
	if err != nil {
		code := exitUsage
		if errors.Is(err, commands.ErrNotRunning) || (res != nil && res.Forced) {
			code = exitFindings
		}
		if *format == "json" && res != nil {
			printJSON(env, res)
		}
		fmt.Fprintf(env.Stderr, "saga-lsp stop: %v\n", err)
		return code
	}
	if *format == "json" {
		return printJSON(env, res)
	}
	switch {
	case res.PID > 0:
		fmt.Fprintf(env.Stdout, "stopped story %s: worker pid %d", res.Story, res.PID)
		if res.State != "" {
			fmt.Fprintf(env.Stdout, " ended %s", res.State)
			if res.ExitCode != nil {
				fmt.Fprintf(env.Stdout, " (exit %d)", *res.ExitCode)
			}
		}
		if res.Forced {
			fmt.Fprintf(env.Stdout, " — it did not end in time after SIGINT, so its session was killed")
		}
		fmt.Fprintln(env.Stdout)
	default:
		fmt.Fprintf(env.Stdout, "stopped story %s: no worker process was left\n", res.Story)
	}
	for _, s := range res.Sessions {
		fmt.Fprintf(env.Stdout, "killed tmux session %s\n", s)
	}
	if res.OutputFile != "" {
		fmt.Fprintf(env.Stdout, "output %s\n", res.OutputFile)
	}
	return exitOK
}
