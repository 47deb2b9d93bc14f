package control

// Story workers in tmux (docs/commands.md#run--stop): `saga-lsp run <story>` starts
// `saga-lsp worker <story>` in a detached tmux session named by
// runs.KindSessionName. The language server's saga.runStory
// calls the same function. Every name is validated before it reaches tmux
// or a path.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/store"
)

const (
	// DefaultStartWait bounds how long StartStory waits for the worker to
	// take its lock (or fail) before it reports the session.
	DefaultStartWait = 30 * time.Second
	// DefaultStopWait bounds how long StopStory waits for the worker to
	// clean up after SIGINT before it kills the tmux session.
	DefaultStopWait = 30 * time.Second
)

// forwardedEnv are passed from the caller's environment to the worker (or
// runner) when set: a tmux server started earlier keeps the environment it
// was started with, so without them `SAGA_CLAUDE=… saga-lsp run` would
// silently run another claude, and a runner would start its workers on
// another tmux server. Secrets are never forwarded (tmux arguments are
// visible in the process list); the worker otherwise keeps tmux's
// environment.
func forwardedEnv() []string {
	return []string{"PATH", claudecode.EnvConfigDir, runs.EnvClaude, runs.EnvGH, runs.EnvTmuxSocket, runs.EnvWorkerNice}
}

// RunOptions configure StartStory.
type RunOptions struct {
	Setup  // the root's, resolved once by the caller
	Story  string
	Worker runs.WorkerFlags
	Force  bool // start although its epic blockers are unfinished
	// Again runs a completed story again: its local attempt is reset
	// first (Reset, its pushed branch and PR kept for the new attempt).
	Again     bool
	WorkerEnv []string // more KEY=value for the worker (an epic runner's)

	// Workspace, when set, is the workspace as the caller just loaded it
	// with Parser (the CLI resolving the name, the epic runner's step): it
	// is not parsed again.
	Workspace *store.Workspace
	Parser    *store.Parser
	// Preflighted: the programs and the repository were checked by the
	// caller's own preflight (an epic's, before its runner started).
	Preflighted bool
	// FlagsValidated: the caller validated Worker where its process took
	// them (the CLI's parse): they are not validated again.
	FlagsValidated bool
	// Ready: the caller's own derivation found the story ready a moment
	// ago (readmodel.EpicReady: not completed, its blockers completed —
	// the epic runner's step), so neither is derived again: a start on
	// loaded cores paid git processes for each
	// (docs/architecture.md#an-epic-of-200-stories).
	Ready bool

	Self string           // default runs.SelfPath(Env)
	Tmux *Tmux            // default Setup.FindTmux
	Now  func() time.Time // default time.Now
	Wait time.Duration    // default DefaultStartWait
}

