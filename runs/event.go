package runs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Event kinds (Event.Event).
const (
	KindWorkerStart = "worker.start" // {pid, procStart, outputFile}
	KindStep        = "step"         // {step, message, level?, …the step's facts}
	KindRunStart    = "run.start"    // a headless run began {cycle, pid, procStart, taskList}: the agent's process
	KindRunOutput   = "run.output"   // assistant text, tool calls, stderr {cycle, message}
	KindTaskStatus  = "task.status"  // {task, from, to, source}
	KindRunEnd      = "run.end"      // {cycle, exitCode, done, total, cost}
	KindWorkerEnd   = "worker.end"   // {status, exitCode, cycles, elapsedMs, done, total}

	KindCheckEnd = "check.end" // a task's check finished {task, command, exitCode, durationMs, passed, timedOut}
	// KindCheckVerdict: the completion gate's verdict on a task, once all
	// its checks ran {task, passed, commit: the reference commit its checks
	// were read at}; a worker counts a completion only after a passing one
	// (docs/worker.md#verified-completion).
	KindCheckVerdict = "check.verdict"
	// KindProtected: what the story changed of its protected files, as the
	// gate or the worker's end compared them with the reference commit
	// {protected, message} (docs/worker.md#protected-files).
	KindProtected = "protected"

	KindEpicStart  = "epic.start"  // the epic runner began {pid, procStart, outputFile, maxParallel, backend?}
	KindStoryStart = "story.start" // {story, session, base, backend?}
	KindStoryEnd   = "story.end"   // {story, status}
	KindStoryHeld  = "story.held"  // {story, by, files}
	// KindStoryForeseen: before starting a story, its branch conflicts
	// with a sibling's {story, by: [sibling], files}; it starts anyway
	// (docs/landing.md#conflicts-foreseen).
	KindStoryForeseen = "story.foreseen"
	KindEpicEnd       = "epic.end" // {status, exitCode, done, total, cost}
	KindEpicCap       = "epic.cap" // the spend reached --max-cost: no story or run starts any more {cost}

	// KindDispatch: a story's worker was started on another backend than
	// tmux (runs/github: a GitHub Actions run) {backend, base, runName,
	// root, actionsRun?, url?}; written again once the run is found.
	KindDispatch = "dispatch"

	// KindPRMissing: the worker could not open the story's pull request
	// {reason: a NoPR* code, message: what it met}; a later event naming a
	// PR clears it. `status` says "no PR yet" and why, and `run <story>`
	// opens it once the story completed (docs/worker.md#pull-request).
	KindPRMissing = "pr.missing"
)

// Why a worker opened no pull request (KindPRMissing's reason).
const (
	NoPRNoGH      = "no-gh"         // gh is not installed (or $SAGA_GH is wrong)
	NoPRLoggedOut = "gh-logged-out" // gh is not logged in
	NoPRNoOrigin  = "no-origin"     // the repository has no remote named origin
	NoPRPush      = "push-failed"   // the story's branch could not be pushed
	NoPRGH        = "gh-failed"     // gh pr list or gh pr create failed
)

// NoPR is why a story's run has no pull request: a NoPR* reason and what
// the worker met (KindPRMissing).
type NoPR struct {
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

// Worker steps (Event.Step of KindStep).
const (
	StepStart    = "start"
	StepLock     = "lock"
	StepWorktree = "worktree"
	StepPR       = "pr"
	StepContext  = "context"
	StepReview   = "review" // a review round reads the PR's review and writes its tasks (docs/review.md)
	StepHydrate  = "hydrate"
	StepLoop     = "loop"
	StepCommit   = "commit"
	StepEnd      = "end"
)

// End statuses of a worker (worker.end) or runner (epic.end).
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusTimeout   = "timeout"
	StatusBlocked   = "blocked"
	StatusStopped   = "stopped"
)

// Sources of a task.status event.
const (
	SourceHook     = "hook"
	SourceClaude   = "claude"
	SourceWorktree = "worktree"
)

// LevelWarn marks a warning.
const LevelWarn = "warn"

// FormatVersion is the version of the events and run records this
// saga-lsp writes (Event.Version, Record.Version). Readers take every
// version, the unversioned lines of earlier releases (0) included: a
// change that old readers could not fold needs a new version.
const FormatVersion = 1

