package cli

import (
	"context"
	"fmt"

	"github.com/saga-ai/saga-lsp/commands"
)

const statusSynopsis = "status [<story>] [--root DIR] [--format text|json] [--tasks]"

// runStatus prints stories, tasks and worker state.
func runStatus(env *Env, args []string) int {
	fs := newFlagSet(env, "status", statusSynopsis)
	root := fs.String("root", "", "workspace root (default: nearest folder above the working directory with .saga/)")
	format := fs.String("format", "text", "output format: text or json")
	tasks := fs.Bool("tasks", false, "list every story's tasks (always on with a story)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) > 1 || (*format != "text" && *format != "json") {
		fs.Usage()
		return exitUsage
	}
	r, err := resolveRoot(env, *root, false)
	if err != nil {
		return fail(env, err)
	}
	o := commands.StatusOptions{Root: r, Tasks: *tasks}
	if len(pos) == 1 {
		o.Story = pos[0]
	}
	st, err := commands.GetStatus(context.Background(), o)
	if err != nil {
		fmt.Fprintf(env.Stderr, "saga-lsp status: %v\n", err)
		return exitUsage
	}
	if *format == "json" {
		return printJSON(env, st)
	}
	if err := st.WriteText(env.Stdout); err != nil {
		return fail(env, fmt.Errorf("write output: %w", err))
	}
	return exitOK
}
