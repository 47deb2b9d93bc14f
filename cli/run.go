package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/commands"
)

const runSynopsis = "run <story> [--root DIR] [--format text|json] [--dry-run] [--max-cycles N] [--max-time MIN] [--model M] [--permission-mode MODE] [--base BRANCH] [--keep-tasks] [--allow-unsandboxed-bash] [--max-cost USD] [--force]"

// runRun starts the story's worker in a detached tmux session.
func runRun(env *Env, args []string) int {
	c := newCmdLine("run")
	root := c.String("root", "", rootUsage)
	format := c.String("format", "text", "output `FORMAT`: text or json ({\"session\",\"outputFile\",\"eventsFile\",\"story\",\"pid\"})")
	wf := addWorkerFlags(c)
	force := c.Bool("force", false, "start although the story's epic blockers are not completed")
	pos, err := c.parse(args)
	if err := cmp.Or(err, wantArgs(pos, "<story>"), oneOf("format", *format, "text", "json"), checkWorkerFlags(c, wf)); err != nil {
		return c.fail(env, err)
	}
	r, err := resolveRoot(env, *root, false)
	if err != nil {
		return c.fail(env, err)
	}
	st, err := commands.StartStory(context.Background(), commands.RunOptions{Root: r, Story: pos[0], Worker: *wf, Force: *force})
	if err != nil {
		var se *commands.StartError
		var re *commands.RunningError
		var ref *commands.RefusedError
		var ce *commands.ConflictError
		switch {
		case errors.As(err, &ref), errors.As(err, &ce):
			fmt.Fprintf(env.Stderr, "saga-lsp run: %v\n", err)
			return exitFindings
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
		return c.fail(env, err)
	}
	if *format == "json" {
		if err := printJSON(env.Stdout, st); err != nil {
			return c.fail(env, fmt.Errorf("write output: %w", err))
		}
		return exitOK
	}
	fmt.Fprintf(env.Stdout, "session %s\noutput %s\nfollow: %s  |  tail -f %s\n", st.Session, st.OutputFile, st.Attach, st.OutputFile)
	if st.Finished {
		fmt.Fprintf(env.Stdout, "the worker already finished: see the output file, or `saga-lsp status %s`\n", st.Story)
	}
	return exitOK
}
