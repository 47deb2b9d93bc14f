package cli

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/plan"
)

const planSynopsis = "plan [--root DIR] [--format text|json|mermaid|dot] [--max-parallel N] [--story | --epic] <story-or-epic>"

func runPlan(env *Env, args []string) int {
	c := newCmdLine("plan")
	root := c.String("root", "", rootUsage)
	format := c.String("format", "text", "output `FORMAT`: text, json ({\"waves\",\"completed\",\"blocked\",\"cycles\",\"weakLinks\",\"broken\",\"ready\"}), "+
		"or the dependency graph with states and the critical path: mermaid or dot")
	maxParallel := c.Int("max-parallel", plan.DefaultMaxParallel, "split waves into groups of at most `N`")
	story := c.Bool("story", false, "the name is a story: plan its tasks")
	epic := c.Bool("epic", false, "the name is an epic: plan its child stories")
	pos, err := c.parse(args)
	if err := cmp.Or(err, wantArgs(pos, "<story-or-epic>"), oneOf("format", *format, "text", "json", "mermaid", "dot"),
		atLeast("max-parallel", *maxParallel, 1)); err != nil {
		return c.fail(env, err)
	}
	want := store.NameEither
	switch {
	case *story && *epic:
		return c.fail(env, usagef("--story and --epic exclude each other: pass the one the name is"))
	case *story:
		want = store.NameStory
	case *epic:
		want = store.NameEpic
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
	planned, err := store.PlanFor(ws, pos[0], want)
	var amb *store.AmbiguousNameError
	if errors.As(err, &amb) {
		err = usagef("%v: pass --story to plan the story's tasks or --epic to plan the epic's stories", amb)
	}
	if err != nil {
		return c.fail(env, err)
	}
	items := planned.Items
	pl := plan.Compute(items, *maxParallel)
	// The states drawn: each item's own (a task's status, a story's as its
	// tasks show it). The epic runner's run states go here once it has them.
	states := plan.States(items)
	switch *format {
	case "json":
		err = printJSON(env.Stdout, pl)
	case "mermaid":
		err = plan.WriteMermaid(env.Stdout, items, states)
	case "dot":
		err = plan.WriteDot(env.Stdout, items, states)
	default:
		err = pl.WriteText(env.Stdout, planned.Title, planned.Noun, items, *maxParallel)
	}
	if err != nil {
		return c.fail(env, fmt.Errorf("write output: %w", err))
	}
	if len(pl.Cycles) > 0 || len(pl.Broken) > 0 {
		return exitFindings
	}
	return exitOK
}
