package control

// `saga-lsp run <epic>` and `stop <epic>` (docs/commands.md#epic-runs-run--follow--status--stop-epic): the epic runner
// runs in tmux like a worker (`saga-lsp epic-runner <epic>`), after a
// preflight of the whole epic; stop ends it and every worker it started.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/store"
)

// EpicRunOptions configure StartEpic.
type EpicRunOptions struct {
	Setup  // the root's, resolved once by the caller
	Epic   string
	Flags  runs.EpicFlags
	Worker runs.WorkerFlags
	Force  bool // start although the epic's own blockers (none today) are unfinished
	// FlagsValidated: the caller validated Flags and Worker where its
	// process took them (the CLI's parse): they are not validated again.
	FlagsValidated bool

	// Workspace, when set, is the workspace as the caller loaded it with
	// Parser (the CLI resolving the name): it is not parsed again.
	Workspace *store.Workspace
	Parser    *store.Parser

	Self string
	Tmux *Tmux // default Setup.FindTmux
	Now  func() time.Time
	Wait time.Duration
}

// StartEpic checks that the epic can run — its files and every child
// story's free of error-level diagnostics, each child with tasks, the
// programs present, no runner of the epic alive — then starts its runner in
// tmux and waits until the runner holds its lock.
func StartEpic(ctx context.Context, o EpicRunOptions) (*readmodel.Started, error) {
	if err := supervise.Supervised(); err != nil {
		return nil, err
	}
	if !store.ValidID(o.Epic) {
		return nil, store.Usagef("invalid epic id %q", o.Epic)
	}
	if !o.FlagsValidated {
		if err := o.Flags.Validate(); err != nil {
			return nil, store.Usagef("%v", err)
		}
		if err := o.Worker.Validate(); err != nil {
			return nil, store.Usagef("%v", err)
		}
	}
	var err error
	if o.SessionDir, err = readmodel.SessionDirOf(o.SessionDir, o.Env); err != nil {
		return nil, err
	}
	p := Preflight{Root: o.Root, DryRun: o.Worker.DryRun, Env: o.Env, SessionDir: o.SessionDir, Parser: o.Parser,
		AllowUnconfinedChecks: o.Worker.AllowUnconfinedChecks, Elsewhere: o.Flags.On == readmodel.BackendGitHub}
	ws := o.Workspace
	if ws == nil || p.Parser == nil {
		var err error
		if ws, err = p.load(); err != nil {
			return nil, err
		}
	}
	if err := epicUsage(ctx, ws, o); err != nil {
		return nil, err
	}
	// A live runner first: while it runs, its workers' worktrees are being
	// made, and their half-written files are no reason to refuse.
	if o.Tmux == nil {
		o.Tmux, _ = o.Setup.FindTmux(ctx) // missing: the preflight says so
	}
	if err := liveRunner(ctx, o); err != nil {
		return nil, err
	}
	// Completed as every face shows it: nothing to start, as for a story.
	if !o.Worker.DryRun {
		q := readmodel.ViewQuery(o.Root, o.Epic, o.Env, p.Parser)
		q.SessionDir = o.SessionDir
		if st, err := readmodel.EpicState(ctx, ws, q); err == nil && st.Total > 0 && st.Done == st.Total {
			return nil, &CompletedError{Epic: o.Epic, Done: st.Done, Total: st.Total}
		}
	}
	reasons := append(p.Programs(ctx), p.Epic(ctx, ws, o.Epic)...)
	if len(reasons) > 0 {
		return nil, &RefusedError{What: "epic " + o.Epic, Reasons: reasons}
	}
	if o.Tmux == nil {
		var err error
		if o.Tmux, err = o.Setup.FindTmux(ctx); err != nil {
			return nil, err
		}
	}
	return launch(ctx, launchSpec{kind: runs.KindEpic, id: o.Epic, root: o.Root, sessionDir: o.SessionDir, self: o.Self,
		tmux: o.Tmux, env: o.Env, now: o.Now, wait: o.Wait, args: append(o.Flags.Args(), o.Worker.Args()...)})
}

