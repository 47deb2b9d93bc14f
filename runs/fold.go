package runs

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/termtext"
)

// Run states while a worker lives; after its end, State is its worker.end
// status (StatusCompleted, StatusFailed, …).
const (
	StateStarting = "starting" // before the worker holds its lock
	StateRunning  = "running"
)

// Run is what one events file says about its run: the fold of its events.
// Every reader of events files (status, the language server, the epic
// runner, follow) goes through Apply, so they agree on what a run is.
type Run struct {
	Story, Epic string
	Session     string
	EventsFile  string
	OutputFile  string
	Started     time.Time
	PID         int
	ProcStart   uint64 // the worker's or runner's start (supervise.ProcStart), when it recorded it
	// AgentPID and AgentStart are the headless run in progress (its
	// run.start): the agent process, until its run.end.
	AgentPID    int
	AgentStart  uint64
	Version     int    // the newest FormatVersion among the events; 0 for an earlier release's
	Locked      bool   // the worker got past its lock
	Ended       bool   // worker.end (or epic.end) seen
	State       string // StateStarting, StateRunning, or the end status
	Step        string
	Message     string // what the run is doing, for humans
	ExitCode    *int   // the end's exit code
	Cycle       int    // the current (or last) headless run
	Done, Total int    // as the worker last reported; -1 before it did
	Cost        float64
	Branch      string
	Base        string
	Worktree    string
	PR          string
	// NoPR is why the run has no pull request (KindPRMissing), until an
	// event names one.
	NoPR        *NoPR
	TaskList    string
	TaskListDir string
	Bash        string
	DryRun      bool
	// Tasks is each task's last status from task.status events.
	Tasks map[string]string
	// Checks is each task's last check result.
	Checks map[string]CheckResult
	// Protected are the protected files the story changed, as last
	// compared (KindProtected); ProtectedSeen tells that they were.
	Protected     []ProtectedFile
	ProtectedSeen bool
	// Stories is an epic run's stories by the last event naming them.
	Stories map[string]StoryRecord
	// MaxParallel and CapReached are an epic run's limit and whether its
	// spend reached --max-cost.
	MaxParallel int
	After       string
	CapReached  bool
	// Backend, ActionsRun, URL and RunName are where a dispatched worker
	// runs (KindDispatch): "" for tmux. An epic run's Backend is where it
	// runs its stories (epic.start).
	Backend    string
	ActionsRun int64
	URL        string
	RunName    string
	Workflow   int64  // the workflow's id a dispatched run must have
	Ref        string // the branch it was dispatched on
	Root       string // the repository the run is for: its dispatch or its start (Run.In)
	Conclusion string // its Actions run's conclusion, once an end was recorded from GitHub

	completedSince int    // task completions since Done was last reported
	current        string // the task last set in progress
}

// CheckResult is a check.end event's result.
type CheckResult struct {
	Command    string
	ExitCode   int
	DurationMs int64
	Passed     bool
	TimedOut   bool
	Message    string
}

// ProtectedBlocking are the protected files the story changed that keep
// its pull request a draft.
func (r *Run) ProtectedBlocking() []ProtectedFile {
	if r == nil {
		return nil
	}
	var out []ProtectedFile
	for _, p := range r.Protected {
		if p.Blocks {
			out = append(out, p)
		}
	}
	return out
}

// CheckOf is a task's last check result; ok is false without one (or
// without a run).
func (r *Run) CheckOf(task string) (c CheckResult, ok bool) {
	if r == nil {
		return c, false
	}
	c, ok = r.Checks[task]
	return c, ok
}

// StoryRecord is what an epic run's events say about one story.
type StoryRecord struct {
	Session string
	Base    string
	Status  string // "running" after story.start, the story.end status, or "held"
	HeldBy  []string
	// Conflicts are the files its blockers' branches conflict in, when
	// that is what holds it (story.held's message).
	Conflicts []string
	// Foreseen are its siblings whose branches conflict with its own, as
	// the runner found them before starting it (story.foreseen): it ran
	// anyway, the conflict is resolved at landing.
	Foreseen []Foreseen
}

// Foreseen is a sibling story whose branch conflicts with a story's, and
// the files (docs/landing.md#conflicts-foreseen).
type Foreseen struct {
	With  string   `json:"with"`
	Files []string `json:"files"`
}

// String says it: "conflict with shop--b: api/users.go, go.mod".
func (f Foreseen) String() string {
	return "conflict with " + f.With + ": " + strings.Join(f.Files, ", ")
}

