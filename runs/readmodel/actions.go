package readmodel

// A story run on GitHub Actions (docs/github-actions.md#state-from-github):
// its state comes from GitHub, not from this machine's memory — running
// while its Actions run is queued or in progress, then the run's
// conclusion and the statuses on its pushed branch, which must agree for
// completed. runs/github asks GitHub (Actions); Evidence.Story, the one
// answer to "is it done?", folds the answer in, so a runner restarted in a
// fresh clone resumes from GitHub's state and never dispatches a story
// twice.

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// ActionsAppearWait is how long a dispatched run may take to be listed by
// GitHub before its dispatch counts as lost.
const ActionsAppearWait = 60 * time.Second

// GitHub's statuses and conclusions of a workflow run that saga-lsp reads.
const (
	ActionsCompleted = "completed"
	ActionsSuccess   = "success"
	ActionsCancelled = "cancelled"
	ActionsTimedOut  = "timed_out"
)

// ActionsRun is what GitHub says of one Actions run of a story: the one
// home of "what is this story's Actions run", which status, follow, the
// lenses and the dashboard show.
type ActionsRun struct {
	ID         int64     `json:"id"`
	URL        string    `json:"url"`
	Status     string    `json:"status"`               // queued, in_progress, completed, …
	Conclusion string    `json:"conclusion,omitempty"` // success, failure, cancelled, timed_out, …
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"` // GitHub's last change: a completed run's end
	// Why says, for a completed run that did not succeed, where it
	// stopped and why (its failed step's meaning).
	Why string `json:"why,omitempty"`
	// Unknown is why GitHub could not be asked (the network, gh): the
	// state is the last known, asked again at the next look.
	Unknown string `json:"unknown,omitempty"`
	// Refused says why the run record its job uploaded was not believed
	// (not the story's, a pull request elsewhere, a negative cost, too
	// big): it then decides nothing.
	Refused string `json:"refused,omitempty"`
	// Name is the run's name (its run-name: the dispatch's random id),
	// which names its artifact.
	Name string `json:"name,omitempty"`
}

// IgnoredRun is a run of the workflow named as the story's that is not
// the run saga-lsp dispatched (docs/github-actions.md#which-run-is-the-storys):
// it decides nothing, and `status --verbose` shows it with why.
type IgnoredRun struct {
	ID  int64  `json:"id"`
	URL string `json:"url"`
	Why string `json:"why"`
}

// State is the run's state as saga-lsp shows it: GitHub's status, or its
// conclusion once completed.
func (a ActionsRun) State() string {
	if a.Unknown != "" {
		return "unknown"
	}
	if a.Status == ActionsCompleted && a.Conclusion != "" {
		return a.Conclusion
	}
	return a.Status
}

// Text is the run for a terminal: "GitHub Actions <state> <url>".
func (a ActionsRun) Text() string {
	t := "GitHub Actions " + esc(a.State())
	if a.URL != "" {
		t += " " + esc(a.URL)
	}
	return t
}

// Actions asks GitHub about stories run on Actions (runs/github.Runs).
type Actions interface {
	// Find is the Actions run the story's dispatch d created (d is the
	// story's last local run as recorded; nil or not a dispatch: none
	// can be the story's) — ok false: none is listed — and the runs
	// named as the story's that are not it, with why. An error when
	// GitHub cannot be asked.
	Find(ctx context.Context, story string, d *runs.Run) (run ActionsRun, ignored []IgnoredRun, ok bool, err error)
	// Ended reads what a completed run left: origin's story branch is
	// fetched (its statuses are read from there), run.Why says where a
	// failed run stopped, and the run record its job uploaded is returned
	// (ok false: none). An error when GitHub cannot be asked.
	Ended(ctx context.Context, story string, run *ActionsRun) (rec runs.Record, ok bool, err error)
	// Cancel asks GitHub to cancel the run.
	Cancel(ctx context.Context, run ActionsRun) error
	// Refresh makes the next Find ask GitHub again, however recent the
	// listing it holds: a review watcher's poll is its own interval, and a
	// poll must not judge a run by a listing from before it.
	Refresh()
}

// Dispatched is the Actions run a local run dispatched, as recorded here
// (GitHub not asked: Status "dispatched", or the end recordEnd wrote); nil
// for a run of this machine.
func Dispatched(r *runs.Run) *ActionsRun {
	if r == nil || r.Backend != BackendGitHub {
		return nil
	}
	a := &ActionsRun{ID: r.ActionsRun, URL: r.URL, Status: "dispatched", Created: r.Started}
	switch {
	case r.Ended && r.Conclusion != "": // as GitHub gave it to whoever asked last (recordEnd)
		a.Status, a.Conclusion, a.Why = ActionsCompleted, r.Conclusion, r.Message
	case r.Ended: // the dispatch failed (Dispatch)
		a.Status, a.Why = "not dispatched", r.Message
	}
	return a
}