// liveRunner refuses a second runner of the epic: its lock is held, or a
// live session started one that has not taken it yet. Dead sessions are
// removed.
func liveRunner(ctx context.Context, o EpicRunOptions) error {
	var sessions []string
	if o.Tmux != nil {
		var err error
		if sessions, err = o.Tmux.KindSessions(ctx, runs.KindEpic, o.Epic); err != nil {
			return err
		}
	}
	pid, held, err := runs.EpicLock(o.Root, o.Epic, true)
	if err != nil {
		return err
	}
	var live []string
	for _, s := range sessions {
		if alive, _ := o.Tmux.Panes(ctx, s); alive {
			live = append(live, s)
		} else {
			_ = o.Tmux.KillSession(ctx, s)
		}
	}
	if !held && len(live) == 0 {
		return nil
	}
	e := &RunningError{Epic: o.Epic, PID: pid}
	if len(live) > 0 {
		e.Session = live[len(live)-1]
	} else if last := runs.LatestIn(o.SessionDir, runs.KindEpic, o.Epic, o.Root); last != nil {
		e.Session = last.Session
	}
	return e
}

// epicUsage refuses what cannot be an epic run at all (exit 2): an unknown
// epic, one without children, a child without tasks, --after merged
// without gh or a remote.
func epicUsage(ctx context.Context, ws *store.Workspace, o EpicRunOptions) error {
	e := ws.Epic(o.Epic)
	if e == nil {
		return store.Usagef("no epic %q in %s: `saga-lsp status` lists stories and epics, `saga-lsp new epic %s --title …` creates it", o.Epic, o.Root, o.Epic)
	}
	if len(e.Children) == 0 {
		return store.Usagef("epic %s has no stories: add one with `saga-lsp new story <name> --epic %s --title …`", o.Epic, o.Epic)
	}
	var empty []string
	for _, c := range e.Children {
		if s := ws.Story(c.ID); s != nil && len(s.Tasks) == 0 {
			empty = append(empty, c.ID)
		}
	}
	if len(empty) > 0 {
		return store.Usagef("stories of epic %s have no tasks: %s — add tasks with `saga-lsp new task <story> <id> --subject …`", o.Epic, strings.Join(empty, ", "))
	}
	if o.Flags.After == runs.AfterMerged {
		if o.Worker.DryRun {
			return store.Usagef("--after merged waits for pull requests to merge, and a dry run opens none: use --after ready with --dry-run")
		}
		if err := mergedUsable(ctx, o.Root, o.Env); err != nil {
			return store.Usagef("--after merged %v", err)
		}
	}
	return nil
}

// Epic reports why an epic cannot run: error-level diagnostics on its own
// files or any child story's (cycles, dangling children, broken task
// files), or a child that does not exist. A story whose worker is alive is
// judged by its main copy.
func (p Preflight) Epic(ctx context.Context, ws *store.Workspace, epic string) []string {
	e := ws.Epic(epic)
	if e == nil {
		return []string{fmt.Sprintf("no epic %q", epic)}
	}
	var out []string
	var rels []string
	for _, f := range ws.EpicDefinitions(epic) {
		rels = append(rels, f.Rel)
	}
	for _, c := range e.Children {
		s := ws.Story(c.ID)
		if s == nil {
			continue // unknown-story, reported on the epic file
		}
		if s.InWorktree {
			// A live worker's worktree is its own business, and may be
			// half checked out right now: the main copy is judged.
			if _, live, _ := runs.WorkerLock(p.Root, c.ID, false); live {
				if s = ws.Copies(c.ID).Main; s == nil {
					continue
				}
			}
		}
		for _, f := range s.StoryFiles() {
			rels = append(rels, f.Rel)
		}
	}
	for _, rel := range rels {
		for _, d := range ws.FileDiagnostics(rel) {
			if d.Severity == store.SeverityError {
				out = append(out, fmt.Sprintf("%s:%d:%d: %s [%s]", esc(d.File), d.Range.Start.Line+1, d.Range.Start.Character+1, esc(d.Message), d.Code))
			}
		}
	}
	if len(out) > 0 {
		out = append(out, "fix these first (`saga-lsp check` lists them)")
	}
	var stories []*store.Story
	for _, c := range e.Children {
		if s := ws.Story(c.ID); s != nil {
			stories = append(stories, s)
		}
	}
	return append(out, p.Checks(ctx, stories...)...)
}

