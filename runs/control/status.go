package control

// `saga-lsp status [<story>]`: stories with their tasks in Claude Code's
// TaskList form, the worker state (from its lock, its tmux session and its
// events file) and the PR. While a worker runs, statuses come from the
// story's worktree copy, where the worker writes.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// Worker states (WorkerInfo.State) beside runs.StateStarting (a session or
// process exists, the lock is not taken yet) and runs.StateRunning (the
// worker holds its lock). A finished run's state is its worker.end status:
// completed, failed, timeout, blocked or stopped.
const (
	StateIdle = "idle" // no run recorded in the session folder
	StateDied = "died" // the last run ended without a worker.end event (killed)
)

// WorkerInfo is the state of a story's worker.
type WorkerInfo struct {
	Running    bool    `json:"running"`
	PID        int     `json:"pid"`        // 0 when unknown
	Session    string  `json:"session"`    // tmux session of the running or last run
	OutputFile string  `json:"outputFile"` // its human log
	State      string  `json:"state"`      // idle, starting, running, died, or the last run's worker.end status
	Cycle      int     `json:"cycle"`      // the current (or last) headless run, 0 before the first
	ExitCode   *int    `json:"exitCode"`   // the last run's exit code; null while running or unknown
	Started    string  `json:"started"`    // RFC 3339 time of worker.start, "" when unknown
	Bash       string  `json:"bash"`       // how Bash ran: sandboxed, unsandboxed, off; "" when unknown
	DryRun     bool    `json:"dryRun"`     // the simulated agent stood in for Claude Code
	Cost       float64 `json:"cost"`       // USD the runs reported
	// Why says, for a last run that did not complete, what stopped it and
	// the next step (its worker.end message).
	Why string `json:"why,omitempty"`
}

// TaskStatus is one task in TaskList form.
type TaskStatus struct {
	ID        string   `json:"id"`
	Subject   string   `json:"subject"`
	Status    string   `json:"status"`
	BlockedBy []string `json:"blockedBy"` // unfinished blockers only, as in TaskList
	// Broken is set for a task file that is no task (empty, unreadable,
	// unparsable or schema-invalid): never shown as one.
	Broken *BrokenFile `json:"broken,omitempty"`
	// Check is the last result of the task's checks in the last run
	// (check.end), when it has one.
	Check *CheckStatus `json:"check,omitempty"`
}

// BrokenFile is why a file is not what it should be: its first finding.
type BrokenFile struct {
	Code    string `json:"code"`
	Problem string `json:"problem"` // as `check` prints it: path:line:col: severity: message [code]
}

// CheckStatus is a task's last check result.
type CheckStatus struct {
	Command    string `json:"command"`
	Passed     bool   `json:"passed"`
	ExitCode   int    `json:"exitCode"`
	TimedOut   bool   `json:"timedOut"`
	DurationMs int64  `json:"durationMs"`
}

