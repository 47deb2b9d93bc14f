package control

// `saga-lsp stop <story>` and the language server's saga.stopStory: SIGINT
// to the story's worker, which cleans up, then its tmux sessions go.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/store"
)

// StopOptions configure StopStory.
type StopOptions struct {
	// Setup is the root's, resolved once by the caller; its Actions, when
	// set, cancels the story's GitHub Actions run instead (stopActions).
	Setup
	Story string
	Tmux  *Tmux         // default Setup.FindTmux; without tmux only the process is signalled
	Wait  time.Duration // default DefaultStopWait
}

// Stopped reports what StopStory ended.
type Stopped struct {
	Story      string   `json:"story,omitempty"`
	Epic       string   `json:"epic,omitempty"`
	Stopped    bool     `json:"stopped"`
	PID        int      `json:"pid"`           // the worker signalled (0 when only sessions were killed)
	Sessions   []string `json:"sessions"`      // tmux sessions of the story that were killed
	State      string   `json:"state"`         // the worker's final status (worker.end), or "" when unknown
	ExitCode   *int     `json:"exitCode"`      // the worker's exit code (worker.end)
	OutputFile string   `json:"outputFile"`    // the stopped worker's output file, when known
	Forced     bool     `json:"forced"`        // the worker did not end within the wait: its session was killed
	URL        string   `json:"url,omitempty"` // the GitHub Actions run cancelled
}

// prepare refuses an invalid name of what k stops (o.Story: a story's name or
// an epic's id), then sets what the caller left unset to its default.
func (o *StopOptions) prepare(ctx context.Context, k runs.Kind) error {
	switch {
	case k == runs.KindEpic && !store.ValidID(o.Story):
		return store.Usagef("invalid epic id %q", o.Story)
	case k == runs.KindStory && !store.ValidCanonical(o.Story):
		return store.Usagef("invalid story name %q", o.Story)
	}
	if o.Wait <= 0 {
		o.Wait = DefaultStopWait
	}
	var err error
	if o.SessionDir, err = readmodel.SessionDirOf(o.SessionDir, o.Env); err != nil {
		return err
	}
	if o.Tmux == nil {
		t, err := o.Setup.FindTmux(ctx)
		if err != nil && !errors.Is(err, ErrNoTmux) {
			return err
		}
		o.Tmux = t
	}
	return nil
}

// ended records the final state of the stopped run, when it has one.
func (res *Stopped) ended(run *runs.Run) {
	if run == nil {
		return
	}
	res.OutputFile = run.OutputFile
	if run.Ended {
		res.State, res.ExitCode = run.State, run.ExitCode
	}
}

// targets are the processes a stop of k's o.Story may signal, the lock's
// holder first: its live runs' processes as the session dir recorded them
// (runs.Run.Alive: pid, start time, command line) and the panes of its
// tmux sessions that run its worker or runner.
func (o *StopOptions) targets(ctx context.Context, k runs.Kind, sessions []string, lockPID int) []int {
	cmd := runs.CommandWorker
	if k == runs.KindEpic {
		cmd = runs.CommandEpicRunner
	}
	var out []int
	add := func(pid int) {
		if !slices.Contains(out, pid) {
			out = append(out, pid)
		}
	}
	rs := runs.Runs(o.SessionDir, k, o.Story)
	for i := len(rs) - 1; i >= 0 && i >= len(rs)-5; i-- {
		if r := runs.ReadRun(rs[i].EventsFile); r != nil && !r.Ended && r.Alive() && r.In(o.Root) {
			add(r.PID)
		}
	}
	if i := slices.Index(out, lockPID); i > 0 {
		out[0], out[i] = out[i], out[0]
	}
	for _, s := range sessions {
		if _, pids := o.Tmux.Panes(ctx, s); len(pids) > 0 {
			for _, p := range pids {
				if supervise.LooksLike(p, cmd, o.Story) {
					add(p)
				}
			}
		}
	}
	return out
}

// unverifiedHolder refuses to signal the holder of a lock that no recorded
// run vouches for.
func unverifiedHolder(who, kind, id string, lockPID int, sessionDir, lockFile string) error {
	names := ""
	if lockPID > 0 {
		names = fmt.Sprintf("; the lock file names pid %d, which was not signalled: any process that can write the file could have put it there", lockPID)
	}
	return fmt.Errorf("the %s lock of %s %s is held, but no live %s of it is recorded in %s%s. Find the holder with `fuser %s` and stop it yourself",
		who, kind, id, who, sessionDir, names, lockFile)
}