// mergedUsable checks what --after merged needs: gh and a remote.
func mergedUsable(ctx context.Context, root string, env func(string) string) error {
	if _, err := runs.LookProgram(env, runs.ProgramGH); err != nil {
		return fmt.Errorf("needs gh to see when a PR is merged: install gh (or pass --after ready)")
	}
	if !(git.Repo{Dir: root}).HasRemote(ctx) {
		return fmt.Errorf("needs a remote named origin that the PRs merge into (or pass --after ready)")
	}
	return nil
}

// StopEpic stops an epic's runner (SIGINT; it stops every worker it
// started, and ends with epic.end stopped), waits for it, then kills its
// tmux sessions; workers of the epic's stories still alive then (started
// by a runner that is gone) are stopped too.
func StopEpic(ctx context.Context, o StopOptions) (*Stopped, error) {
	if err := o.prepare(ctx, runs.KindEpic); err != nil {
		return nil, err
	}
	res := &Stopped{Epic: o.Story, Sessions: []string{}}
	pid, held, err := runs.EpicLock(o.Root, o.Story, true)
	if err != nil {
		return nil, err
	}
	var sessions []string
	if o.Tmux != nil {
		if sessions, err = o.Tmux.KindSessions(ctx, runs.KindEpic, o.Story); err == nil {
			sessions = o.ownSessions(ctx, runs.KindEpic, sessions)
		}
		if err != nil {
			return nil, err
		}
	}
	// The runner as its run recorded it, never a pid only the lock file
	// names (StopOptions.targets).
	targets := o.targets(ctx, runs.KindEpic, sessions, pid)
	if held && len(targets) == 0 && len(sessions) == 0 {
		return res, unverifiedHolder("runner", "epic", o.Story, pid, o.SessionDir, runs.EpicLockFile(o.Root, o.Story))
	}
	if len(targets) > 0 {
		res.PID = targets[0]
		for _, p := range targets {
			_ = supervise.Interrupt(p)
		}
		gone := func() bool { return !slices.ContainsFunc(targets, filesafe.ProcessAlive) }
		if err := waitUntil(ctx, time.Now().Add(o.Wait), gone); err != nil {
			return res, err
		}
		res.Forced = !gone()
	}
	// Workers of the epic's stories that are still alive.
	parser, err := store.NewParser()
	if err != nil {
		return res, err
	}
	if ws, err := parser.Load(o.Root); err == nil {
		if e := ws.Epic(o.Story); e != nil {
			var wg sync.WaitGroup
			for _, c := range e.Children {
				// Its Actions runs too: a runner that is gone left them running.
				if _, held, _ := runs.WorkerLock(o.Root, c.ID, false); held || o.Actions != nil {
					wg.Add(1)
					go func(story string) {
						defer wg.Done()
						StopStory(ctx, StopOptions{Setup: o.Setup, Story: story, Tmux: o.Tmux, Wait: o.Wait})
					}(c.ID)
				}
			}
			wg.Wait()
		}
	}
	if o.Tmux != nil {
		for _, s := range sessions {
			if err := o.Tmux.KillSession(ctx, s); err == nil {
				res.Sessions = append(res.Sessions, s)
			}
		}
	}
	if !held && len(sessions) == 0 {
		return res, fmt.Errorf("%w for epic %s: no runner holds its lock and no tmux session %s%s-* exists",
			ErrNotRunning, o.Story, runs.EpicSessionPrefix, o.Story)
	}
	res.Stopped = true
	res.ended(runs.LatestIn(o.SessionDir, runs.KindEpic, o.Story, o.Root))
	return res, nil
}