// StartStory starts `<self> worker <story> --output-file <file> --session
// <name>` in a detached tmux session, after checking that the name is valid,
// the story exists, and no worker or session of the story is alive. It then
// waits (at most o.Wait) for the worker's first events, and fails with a
// *StartError when the worker died at once. Errors: *UsageError (name,
// story), ErrNoTmux, *RunningError, *StartError, or I/O.
func StartStory(ctx context.Context, o RunOptions) (*readmodel.Started, error) {
	if err := supervise.Supervised(); err != nil {
		return nil, err
	}
	if err := store.CheckName("story name", o.Story, true, true); err != nil {
		return nil, err
	}
	if err := storyExists(o.Root, o.Story); err != nil {
		return nil, err
	}
	if !o.FlagsValidated {
		if err := o.Worker.Validate(); err != nil {
			return nil, store.Usagef("%v", err)
		}
	}
	var err error
	if o.SessionDir, err = readmodel.SessionDirOf(o.SessionDir, o.Env); err != nil {
		return nil, err
	}
	// A completed story is not run again, unless asked (a dry run leaves
	// the story alone); one whose worker opened no PR gets it now. Neither
	// needs the run's programs.
	switch {
	case o.Worker.Review:
		if err := o.Reviewable(ctx); err != nil {
			return nil, err
		}
	case !o.Worker.DryRun && !o.Again && !o.Ready:
		if err := o.completed(ctx); err != nil {
			return nil, err
		}
	}
	ws, err := o.preflight(ctx)
	if err != nil {
		return nil, err
	}
	if o.Tmux == nil {
		if o.Tmux, err = o.Setup.FindTmux(ctx); err != nil {
			if errors.Is(err, ErrNoTmux) {
				return nil, fmt.Errorf("%w: apt-get install tmux, or run `saga-lsp worker %s` directly", ErrNoTmux, o.Story)
			}
			return nil, err
		}
	}

	// One worker per story: the lock a live worker holds, and any live
	// session (a worker that has not taken the lock yet). Sessions whose
	// worker has exited (kept by remain-on-exit) are removed.
	all, err := o.Tmux.StorySessions(ctx, o.Story)
	if err != nil {
		return nil, err
	}
	var sessions []string
	for _, s := range all {
		if alive, _ := o.Tmux.Panes(ctx, s); alive {
			sessions = append(sessions, s)
		} else if err := o.Tmux.KillSession(ctx, s); err != nil { // kept by remain-on-exit
			return nil, err
		}
	}
	pid, held, err := runs.WorkerLock(o.Root, o.Story, true)
	if err != nil {
		return nil, err
	}
	if held || len(sessions) > 0 {
		e := &RunningError{Story: o.Story, PID: pid}
		if len(sessions) > 0 {
			e.Session = sessions[len(sessions)-1]
		}
		return nil, e
	}
	if o.Again && !o.Worker.DryRun {
		if err := o.again(ctx); err != nil {
			return nil, err
		}
	}
	// A dependent story builds on its blockers' work. The branches are
	// listed once for the questions below.
	refs, err := git.Repo{Dir: o.Root}.ListRefs(ctx, "refs/heads/")
	if err != nil {
		return nil, err
	}
	if o.Worker.Base, err = storyBranch(ctx, o.Root, ws, refs, o.Story, o.Worker.Base, o.Worker.DryRun); err != nil {
		return nil, err
	}
	// Only a branch that was there before: one this start made (its
	// blockers' merge) is built on the base's tip.
	if refs.Has("refs/heads/" + runs.StoryBranch(o.Story)) {
		if reasons := (Preflight{Root: o.Root}).BaseConflicts(ctx, o.Story, o.Worker.Base); len(reasons) > 0 {
			return nil, &RefusedError{What: "story " + o.Story, Reasons: reasons}
		}
	}
	started, err := launch(ctx, launchSpec{kind: runs.KindStory, id: o.Story, root: o.Root, sessionDir: o.SessionDir, self: o.Self,
		tmux: o.Tmux, env: o.Env, extraEnv: o.WorkerEnv, now: o.Now, wait: o.Wait, args: o.Worker.Args()})
	if started != nil {
		started.Base = o.Worker.Base
	}
	return started, err
}

// completed declines a completed story (*CompletedError): nothing runs.
// Its worker opened no pull request (readmodel.StoryState.NoPR): it is opened now
// (OpenPR), and said in the CompletedError, or why not (*NoPRError).
func (o *RunOptions) completed(ctx context.Context) error {
	st, err := o.state(ctx)
	if err != nil {
		return err
	}
	if st.State != runs.StatusCompleted {
		return nil
	}
	done := &CompletedError{Story: o.Story, Done: st.Done, Total: st.Total, PR: st.PR}
	if st.NoPR == nil {
		return done
	}
	opened, err := OpenPR(ctx, OpenPROptions{Root: o.Root, Story: o.Story, SessionDir: o.SessionDir, Workspace: o.Workspace,
		Parser: o.Parser, Env: o.Env, Now: o.Now})
	var np *NoPRError
	if errors.As(err, &np) && np.Missing {
		done.NotOpened = np
		return done
	}
	if err != nil {
		return err
	}
	done.Opened, done.PR = opened, opened.URL
	return done
}

// Reviewable refuses a review round of a story without a pull request
// (docs/review.md#a-round): there is no review to read.
func (o *RunOptions) Reviewable(ctx context.Context) error {
	if o.Again {
		return store.Usagef("--review continues the story's attempt on its branch and PR; --again would discard it: use one of them")
	}
	st, err := o.state(ctx)
	if err != nil {
		return err
	}
	if st.PR == "" {
		return store.Usagef("story %s has no pull request to review (it is %s): `saga-lsp run %s` runs it and opens one", o.Story, st.State, o.Story)
	}
	return nil
}

