package cli

import (
	"cmp"
	"fmt"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/plan"
)

const planSynopsis = "plan [--root DIR] [--format text|json] [--max-parallel N] <story-or-epic>"

func runPlan(env *Env, args []string) int {
	c := newCmdLine("plan")
	root := c.String("root", "", rootUsage)
	format := c.String("format", "text", "output `FORMAT`: text or json ({\"waves\",\"completed\",\"blocked\",\"cycles\",\"weakLinks\",\"broken\",\"ready\"})")
	maxParallel := c.Int("max-parallel", plan.DefaultMaxParallel, "split waves into groups of at most `N`")
	pos, err := c.parse(args)
	if err := cmp.Or(err, wantArgs(pos, "<story-or-epic>"), oneOf("format", *format, "text", "json"),
		atLeast("max-parallel", *maxParallel, 1)); err != nil {
		return c.fail(env, err)
	}
	r, err := resolveRoot(env, *root, false)
	if err != nil {
		return c.fail(env, err)
	}
	p, err := store.NewParser()
	if err != nil {
		return c.fail(env, err)
	}
	ws, err := p.Load(r)
	if err != nil {
		return c.fail(env, err)
	}
	items, title, noun, err := store.PlanItems(ws, pos[0])
	if err != nil {
		return c.fail(env, err)
	}
	pl := plan.Compute(items, *maxParallel)
	if *format == "json" {
		err = printJSON(env.Stdout, pl)
	} else {
		err = pl.WriteText(env.Stdout, title, noun, items, *maxParallel)
	}
	if err != nil {
		return c.fail(env, fmt.Errorf("write output: %w", err))
	}
	if len(pl.Cycles) > 0 || len(pl.Broken) > 0 {
		return exitFindings
	}
	return exitOK
}
