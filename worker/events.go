package worker

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Event is one line of the events file (<output-file>.events.jsonl), the
// language server's source for live progress. Kinds: worker.start, step,
// run.start, run.output, task.status, run.end, worker.end.
type Event struct {
	Time    time.Time `json:"time"`
	Story   string    `json:"story"`
	Session string    `json:"session"`
	Event   string    `json:"event"`

	Step    string `json:"step,omitempty"`    // step: lock, worktree, pr, context, hydrate, loop, end
	Message string `json:"message,omitempty"` // human text: what happened, a warning, assistant text
	Level   string `json:"level,omitempty"`   // "warn" for warnings

	Cycle  int    `json:"cycle,omitempty"`
	Task   string `json:"task,omitempty"`
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
	Source string `json:"source,omitempty"` // task.status: hook | claude | worktree

	Status    string `json:"status,omitempty"`   // worker.end: completed | failed | timeout | blocked | stopped
	ExitCode  *int   `json:"exitCode,omitempty"` // run.end and worker.end
	Cycles    *int   `json:"cycles,omitempty"`
	ElapsedMs *int64 `json:"elapsedMs,omitempty"`
	Done      *int   `json:"done,omitempty"`
	Total     *int   `json:"total,omitempty"`

	Branch     string `json:"branch,omitempty"`
	Worktree   string `json:"worktree,omitempty"`
	PR         string `json:"pr,omitempty"`
	TaskList   string `json:"taskList,omitempty"`
	OutputFile string `json:"outputFile,omitempty"`
	PID        int    `json:"pid,omitempty"`
}

func intp(n int) *int       { return &n }
func int64p(n int64) *int64 { return &n }

// journal writes the human log (stdout and the output file) and the events
// file. Writes are serialised: the stream reader and the main loop both log.
type journal struct {
	mu      sync.Mutex
	story   string
	session string
	human   io.Writer
	events  *os.File
	now     func() time.Time
	closers []io.Closer
}

func openJournal(story, session, outputFile string, stdout io.Writer, now func() time.Time) (*journal, error) {
	j := &journal{story: story, session: session, now: now}
	writers := []io.Writer{stdout}
	if outputFile != "" {
		if err := os.MkdirAll(filepath.Dir(outputFile), 0o755); err != nil {
			return nil, fmt.Errorf("create output folder: %w", err)
		}
		out, err := os.OpenFile(outputFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open output file: %w", err)
		}
		ev, err := os.OpenFile(outputFile+".events.jsonl", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			out.Close()
			return nil, fmt.Errorf("open events file: %w", err)
		}
		writers = append(writers, out)
		j.events = ev
		j.closers = append(j.closers, out, ev)
	}
	j.human = io.MultiWriter(writers...)
	return j, nil
}

// emit records an event and prints its human line (when line is not empty).
func (j *journal) emit(e Event, line string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e.Time = j.now().UTC()
	e.Story, e.Session = j.story, j.session
	if line != "" {
		fmt.Fprintf(j.human, "[%s] %s\n", e.Time.Local().Format("15:04:05"), line)
	}
	if j.events != nil {
		if b, err := json.Marshal(e); err == nil {
			j.events.Write(append(b, '\n'))
		}
	}
}

func (j *journal) step(step, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	j.emit(Event{Event: "step", Step: step, Message: msg}, step+": "+msg)
}

func (j *journal) warn(step, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	j.emit(Event{Event: "step", Step: step, Level: "warn", Message: msg}, step+": warning: "+msg)
}

func (j *journal) close() {
	for _, c := range j.closers {
		c.Close()
	}
}