// state is the story's state in the read model.
func (o *RunOptions) state(ctx context.Context) (readmodel.StoryState, error) {
	if o.Workspace == nil || o.Parser == nil {
		p := Preflight{Root: o.Root}
		ws, err := p.load()
		if err != nil {
			return readmodel.StoryState{}, err
		}
		o.Workspace, o.Parser = ws, p.Parser
	}
	ev := readmodel.NewEvidence(ctx, o.Root, o.SessionDir, o.Parser)
	ev.Actions = o.Actions
	return ev.Story(ctx, o.Workspace, o.Story), nil
}

// again resets the story's local attempt (run --again) so the new run
// starts from the base's tip.
func (o RunOptions) again(ctx context.Context) error {
	p := o.Parser
	if p == nil {
		var err error
		if p, err = store.NewParser(); err != nil {
			return err
		}
	}
	_, err := Reset(ctx, ResetOptions{Setup: o.Setup, Story: o.Story, Yes: true, Tmux: o.Tmux, Parser: p})
	return err
}

// launchSpec is what launch starts: a worker or an epic runner.
type launchSpec struct {
	kind       runs.Kind
	id         string
	root       string
	sessionDir string
	self       string
	tmux       *Tmux
	env        func(string) string
	extraEnv   []string
	now        func() time.Time
	wait       time.Duration
	args       []string // after <id> --output-file F --session S
}

