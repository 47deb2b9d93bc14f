package cli

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/plan"
)

const planSynopsis = "plan [--root DIR] [--format text|json|mermaid|dot] [--max-parallel N] [--story | --epic] <story-or-epic>"

func runPlan(env *Env, args []string) int {
	c := newCmdLine("plan")
	root := c.String("root", "", rootUsage)
	format := c.String("format", "text", "output `FORMAT`: text, json ({\"waves\",\"completed\",\"blocked\",\"cycles\",\"weakLinks\",\"broken\",\"ready\",\"waits\"}), "+
		"or the dependency graph with states and the critical path: mermaid or dot")
	maxParallel := c.Int("max-parallel", 0, fmt.Sprintf("split waves into groups of at most `N` (default %d for a story's tasks, %d for an epic's stories, as `run` runs them)",
		plan.DefaultMaxParallel, runs.DefaultMaxParallel))
	target := addTargetFlags(c)
	pos, err := c.parse(args)
	if err := cmp.Or(err, wantArgs(pos, "<story-or-epic>"), oneOf("format", *format, "text", "json", "mermaid", "dot"),
		setAtLeast(c, "max-parallel", *maxParallel, 1)); err != nil {
		return c.fail(env, err)
	}
	want, err := target.want()
	if err != nil {
		return c.fail(env, err)
	}
	r, p, ws, err := loadWorkspace(env, *root)
	if err != nil {
		return c.fail(env, err)
	}
	kind, err := target.resolve(ws, pos[0], want)
	if err != nil {
		return c.fail(env, err)
	}
	planned, err := store.PlanFor(ws, pos[0], kind)
	if err != nil {
		return c.fail(env, err)
	}
	items := planned.Items
	if *maxParallel == 0 && kind == store.NameEpic {
		*maxParallel = runs.DefaultMaxParallel // what `run <epic>` starts at once
	}
	// What is done is what the one derivation of a story's state says
	// (readmodel.Evidence), as status, run and the editor say it — also once
	// a finished story's worktree is cleaned away.
	ctx := context.Background()
	var epicState *readmodel.EpicStatus
	if kind == store.NameEpic {
		if epicState, err = readmodel.EpicState(ctx, ws, readmodel.ViewQuery(r, pos[0], env.Getenv, p)); err == nil {
			for _, es := range epicState.Stories {
				if i := slices.IndexFunc(items, func(it plan.Item) bool { return it.ID == es.ID }); i >= 0 && es.State == runs.StatusCompleted {
					items[i].Status = store.StatusCompleted
				}
			}
		}
	} else {
		ev := readmodel.NewEvidence(ctx, r, runs.SessionDir(env.Getenv), p)
		st := ev.Story(ctx, ws, pos[0])
		for i := range items {
			if s, ok := st.Tasks[items[i].ID]; ok && items[i].Broken == "" {
				items[i].Status = s
			}
		}
	}
	pl := plan.Compute(items, *maxParallel)
	// The states drawn: a task's status; for an epic's stories their run
	// states (waiting, ready, running, held, …) as the epic runner sees them.
	states := plan.States(items)
	if epicState != nil {
		states = epicState.GraphStates(items)
	}
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
