package worker

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/saga-ai/saga-lsp/store/runs"
)

// journal writes the human log (stdout and the output file) and, through
// runs.Writer, the events file. Writes are serialised: the stream reader
// and the main loop both log.
type journal struct {
	mu      sync.Mutex
	human   io.Writer
	events  *runs.Writer // nil without an output file
	now     func() time.Time
	closers []io.Closer
}

func openJournal(story, session, outputFile string, stdout io.Writer, now func() time.Time) (*journal, error) {
	j := &journal{now: now}
	writers := []io.Writer{stdout}
	if outputFile != "" {
		if err := os.MkdirAll(filepath.Dir(outputFile), 0o755); err != nil {
			return nil, fmt.Errorf("create output folder: %w", err)
		}
		out, err := os.OpenFile(outputFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open output file: %w", err)
		}
		ev, err := runs.OpenWriter(runs.EventsFile(outputFile), story, "", session, now)
		if err != nil {
			out.Close()
			return nil, err
		}
		writers = append(writers, out)
		j.events = ev
		j.closers = append(j.closers, out, ev)
	}
	j.human = io.MultiWriter(writers...)
	return j, nil
}

// emit records an event and prints its human line (when line is not empty).
func (j *journal) emit(e runs.Event, line string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.events != nil {
		e = j.events.Emit(e)
	} else {
		e.Time = j.now()
	}
	if line != "" {
		fmt.Fprintf(j.human, "[%s] %s\n", e.Time.Local().Format("15:04:05"), line)
	}
}

func (j *journal) step(step, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	j.emit(runs.Event{Event: runs.KindStep, Step: step, Message: msg}, step+": "+msg)
}

func (j *journal) warn(step, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	j.emit(runs.Event{Event: runs.KindStep, Step: step, Level: runs.LevelWarn, Message: msg}, step+": warning: "+msg)
}

func (j *journal) close() {
	for _, c := range j.closers {
		c.Close()
	}
}
