package control

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNoTmux is returned when tmux is not on PATH.
var ErrNoTmux = errors.New("tmux is not installed")

// ErrNotRunning is returned by StopStory when no worker and no tmux session
// of the story exist.
var ErrNotRunning = errors.New("no worker is running")

// RunningError refuses to start a second worker for a story.
type RunningError struct {
	Story   string
	Epic    string // set for an epic's runner (Story is empty then)
	Session string // the live tmux session, when known
	PID     int    // the worker's pid, when known
	URL     string // its GitHub Actions run, when it runs there
}

func (e *RunningError) Error() string {
	var what []string
	if e.PID > 0 {
		what = append(what, "pid "+strconv.Itoa(e.PID))
	}
	if e.Session != "" {
		what = append(what, "tmux session "+e.Session)
	}
	if e.URL != "" {
		what = append(what, e.URL)
	}
	who, kind, id := "a worker", "story", e.Story
	if e.URL != "" {
		who = "a GitHub Actions job"
	}
	if e.Epic != "" {
		who, kind, id = "a runner", "epic", e.Epic
	}
	if len(what) > 0 {
		who += " (" + strings.Join(what, ", ") + ")"
	}
	return fmt.Sprintf("%s is already running %s %s: follow it with `saga-lsp follow %s`, or stop it with `saga-lsp stop %s`",
		who, kind, id, id, id)
}

// StartError reports a worker that died (or failed) right after it started.
type StartError struct {
	Story, Epic, Session, OutputFile string
	Output                           string // the output file's content (its last 64 KiB)
	ExitCode                         *int   // the worker's exit code when it reported one
}

func (e *StartError) Error() string {
	how := "exited at once"
	if e.ExitCode != nil {
		how = fmt.Sprintf("exited at once with code %d", *e.ExitCode)
	}
	who, cmd, id := "the worker for story", "worker", e.Story
	if e.Epic != "" {
		who, cmd, id = "the epic runner for epic", "epic-runner", e.Epic
	}
	msg := fmt.Sprintf("%s %s (tmux session %s) %s", who, id, e.Session, how)
	if strings.TrimSpace(e.Output) == "" {
		return msg + fmt.Sprintf(" without output; run `saga-lsp %s %s` directly to see why", cmd, id)
	}
	return msg + "; its output (" + e.OutputFile + ") is above"
}

// CompletedError declines to run a story (readmodel.StoryState) or an epic (every
// story of it) that is completed: no agent was started. `run --again` runs
// a story again. Opened, when set, is the pull request run opened for it
// instead: its worker could not (readmodel.StoryState.NoPR).
type CompletedError struct {
	Story       string
	Epic        string // set for an epic: Done and Total count its stories
	Done, Total int
	PR          string
	Opened      *OpenedPR
	// NotOpened, when set, is why run could not open the PR its worker
	// did not: something it needs is still missing (gh, its login,
	// origin), which is no failure of the run.
	NotOpened *NoPRError
}

func (e *CompletedError) Error() string {
	if e.Epic != "" {
		return fmt.Sprintf("epic %s is already completed (%d/%d stories): nothing to run — `saga-lsp status %s` shows each story and its PR; `saga-lsp run <story> --again` runs one of them again",
			e.Epic, e.Done, e.Total, e.Epic)
	}
	if o := e.Opened; o != nil {
		what := "opened its pull request"
		if o.Existing {
			what = "found its pull request"
		}
		first := ""
		for _, b := range o.Blockers {
			first += fmt.Sprintf("; first, for the branch it is stacked on, story %s's: %s (%s into %s)", b.Story, b.URL, b.Head, b.Base)
		}
		return fmt.Sprintf("story %s is already completed (%d/%d tasks): %s %s (%s into %s), without running the agent again — its worker had none: %s%s",
			e.Story, e.Done, e.Total, what, o.URL, o.Head, o.Base, o.Why, first)
	}
	if n := e.NotOpened; n != nil {
		return fmt.Sprintf("story %s is already completed (%d/%d tasks): nothing to run; no PR yet, and it cannot be opened now: %s — %s",
			e.Story, e.Done, e.Total, n.Why, n.Next)
	}
	pr := ""
	if e.PR != "" {
		pr = ", PR " + e.PR
	}
	return fmt.Sprintf("story %s is already completed (%d/%d tasks%s): nothing to run — `saga-lsp status %s` shows it; `saga-lsp run %s --again` discards this attempt and runs it again from the base's tip",
		e.Story, e.Done, e.Total, pr, e.Story, e.Story)
}

// NoPRError is a completed story whose pull request run could not open
// (OpenPR): what stops it and the next step. No agent was started.
type NoPRError struct {
	Story string
	Why   string
	Next  string
	// Missing: what it needs is missing (gh, its login, origin); nothing
	// was tried.
	Missing bool
}

func (e *NoPRError) Error() string {
	return fmt.Sprintf("story %s is completed but has no pull request yet, and it cannot be opened now: %s — %s", e.Story, e.Why, e.Next)
}