// NewRun is a run known only by its events file.
func NewRun(eventsFile string) *Run {
	r := &Run{EventsFile: eventsFile, OutputFile: OutputOfEvents(eventsFile), State: StateStarting,
		Done: -1, Total: -1, Tasks: map[string]string{}}
	if s, ok := SessionOfEvents(eventsFile); ok {
		r.Session = s
		if k, id, _, ok := ParseSession(s); ok {
			if k == KindEpic {
				r.Epic = id
			} else {
				r.Story = id
			}
		}
	}
	return r
}

// Apply folds one event into the run. Events after the end change nothing.
func (r *Run) Apply(e Event) {
	if r.Ended {
		return
	}
	if r.Session == "" && e.Event != KindStoryStart {
		r.Session = e.Session
	}
	r.Version = max(r.Version, e.Version)
	if r.Story == "" && r.Epic == "" {
		r.Story, r.Epic = e.Story, e.Epic
	}
	if e.Cycle > r.Cycle {
		r.Cycle = e.Cycle
	}
	if e.Done != nil {
		r.Done, r.completedSince = *e.Done, 0
	}
	if e.Total != nil {
		r.Total = *e.Total
	}
	if e.PR != "" {
		r.PR, r.NoPR = e.PR, nil
	}
	if e.Worktree != "" {
		r.Worktree = e.Worktree
	}
	if e.Branch != "" {
		r.Branch = e.Branch
	}
	// The base the story's branch is built on: the worktree step's (or a
	// dispatch's). An epic run's story.start names its stories' bases, and
	// the context step of releases before issue 24 named where the
	// reference commit was read (the epic's base, not a stacked story's).
	if e.Base != "" && e.Event != KindStoryStart && !(e.Event == KindStep && e.Step == StepContext) {
		r.Base = e.Base
	}
	if e.TaskList != "" {
		r.TaskList = e.TaskList
	}
	if e.TaskListDir != "" {
		r.TaskListDir = e.TaskListDir
	}
	switch e.Event {
	case KindDispatch:
		if r.Started.IsZero() {
			r.Started = e.Time
		}
		r.Backend, r.Message = e.Backend, cmp.Or(e.Message, "dispatched to "+e.Backend)
		r.ActionsRun, r.URL, r.RunName = cmp.Or(e.ActionsRun, r.ActionsRun), cmp.Or(e.URL, r.URL), cmp.Or(e.RunName, r.RunName)
		r.Root = cmp.Or(e.Root, r.Root)
		r.Workflow, r.Ref = cmp.Or(e.Workflow, r.Workflow), cmp.Or(e.Ref, r.Ref)
	case KindWorkerStart, KindEpicStart:
		r.Started, r.State, r.Step, r.Message = e.Time, StateStarting, StepStart, "started"
		if e.PID > 0 {
			r.PID, r.ProcStart = e.PID, e.ProcStart
		}
		if e.OutputFile != "" {
			r.OutputFile = e.OutputFile
		}
		r.Bash, r.DryRun = e.Bash, e.DryRun
		r.Root = cmp.Or(e.Root, r.Root)
		if e.Event == KindEpicStart {
			r.Locked, r.State, r.MaxParallel, r.After, r.Backend = true, StateRunning, e.MaxParallel, e.After, e.Backend
		}
	case KindStep:
		r.Step = e.Step
		if e.Message != "" {
			r.Message = e.Message
		}
		// Past the lock: any step but the start and a refused lock.
		if e.Step != StepStart && !(e.Step == StepLock && e.Level == LevelWarn) {
			r.Locked, r.State = true, StateRunning
		}
	case KindRunStart:
		r.Locked, r.State, r.Step = true, StateRunning, StepLoop
		r.AgentPID, r.AgentStart = e.PID, e.ProcStart
		r.Message = fmt.Sprintf("run %d started", e.Cycle)
	case KindRunOutput:
		r.Locked, r.State = true, StateRunning
	case KindRunEnd:
		r.Locked, r.State, r.Step = true, StateRunning, StepLoop
		r.AgentPID, r.AgentStart = 0, 0
		r.Message = fmt.Sprintf("run %d ended with exit code %d", e.Cycle, deref(e.ExitCode))
		if e.Cost != nil {
			r.Cost += *e.Cost
		}
	case KindTaskStatus:
		r.Locked, r.State = true, StateRunning
		if e.Task != "" && e.To != "" {
			r.Tasks[e.Task] = e.To
			switch {
			case e.To == "in_progress":
				r.current = e.Task
			case e.To == "completed" && e.From != "completed":
				r.completedSince++
				if r.current == e.Task {
					r.current = ""
				}
			}
		}
	case KindCheckEnd:
		if e.Task != "" {
			if r.Checks == nil {
				r.Checks = map[string]CheckResult{}
			}
			r.Checks[e.Task] = CheckResult{Command: e.Command, ExitCode: deref(e.ExitCode),
				DurationMs: deref(e.DurationMs), Passed: e.Passed != nil && *e.Passed, TimedOut: e.TimedOut, Message: e.Message}
		}
	case KindPRMissing:
		if r.PR == "" {
			r.NoPR = &NoPR{Reason: e.Reason, Message: e.Message}
		}
	case KindProtected:
		r.Protected, r.ProtectedSeen = slices.Clone(e.Protected), true
	case KindEpicCap:
		r.CapReached = true
	case KindStoryStart, KindStoryEnd, KindStoryHeld, KindStoryForeseen:
		if e.Story == "" || e.Story == r.Story {
			break
		}
		if r.Stories == nil {
			r.Stories = map[string]StoryRecord{}
		}
		rec := r.Stories[e.Story]
		switch e.Event {
		case KindStoryStart:
			rec = StoryRecord{Session: e.Session, Base: e.Base, Status: StateRunning}
		case KindStoryEnd:
			rec.Status = e.Status
		case KindStoryHeld:
			rec.Status, rec.HeldBy, rec.Conflicts = "held", slices.Clone(e.By), slices.Clone(e.Files)
		case KindStoryForeseen:
			if len(e.By) > 0 {
				rec.Foreseen = append(rec.Foreseen, Foreseen{With: e.By[0], Files: slices.Clone(e.Files)})
			}
		}
		r.Stories[e.Story] = rec
	case KindWorkerEnd, KindEpicEnd:
		r.Ended, r.ExitCode, r.Step = true, e.ExitCode, StepEnd
		r.State, r.Conclusion = cmp.Or(e.Status, StatusFailed), e.Conclusion
		if e.Cost != nil {
			r.Cost = *e.Cost
		}
		switch {
		case e.Message != "":
			r.Message = e.Message
		case e.Event == KindWorkerEnd:
			r.Message = WorkerEndText(r.State, max(r.Done, 0), max(r.Total, 0), r.Cycle, r.DryRun)
		default:
			r.Message = fmt.Sprintf("epic run %s: %d/%d stories", r.State, max(r.Done, 0), max(r.Total, 0))
		}
	}
}