// StoryStatus is one story's line (and, on request, its tasks).
type StoryStatus struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// State is the story's state (readmodel.Evidence.Story): pending, running,
	// completed, failed, timeout, blocked, stopped.
	State   string `json:"state"`
	Status  string `json:"status"` // as its tasks show it where they are read (pending, in_progress, completed); completed when State is
	Done    int    `json:"done"`
	Total   int    `json:"total"`
	Epic    string `json:"epic"`
	PR      string `json:"pr"`
	PRState string `json:"prState,omitempty"` // as last recorded (readmodel.StoryState.PRState)
	// NoPR: completed without a pull request yet, why and the next step
	// (readmodel.StoryState.NoPR).
	NoPR *readmodel.NoPRState `json:"noPR,omitempty"`
	// Review is its PR's review loop as recorded (readmodel.StoryState.Review).
	Review   *readmodel.ReviewState `json:"review,omitempty"`
	Branch   string                 `json:"branch"`
	Worktree string                 `json:"worktree"`
	Worker   WorkerInfo             `json:"worker"`
	Tasks    []TaskStatus           `json:"tasks,omitzero"` // only when asked for
	// DryRun is what the story's dry run left, apart from the story's own
	// state (docs/worker.md#dry-runs); absent when nothing.
	DryRun *readmodel.DryState `json:"dryRun,omitempty"`
	// Protected are the protected files the story's last run found changed
	// that keep its PR a draft (docs/worker.md#protected-files).
	Protected []runs.ProtectedFile `json:"protected,omitzero"`
	// Actions is its GitHub Actions run, when it runs or ran there; Why
	// then says what stopped it (or why its state is unknown).
	Actions *readmodel.ActionsRun `json:"actions,omitempty"`
	Why     string                `json:"why,omitempty"`
	// IgnoredRuns are GitHub's runs named as the story's that are not the
	// run saga-lsp dispatched (readmodel.StoryState.IgnoredRuns); text: --verbose.
	IgnoredRuns []readmodel.IgnoredRun `json:"ignoredRuns,omitempty"`
	// BaseMoved: the branch it is stacked on moved past it
	// (readmodel.StoryState.BaseMoved, docs/restack.md).
	BaseMoved *readmodel.BaseMoved `json:"baseMoved,omitempty"`
	// Land: why `saga-lsp land` last stopped it (readmodel.StoryState.Land,
	// docs/landing.md).
	Land *runs.LandRecord `json:"land,omitempty"`
	// Conflict: its open conflict-resolution task (readmodel.StoryState.Conflict,
	// docs/landing.md#a-conflict).
	Conflict *readmodel.Conflict `json:"conflict,omitempty"`

	// Next is its next step, the read model's (readmodel.StoryState.Next):
	// the action every face offers and the step in words.
	Next readmodel.NextStep `json:"next"`

	// From is where the statuses were read (readmodel.StoryState.From).
	From string `json:"-"`
}

// Status is the result of GetStatus.
type Status struct {
	Stories []StoryStatus `json:"stories"`

	single     bool
	verbose    bool
	epicTitles map[string]string
}

// StatusOptions configure GetStatus.
type StatusOptions struct {
	// Setup is the root's, resolved once by the caller; its Actions asks
	// GitHub about stories dispatched to GitHub Actions (Evidence.Actions).
	Setup
	Story   string        // one story (with its tasks); "" for every story
	Tasks   bool          // include tasks for every story
	Tmux    *Tmux         // default Setup.FindTmux; sessions are not listed without tmux
	Parser  *store.Parser // default store.NewParser()
	Verbose bool          // GitHub asked about every story, and the text shows what it ignores (IgnoredRuns)
}