// waitUntil polls done every 50 ms until it holds or the deadline passes;
// it returns ctx's error when ctx ends first.
func waitUntil(ctx context.Context, deadline time.Time, done func() bool) error {
	for !done() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// StopStory sends SIGINT to the story's worker (found by its recorded runs
// or its tmux session's pane, never by the lock file's content: targets),
// waits up to o.Wait for it
// to clean up and exit, then kills the story's tmux sessions that are still
// there. It returns ErrNotRunning (wrapped) when there was nothing to stop.
func StopStory(ctx context.Context, o StopOptions) (*Stopped, error) {
	if err := o.prepare(ctx, runs.KindStory); err != nil {
		return nil, err
	}
	res := &Stopped{Story: o.Story, Sessions: []string{}}
	if o.Actions != nil {
		if done, err := o.stopActions(ctx, res); done || err != nil {
			return res, err
		}
	}

	var sessions []string
	if o.Tmux != nil {
		var err error
		if sessions, err = o.Tmux.StorySessions(ctx, o.Story); err != nil {
			return nil, err
		}
		sessions = o.ownSessions(ctx, runs.KindStory, sessions)
	}
	// Who to signal: the story's workers as their runs recorded them in
	// the session dir, and the panes of its sessions that run its worker
	// (one that has not recorded itself yet). Never a pid only the lock
	// file names: the agent can write that file.
	lockPID, held, err := runs.WorkerLock(o.Root, o.Story, true)
	if err != nil {
		return nil, err
	}
	targets := o.targets(ctx, runs.KindStory, sessions, lockPID)
	if len(targets) == 0 && len(sessions) == 0 && !held {
		return res, fmt.Errorf("%w for story %s: no worker holds its lock and no tmux session %s%s-* exists",
			ErrNotRunning, o.Story, runs.StorySessionPrefix, o.Story)
	}
	if len(targets) == 0 && len(sessions) == 0 {
		return res, unverifiedHolder("worker", "story", o.Story, lockPID, o.SessionDir, runs.WorkerLockFile(o.Root, o.Story))
	}
	if len(targets) > 0 {
		res.PID = targets[0]
	}
	for _, p := range targets {
		_ = supervise.Interrupt(p)
	}

	// Wait for the cleanup: the lock released and the processes gone.
	done := func() bool {
		for _, p := range targets {
			if filesafe.ProcessAlive(p) {
				return false
			}
		}
		_, held, err := runs.WorkerLock(o.Root, o.Story, false)
		return err == nil && !held
	}
	if err := waitUntil(ctx, time.Now().Add(o.Wait), done); err != nil {
		return res, err
	}
	if !done() {
		res.Forced = true
	}

	// Sessions still there: a worker that did not stop in time (killing
	// the session hangs it up), a dead pane kept by remain-on-exit, or a
	// session that never got as far as a worker.
	if o.Tmux != nil {
		left, err := o.Tmux.StorySessions(ctx, o.Story)
		if err != nil {
			return res, err
		}
		for _, s := range o.ownSessions(ctx, runs.KindStory, left) {
			if err := o.Tmux.KillSession(ctx, s); err != nil {
				return res, err
			}
			res.Sessions = append(res.Sessions, s)
		}
	}
	if res.Forced {
		// A last grace period, whatever ctx says: the sessions are gone.
		_ = waitUntil(context.WithoutCancel(ctx), time.Now().Add(3*time.Second), done)
		if !done() {
			return res, fmt.Errorf("the worker for story %s (pid %d) did not stop within %s of SIGINT: end it with `kill %d`",
				o.Story, res.PID, o.Wait, res.PID)
		}
	}
	res.Stopped = true

	// The final status from the stopped worker's events file.
	res.ended(runs.RunOf(o.SessionDir, o.Story, res.PID))
	return res, nil
}

// stopActions cancels the story's Actions run when it is queued or in
// progress (`gh run cancel`) and waits up to o.Wait for GitHub to report
// it completed: the story is stopped then (readmodel.Evidence.Story). done is false
// when the story has no live Actions run.
//
// Only the run the story's dispatch from here created is cancelled (Find):
// a run someone else started under the story's name is never touched.
func (o *StopOptions) stopActions(ctx context.Context, res *Stopped) (done bool, err error) {
	last := runs.LatestIn(o.SessionDir, runs.KindStory, o.Story, o.Root)
	if last == nil || last.Backend != readmodel.BackendGitHub {
		return false, nil // not dispatched from here: the story may well be local
	}
	ar, _, ok, err := o.Actions.Find(ctx, o.Story, last)
	if err != nil {
		if !last.Ended {
			return false, fmt.Errorf("cannot ask GitHub about story %s's readmodel.Actions run %s: %w", o.Story, last.URL, err)
		}
		return false, nil
	}
	if !ok || ar.Status == readmodel.ActionsCompleted {
		return false, nil
	}
	if err := o.Actions.Cancel(ctx, ar); err != nil {
		return true, fmt.Errorf("gh run cancel %d (%s): %w", ar.ID, ar.URL, err)
	}
	res.Stopped, res.URL = true, ar.URL
	ended := func() bool {
		now, _, ok, err := o.Actions.Find(ctx, o.Story, last)
		if err == nil && ok && now.ID == ar.ID && now.Status == readmodel.ActionsCompleted {
			res.State = runs.StatusStopped
			return true
		}
		return false
	}
	if err := waitUntil(ctx, time.Now().Add(o.Wait), ended); err != nil {
		return true, err
	}
	res.Forced = res.State == "" // cancel asked; GitHub ends the job later
	return true, nil
}

// ownSessions keeps the sessions of this repository's runs: a tmux
// session is named for the story only, and the user's tmux server holds
// every repository's (runs.Run.In). One whose run has not recorded itself
// yet is told by where its worker runs.
func (o *StopOptions) ownSessions(ctx context.Context, k runs.Kind, sessions []string) []string {
	var out []string
	for _, s := range sessions {
		if r := runs.ReadRun(runs.EventsFile(runs.OutputFile(o.SessionDir, s))); r != nil {
			if r.In(o.Root) {
				out = append(out, s)
			}
			continue
		}
		// No run recorded: another repository's only when a pane runs a
		// worker of the story there; a session that never got as far as a
		// worker is stopped, as always.
		_, pids := o.Tmux.Panes(ctx, s)
		ours := true
		for _, p := range pids {
			r := runs.Run{PID: p, Story: o.Story}
			if runs.LooksLikeWorker(p, o.Story) && !r.In(o.Root) {
				ours = false
			}
		}
		if ours {
			out = append(out, s)
		}
	}
	return out
}
