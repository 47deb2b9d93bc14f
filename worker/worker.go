// Package worker executes one story end to end (design.md §6): the per-story
// lock, an idempotent worktree and branch, a draft PR, hydration of the tasks
// into Claude Code's task list, a loop of headless `claude -p` runs with
// live stream parsing and reconciliation, the stop rules, and the end step
// (commit, push, PR ready, cleanup). It reports a human log and JSON-lines
// events the language server follows.
package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/claudetasks"
)

// Exit codes (design.md §6).
const (
	ExitCompleted = 0
	ExitFailed    = 1
	ExitLimit     = 2 // max cycles, max time, or no progress
	ExitBlocked   = 3
)

// Options configure one worker run.
type Options struct {
	Story          string
	Dir            string // where the worker was started; the workspace root is found from it
	MaxCycles      int
	MaxTime        time.Duration
	Model          string
	PermissionMode string
	Base           string // base branch; default: the main checkout's current branch
	OutputFile     string // human log copy; events go to <OutputFile>.events.jsonl
	Session        string // tmux session name, for events; default saga-story-<story>-<ms>
	SessionDir     string
	KeepTasks      bool
	DryRun         bool // use the built-in simulated agent instead of claude

	Claude string // claude executable (default: SAGA_CLAUDE or "claude" on PATH)
	GH     string // gh executable (default: SAGA_GH or "gh" on PATH)
	Git    string // default "git"
	Self   string // the saga-lsp binary, for hook commands and the dry-run agent

	Stdout io.Writer
	Env    func(string) string
	Now    func() time.Time
}