// GetStatus reads the stories, their worktree copies, tmux sessions, worker
// locks and events files. An unknown or invalid story is a *UsageError.
func GetStatus(ctx context.Context, o StatusOptions) (*Status, error) {
	p := o.Parser
	if p == nil {
		var err error
		if p, err = store.NewParser(); err != nil {
			return nil, err
		}
	}
	var err error
	if o.SessionDir, err = readmodel.SessionDirOf(o.SessionDir, o.Env); err != nil {
		return nil, err
	}
	var sessions map[string][]string
	t := o.Tmux
	if t == nil {
		var err error
		if t, err = o.Setup.FindTmux(ctx); err != nil && !errors.Is(err, ErrNoTmux) {
			return nil, err
		}
	}
	if t != nil {
		names, err := t.Sessions(ctx)
		if err != nil {
			return nil, err
		}
		sessions = groupSessions(names, runs.KindStory)
	}
	res := &Status{Stories: []StoryStatus{}, epicTitles: map[string]string{}, verbose: o.Verbose}
	if o.Story != "" {
		if err := store.CheckName("story name", o.Story, true, false); err != nil {
			return nil, err
		}
		if err := storyExists(o.Root, o.Story); err != nil {
			return nil, err
		}
	}
	// The runs first, then the files they write (readmodel.Evidence.Settle).
	ev, err := readmodel.Gathered(ctx, o.Root, o.SessionDir, o.Env, p, nil)
	if err != nil {
		return nil, err
	}
	ws, err := p.Load(o.Root)
	if err != nil {
		return nil, err
	}
	ev.Actions = o.Actions
	// --verbose asks GitHub about every story, to show the runs it ignores.
	ev.Discover = o.Verbose && o.Actions != nil
	if o.Story != "" {
		if ws.Story(o.Story) == nil {
			return nil, store.Usagef("no story %q in %s", o.Story, o.Root)
		}
		res.single = true
		res.Stories = append(res.Stories, storyStatus(ctx, ev, ws, o.Story, true, runs.LatestIn(o.SessionDir, runs.KindStory, o.Story, o.Root), sessions[o.Story]))
		return res, nil
	}
	all := runs.ListRuns(o.SessionDir, runs.KindStory)
	ev.Prefetch(ws.SortedStoryIDs())
	for _, id := range ws.SortedStoryIDs() {
		var last *runs.Run
		for i := len(all[id]) - 1; i >= 0 && last == nil; i-- {
			if r := runs.ReadRun(all[id][i].EventsFile); r != nil && r.In(o.Root) {
				last = r
			}
		}
		res.Stories = append(res.Stories, storyStatus(ctx, ev, ws, id, o.Tasks, last, sessions[id]))
	}
	for _, id := range ws.SortedEpicIDs() {
		res.epicTitles[id] = ws.Epic(id).Title
	}
	// Grouped by epic (epics by id, standalone stories last), then by id.
	slices.SortStableFunc(res.Stories, func(a, b StoryStatus) int {
		switch {
		case a.Epic == b.Epic:
			return strings.Compare(a.ID, b.ID)
		case a.Epic == "":
			return 1
		case b.Epic == "":
			return -1
		}
		return strings.Compare(a.Epic, b.Epic)
	})
	return res, nil
}

// storyStatus is the story's line: its state, statuses and counts as
// readmodel.Evidence.Story reads them (the worktree copy, else its branch, else the
// checkout's copy), its worker (from the newest run, dry or not: labelled)
// and, on request, its tasks.
func storyStatus(ctx context.Context, ev *readmodel.Evidence, ws *store.Workspace, id string, withTasks bool, last *runs.Run, sessions []string) StoryStatus {
	state := ev.Story(ctx, ws, id)
	copies := ws.Copies(id)
	view := copies.Live()
	main := copies.Main
	if main == nil {
		main = view
	}
	st := StoryStatus{
		ID: id, Title: first(view.Title, main.Title), State: state.State, Status: tasksStatus(state),
		Done: state.Done, Total: state.Total, Epic: main.EpicID(),
		PR: state.PR, PRState: state.PRState, NoPR: state.NoPR, Review: state.Review, Branch: state.Branch, Worktree: copies.WorktreeDir(), DryRun: state.Dry, From: state.From,
		Next: state.Next(), BaseMoved: state.BaseMoved, Land: state.Land, Conflict: state.Conflict,
	}
	// The worktree on disk, else the run's (its events, its record), else
	// story.json, where saga-lsp before issue 23 kept it — each only while
	// it is on disk: a removed one is no place to go, and the dashboard
	// (the workspace's copies) does not name it either.
	rec, _ := ev.Records().Read(id)
	var run runs.Run
	if last != nil && !last.DryRun {
		run = *last
	}
	st.Protected = rec.Protected
	if run.ProtectedSeen {
		st.Protected = run.ProtectedBlocking()
	}
	if st.Worktree == "" {
		if wt := first(run.Worktree, rec.Worktree, view.Worktree); wt != "" {
			abs := wt
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(ev.Root, filepath.FromSlash(abs))
			}
			if _, err := os.Stat(abs); err == nil {
				st.Worktree = wt
				if r, err := filepath.Rel(ev.Root, wt); err == nil && filepath.IsAbs(wt) && !strings.HasPrefix(r, "..") {
					st.Worktree = filepath.ToSlash(r)
				}
			}
		}
	}
	st.Worker = workerInfo(ev.Root, id, last, sessions)
	if st.Actions = state.Actions; st.Actions != nil {
		st.Why = state.Why
	}
	st.IgnoredRuns = state.IgnoredRuns
	if !withTasks {
		return st
	}
	var checks *runs.Run // the check results of the last real run
	if last != nil && !last.DryRun {
		checks = last
	} else if r, _ := ev.LastRuns(id); r != nil {
		checks = r
	}
	st.Tasks = make([]TaskStatus, 0, len(view.Tasks))
	for _, t := range view.Tasks {
		ts := TaskStatus{ID: t.ID, Subject: t.Subject, Status: t.Status, BlockedBy: []string{}}
		if s, ok := state.Tasks[t.ID]; ok {
			ts.Status = s
		}
		if d, broken := t.File.Broken(); broken {
			ts.Broken = &BrokenFile{Code: string(d.Code), Problem: d.String()}
		}
		if c, ok := checks.CheckOf(t.ID); ok {
			ts.Check = &CheckStatus{Command: c.Command, Passed: c.Passed, ExitCode: c.ExitCode, TimedOut: c.TimedOut, DurationMs: c.DurationMs}
		}
		for _, b := range t.BlockedBy {
			status, read := state.Tasks[b.ID]
			if bt := view.Task(b.ID); !read && bt != nil {
				status = bt.Status
			}
			if status != store.StatusCompleted && !slices.Contains(ts.BlockedBy, b.ID) {
				ts.BlockedBy = append(ts.BlockedBy, b.ID)
			}
		}
		st.Tasks = append(st.Tasks, ts)
	}
	return st
}

