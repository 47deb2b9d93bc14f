package control

// `saga-lsp stop <story>` and the language server's saga.stopStory: SIGINT
// to the story's worker, which cleans up, then its tmux sessions go.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
	"golang.org/x/sys/unix"
)

// StopOptions configure StopStory.
type StopOptions struct {
	Root       string
	Story      string
	SessionDir string              // default runs.SessionDir(Env)
	Tmux       *Tmux               // default FindTmux(Env); without tmux only the process is signalled
	Env        func(string) string // default os.Getenv
	Wait       time.Duration       // default DefaultStopWait
}

// Stopped reports what StopStory ended.
type Stopped struct {
	Story      string   `json:"story,omitempty"`
	Epic       string   `json:"epic,omitempty"`
	Stopped    bool     `json:"stopped"`
	PID        int      `json:"pid"`        // the worker signalled (0 when only sessions were killed)
	Sessions   []string `json:"sessions"`   // tmux sessions of the story that were killed
	State      string   `json:"state"`      // the worker's final status (worker.end), or "" when unknown
	ExitCode   *int     `json:"exitCode"`   // the worker's exit code (worker.end)
	OutputFile string   `json:"outputFile"` // the stopped worker's output file, when known
	Forced     bool     `json:"forced"`     // the worker did not end within the wait: its session was killed
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
	if o.SessionDir == "" {
		o.SessionDir = runs.SessionDir(o.Env)
	}
	if o.Tmux == nil {
		t, err := FindTmux(ctx, o.Env)
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

// StopStory sends SIGINT to the story's worker (found by its lock, the
// newest events file, or its tmux session's pane), waits up to o.Wait for it
// to clean up and exit, then kills the story's tmux sessions that are still
// there. It returns ErrNotRunning (wrapped) when there was nothing to stop.
func StopStory(ctx context.Context, o StopOptions) (*Stopped, error) {
	if err := o.prepare(ctx, runs.KindStory); err != nil {
		return nil, err
	}
	res := &Stopped{Story: o.Story, Sessions: []string{}}

	var sessions []string
	if o.Tmux != nil {
		var err error
		if sessions, err = o.Tmux.StorySessions(ctx, o.Story); err != nil {
			return nil, err
		}
	}
	// Who to signal: the lock holder, else the newest run's pid when it
	// still runs a worker for the story, plus the sessions' pane processes.
	var targets []int
	lockPID, held, err := runs.WorkerLock(o.Root, o.Story, true)
	if err != nil {
		return nil, err
	}
	latest := runs.Latest(o.SessionDir, runs.KindStory, o.Story)
	if held && lockPID > 0 {
		targets = append(targets, lockPID)
	} else if latest != nil && !latest.Ended && latest.Alive() {
		targets = append(targets, latest.PID)
	}
	for _, s := range sessions {
		if _, pids := o.Tmux.Panes(ctx, s); len(pids) > 0 {
			for _, p := range pids {
				if !slices.Contains(targets, p) {
					targets = append(targets, p)
				}
			}
		}
	}
	if len(targets) == 0 && len(sessions) == 0 && !held {
		return res, fmt.Errorf("%w for story %s: no worker holds its lock and no tmux session %s%s-* exists",
			ErrNotRunning, o.Story, runs.StorySessionPrefix, o.Story)
	}
	if len(targets) == 0 && len(sessions) == 0 {
		return res, fmt.Errorf("the worker lock of story %s is held by a process that did not record its pid: find it with `fuser %s`",
			o.Story, runs.WorkerLockFile(o.Root, o.Story))
	}
	if len(targets) > 0 {
		res.PID = targets[0]
	}
	for _, p := range targets {
		_ = unix.Kill(p, unix.SIGINT)
	}

	// Wait for the cleanup: the lock released and the processes gone.
	done := func() bool {
		for _, p := range targets {
			if store.ProcessAlive(p) {
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
		for _, s := range left {
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