// recordEnd writes what GitHub said of a dispatched run's end into its
// local events file, once: readers that never ask GitHub (the language
// server's watcher, the lenses, the dashboard) see it ended.
func recordEnd(last *runs.Run, st *StoryState, ar *ActionsRun) {
	if last == nil || last.Backend != BackendGitHub || last.Ended || ar.ID == 0 || (last.ActionsRun != 0 && last.ActionsRun != ar.ID) {
		return
	}
	l, err := runs.OpenLog(last.OutputFile, last.Story, "", last.Session, io.Discard, nil)
	if err != nil {
		return // the next reader asks GitHub again
	}
	defer l.Close()
	l.Emit(runs.Event{Event: runs.KindWorkerEnd, Status: st.State, Message: st.Why, Conclusion: ar.Conclusion,
		ActionsRun: ar.ID, Done: runs.Int(st.Done), Total: runs.Int(st.Total), Cost: runs.Float(st.Cost),
		PR: st.PR, Branch: st.Branch, Base: st.Base}, // what its uploaded record said, for readers of the events alone
		fmt.Sprintf("GitHub Actions run %d ended %s: story %s %s", ar.ID, ar.Conclusion, st.ID, st.State))
}

// actionsRun is the Actions run that decides the story's state, when one
// does: the run the story's last dispatch from here created, found by the
// dispatch's random id and followed by its run id — never a run someone
// else started under the same name (those are ignored). GitHub is asked
// about a story dispatched from here, or about every story when
// ev.Discover (to show what it ignores). Without Actions, a dispatched run
// not known to have ended is running as last recorded.
func (ev *Evidence) actionsRun(ctx context.Context, st *StoryState, last *runs.Run) (*ActionsRun, bool) {
	id := st.ID
	dispatched := last != nil && last.Backend == BackendGitHub
	// Its end as GitHub gave it is recorded: rendered from there, GitHub
	// not asked again (but to show the runs it ignores).
	recorded := dispatched && last.Ended && last.Conclusion != ""
	if ev.Actions == nil || !(dispatched || ev.Discover) || (recorded && !ev.Discover) {
		if a := Dispatched(last); a != nil && !last.Ended {
			return a, true // running, as last known
		}
		return nil, false // an end recorded from GitHub folds as any run's
	}
	var d *runs.Run
	if dispatched {
		d = last
	}
	ar, ignored, ok, err := ev.Actions.Find(ctx, id, d)
	st.IgnoredRuns = ignored
	switch {
	case err != nil && !dispatched:
		return nil, false // no run of GitHub's can be the story's
	case err != nil:
		a := &ActionsRun{Unknown: err.Error(), Status: "unknown"}
		if dispatched {
			a.ID, a.URL, a.Created = last.ActionsRun, last.URL, last.Started
		}
		return a, true
	case !ok && dispatched && !last.Ended:
		// Dispatched from here, not (yet) listed by GitHub.
		a := &ActionsRun{Status: "dispatched", Created: last.Started}
		if time.Since(last.Started) > ActionsAppearWait {
			a.Status, a.Conclusion = ActionsCompleted, "lost"
			a.Why = fmt.Sprintf("dispatched at %s, but GitHub lists no run named %q: it may still start (`gh run list --workflow saga-story.yml`); `saga-lsp run %s --on github` dispatches it again",
				last.Started.Format(time.RFC3339), last.RunName, id)
		}
		return a, true
	case !ok:
		return nil, false
	}
	recordFound(last, &ar)
	return &ar, true
}

// recordFound records, once, the run id of the run a dispatch created
// when the dispatch itself could not (it was listed late): from then on
// the run is followed by its id.
func recordFound(last *runs.Run, ar *ActionsRun) {
	if last == nil || last.Backend != BackendGitHub || last.Ended || last.ActionsRun != 0 || ar.ID == 0 {
		return
	}
	l, err := runs.OpenLog(last.OutputFile, last.Story, "", last.Session, io.Discard, nil)
	if err != nil {
		return // found again by its name at the next look
	}
	defer l.Close()
	l.Emit(runs.Event{Event: runs.KindDispatch, Backend: BackendGitHub, RunName: last.RunName, Root: last.Root,
		Workflow: last.Workflow, Ref: last.Ref, ActionsRun: ar.ID, URL: ar.URL, Status: ar.Status},
		fmt.Sprintf("GitHub Actions run %d (%s): %s", ar.ID, ar.Status, ar.URL))
	last.ActionsRun = ar.ID
}