// launch starts `<self> worker|epic-runner <id> --output-file <file>
// --session <name> <args>` in a detached tmux session and waits until it
// holds its lock (or died: *StartError). Unset, self is runs.SelfPath, now
// time.Now and wait DefaultStartWait.
func launch(ctx context.Context, l launchSpec) (*readmodel.Started, error) {
	if l.self == "" {
		var err error
		if l.self, err = runs.SelfPath(l.env); err != nil {
			return nil, err
		}
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.wait <= 0 {
		l.wait = DefaultStartWait
	}
	if err := runs.MakeSessionDir(l.sessionDir); err != nil {
		return nil, err
	}
	session := runs.KindSessionName(l.kind, l.id, l.now())
	out := runs.OutputFile(l.sessionDir, session)
	st := &readmodel.Started{Session: session, OutputFile: out, EventsFile: runs.EventsFile(out), Attach: l.tmux.AttachCommand(session)}
	cmd := runs.CommandWorker
	if l.kind == runs.KindEpic {
		st.Epic, cmd = l.id, runs.CommandEpicRunner
	} else {
		st.Story = l.id
	}
	argv := append([]string{l.self, cmd, l.id, "--output-file", out, "--session", session}, l.args...)
	env := []string{runs.EnvSessionDir + "=" + l.sessionDir, runs.EnvSession + "=" + session}
	for _, k := range forwardedEnv() {
		if v := runs.Getenv(l.env, k); v != "" && !strings.ContainsAny(v, "\n\x00") {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, l.extraEnv...)
	if err := l.tmux.NewSession(ctx, session, l.root, env, argv); err != nil {
		return nil, fmt.Errorf("start tmux session %s: %w", session, err)
	}
	return st, waitStarted(ctx, l.tmux, st, l.wait)
}

// preflight refuses a run that cannot work (*RefusedError), before
// anything is created, and returns the workspace it read.
func (o RunOptions) preflight(ctx context.Context) (*store.Workspace, error) {
	p := Preflight{Root: o.Root, DryRun: o.Worker.DryRun, Force: o.Force || o.Ready /* its blockers are completed */, Env: o.Env, SessionDir: o.SessionDir, Parser: o.Parser,
		AllowUnconfinedChecks: o.Worker.AllowUnconfinedChecks, Actions: o.Actions}
	var reasons []string
	if !o.Preflighted {
		reasons = p.Programs(ctx)
	}
	ws := o.Workspace
	if ws == nil || p.Parser == nil { // blockers' branches are parsed with it
		var err error
		if ws, err = p.load(); err != nil {
			return nil, err
		}
	}
	reasons = append(reasons, p.Story(ctx, ws, o.Story)...)
	reasons = append(reasons, p.WorktreeEdits(ctx, o.Story)...)
	if len(reasons) > 0 {
		return nil, &RefusedError{What: "story " + o.Story, Reasons: reasons}
	}
	return ws, nil
}

// storyExists checks that the story's folder and story.json are there.
func storyExists(root, story string) error {
	rel := store.StoryFileRel(story)
	fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
	if err == nil && fi.Mode().IsRegular() {
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", rel, err)
	}
	if near := store.DidYouMean(story, store.StoryNames(root)); near != "" {
		return store.Usagef("no story %q in %s%s (`saga-lsp status` lists the stories)", story, root, near)
	}
	return store.Usagef("no story %q in %s: %s does not exist (`saga-lsp status` lists the stories; `saga-lsp new story %s --title …` creates it)",
		story, root, rel, story)
}

// waitStarted polls the events file until the worker holds its lock (or
// got past it), ends, or its session dies; at most wait. A worker that has
// not reported by then is taken as starting slowly.
func waitStarted(ctx context.Context, t *Tmux, st *readmodel.Started, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for look := 0; ; look++ {
		sum := runs.ReadRun(st.EventsFile)
		if sum != nil {
			st.PID = sum.PID
			if sum.Ended {
				if sum.ExitCode != nil && *sum.ExitCode == 0 {
					st.Finished = true
					return nil
				}
				return startError(st, sum.ExitCode)
			}
			if sum.Locked {
				return nil
			}
		}
		// The events file is read at every look; tmux, a process, is asked
		// at the first and every panesEvery-th.
		if look%panesEvery == 0 {
			if over, err := startOver(ctx, t, st); over {
				return err
			}
		}
		if time.Now().After(deadline) {
			return nil
		}
		if err := pause(ctx, startPoll); err != nil {
			return err
		}
	}
}

// startOver asks tmux whether the worker's session lives, and tells
// whether the wait is over: the session gone (err says how the worker
// ended; nil when it finished already), or ctx done.
func startOver(ctx context.Context, t *Tmux, st *readmodel.Started) (over bool, err error) {
	alive, _ := t.Panes(ctx, st.Session)
	if ctx.Err() != nil {
		// tmux was not asked (a cancelled command): the session is not
		// dead, and killing it would kill the worker mid-step.
		return true, ctx.Err()
	}
	if alive {
		return false, nil
	}
	// Read once more: the worker may have written its end just before
	// the session closed.
	sum := runs.ReadRun(st.EventsFile)
	if sum != nil && sum.Ended && sum.ExitCode != nil && *sum.ExitCode == 0 {
		st.Finished = true
		return true, nil
	}
	var code *int
	if sum != nil {
		code = sum.ExitCode
	}
	// A session kept after its pane died (remain-on-exit) goes too.
	_ = t.KillSession(context.WithoutCancel(ctx), st.Session)
	return true, startError(st, code)
}

// startPoll is how often a start looks at its worker's events file, and
// panesEvery how many looks apart it asks tmux whether the worker's
// session lives (a worker dead before its first event): tmux at every
// look was K processes every 25 ms while an epic's K starts were under
// way, on the cores the workers were starting on.
const (
	startPoll  = 25 * time.Millisecond
	panesEvery = 8
)

// pause waits d, or returns ctx's error once it is done.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func startError(st *readmodel.Started, code *int) error {
	return &StartError{Story: st.Story, Epic: st.Epic, Session: st.Session, OutputFile: st.OutputFile,
		Output: tail(st.OutputFile, 64<<10), ExitCode: code}
}

// tail reads at most the last n bytes of a regular file ("" when
// unreadable, or a FIFO or device: never waited for).
func tail(path string, n int64) string {
	f, err := filesafe.OpenRegular(path, os.O_RDONLY, 0, false)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	if fi.Size() > n {
		if _, err := f.Seek(fi.Size()-n, io.SeekStart); err != nil {
			return ""
		}
	}
	b, _ := io.ReadAll(io.LimitReader(f, n))
	return string(b)
}
