package cli

import (
	"context"
	"fmt"
	"os/signal"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/supervise"
)

// watchFlags are run's --watch and --watch-every (docs/review.md#watching).
type watchFlags struct {
	on    *bool
	every *time.Duration
}

func addWatchFlags(c *cmdLine) watchFlags {
	return watchFlags{
		on: c.Bool("watch", false, "with --review: stay and poll the story's (or the epic's) pull requests, starting a review round on each writer's new \"changes requested\" review (Ctrl-C stops)"),
		every: c.Duration("watch-every", control.DefaultWatchEvery, "with --watch: poll every `DURATION` (at least "+
			control.MinWatchEvery.String()+": GitHub's rate limits)"),
	}
}

// check refuses what --watch cannot do.
func (w watchFlags) check(c *cmdLine, wf *runs.WorkerFlags) error {
	if !*w.on {
		if c.isSet("watch-every") {
			return usagef("--watch-every goes with --watch")
		}
		return nil
	}
	if !wf.Review {
		return usagef("--watch goes with --review: it watches the pull requests' review (`saga-lsp run <story> --review --watch`)")
	}
	for _, f := range []string{"follow", "again", "force"} {
		if c.isSet(f) {
			return usagef("--%s does not go with --watch, which stays in the foreground until Ctrl-C", f)
		}
	}
	if *w.every < control.MinWatchEvery {
		return usagef("--watch-every must be at least %s (GitHub's secondary rate limits), got %s", control.MinWatchEvery, *w.every)
	}
	return nil
}

// runWatch polls the pull requests of a story, or of an epic's stories,
// until Ctrl-C, starting review rounds (control.WatchReview) — with --on
// github, as dispatches.
func runWatch(env *Env, t resolved, name string, wf *runs.WorkerFlags, w watchFlags, on onFlags, jsonOut bool) int {
	stories := []string{name}
	if t.kind == runs.KindEpic {
		stories = nil
		if e := t.ws.Epic(name); e != nil {
			for _, c := range e.Children {
				stories = append(stories, c.ID)
			}
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), supervise.StopSignals()...)
	defer stop()
	setup := github.NewSetup(t.root, env.Getenv)
	o := control.WatchOptions{Setup: setup, Stories: stories, Worker: *wf, FlagsValidated: true, Workspace: t.ws, Parser: t.parser, Every: *w.every}
	if *on.backend == readmodel.BackendGitHub {
		// A workflow that cannot take a round is refused now, not at the
		// first review.
		rd, err := github.CheckReady(ctx, t.root, env.Getenv, releaseWorkflow())
		if err == nil {
			err = rd.CheckReview()
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "saga-lsp run: %v\n", err)
			return exitFindings
		}
		o.GH = rd.GH
		o.Start = actionsBackend(*on.wait).StartStory
	}
	o.Polled = func(p control.WatchPoll) {
		for _, err := range p.Errs {
			fmt.Fprintf(env.Stderr, "warning: %v\n", err)
		}
		if jsonOut {
			errs := make([]string, len(p.Errs))
			for i, err := range p.Errs {
				errs[i] = err.Error()
			}
			printJSON(env.Stdout, map[string]any{"poll": p.N, "prs": p.PRs, "started": p.Started, "restacked": p.Restacked, "later": p.Later, "errors": errs})
			return
		}
		line := fmt.Sprintf("%s poll %d: %d pull requests", time.Now().Format("15:04:05"), p.N, p.PRs)
		if len(p.Started) > 0 {
			line += "; review round started: " + strings.Join(p.Started, ", ")
		}
		if len(p.Restacked) > 0 {
			line += "; restacked on a moved base: " + strings.Join(p.Restacked, ", ")
		}
		if len(p.Later) > 0 {
			line += "; changes requested while the worker runs (next poll): " + strings.Join(p.Later, ", ")
		}
		fmt.Fprintln(env.Stdout, line)
	}
	if !jsonOut {
		fmt.Fprintf(env.Stdout, "watching the review of %s's pull requests every %s (Ctrl-C stops)\n", name, *w.every)
	}
	if err := control.WatchReview(ctx, o); err != nil {
		fmt.Fprintf(env.Stderr, "saga-lsp run: %v\n", err)
		return exitFindings
	}
	return exitOK
}
