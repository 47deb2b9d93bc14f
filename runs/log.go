package runs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/saga-ai/saga-lsp/internal/termtext"
)

// Log is a worker's or runner's record of its run: a human log (stdout and
// the output file) and, through Writer, the events file beside it. Writes
// are serialised: a worker's stream reader and main loop both log.
type Log struct {
	mu      sync.Mutex
	human   io.Writer
	events  *Writer // nil without an output file
	now     func() time.Time
	closers []io.Closer
}

// OpenLog opens the output file (when outputFile is not "") and its events
// file; lines go to stdout too.
func OpenLog(outputFile, story, epic, session string, stdout io.Writer, now func() time.Time) (*Log, error) {
	if now == nil {
		now = time.Now
	}
	l := &Log{now: now}
	writers := []io.Writer{stdout}
	if outputFile != "" {
		// Private, as the session dir it usually is.
		if err := os.MkdirAll(filepath.Dir(outputFile), 0o700); err != nil {
			return nil, fmt.Errorf("create the output folder: %w", err)
		}
		out, err := os.OpenFile(outputFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open the output file: %w", err)
		}
		ev, err := OpenWriter(EventsFile(outputFile), story, epic, session, now)
		if err != nil {
			out.Close()
			return nil, err
		}
		writers = append(writers, out)
		l.events = ev
		l.closers = append(l.closers, out, ev)
	}
	l.human = io.MultiWriter(writers...)
	return l, nil
}

// Emit records an event and prints its human line (when line is not ""),
// escaped (termtext.Escape): a line quotes subjects, file names and the
// agent's output, which must not reach a terminal as control characters
// or break into lines of their own. The event keeps the exact text.
func (l *Log) Emit(e Event, line string) { l.emit(e, line, termtext.Escape) }

// EmitLines is Emit for text a person reads as lines (the agent's
// messages): its lines after the first printed as indented lines, tabs
// kept and everything else escaped (termtext.Block), so none of them can
// pass for a line of the log's own.
func (l *Log) EmitLines(e Event, text string) {
	l.emit(e, text, func(s string) string { return termtext.Block(s, blockIndent) })
}

func (l *Log) emit(e Event, text string, render func(string) string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.events != nil {
		e = l.events.Emit(e)
	} else {
		e.Time = l.now()
	}
	if text != "" {
		fmt.Fprintf(l.human, "[%s] %s\n", e.Time.Local().Format("15:04:05"), render(text))
	}
}

// blockIndent indents a log entry's lines after the first under its text,
// past the "[15:04:05] " of its first.
const blockIndent = "           "

// Fail records what stops the run, as Error, its message's lines after
// the first (a check's output quoted under what failed) printed as
// indented lines (termtext.Block).
func (l *Log) Fail(step, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := Event{Event: KindStep, Step: step, Level: LevelWarn, Message: msg}
	if l.events != nil {
		e = l.events.Emit(e)
	} else {
		e.Time = l.now()
	}
	fmt.Fprintf(l.human, "[%s] error: %s\n", e.Time.Local().Format("15:04:05"), termtext.Block(msg, blockIndent))
}

// Step records a step with a message.
func (l *Log) Step(step, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.Emit(Event{Event: KindStep, Step: step, Message: msg}, step+": "+msg)
}

// Warn records a warning of a step.
func (l *Log) Warn(step, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.Emit(Event{Event: KindStep, Step: step, Level: LevelWarn, Message: msg}, step+": warning: "+msg)
}

// Error records what stops the run (a warning of its step, labelled error
// for humans).
func (l *Log) Error(step, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.Emit(Event{Event: KindStep, Step: step, Level: LevelWarn, Message: msg}, "error: "+msg)
}

// Close closes the files.
func (l *Log) Close() {
	for _, c := range l.closers {
		c.Close()
	}
}
