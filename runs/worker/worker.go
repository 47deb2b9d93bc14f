// Package worker executes one story end to end (docs/worker.md#steps): the per-story
// lock, an idempotent worktree and branch, a draft PR, hydration of the tasks
// into Claude Code's task list, a loop of headless `claude -p` runs with
// live stream parsing and reconciliation, the stop rules, and the end step
// (commit, push, PR ready, cleanup); with --review, a review round on the
// same branch and PR (review.go: the tasks committed before the agent, the
// answers after the end); a restack conflict taken in (restack.go). It
// reports a human log and JSON-lines events the language server follows.
package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/store"
)

// Nice is the CPU priority a worker in a session of its own (run's, the
// epic runner's) runs at by default, with the agent and everything else it
// starts: below the user's editor, terminal and browser, which a run's
// eight workers would otherwise crowd out (docs/worker.md#priority).
const Nice = 10

// NiceOf is the nice value $SAGA_WORKER_NICE asks for, Nice when unset;
// a value that is not one of 0 (no lower than what started the worker)
// to 19 is an error, with Nice.
func NiceOf(getenv func(string) string) (int, error) {
	v := runs.Getenv(getenv, runs.EnvWorkerNice)
	if v == "" {
		return Nice, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 19 {
		return Nice, fmt.Errorf("%s=%q is not a nice value from 0 (the priority of what started the worker) to 19: running at %d", runs.EnvWorkerNice, v, Nice)
	}
	return n, nil
}

// Options configure one worker run.
type Options struct {
	Story string
	Dir   string // where the worker was started; the workspace root is found from it
	runs.WorkerFlags
	runs.Process

	Claude string // claude executable (default: runs.Program: $SAGA_CLAUDE, else claude on PATH)
	GH     string // gh executable (default: runs.Program: $SAGA_GH, else gh on PATH)
	Git    string // default "git"
	Self   string // the saga-lsp binary, for hook commands and the dry-run agent
}

func (o *Options) defaults() {
	o.WorkerFlags = o.WorkerFlags.WithDefaults()
	o.Process.Fill(runs.KindStory, o.Story)
	// A worker started by hand keeps its log and events where `run` puts
	// a started one's (docs/worker.md#events): status, follow and
	// the editors see it, and its hooks' check results reach its next runs.
	if o.OutputFile == "" {
		o.OutputFile = runs.OutputFile(o.SessionDir, o.Session)
	}
	o.Git = cmp.Or(o.Git, runs.Program(o.Env, runs.ProgramGit))
	o.Claude = cmp.Or(o.Claude, runs.Program(o.Env, runs.ProgramClaude))
	o.GH = cmp.Or(o.GH, runs.Program(o.Env, runs.ProgramGH))
	if o.Self == "" {
		o.Self, _ = os.Executable()
	}
}

// run is the state of one worker run.
type run struct {
	o      Options
	j      *runs.Log
	p      *store.Parser
	root   string   // main checkout root (holds .saga/)
	repo   git.Repo // git in the main checkout
	wt     string   // worktree path
	wtGit  git.Repo
	branch string
	base   string
	// reference is the run's reference commit R (docs/worker.md#the-reference-commit),
	// read from referenceFrom (origin/<base> or <base>) before any agent ran.
	reference, referenceFrom string
	refBase                  string // the branch R is read from: the base, or a stacked story's epic base
	gitCommon                string // the repository's common git dir
	// remote: the repository had a remote named origin at the run's start,
	// which the run keeps to (asked once: a git process at every commit
	// costs at 100,000 files on a loaded machine, docs/architecture.md#cost-follows-the-change-100000-files).
	remote bool
	// identity is what git commits need when the user set none, read
	// once (commitIdentity).
	identity     []string
	identityRead bool
	pr           string
	missing      *runs.NoPR // why there is no pr (noPR)
	// fresh: this run created the story branch (a first attempt, or a new
	// one after reset / run --again): a branch origin still has from an
	// earlier attempt is replaced, and its PR goes back to draft.
	fresh       bool
	replaced    bool // pushArgs decided the replacing push
	listID      string
	listDir     string
	started     time.Time
	cycles      int
	blockers    int    // blocker entries in the journal before the runs
	bash        string // how Bash runs: runs.BashSandboxed, BashUnsandboxed or BashOff
	cache       string // the story's build caches
	warm        buildcache.Warm
	cost        float64 // what the runs reported they cost (USD)
	spentBefore float64 // what the story's earlier runs cost (USD): the record keeps the sum
	// costUnknown counts the headless runs that reported no cost; refused
	// the checks that refused a completion or failed at the end, by
	// command: the run's line in its record (runs.RunLine).
	costUnknown int
	refused     map[string]int
	epic        string // the epic whose child entry gives the story its blockers
	handoffs    []store.Handoff
	// checks are the checks that count for the story's tasks (read before
	// any run), kept for the hook in checksFile.
	checks     *verify.Manifest
	checksFile string
	// blocked are the protected files the story changed that keep its PR
	// a draft (the end: the story ends blocked).
	blocked []verify.FileChange
	// committed is each task's status at the last commit, so a commit
	// names what completed since.
	committed map[string]string
	// hookEvents reads the check results the runs' TaskCompleted hooks
	// report in the events file; refusedRuns counts, by task, the runs in
	// a row that refused its completion, and refusals are the last run's,
	// told to the next one (refusals.go).
	hookEvents  runs.Tail
	refusedRuns map[string]int
	refusals    []refusal
	// why says, for a run that did not complete, what stopped it and the
	// next step: the worker.end event's message. failedCheck is why, when
	// a task's checks kept refusing it (for the PR's description).
	why, failedCheck string
	// review is the review round a --review run is (review.go); nil
	// otherwise.
	review *reviewState
}

// Run executes the story and returns the exit code. ctx cancellation
// (SIGINT/SIGTERM) stops the current headless run, runs the end step, and
// exits 1.
func Run(ctx context.Context, o Options) int {
	o.defaults()
	if !store.ValidCanonical(o.Story) {
		fmt.Fprintf(o.Stdout, "saga-lsp worker: error: invalid story name %q\n", o.Story)
		return runs.ExitFailed
	}
	j, err := o.OpenLog(o.Story, "")
	if err != nil {
		fmt.Fprintf(o.Stdout, "saga-lsp worker: error: %v\n", err)
		return runs.ExitFailed
	}
	defer j.Close()
	r := &run{o: o, j: j, started: o.Now()}
	r.hookEvents = runs.Tail{Path: r.eventsFile()}
	var why string
	r.bash, why = r.bashMode()
	line := fmt.Sprintf("worker for story %s (session %s, pid %d; Bash %s)", o.Story, o.Session, os.Getpid(), r.bash)
	if o.DryRun {
		line = "dry run: " + line + " — the simulated agent stands in for Claude Code; nothing is pushed and gh is not called"
	}
	// The repository it runs for: the session dir is shared by every
	// repository of the user (runs.Run.In).
	root, _ := store.FindRoot(cmp.Or(o.Dir, "."))
	j.Emit(runs.Event{Event: runs.KindWorkerStart, OutputFile: o.OutputFile, PID: os.Getpid(), ProcStart: supervise.SelfStart(), DryRun: o.DryRun, Bash: r.bash, Root: root}, line)
	if why != "" {
		r.j.Warn(runs.StepStart, "%s", why)
	}
	status, code := r.execute(ctx)
	if status == runs.StatusFailed && ctx.Err() != nil {
		// A step interrupted by the stop (a git or gh command killed during
		// set-up) failed because of it: the run was stopped.
		status = runs.StatusStopped
	}
	if status == runs.StatusStopped {
		r.why = r.runAgain() + " continues from here"
	}
	done, total := r.progress()
	endLine := fmt.Sprintf("%s, exit %d", runs.WorkerEndText(status, done, total, r.cycles, o.DryRun), code)
	msg := ""
	if (status != runs.StatusCompleted || code != runs.ExitCompleted) && r.why != "" {
		// What stopped it and the next step, for status and follow.
		msg = endLine + " — " + r.why
	}
	switch {
	case r.review != nil && r.review.skip != "":
		// No round ran: the story's outcome stays its last run's.
		rr := r.review.rec
		if err := runs.UpdateReview(r.root, o.Story, func(rec *runs.ReviewRecord) { *rec = rr }); err != nil {
			r.j.Warn(runs.StepEnd, "run record: %v", err)
		}
	case r.wt != "":
		rec := runs.Record{Story: o.Story, Session: o.Session, Status: status, ExitCode: code, Ended: o.Now().UTC(),
			Branch: r.branch, Worktree: rel(r.root, r.wt), Base: r.base, Reference: r.reference, PR: r.pr, Cost: r.cost, Spent: r.spentBefore + r.cost, DryRun: o.DryRun, Why: msg}
		if r.pr != "" && !o.DryRun {
			rec.PRState, rec.PRStateAt = runs.PROpen, rec.Ended // it opened or reused it just now
		}
		if r.pr == "" && !o.DryRun {
			rec.NoPR = r.missing
		}
		for _, c := range r.blocked {
			rec.Protected = append(rec.Protected, runs.ProtectedFile{Path: c.Path, Change: c.Change, Rule: c.Rule, Blocks: true})
		}
		rec.Review = r.reviewRecord()
		if prev, ok := runs.ReadRecord(r.root, o.Story); ok {
			rec.History, rec.HistoryDropped = prev.History, prev.HistoryDropped
		}
		runs.AddRun(&rec, runs.RunLine{Session: o.Session, Started: r.started.UTC(), Ended: rec.Ended, Status: status, Review: r.review != nil,
			Cost: r.cost, CostUnknown: r.costUnknown, Refused: r.refused})
		if err := runs.WriteRecord(r.root, rec); err != nil {
			r.j.Warn(runs.StepEnd, "run record: %v", err)
		}
	}
	j.Emit(runs.Event{Event: runs.KindWorkerEnd, Status: status, ExitCode: runs.Int(code), Cycles: runs.Int(r.cycles),
		ElapsedMs: runs.Int64(o.Now().Sub(r.started).Milliseconds()), Done: runs.Int(done), Total: runs.Int(total), PR: r.pr,
		Cost: runs.Float(r.cost), Message: msg}, endLine)
	return code
}

// execute runs steps 1–7 and returns the final status and exit code.
func (r *run) execute(ctx context.Context) (string, int) {
	var err error
	if r.p, err = store.NewParser(); err != nil {
		return r.fail(runs.StepStart, "%v", err)
	}
	if r.root, err = store.FindRoot(cmp.Or(r.o.Dir, ".")); err != nil {
		return r.fail(runs.StepStart, "%v", err)
	}
	if _, err := r.p.LoadStory(r.root, r.o.Story); err != nil {
		return r.fail(runs.StepStart, "%v: create it with `saga-lsp new story %s --title …`", err, r.o.Story)
	}
	r.spentBefore = r.earlierSpend()
	if err := r.checkClaude(ctx); err != nil {
		return r.fail(runs.StepStart, "%v; no run was started", err)
	}

	if r.bash == runs.BashSandboxed {
		if r.cache, err = buildcache.CacheDir(r.root, r.o.Story, r.o.Env); err != nil {
			return r.fail(runs.StepStart, "%v", err)
		}
	}
	r.warm = buildcache.FindWarm(r.root, r.o.Env)

	// 1. Lock: one worker per story, shared by all worktrees.
	lock, ok, err := filesafe.TryLock(r.root, runs.WorkerLockName(r.o.Story))
	if err != nil {
		return r.fail(runs.StepLock, "%v", err)
	}
	if !ok {
		pid, _ := runs.WorkerHolder(r.root, r.o.Story)
		who := "another worker"
		if pid > 0 {
			who = fmt.Sprintf("another worker (pid %d)", pid)
		}
		return r.fail(runs.StepLock, "%s is already running story %s; stop it with `saga-lsp stop %s`", who, r.o.Story, r.o.Story)
	}
	defer lock.Unlock()
	r.j.Step(runs.StepLock, "holding the worker lock for %s", r.o.Story)
	r.background()
	// No second agent in the worktree: one an earlier worker left alive
	// ends first.
	if err := r.endStrayAgents(); err != nil {
		return r.fail(runs.StepLock, "%v", err)
	}

	// 2. Worktree and branch.
	if err := r.worktree(ctx); err != nil {
		return r.fail(runs.StepWorktree, "%v", err)
	}
	r.loadHandoff()
	// 3. Draft PR (a warning, never a failure).
	r.draftPR(ctx)
	// A review round's tasks, written and committed before anything reads
	// the story (review.go).
	if r.o.Review {
		if err := r.startReview(ctx); err != nil {
			return r.fail(runs.StepReview, "%v; no review round ran", err)
		}
		if r.review.skip != "" {
			return r.reviewSkipped()
		}
	}
	// 4. Context.
	if err := r.context(ctx); err != nil {
		return r.fail(runs.StepContext, "%v", err)
	}
	// The checks that count, before any agent runs.
	if err := r.readChecks(ctx); err != nil {
		status, code := r.fail(runs.StepContext, "read the tasks' checks: %v; no run was started", err)
		r.end(context.WithoutCancel(ctx), status, ctx.Err() != nil)
		return status, code
	}
	// 5. Hydrate.
	if err := r.hydrate(ctx); err != nil {
		status, code := r.fail(runs.StepHydrate, "%v; no run was started", err)
		r.end(context.WithoutCancel(ctx), status, ctx.Err() != nil)
		return status, code
	}
	r.seeded(runs.StepHydrate, "the agent's")(buildcache.SeedNpm(r.cache, r.wt, r.warm))
	// 6. Loop.
	status, code := r.loop(ctx)
	// 7. End (also after SIGINT/SIGTERM: the context is cancelled then).
	complete := r.end(context.WithoutCancel(ctx), status, ctx.Err() != nil)
	if status == runs.StatusCompleted && !complete {
		status, code = runs.StatusFailed, runs.ExitFailed
		if len(r.blocked) > 0 {
			status, code = runs.StatusBlocked, runs.ExitBlocked
		}
	}
	if r.review != nil {
		r.answerReview(context.WithoutCancel(ctx), complete)
	}
	return status, code
}

// earlierSpend is what the story's earlier runs cost (runs.Spent): the
// total its record keeps, and the run before this one when the record
// does not hold it (killed before writing it).
func (r *run) earlierSpend() float64 {
	rec, ok := runs.ReadRecord(r.root, r.o.Story)
	var prev *runs.Run
	for _, f := range slices.Backward(runs.Runs(r.o.SessionDir, runs.KindStory, r.o.Story)) {
		if f.Session != r.o.Session && f.EventsFile != r.eventsFile() {
			prev = runs.ReadRun(f.EventsFile)
			break
		}
	}
	return runs.Spent(rec, ok, prev)
}

// runAgain is the command that runs the story again: its epic's run when
// an epic runner started it.
func (r *run) runAgain() string {
	if r.epic != "" && runs.Getenv(r.o.Env, runs.EnvEpicEvents) != "" {
		return fmt.Sprintf("`saga-lsp run %s`", r.epic)
	}
	return fmt.Sprintf("`saga-lsp run %s`", r.o.Story)
}

// fail ends a step of the worker failed: the error is logged and kept as
// the end's reason.
func (r *run) fail(step, format string, args ...any) (string, int) {
	r.why = fmt.Sprintf(format, args...)
	r.j.Fail(step, r.why)
	return runs.StatusFailed, runs.ExitFailed
}

// eventsFile is the run's events file ("" without an output file).
func (r *run) eventsFile() string {
	if r.o.OutputFile == "" {
		return ""
	}
	return runs.EventsFile(r.o.OutputFile)
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

// setStoryField sets one string member of the worktree's story.json (only
// where the file has it, with onlyIfPresent), through the one validated
// write in store.
func (r *run) setStoryField(ctx context.Context, key, value string, onlyIfPresent bool) error {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := store.SetStoryField(lctx, r.wt, r.o.Story, key, value, onlyIfPresent)
	return err
}

// setTaskStatus writes a task's status in the worktree copy, as the hook
// does.
func (r *run) setTaskStatus(ctx context.Context, task, status string) error {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := store.SetTaskStatus(lctx, r.wt, r.o.Story, task, status)
	return err
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
			r.j.Emit(runs.Event{Event: runs.KindTaskStatus, Task: t.ID, From: store.StatusInProgress, To: store.StatusPending, Source: runs.SourceWorktree},
				fmt.Sprintf("hydrate: %s was left in progress by an earlier run; back to pending", t.ID))
		}
	}
	if s, err = r.story(); err != nil {
		return err
	}
	if len(s.Tasks) == 0 {
		return fmt.Errorf("story %s has no tasks; add some with `saga-lsp new task %s <id> --subject …`", r.o.Story, r.o.Story)
	}
	cfg, err := claudecode.ConfigDir(r.o.Env)
	if err != nil {
		return err
	}
	r.listID = claudecode.ListID(r.o.Story, r.o.Now().UnixMilli())
	r.listDir = claudecode.ListDir(cfg, r.listID)
	hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := claudecode.Hydrate(hctx, r.listDir, claudecode.FromStory(r.countedTasks(s))); err != nil {
		return err
	}
	r.j.Emit(runs.Event{Event: runs.KindStep, Step: runs.StepHydrate, TaskList: r.listID, TaskListDir: r.listDir,
		Done: runs.Int(s.Done()), Total: runs.Int(len(s.Tasks)), Message: fmt.Sprintf("%d tasks written to %s", len(s.Tasks), r.listDir)},
		fmt.Sprintf("hydrate: %d tasks (%d done) → %s", len(s.Tasks), s.Done(), r.listDir))
	return nil
}