// WorkerEndText is a worker run's end as every face words it: "worker
// failed: 1/3 tasks, 2 runs"; a dry run's is told apart, never the story's
// result: "dry run completed · 2/2 tasks (simulated, not the story's), 1
// run" (docs/worker.md#dry-runs).
func WorkerEndText(state string, done, total, cycles int, dry bool) string {
	if dry {
		return DryRunText(state, done, total) + ", " + termtext.Count(cycles, "run", "runs")
	}
	return fmt.Sprintf("worker %s: %d/%d tasks, %s", state, done, total, termtext.Count(cycles, "run", "runs"))
}

// DryRunText is a dry run's state and its simulated tasks, apart from the
// story's own: "dry run completed · 3/3 tasks (simulated, not the
// story's)"; total 0 leaves the tasks out.
func DryRunText(state string, done, total int) string {
	if total > 0 {
		return fmt.Sprintf("dry run %s · %d/%d tasks (simulated, not the story's)", state, done, total)
	}
	return fmt.Sprintf("dry run %s (simulated, not the story's)", state)
}

// Progress is the run's task count as its events tell it now, and the
// task in progress.
func (r *Run) Progress() (done, total int, current string) {
	total = max(r.Total, 0)
	done = max(r.Done, 0) + r.completedSince
	if total > 0 {
		done = min(done, total)
	}
	return done, total, r.current
}

// Died marks a run whose process is gone without an end event.
func (r *Run) Died() {
	if r.Ended {
		return
	}
	r.Ended, r.State, r.Step = true, StatusFailed, StepEnd
	if r.PID > 0 {
		r.Message = fmt.Sprintf("the worker (pid %d) ended without reporting a result (killed?)", r.PID)
	} else {
		r.Message = "the worker never reported: see its output file"
	}
}

func deref[T int | int64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}

// ReadRun folds a whole events file; nil when it is missing or holds no
// event.
func ReadRun(path string) *Run {
	r := NewRun(path)
	t := Tail{Path: path}
	seen := false
	for {
		n, err := t.Read(func(e Event) { seen = true; r.Apply(e) })
		if n == 0 || err != nil {
			break
		}
	}
	if !seen {
		return nil
	}
	return r
}

