package cli

import (
	"cmp"
	"fmt"

	"github.com/saga-ai/saga-lsp/runs/stats"
	"github.com/saga-ai/saga-lsp/store"
)

const statsSynopsis = "stats [<epic-or-story>] [--root DIR] [--format text|json] [--epic] [--story]"

// runStats is `saga-lsp stats`: the outcome of an epic, a story or the
// whole workspace, counted from the run records alone — no GitHub, tmux
// or log read (docs/landing.md#the-epics-outcome-counted).
func runStats(env *Env, args []string) int {
	c := newCmdLine("stats")
	root := c.String("root", "", rootUsage)
	format := c.String("format", "text", "output `FORMAT`: text or json")
	target := addTargetFlags(c)
	pos, err := c.parse(args)
	if err == nil && len(pos) > 1 {
		err = usagef("unexpected argument %q (one <epic-or-story> at most)", pos[1])
	}
	want, werr := target.want()
	if err := cmp.Or(err, werr, oneOf("format", *format, "text", "json")); err != nil {
		return c.fail(env, err)
	}
	r, err := resolveRoot(env, *root, false)
	if err != nil {
		return c.fail(env, err)
	}
	_, ws, err := workspaceAt(r)
	if err != nil {
		return c.fail(env, err)
	}
	id, kind := "", store.NameKind("")
	if len(pos) == 1 {
		id = pos[0]
		if kind, err = target.resolve(ws, id, want); err != nil {
			return c.fail(env, err)
		}
	}
	f := stats.Of(&stats.Reader{Root: r}, ws, id, kind)
	if *format == "json" {
		err = printJSON(env.Stdout, f)
	} else {
		err = f.WriteText(env.Stdout)
	}
	if err != nil {
		return c.fail(env, fmt.Errorf("write output: %w", err))
	}
	return exitOK
}
