package cli

import (
	"fmt"
	"io"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/plan"
)

const planSynopsis = "plan [--root DIR] [--format text|json] [--max-parallel N] <story-or-epic>"

func runPlan(env *Env, args []string) int {
	fs := newFlagSet(env, "plan", planSynopsis)
	root := fs.String("root", "", "workspace root (default: nearest folder above the working directory with .saga/)")
	format := fs.String("format", "text", "output format: text or json ({\"waves\",\"completed\",\"blocked\",\"cycles\",\"weakLinks\",\"broken\",\"ready\"})")
	maxParallel := fs.Int("max-parallel", plan.DefaultMaxParallel, "split waves into groups of at most N")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 || (*format != "text" && *format != "json") || *maxParallel < 1 {
		fs.Usage()
		return exitUsage
	}
	r, err := resolveRoot(env, *root, false)
	if err != nil {
		return fail(env, err)
	}
	p, err := store.NewParser()
	if err != nil {
		return fail(env, err)
	}
	ws, err := p.Load(r)
	if err != nil {
		return fail(env, err)
	}
	items, title, noun, err := store.PlanItems(ws, pos[0])
	if err != nil {
		return fail(env, err)
	}
	pl := plan.Compute(items, *maxParallel)
	if *format == "json" {
		err = writePlanJSON(env.Stdout, pl)
	} else {
		err = pl.WriteText(env.Stdout, title, noun, items, *maxParallel)
	}
	if err != nil {
		return fail(env, fmt.Errorf("write output: %w", err))
	}
	if len(pl.Cycles) > 0 || len(pl.Broken) > 0 {
		return exitFindings
	}
	return exitOK
}

func writePlanJSON(w io.Writer, pl plan.Plan) error {
	data, err := store.MarshalIndent(pl)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
