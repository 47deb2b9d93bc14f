package cli

import (
	"context"
	"fmt"
	"os/signal"

	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/runs/supervise"
)

// runLandResolve is `saga-lsp land --resolve <story>`: the story's run on
// its conflict-resolution task, started in tmux as `run` starts it
// (control.Resolve), or refused when it has none (exit 1). It does not
// wait: a later `land` (or `land --watch`) lands the story once it is
// ready (docs/landing.md#a-conflict).
func runLandResolve(env *Env, c *cmdLine, target targetArg, pos []string, parseErr error, unconfined bool) int {
	var checks []error
	for _, f := range []string{"method", "dry-run", "watch", "watch-every"} {
		if c.isSet(f) {
			checks = append(checks, usagef("--%s does not go with --resolve", f))
		}
	}
	t, err := target.resolve(env, pos, parseErr, checks...)
	if err == nil {
		err = t.typo(pos[0])
	}
	if err == nil && t.kind == runs.KindEpic {
		err = usagef("--resolve is for a story; %s is an epic (`saga-lsp status %s` names the stories stopped on a conflict)", pos[0], pos[0])
	}
	if err != nil {
		return c.fail(env, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), supervise.StopSignals()...)
	defer stop()
	st, err := control.Resolve(ctx, control.RunOptions{Setup: github.NewSetup(t.root, env.Getenv), Story: pos[0],
		Worker: runs.WorkerFlags{AllowUnconfinedChecks: unconfined}, FlagsValidated: true, Workspace: t.ws, Parser: t.parser})
	if err != nil {
		return runFailed(c, env, err)
	}
	if target.json() {
		if err := printJSON(env.Stdout, st); err != nil {
			return c.fail(env, fmt.Errorf("write output: %w", err))
		}
		return exitOK
	}
	id := termtext.Escape(pos[0])
	fmt.Fprintf(env.Stdout, "resolving the conflict of story %s: its run started\nsession %s\noutput %s\nfollow: saga-lsp follow %s  |  %s  |  tail -f %s\n",
		id, st.Session, st.OutputFile, id, st.Attach, st.OutputFile)
	fmt.Fprintf(env.Stdout, "then: `saga-lsp land %s` (or its epic's, or `land --watch`) lands it once it is ready\n", id)
	return exitOK
}