// fromActions sets the story's state from its Actions run.
func (ev *Evidence) fromActions(ctx context.Context, st *StoryState, ar *ActionsRun, last *runs.Run) {
	st.Actions = ar
	// When its outcome was reached (the epic runner retries what ended
	// before its own start): GitHub's times are to the second, so a run
	// dispatched from here counts from its dispatch at the latest.
	st.Ended = ar.Updated
	if last != nil && last.Backend == BackendGitHub {
		st.Session = last.Session
		if last.ActionsRun == ar.ID || last.ActionsRun == 0 {
			st.Ended = maxTime(st.Ended, last.Started)
		}
	}
	if ar.Unknown != "" || ar.Status != ActionsCompleted {
		st.State = EpicRunning
		if ar.Unknown != "" {
			st.Why = fmt.Sprintf("GitHub could not be asked (%s): its Actions run's state is unknown, asked again at the next look", ar.Unknown)
		}
		return
	}
	if ar.Conclusion == "lost" {
		st.State, st.Why = runs.StatusFailed, ar.Why
		return
	}
	rec, haveRec, err := ev.Actions.Ended(ctx, st.ID, ar)
	if err != nil {
		ar.Unknown = err.Error()
		st.State = EpicRunning
		st.Why = fmt.Sprintf("its Actions run ended, but GitHub could not be asked for its outcome (%s): asked again at the next look", ar.Unknown)
		return
	}
	ref := "refs/remotes/origin/" + runs.StoryBranch(st.ID)
	// Ended fetched origin's branch: what a prefetch read of it before is
	// stale, and so is its tip as listed — read it by name, as fetched.
	delete(ev.branches, ref)
	delete(ev.tips, ref)
	if tasks, ok := ev.branchTasks(ctx, ref, st.ID); ok {
		st.Tasks, st.From, st.Total, st.Done = tasks, FromOrigin, len(tasks), 0
		for _, s := range tasks {
			if s == store.StatusCompleted {
				st.Done++
			}
		}
		st.Branch = runs.StoryBranch(st.ID)
	}
	if haveRec {
		st.PR, st.Base, st.Cost = first(rec.PR, st.PR), first(rec.Base, st.Base), max(runs.Cost(rec.Spent), runs.Cost(rec.Cost))
		st.Branch = first(rec.Branch, st.Branch)
	}
	where := " (" + ar.URL + ")"
	switch ar.Conclusion {
	case ActionsSuccess:
		switch {
		case ar.Refused != "":
			st.State = runs.StatusFailed
			st.Why = fmt.Sprintf("its Actions run succeeded, but the run record it uploaded is not believed: %s%s; see the run's log", ar.Refused, where)
		case st.From == FromOrigin && st.Total > 0 && st.Done == st.Total && (!haveRec || rec.Status == runs.StatusCompleted):
			st.State, st.Why = runs.StatusCompleted, ""
		case haveRec && rec.Status != runs.StatusCompleted:
			st.State = runs.StatusFailed
			st.Why = fmt.Sprintf("its Actions run succeeded, but its worker ended %s%s: %s", rec.Status, where, rec.Why)
		default:
			st.State = runs.StatusFailed
			st.Why = fmt.Sprintf("its Actions run succeeded, but origin's %s has %d of %d tasks completed%s: see the run's log", runs.StoryBranch(st.ID), st.Done, st.Total, where)
		}
	case ActionsCancelled:
		st.State = runs.StatusStopped
		st.Why = first(ar.Why, "its Actions run was cancelled") + where + fmt.Sprintf("; `saga-lsp run %s --on github` runs it again", st.ID)
	case ActionsTimedOut:
		st.State = runs.StatusTimeout
		st.Why = first(ar.Why, "its Actions job hit its timeout-minutes") + where
	default:
		// The worker's own end, when it got that far, says more than the
		// job's conclusion.
		st.State, st.Why = runs.StatusFailed, first(ar.Why, "its Actions run ended "+ar.Conclusion)+where
		if haveRec && outcomeOf(rec.Status) != "" {
			st.State, st.Why = rec.Status, fmt.Sprintf("its worker on GitHub Actions ended %s%s: %s", rec.Status, where, rec.Why)
		}
	}
	recordEnd(last, st, ar)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