// RunCache keeps what a long-lived reader of many runs (the epic runner,
// a face's watcher, at every step) decoded from the runs' files — each
// events file's fold, each run record — and decodes a file again only
// when it changed: a finished run is decoded once, not at every look. An
// events file only grows (its size and modification time tell); a record
// is replaced whole (WriteRecord: a new file, so its identity tells too).
// The zero value is ready; a nil cache decodes every time. What it returns
// is shared: read it, never change it.
type RunCache struct {
	mu      sync.Mutex
	runs    map[string]cached[*Run]
	records map[string]cached[recordRead]
	// Ended runs' folds kept on disk (LoadRunCache): foldsFile is "" for
	// a cache kept in memory only.
	foldsFile, build string
	kept             map[string]keptFold
	foldsDirty       bool
}

// cached is a decoded file and the stat it was decoded after.
type cached[T any] struct {
	fi fs.FileInfo
	v  T
}

// fresh tells whether fi is still the file the value was decoded from.
func (c cached[T]) fresh(fi fs.FileInfo) bool {
	return c.fi != nil && c.fi.Size() == fi.Size() && c.fi.ModTime().Equal(fi.ModTime()) && os.SameFile(c.fi, fi)
}

// through returns m[path]'s value while the file at fi is the one it was
// decoded from, else decode()'s, kept for the next look.
func through[T any](c *RunCache, m *map[string]cached[T], path string, fi fs.FileInfo, decode func() T) T {
	c.mu.Lock()
	hit, ok := (*m)[path]
	c.mu.Unlock()
	if ok && hit.fresh(fi) {
		return hit.v
	}
	v := decode()
	c.mu.Lock()
	if *m == nil {
		*m = map[string]cached[T]{}
	}
	(*m)[path] = cached[T]{fi: fi, v: v}
	c.mu.Unlock()
	return v
}

// Read is ReadRun through the cache.
func (c *RunCache) Read(path string) *Run {
	if c == nil {
		return ReadRun(path)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return ReadRun(path)
	}
	return through(c, &c.runs, path, fi, func() *Run {
		if c.foldsFile == "" {
			return ReadRun(path)
		}
		if r := c.keptRun(path, fi); r != nil {
			return r
		}
		r := ReadRun(path)
		if r != nil && r.Ended {
			c.keep(path, fi, r)
		}
		return r
	})
}

// Limits of Tail.
const (
	MaxEventLine = 1 << 20 // a longer line is dropped
	maxReadChunk = 8 << 20 // bytes read per Read
)

// Tail reads an events file incrementally: each Read hands over the
// complete lines appended since the last one. A line being written stays
// for the next Read; a line that does not decode is reported to Bad and
// skipped; a file that shrank (rewritten) is read again from its start.
type Tail struct {
	Path    string
	Bad     func(line, why string) // optional
	offset  int64
	partial []byte
}

// Read hands each new event to f, in order, and returns how many bytes it
// consumed. Events naming another story than the file's are skipped.
func (t *Tail) Read(f func(Event)) (int, error) {
	// Neither a FIFO (the open would wait for a writer) nor a link is
	// followed; fstat then refuses what is not a regular file.
	file, err := filesafe.OpenRegular(t.Path, os.O_RDONLY, 0, false)
	if errors.Is(err, filesafe.ErrNotRegular) {
		return 0, fmt.Errorf("%s is not a regular file", t.Path)
	}
	if err != nil {
		return 0, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return 0, err
	}
	if fi.Size() < t.offset {
		t.bad("", "the file shrank; reading it again")
		t.offset, t.partial = 0, nil
	}
	if fi.Size() == t.offset {
		return 0, nil
	}
	if _, err := file.Seek(t.offset, io.SeekStart); err != nil {
		return 0, err
	}
	buf, err := io.ReadAll(io.LimitReader(file, maxReadChunk))
	if err != nil && len(buf) == 0 {
		return 0, err
	}
	t.offset += int64(len(buf))
	data := append(t.partial, buf...)
	t.partial = nil
	story := ""
	if s, ok := SessionOfEvents(t.Path); ok {
		if k, id, _, ok := ParseSession(s); ok && k == KindStory {
			story = id
		}
	}
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if len(data) > MaxEventLine {
				t.bad("", fmt.Sprintf("a line of over %d bytes was dropped", MaxEventLine))
			} else {
				t.partial = slices.Clone(data)
			}
			break
		}
		line := bytes.TrimSpace(data[:i])
		data = data[i+1:]
		if len(line) == 0 {
			continue
		}
		if len(line) > MaxEventLine {
			t.bad("", fmt.Sprintf("a line of over %d bytes was dropped", MaxEventLine))
			continue
		}
		var e Event
		if err := json.Unmarshal(line, &e); err != nil || e.Event == "" {
			t.bad(string(line), "not an event")
			continue
		}
		if story != "" && e.Story != "" && e.Story != story {
			continue
		}
		f(e)
	}
	return len(buf), nil
}

func (t *Tail) bad(line, why string) {
	if t.Bad != nil {
		t.Bad(line, why)
	}
}