// checkClaude refuses a Claude Code older than claudecode.MinVersion
// before anything is created (docs/worker.md#a-run-that-cannot-work-does-not-start):
// an older one lets a write through when the write-scope hook fails. A dry
// run's agent is saga-lsp's own.
func (r *run) checkClaude(ctx context.Context) error {
	if r.o.DryRun {
		return nil
	}
	path := lookPath(r.o.Claude)
	if path == "" {
		return fmt.Errorf("%s not found: install Claude Code %s or newer, set %s, or use --dry-run", r.o.Claude, claudecode.MinVersion, runs.EnvClaude)
	}
	v, err := claudecode.CheckVersion(ctx, path)
	if err != nil {
		return fmt.Errorf("%w (or set %s to another claude)", err, runs.EnvClaude)
	}
	r.j.Step(runs.StepStart, "Claude Code %s (%s)", v, path)
	return nil
}

// background lowers the worker's CPU priority, and that of all it starts
// from now on, once it holds its lock: the set-up up to the lock is the
// start a user or the epic runner waits for, and runs at the priority of
// what started the worker; the worktree, the agent and the checks are the
// long work that yields to the user's programs (docs/worker.md#priority).
func (r *run) background() {
	nice, err := NiceOf(r.o.Env)
	for _, err := range []error{err, supervise.Background(nice)} {
		if err != nil {
			r.j.Warn(runs.StepLock, "%v", err)
		}
	}
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
