package worker

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/store"
)

// Verified completion in the worker (docs/worker.md#verified-completion): before any agent runs,
// the worker reads with git the checks that count — each task file as
// committed at the run's reference commit (reference.go) — and keeps
// them in the session dir for the TaskCompleted hook (runs.ChecksFile); the
// headless runs register the hook with a timeout covering the longest
// task's checks; and before the PR goes ready every task's checks run once
// more on the final tree.

// checksMarginSeconds is added to the longest task's checks for the hook's
// registered timeout.
const checksMarginSeconds = 60

// readChecks reads the checks that count at the run's reference commit R
// (the story branch's fork point since bringIn) and the tasks the branch
// added itself, and writes them where the hook reads them.
func (r *run) readChecks(ctx context.Context) error {
	m, err := verify.Resolve(ctx, r.wtGit, r.o.Story, r.reference, nil)
	if err != nil {
		return err
	}
	if err := r.reviewChecks(ctx, m); err != nil {
		return err
	}
	path := runs.ChecksFile(r.o.SessionDir, r.o.Session)
	if err := runs.WriteChecksManifest(path, m); err != nil {
		return fmt.Errorf("store the checks for the hook: %w", err)
	}
	r.checks, r.checksFile = m, path
	n := 0
	for _, tc := range m.Tasks {
		if len(tc.Commands) > 0 {
			n++
		}
	}
	if n > 0 && !r.o.AllowUnconfinedChecks {
		if why := verify.Unconfinable(ctx); why != "" {
			return fmt.Errorf("the tasks' checks cannot run: %s", why)
		}
	}
	at := fmt.Sprintf("%s (%s's tip when the run started)", verify.Short(r.reference), r.referenceFrom)
	r.j.Emit(runs.Event{Event: runs.KindStep, Step: runs.StepContext,
		Message: fmt.Sprintf("checks of %d task(s) read at %s, the fork point of %s", n, at, r.branch)},
		fmt.Sprintf("checks: %d task(s) with checks, as committed at %s", n, at))
	return nil
}

// checksTimeout is the TaskCompleted hook's registered timeout: the
// longest task's checks and a margin.
func (r *run) checksTimeout() int {
	longest := time.Duration(0)
	if r.checks != nil {
		for _, tc := range r.checks.Tasks {
			longest = max(longest, tc.Budget())
		}
	}
	if longest == 0 {
		return claudecode.HookTimeout
	}
	return int(math.Ceil(longest.Seconds())) + checksMarginSeconds
}

// countedTasks is the story's tasks with the checks that count in place of
// the worktree copy's own, for hydration: the model reads how it is judged.
func (r *run) countedTasks(s *store.Story) *store.Story {
	if r.checks == nil {
		return s
	}
	out := *s
	out.Tasks = make([]*store.Task, len(s.Tasks))
	for i, t := range s.Tasks {
		c := *t
		tc := r.checks.Tasks[t.ID]
		c.Checks, c.CheckTimeout = nil, tc.Timeout()
		for _, cmd := range tc.Commands {
			c.Checks = append(c.Checks, store.Check{Command: cmd})
		}
		out.Tasks[i] = &c
	}
	return &out
}

// prepareChecks makes the tree ready for the final checks (verify.Prepare):
// confined (or unconfined where --allow-unconfined-checks allows it), with
// build caches the agent's Bash never wrote (buildcache.ChecksCacheDir) seeded
// from the user's npm cache, and prot, the protected files compared after
// the end's commit.
func (r *run) prepareChecks(ctx context.Context, prot *verify.Protected) *verify.Checks {
	cache, err := buildcache.ChecksCacheDir(r.root, r.o.Story, r.o.Env)
	if err != nil {
		r.j.Warn(runs.StepEnd, "build cache: %v", err)
		cache = ""
	}
	checks, _ := verify.Prepare(ctx, verify.Setup{Dir: r.wt, Manifest: r.checks, Cache: cache, Warm: r.warm,
		Policy: verify.Policy{AllowUnconfined: r.o.AllowUnconfinedChecks}, Protected: prot,
		SeedNpm: true, Seeded: r.seeded(runs.StepEnd, "the checks'")})
	return checks
}

// seeded says in the log how copying what the worktree's npm lockfile
// needs from the user's npm cache into a story's cache went.
func (r *run) seeded(step, whose string) func(n int, err error) {
	return func(n int, err error) {
		if err != nil {
			r.j.Warn(step, "npm cache: %v", err)
		} else if n > 0 {
			r.j.Step(step, "%s npm cache: %d package(s) copied from %s", whose, n, r.warm.Npm)
		}
	}
}

