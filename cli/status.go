package cli

import (
	"cmp"
	"context"
	"fmt"

	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

const statusSynopsis = "status [<story-or-epic>] [--root DIR] [--format text|json] [--tasks] [--verbose] [--epic] [--story]"

// runStatus prints stories, tasks and worker state.
func runStatus(env *Env, args []string) int {
	c := newCmdLine("status")
	root := c.String("root", "", rootUsage)
	format := c.String("format", "text", "output `FORMAT`: text or json")
	tasks := c.Bool("tasks", false, "list every story's tasks (always on with a story)")
	verbose := c.Bool("verbose", false, "show too the GitHub Actions runs named as a story's that are not the run saga-lsp dispatched, and why they are ignored")
	target := addTargetFlags(c)
	pos, err := c.parse(args)
	if err == nil && len(pos) > 1 {
		err = usagef("unexpected argument %q (one <story> at most)", pos[1])
	}
	if err := cmp.Or(err, oneOf("format", *format, "text", "json")); err != nil {
		return c.fail(env, err)
	}
	r, err := resolveRoot(env, *root, false)
	if err != nil {
		return c.fail(env, err)
	}
	o := control.StatusOptions{Setup: github.NewSetup(r, env.Getenv), Tasks: *tasks, Verbose: *verbose}
	if len(pos) == 1 {
		o.Story = pos[0]
		epic, err := target.isEpic(r, pos[0])
		if err != nil {
			return c.fail(env, err)
		}
		if epic {
			return epicStatus(c, env, o.Setup, pos[0], *format == "json")
		}
	}
	st, err := control.GetStatus(context.Background(), o)
	if err == nil {
		if *format == "json" {
			err = printJSON(env.Stdout, st)
		} else {
			err = st.WriteText(env.Stdout)
		}
		if err != nil {
			err = fmt.Errorf("write output: %w", err)
		}
	}
	if err != nil {
		return c.fail(env, err)
	}
	return exitOK
}

// epicStatus prints an epic run's state: the runner's, then each story's —
// as its live runner answers it, else derived here
// (docs/architecture.md#status-asks-the-live-runner).
func epicStatus(c *cmdLine, env *Env, setup control.Setup, epic string, jsonOut bool) int {
	q := withActions(readmodel.ViewQuery(setup.Root, epic, setup.Env, nil), setup.Actions)
	var err error
	if answer, ok := readmodel.AskRunner(context.Background(), q, jsonOut); ok {
		_, err = env.Stdout.Write(answer)
	} else if ws, st, lerr := readmodel.LoadEpicState(context.Background(), q); lerr != nil {
		return c.fail(env, lerr)
	} else if jsonOut {
		err = st.WriteJSON(env.Stdout)
	} else {
		title := ""
		if e := ws.Epic(epic); e != nil {
			title = e.Title
		}
		err = st.WriteText(env.Stdout, title)
	}
	if err != nil {
		return c.fail(env, fmt.Errorf("write output: %w", err))
	}
	return exitOK
}

// withActions is q asking GitHub about the stories run there: status's
// network step.
func withActions(q readmodel.EpicQuery, a readmodel.Actions) readmodel.EpicQuery {
	q.Actions = a
	return q
}
