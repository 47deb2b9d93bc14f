package commands

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// UsageError marks a mistake in what the user asked for (a bad name, a
// missing story): the CLI exits 2 and the language server answers
// InvalidParams.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error { return &UsageError{Msg: fmt.Sprintf(format, args...)} }

// ErrNoTmux is returned when tmux is not on PATH.
var ErrNoTmux = errors.New("tmux is not installed")

// ErrNotRunning is returned by StopStory when no worker and no tmux session
// of the story exist.
var ErrNotRunning = errors.New("no worker is running")

// RunningError refuses to start a second worker for a story.
type RunningError struct {
	Story   string
	Session string // the live tmux session, when known
	PID     int    // the worker's pid, when known
}

func (e *RunningError) Error() string {
	var what []string
	if e.PID > 0 {
		what = append(what, "pid "+strconv.Itoa(e.PID))
	}
	if e.Session != "" {
		what = append(what, "tmux session "+e.Session)
	}
	who := "a worker"
	if len(what) > 0 {
		who += " (" + strings.Join(what, ", ") + ")"
	}
	return fmt.Sprintf("%s is already running story %s: follow it with `saga-lsp status %s`, or stop it with `saga-lsp stop %s`",
		who, e.Story, e.Story, e.Story)
}

// StartError reports a worker that died (or failed) right after it started.
type StartError struct {
	Story, Session, OutputFile string
	Output                     string // the output file's content (its last 64 KiB)
	ExitCode                   *int   // the worker's exit code when it reported one
}

func (e *StartError) Error() string {
	how := "exited at once"
	if e.ExitCode != nil {
		how = fmt.Sprintf("exited at once with code %d", *e.ExitCode)
	}
	msg := fmt.Sprintf("the worker for story %s (tmux session %s) %s", e.Story, e.Session, how)
	if strings.TrimSpace(e.Output) == "" {
		return msg + fmt.Sprintf(" without output; run `saga-lsp worker %s` directly to see why", e.Story)
	}
	return msg + "; its output (" + e.OutputFile + ") is above"
}