// finalChecks runs every task's checks on the final tree (a later task can
// break an earlier one), each with the story's protected files as they are
// at the reference commit and on the full tree (prot), and reports each
// result as a check.end event. A task whose check fails goes back to
// pending (a task cannot be completed while a check fails), with a journal
// entry naming it and the command; when all pass, the digest goes into the
// journal. It reports whether all passed and the digest, which also lists
// the protected files the story changed.
func (r *run) finalChecks(ctx context.Context, s *store.Story, prot *verify.Protected) (passed bool, digest string) {
	var changes []verify.FileChange
	if prot != nil {
		changes = prot.Changes
	}
	if r.checks == nil || !slices.ContainsFunc(s.Tasks, func(t *store.Task) bool { return len(r.checks.Tasks[t.ID].Commands) > 0 }) {
		if len(changes) > 0 {
			digest = verify.ChangesText(changes)
			r.journalNote(strings.TrimSpace(digest))
		}
		return true, digest
	}
	checks := r.prepareChecks(ctx, prot)
	if why := checks.Runner.Why; why != "" {
		r.j.Warn(runs.StepEnd, "checks: %s", why)
	}
	var results []verify.TaskResult
	var failed []string
	for _, t := range s.Tasks {
		tc := r.checks.Tasks[t.ID]
		if len(tc.Commands) == 0 {
			continue
		}
		res := checks.Run(ctx, t.ID, tc, time.Time{}, func(c verify.Result) {
			line := fmt.Sprintf("check %s: %s — %s (%s)", t.ID, c.Command, c.Outcome(), c.Duration.Round(time.Millisecond))
			if c.Protected {
				line = fmt.Sprintf("check %s (%s): %s — %s (%s)", t.ID, verify.ProtectedRun, c.Command, c.Outcome(), c.Duration.Round(time.Millisecond))
			}
			r.j.Emit(verify.Event(t.ID, c), line)
		})
		results = append(results, res)
		if f := res.Failed(); f != nil {
			r.refusedBy(f.Command)
			failed = append(failed, fmt.Sprintf("task %s: `%s` %s", t.ID, f.Command, f.Outcome()))
			if t.Status == store.StatusCompleted {
				r.backToPending(ctx, runs.StepEnd, t.ID, fmt.Sprintf("end: %s's check fails on the final tree; back to pending", t.ID))
			}
		}
	}
	digest = verify.Digest(results, changes)
	if len(failed) > 0 {
		r.journalNote(fmt.Sprintf("the final run of the checks failed, so the pull request stays a draft and the task goes back to pending: %s\n\n%s",
			strings.Join(failed, "; "), digest))
		r.why = fmt.Sprintf("the final run of the checks failed: %s; the pull request stays a draft. Fix what the check found (on %s: the next run takes it in; or in %s, committed on %s), then %s",
			strings.Join(failed, "; "), r.refBase, rel(r.root, r.wt), r.branch, r.runAgain())
		r.j.Fail(runs.StepEnd, r.why)
		return false, digest
	}
	r.journalNote("every task's checks passed on the final tree:\n\n" + digest)
	r.j.Step(runs.StepEnd, "every task's checks passed on the final tree")
	return true, digest
}

// protected compares the story's tree with the reference commit (after the
// end's commit) and reports what it changed of its protected files: an
// event, and the log; nil when it cannot be told (said in the log).
func (r *run) protected(ctx context.Context) *verify.Protected {
	if r.reference == "" {
		return nil
	}
	prot, err := verify.Compare(ctx, r.wt, r.reference, r.checks)
	if err != nil {
		r.j.Warn(runs.StepEnd, "protected files: %v", err)
		return nil
	}
	line := ""
	if len(prot.Changes) > 0 {
		line = "protected files the story changed: " + verify.Paths(prot.Changes)
	}
	r.j.Emit(verify.ProtectedEvent(prot.Changes), line)
	return prot
}

// blockedByProtected ends a story whose tree changes protected files it
// may not: the pull request stays a draft, and the log and the journal say
// which files and what to do.
func (r *run) blockedByProtected(changed []verify.FileChange) {
	var tasks []string
	if r.checks != nil {
		for id, tc := range r.checks.Tasks {
			if len(tc.Commands) > 0 {
				tasks = append(tasks, id)
			}
		}
	}
	slices.Sort(tasks)
	which := "the story's task"
	if len(tasks) > 0 {
		which = "task " + strings.Join(tasks, " or ")
	}
	var files []string
	for _, c := range changed {
		files = append(files, c.Path)
	}
	msg := fmt.Sprintf("protected files changed: %s. The pull request stays a draft: their versions at the reference commit %s are what count. Allow it with \"mayChangeTests\" on %s on %s, or revert them (`git -C %s checkout %s -- %s`), then run the story again",
		verify.Paths(changed), verify.Short(r.reference), which, r.referenceFrom, r.wt, verify.Short(r.reference), strings.Join(files, " "))
	r.j.Error(runs.StepEnd, "%s", msg)
	r.journalNote(msg)
}