// Event is one line of an events file (<output file>.events.jsonl).
type Event struct {
	Version int       `json:"version,omitempty"` // FormatVersion; 0 in the files of earlier releases
	Time    time.Time `json:"time"`
	Story   string    `json:"story,omitempty"`
	Epic    string    `json:"epic,omitempty"`
	Session string    `json:"session"`
	Event   string    `json:"event"`

	Step    string `json:"step,omitempty"`
	Message string `json:"message,omitempty"`
	Level   string `json:"level,omitempty"`

	Cycle  int    `json:"cycle,omitempty"`
	Task   string `json:"task,omitempty"`
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
	Source string `json:"source,omitempty"`

	Status    string   `json:"status,omitempty"`
	ExitCode  *int     `json:"exitCode,omitempty"`
	Cycles    *int     `json:"cycles,omitempty"`
	ElapsedMs *int64   `json:"elapsedMs,omitempty"`
	Done      *int     `json:"done,omitempty"`
	Total     *int     `json:"total,omitempty"`
	Cost      *float64 `json:"cost,omitempty"` // USD, as the runs reported it

	Branch      string `json:"branch,omitempty"`
	Base        string `json:"base,omitempty"`
	Worktree    string `json:"worktree,omitempty"`
	PR          string `json:"pr,omitempty"`
	TaskList    string `json:"taskList,omitempty"`
	TaskListDir string `json:"taskListDir,omitempty"`
	OutputFile  string `json:"outputFile,omitempty"`
	PID         int    `json:"pid,omitempty"`
	ProcStart   uint64 `json:"procStart,omitempty"` // with pid: the process's start (supervise.ProcStart), so that a reused pid is never taken for it
	Bash        string `json:"bash,omitempty"`      // worker.start: sandboxed | unsandboxed | off
	DryRun      bool   `json:"dryRun,omitempty"`

	Commit     string   `json:"commit,omitempty"` // check.verdict: the reference commit the checks were read at
	Command    string   `json:"command,omitempty"`
	DurationMs *int64   `json:"durationMs,omitempty"`
	Passed     *bool    `json:"passed,omitempty"`
	TimedOut   bool     `json:"timedOut,omitempty"`
	By         []string `json:"by,omitempty"`
	Files      []string `json:"files,omitempty"` // story.held: the files its blockers' branches conflict in
	// Protected (KindProtected) are the protected files the story changed.
	Protected   []ProtectedFile `json:"protected,omitempty"`
	MaxParallel int             `json:"maxParallel,omitempty"`
	After       string          `json:"after,omitempty"`   // epic.start: ready | merged
	Adopted     bool            `json:"adopted,omitempty"` // story.start: a worker an earlier runner started, followed now

	Backend    string `json:"backend,omitempty"`    // dispatch, epic.start, story.start: where the worker runs (github; "" tmux)
	RunName    string `json:"runName,omitempty"`    // dispatch: the name the backend's run is found by
	ActionsRun int64  `json:"actionsRun,omitempty"` // dispatch: the GitHub Actions run's id
	// Workflow and Ref (dispatch): the id of the workflow dispatched and
	// the branch it was dispatched on — what the run must match
	// (docs/github-actions.md#which-run-is-the-storys).
	Workflow   int64  `json:"workflow,omitempty"`
	Ref        string `json:"ref,omitempty"`
	URL        string `json:"url,omitempty"`        // dispatch, story.start: the run's page
	Root       string `json:"root,omitempty"`       // dispatch, worker.start, epic.start: the repository the run is for (Run.In)
	Conclusion string `json:"conclusion,omitempty"` // worker.end of a dispatched run: its Actions run's conclusion, as GitHub gave it
	Reason     string `json:"reason,omitempty"`     // pr.missing: a NoPR* code
}

// ProtectedFile is a protected file a story changed against its reference
// commit: Change is modified, deleted or added; Blocks tells that it keeps
// the story's pull request a draft.
type ProtectedFile struct {
	Path   string `json:"path"`
	Change string `json:"change"`
	Rule   string `json:"rule,omitempty"`
	Blocks bool   `json:"blocks,omitempty"`
}

// Int, Int64, Float and Bool make the optional fields of an Event.
func Int(n int) *int           { return &n }
func Int64(n int64) *int64     { return &n }
func Float(f float64) *float64 { return &f }
func Bool(b bool) *bool        { return &b }

// Writer appends events to an events file: one JSON object per line, each
// written with a single write(2) on an O_APPEND descriptor so that readers
// and other writers (a hook reporting a check) never see half a line.
type Writer struct {
	mu    sync.Mutex
	f     *os.File
	story string
	epic  string
	sess  string
	now   func() time.Time
}

// OpenWriter opens (creating) the events file. Events get the story (or
// epic) and session given here and the time from now.
func OpenWriter(path, story, epic, session string, now func() time.Time) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create the session folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the events file: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	return &Writer{f: f, story: story, epic: epic, sess: session, now: now}, nil
}

// Emit stamps e (time, story or epic, session) and appends it; it returns
// the stamped event. A nil Writer only stamps.
func (w *Writer) Emit(e Event) Event {
	if w == nil {
		return e
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	e.Version, e.Time = FormatVersion, w.now().UTC()
	if e.Story == "" {
		e.Story = w.story
	}
	if e.Epic == "" {
		e.Epic = w.epic
	}
	if e.Session == "" { // story.start names the story's own session
		e.Session = w.sess
	}
	if b, err := json.Marshal(e); err == nil {
		_, _ = w.f.Write(append(b, '\n'))
	}
	return e
}

// Close closes the file.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	return w.f.Close()
}

// Append adds one event to an events file that another process writes (a
// hook reporting a check result): opened, written with one write(2), closed.
func Append(path string, e Event) error {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	e.Version = FormatVersion
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open the events file: %w", err)
	}
	defer f.Close()
	_, err = f.Write(append(b, '\n'))
	return err
}
