package cli

import (
	"cmp"
	"context"
	"fmt"

	"github.com/saga-ai/saga-lsp/commands"
)

const statusSynopsis = "status [<story>] [--root DIR] [--format text|json] [--tasks]"

// runStatus prints stories, tasks and worker state.
func runStatus(env *Env, args []string) int {
	c := newCmdLine("status")
	root := c.String("root", "", rootUsage)
	format := c.String("format", "text", "output `FORMAT`: text or json")
	tasks := c.Bool("tasks", false, "list every story's tasks (always on with a story)")
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
	o := commands.StatusOptions{Root: r, Tasks: *tasks}
	if len(pos) == 1 {
		o.Story = pos[0]
	}
	st, err := commands.GetStatus(context.Background(), o)
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