// unverify puts back to pending the tasks with checks that a run completed
// while it was being stopped: Claude Code lets a completion through when it
// kills the TaskCompleted hook on SIGINT, so such a completion proves
// nothing. It is called with the statuses from before the run.
func (r *run) unverify(ctx context.Context, before map[string]string) {
	s, err := r.story()
	if err != nil || r.checks == nil {
		return
	}
	var reset []string
	for _, t := range s.Tasks {
		if t.Status != store.StatusCompleted || before[t.ID] == store.StatusCompleted || len(r.checks.Tasks[t.ID].Commands) == 0 {
			continue
		}
		if r.backToPending(ctx, runs.StepLoop, t.ID, fmt.Sprintf("%s was completed while the run was being stopped, so its checks may not have run; back to pending", t.ID)) {
			reset = append(reset, t.ID)
		}
	}
	if len(reset) > 0 {
		slices.Sort(reset)
		r.journalNote(fmt.Sprintf("completed while the run was being stopped, so their checks may not have run; back to pending: %s", strings.Join(reset, ", ")))
	}
}

// requireVerdicts closes the completion gate Claude Code leaves open
// (docs/worker.md#verified-completion): it ignores "onFailure" on
// TaskCompleted, so a gate hook that crashes, hangs past its timeout or is
// killed lets the completion through. A task with checks that the run
// completed counts only when the gate's passing verdict on it, for the
// run's reference commit, came before that completion in the run's events
// (evs, runEvents: the hook's check.verdict, then the stream's task.status);
// any other goes back to pending, in the worktree and the task list, with
// a journal entry. before are the statuses from before the run.
func (r *run) requireVerdicts(ctx context.Context, before map[string]string, evs []runs.Event) {
	s, err := r.story()
	if err != nil || r.checks == nil {
		return
	}
	const (
		none       = iota
		passed     // a passing verdict not yet used by a completion
		verified   // completed after a passing verdict
		unverified // completed without one
	)
	state := map[string]int{}
	for _, e := range evs {
		switch {
		case e.Event == runs.KindCheckVerdict && e.Task != "":
			if e.Passed != nil && *e.Passed && e.Commit == r.checks.ForkPoint {
				state[e.Task] = passed
			} else {
				state[e.Task] = none
			}
		case e.Event == runs.KindTaskStatus && e.Source == runs.SourceClaude && e.Cycle == r.cycles && e.To == store.StatusCompleted:
			if state[e.Task] == passed {
				state[e.Task] = verified
			} else {
				state[e.Task] = unverified
			}
		}
	}
	var reset []string
	for _, t := range s.Tasks {
		if t.Status != store.StatusCompleted || len(r.checks.Tasks[t.ID].Commands) == 0 {
			continue
		}
		switch st := state[t.ID]; {
		case st == passed || st == verified:
			continue
		case st == none && before[t.ID] == store.StatusCompleted:
			continue // completed before this run, and not again in it
		}
		if r.backToPending(ctx, runs.StepLoop, t.ID, fmt.Sprintf("%s was completed without a passing verdict from its completion gate (the TaskCompleted hook failed, timed out or was killed, so its checks may not have run); back to pending", t.ID)) {
			reset = append(reset, t.ID)
		}
	}
	if len(reset) > 0 {
		slices.Sort(reset)
		r.journalNote(fmt.Sprintf("completed without a passing verdict from the completion gate (its TaskCompleted hook failed, timed out or was killed), so their checks may not have run; back to pending: %s", strings.Join(reset, ", ")))
	}
}

// backToPending takes a completed task back to pending (toPending).
func (r *run) backToPending(ctx context.Context, step, task, line string) bool {
	return r.toPending(ctx, step, task, store.StatusCompleted, line)
}

// toPending takes a task back to pending from status from, in the
// worktree's copy and in the task list (which reconciliation would
// otherwise copy back), and reports it.
func (r *run) toPending(ctx context.Context, step, task, from, line string) bool {
	if err := r.setTaskStatus(ctx, task, store.StatusPending); err != nil {
		r.j.Warn(step, "reset %s: %v", task, err)
		return false
	}
	if r.listDir != "" {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		err := claudecode.Update(lctx, r.listDir, task, func(t *claudecode.Task) error {
			t.Status = claudecode.StatusPending
			return nil
		})
		if err != nil {
			r.j.Warn(step, "reset %s in the task list: %v", task, err)
		}
	}
	r.j.Emit(runs.Event{Event: runs.KindTaskStatus, Task: task, From: from, To: store.StatusPending, Source: runs.SourceWorktree}, line)
	return true
}
