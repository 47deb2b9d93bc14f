package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/github"
)

const stopSynopsis = "stop <story-or-epic> [--root DIR] [--format text|json] [--epic] [--story]"

// runStop sends SIGINT to the story's worker and ends its tmux session.
func runStop(env *Env, args []string) int {
	c := newCmdLine("stop")
	target := addTargetArg(c, "output `FORMAT`: text or json")
	pos, err := c.parse(args)
	t, err := target.resolve(env, pos, err)
	if err == nil {
		err = t.typo(pos[0])
	}
	if err != nil {
		return c.fail(env, err)
	}
	stop, what := control.StopStory, "story"
	if t.kind == runs.KindEpic {
		stop, what = control.StopEpic, "epic"
	}
	res, err := stop(context.Background(), control.StopOptions{Setup: github.NewSetup(t.root, env.Getenv), Story: pos[0]})
	if err != nil {
		if target.json() && res != nil {
			printJSON(env.Stdout, res)
		}
		if errors.Is(err, control.ErrNotRunning) || (res != nil && res.Forced) {
			fmt.Fprintf(env.Stderr, "saga-lsp stop: %v\n", err)
			return exitFindings
		}
		return c.fail(env, err)
	}
	if target.json() {
		if err := printJSON(env.Stdout, res); err != nil {
			return c.fail(env, fmt.Errorf("write output: %w", err))
		}
		return exitOK
	}
	switch {
	case res.URL != "":
		fmt.Fprintf(env.Stdout, "stopped %s %s: cancelled its GitHub Actions run %s", what, pos[0], res.URL)
		if res.Forced {
			fmt.Fprint(env.Stdout, " — GitHub has not ended it yet")
		}
		fmt.Fprintln(env.Stdout)
	case res.PID > 0:
		fmt.Fprintf(env.Stdout, "stopped %s %s: pid %d", what, pos[0], res.PID)
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
		fmt.Fprintf(env.Stdout, "stopped %s %s: no process was left\n", what, pos[0])
	}
	for _, s := range res.Sessions {
		fmt.Fprintf(env.Stdout, "killed tmux session %s\n", s)
	}
	if res.OutputFile != "" {
		fmt.Fprintf(env.Stdout, "output %s\n", res.OutputFile)
	}
	return exitOK
}
