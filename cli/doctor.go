package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os/signal"
	"path/filepath"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/doctor"
	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/runs/land"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/supervise"
)

const doctorSynopsis = "doctor [--on tmux|github] [--root DIR] [--format text|json] [--timeout DURATION]"

// runDoctor is `saga-lsp doctor` (docs/commands.md#doctor): everything a
// run needs, checked by runs/doctor and printed. Exit 1 on an error.
func runDoctor(env *Env, args []string) int {
	c := newCmdLine("doctor")
	on := c.String("on", readmodel.BackendTmux, "where the stories run (`BACKEND`): tmux (this machine) or github (GitHub Actions)")
	root := c.String("root", "", "the repository `DIR` to check (default: the working directory's)")
	format := c.String("format", "text", "output `FORMAT`: text or json")
	timeout := c.Duration("timeout", doctor.DefaultTimeout, "how long each program probed may take to answer (`DURATION`)")
	pos, err := c.parse(args)
	err = cmp.Or(err, wantArgs(pos), oneOf("--on", *on, readmodel.BackendTmux, readmodel.BackendGitHub), oneOf("format", *format, "text", "json"))
	if err == nil && *timeout <= 0 {
		err = usagef("--timeout must be > 0, got %s", *timeout)
	}
	if err != nil {
		return c.fail(env, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), supervise.StopSignals()...)
	defer stop()
	dir := env.Dir
	if *root != "" {
		dir = filepath.Join(env.Dir, *root)
		if filepath.IsAbs(*root) {
			dir = *root
		}
	}
	self, _ := runs.SelfPath(env.Getenv)
	rep := doctor.Run(ctx, doctor.Options{Dir: dir, Env: env.Getenv, Self: self, On: *on, Timeout: *timeout, Workflow: github.WorkflowCheck,
		Landing: func(ctx context.Context, root string) doctor.Check { return land.MethodCheck(ctx, root, env.Getenv) }})
	if *format == "json" {
		if err := printJSON(env.Stdout, rep); err != nil {
			return c.fail(env, err)
		}
	} else {
		printDoctor(env.Stdout, stylesFor(env, env.Stdout), rep)
	}
	if rep.Errors > 0 {
		return exitFindings
	}
	return exitOK
}

// printDoctor prints one line a check, its fix under it, and a verdict.
func printDoctor(w io.Writer, s styles, rep doctor.Report) {
	where := "on this machine (tmux)"
	if rep.On == doctor.OnGitHub {
		where = "on GitHub Actions"
	}
	fmt.Fprintf(w, "What a run of stories %s needs:\n", where)
	for _, ch := range rep.Checks {
		mark := string(ch.Level)
		switch ch.Level {
		case doctor.Error:
			mark = s.errorText(mark)
		case doctor.Warning, doctor.Unchecked:
			mark = s.warningText(mark)
		}
		// Pad before painting: escape sequences have no width.
		fmt.Fprintf(w, "  %s%*s %-12s %s\n", mark, 9-len(ch.Level), "", ch.Name, ch.Detail)
		if ch.Fix != "" {
			fmt.Fprintf(w, "  %9s %12s → %s\n", "", "", ch.Fix)
		}
	}
	switch {
	case rep.Errors > 0:
		fmt.Fprintf(w, "%s, %s: a run refuses to start or cannot do its work until the errors are fixed\n", count(rep.Errors, "error"), count(rep.Warnings, "warning"))
	case rep.Warnings > 0:
		fmt.Fprintf(w, "%s: a run works, with what the warnings say it lacks\n", count(rep.Warnings, "warning"))
	default:
		fmt.Fprintln(w, "Everything a run needs is here.")
	}
}

func count(n int, what string) string { return fmt.Sprintf("%d %s%s", n, what, plural(n)) }