func (o *Options) defaults() {
	if o.MaxCycles <= 0 {
		o.MaxCycles = 10
	}
	if o.MaxTime <= 0 {
		o.MaxTime = 60 * time.Minute
	}
	if o.Model == "" {
		o.Model = "opus"
	}
	if o.PermissionMode == "" {
		o.PermissionMode = "acceptEdits"
	}
	if o.Env == nil {
		o.Env = os.Getenv
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Git == "" {
		o.Git = "git"
	}
	if o.Claude == "" {
		o.Claude = orDefault(o.Env("SAGA_CLAUDE"), "claude")
	}
	if o.GH == "" {
		o.GH = orDefault(o.Env("SAGA_GH"), "gh")
	}
	if o.SessionDir == "" {
		o.SessionDir = orDefault(o.Env("SAGA_SESSION_DIR"), "/tmp/saga-sessions")
	}
	if o.Session == "" {
		o.Session = orDefault(o.Env("SAGA_SESSION"), fmt.Sprintf("saga-story-%s-%d", o.Story, o.Now().UnixMilli()))
	}
	if o.Self == "" {
		o.Self, _ = os.Executable()
	}
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// run is the state of one worker run.
type run struct {
	o        Options
	j        *journal
	p        *store.Parser
	root     string // main checkout root (holds .saga/)
	repo     git    // git in the main checkout
	wt       string // worktree path
	wtGit    git
	branch   string
	base     string
	pr       string
	listID   string
	listDir  string
	started  time.Time
	cycles   int
	blockers int // blocker entries in the journal before the runs
}

// Run executes the story and returns the exit code. ctx cancellation
// (SIGINT/SIGTERM) stops the current headless run, runs the end step, and
// exits 1.
func Run(ctx context.Context, o Options) int {
	o.defaults()
	if !store.ValidCanonical(o.Story) {
		fmt.Fprintf(o.Stdout, "saga-lsp worker: invalid story name %q\n", o.Story)
		return ExitFailed
	}
	j, err := openJournal(o.Story, o.Session, o.OutputFile, o.Stdout, o.Now)
	if err != nil {
		fmt.Fprintf(o.Stdout, "saga-lsp worker: %v\n", err)
		return ExitFailed
	}
	defer j.close()
	r := &run{o: o, j: j, started: o.Now()}
	j.emit(Event{Event: "worker.start", OutputFile: o.OutputFile, PID: os.Getpid()},
		fmt.Sprintf("worker for story %s (session %s, pid %d)", o.Story, o.Session, os.Getpid()))
	status, code := r.execute(ctx)
	done, total := r.progress()
	j.emit(Event{Event: "worker.end", Status: status, ExitCode: intp(code), Cycles: intp(r.cycles),
		ElapsedMs: int64p(o.Now().Sub(r.started).Milliseconds()), Done: intp(done), Total: intp(total), PR: r.pr},
		fmt.Sprintf("worker %s: %d/%d tasks, %d run(s), exit %d", status, done, total, r.cycles, code))
	return code
}

// execute runs steps 1–7 and returns the final status and exit code.
func (r *run) execute(ctx context.Context) (string, int) {
	var err error
	if r.p, err = store.NewParser(); err != nil {
		r.j.warn("start", "%v", err)
		return "failed", ExitFailed
	}
	if r.root, err = store.FindRoot(orDefault(r.o.Dir, ".")); err != nil {
		r.j.warn("start", "%v", err)
		return "failed", ExitFailed
	}
	if _, err := r.p.LoadStory(r.root, r.o.Story); err != nil {
		r.j.warn("start", "%v: create it with `saga-lsp new story %s --title …`", err, r.o.Story)
		return "failed", ExitFailed
	}

	// 1. Lock: one worker per story, shared by all worktrees.
	lock, ok, err := store.TryLock(r.root, "worker-"+r.o.Story)
	if err != nil {
		r.j.warn("lock", "%v", err)
		return "failed", ExitFailed
	}
	if !ok {
		pid, _ := store.LockHolder(r.root, "worker-"+r.o.Story)
		who := "another worker"
		if pid > 0 {
			who = fmt.Sprintf("another worker (pid %d)", pid)
		}
		r.j.warn("lock", "%s is already running story %s; stop it with `saga-lsp stop %s`", who, r.o.Story, r.o.Story)
		return "failed", ExitFailed
	}
	defer lock.Unlock()
	r.j.step("lock", "holding the worker lock for %s", r.o.Story)

	// 2. Worktree and branch.
	if err := r.worktree(ctx); err != nil {
		r.j.warn("worktree", "%v", err)
		return "failed", ExitFailed
	}
	// 3. Draft PR (a warning, never a failure).
	r.draftPR(ctx)
	// 4. Context.
	if err := r.context(ctx); err != nil {
		r.j.warn("context", "%v", err)
		return "failed", ExitFailed
	}
	// 5. Hydrate.
	if err := r.hydrate(ctx); err != nil {
		r.j.warn("hydrate", "%v; no run was started", err)
		r.end(context.WithoutCancel(ctx), false)
		return "failed", ExitFailed
	}
	// 6. Loop.
	status, code := r.loop(ctx)
	// 7. End (also after SIGINT/SIGTERM: the context is cancelled then).
	complete := r.end(context.WithoutCancel(ctx), status == "completed")
	if status == "completed" && !complete {
		status, code = "failed", ExitFailed
	}
	return status, code
}

// storyDir is the story's folder in the worktree.
func (r *run) storyDir() string {
	return filepath.Join(r.wt, ".saga", "stories", r.o.Story)
}

// story reads the worktree's copy of the story.
func (r *run) story() (*store.Story, error) {
	return r.p.LoadStory(r.wt, r.o.Story)
}

func (r *run) progress() (done, total int) {
	if r.wt == "" || r.p == nil {
		return 0, 0
	}
	s, err := r.story()
	if err != nil {
		return 0, 0
	}
	return s.Done(), len(s.Tasks)
}

// setStoryField edits one string member of the worktree's story.json, under
// the story lock, byte-minimally.
func (r *run) setStoryField(ctx context.Context, key, value string) error {
	return r.editFile(ctx, filepath.Join(r.storyDir(), "story.json"), key, value)
}

// setTaskStatus writes a task's status in the worktree copy.
func (r *run) setTaskStatus(ctx context.Context, task, status string) error {
	return r.editFile(ctx, filepath.Join(r.storyDir(), task+".json"), "status", status)
}

func (r *run) editFile(ctx context.Context, path, key, value string) error {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lock, err := store.AcquireLock(lctx, r.root, "story-"+r.o.Story)
	if err != nil {
		return fmt.Errorf("lock story %s: %w", r.o.Story, err)
	}
	defer lock.Unlock()
	set := store.SetString
	if filepath.Base(path) == "story.json" {
		set = store.SetStoryString // never adds a status upstream would reject
	}
	return store.UpdateFile(path, func(old []byte) ([]byte, error) {
		if old == nil {
			return nil, fmt.Errorf("%s does not exist", path)
		}
		return set(old, key, value)
	})
}

// hydrate resets tasks a crashed run left in progress, then writes the task
// list Claude Code will read.
func (r *run) hydrate(ctx context.Context) error {
	s, err := r.story()
	if err != nil {
		return err
	}
	for _, t := range s.Tasks {
		if t.Status == store.StatusInProgress {
			if err := r.setTaskStatus(ctx, t.ID, store.StatusPending); err != nil {
				return fmt.Errorf("reset %s: %w", t.ID, err)
			}
			r.j.emit(Event{Event: "task.status", Task: t.ID, From: store.StatusInProgress, To: store.StatusPending, Source: "worktree"},
				fmt.Sprintf("hydrate: %s was left in progress by an earlier run; back to pending", t.ID))
		}
	}
	if s, err = r.story(); err != nil {
		return err
	}
	if len(s.Tasks) == 0 {
		return fmt.Errorf("story %s has no tasks; add some with `saga-lsp new task %s <id> --subject …`", r.o.Story, r.o.Story)
	}
	cfg, err := claudetasks.ConfigDir()
	if err != nil {
		return err
	}
	r.listID = claudetasks.ListID(r.o.Story, r.o.Now().UnixMilli())
	r.listDir = claudetasks.ListDir(cfg, r.listID)
	hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := claudetasks.Hydrate(hctx, r.listDir, claudetasks.FromStory(s)); err != nil {
		return err
	}
	r.j.emit(Event{Event: "step", Step: "hydrate", TaskList: r.listID, Done: intp(s.Done()), Total: intp(len(s.Tasks)),
		Message: fmt.Sprintf("%d tasks written to %s", len(s.Tasks), r.listDir)},
		fmt.Sprintf("hydrate: %d tasks (%d done) → %s", len(s.Tasks), s.Done(), r.listDir))
	return nil
}

// lookPath resolves an executable, reporting "" when it is missing.
func lookPath(name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	return p
}

func exitCodeOf(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ee.ExitCode() >= 0 {
			return ee.ExitCode()
		}
		return 128 + 9 // killed by a signal
	}
	if err != nil {
		return 1
	}
	return 0
}