// tasksStatus is a story's status as its tasks show it where they were
// read: completed (also whenever its state is), in_progress once one is
// started or done, else pending.
func tasksStatus(st readmodel.StoryState) string {
	if st.State == runs.StatusCompleted || (st.Total > 0 && st.Done == st.Total) {
		return store.StatusCompleted
	}
	for _, s := range st.Tasks {
		if s == store.StatusInProgress || s == store.StatusCompleted {
			return store.StatusInProgress
		}
	}
	return store.StatusPending
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// workerInfo combines the worker lock, the story's live tmux sessions
// (oldest first) and its newest events file.
func workerInfo(root, story string, last *runs.Run, sessions []string) WorkerInfo {
	w := WorkerInfo{State: StateIdle}
	// The live session: the newest one not known to have ended.
	live := ""
	for _, s := range slices.Backward(sessions) {
		if last != nil && last.Session == s && last.Ended {
			continue
		}
		live = s
		break
	}
	useRun := func() {
		w.Session, w.OutputFile, w.Cycle = last.Session, last.OutputFile, last.Cycle
		w.Bash, w.DryRun, w.Cost = last.Bash, last.DryRun, last.Cost
		if !last.Started.IsZero() {
			w.Started = last.Started.UTC().Format(time.RFC3339)
		}
	}
	lockPID, held, err := runs.WorkerLock(root, story, false)
	switch {
	case err == nil && held:
		w.Running, w.PID, w.State = true, lockPID, runs.StateRunning
		if last != nil && !last.Ended && (last.PID == lockPID || lockPID == 0) {
			useRun()
			if w.PID == 0 {
				w.PID = last.PID
			}
		} else {
			w.Session = live
		}
	case last != nil && !last.Ended && filesafe.ProcessAlive(last.PID):
		// Before the lock step, or after the lock's release while the
		// worker writes its end.
		w.Running, w.PID, w.State = true, last.PID, runs.StateStarting
		if last.Locked {
			w.State = runs.StateRunning
		}
		useRun()
	case live != "":
		w.Running, w.State, w.Session = true, runs.StateStarting, live
		if last != nil && last.Session == live {
			useRun()
			w.PID = last.PID
		}
	case last == nil:
	case last.Ended:
		useRun()
		w.PID, w.State, w.ExitCode = last.PID, last.State, last.ExitCode
		if w.State == "" {
			w.State = "ended"
		}
		if w.State != runs.StatusCompleted {
			w.Why = last.Message
		}
	default:
		useRun()
		w.PID, w.State = last.PID, StateDied
	}
	return w
}
