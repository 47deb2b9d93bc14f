// Package gate runs a task's checks for the TaskCompleted hook
// (docs/hooks.md#taskcompleted-the-completion-gate): the hook's Checker in
// `saga-lsp hook`, which saga-lsp-hook hands a completion to when the
// worker's manifest does not settle it. It owns reading the checks that
// count (the manifest, else git), running them confined, reporting them
// into the run's events, and sharing one run of them between two
// registrations of the hook.
package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/hook"
	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/runs/verify"
)

// checksMargin is kept of the hook's registered timeout for what follows
// the checks (killing them, reporting): a check that would outlive the
// registration fails instead of being cut off by Claude Code, which would
// let the completion through.
const checksMargin = 10 * time.Second

// exitRefuse is the exit status that makes Claude Code refuse the
// completion.
const exitRefuse = hook.ExitRefuse

// checkRun is one completion being decided.
type checkRun struct {
	ctx    context.Context
	c      *hook.Completion
	env    func(string) string
	stderr io.Writer
}

func (h *checkRun) warnf(format string, args ...any) { h.c.Warnf(format, args...) }
func (h *checkRun) getenv(key string) string         { return h.c.Getenv(key) }

// Check is the Checker of `saga-lsp hook`: it reads the task's checks that
// count and runs them (exit 2 when one fails).
func Check(ctx context.Context, c *hook.Completion) int {
	h := &checkRun{ctx: ctx, c: c, env: c.Env, stderr: c.Stderr}
	p, story, task, dir, start := c.Payload, c.Story, c.Task, c.Dir, c.Start
	m, tc, found, bad := h.countedChecks(story, task, dir)
	if bad != nil {
		fmt.Fprintf(h.stderr, "saga-lsp: task %s cannot be completed: its checks cannot be read as committed: %v\n", task, bad)
		return exitRefuse
	}
	if !found || len(tc.Commands) == 0 {
		return 0
	}

	budget := claudecode.TaskCompletedTimeout
	if s := h.getenv(runs.EnvChecksTimeout); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			budget = n
		} else {
			h.warnf("%s=%q is not a number of seconds; using %d", runs.EnvChecksTimeout, s, budget)
		}
	}
	deadline := start.Add(time.Duration(budget)*time.Second - checksMargin)
	// SIGINT/SIGTERM (Claude Code or the worker stopping the run) kill the
	// checks; Claude Code lets the completion through then, which is why
	// the worker runs every check again before the PR goes ready.
	sigCtx, stop := signal.NotifyContext(h.ctx, supervise.StopSignals()...)
	defer stop()
	ctx, cancel := context.WithDeadline(sigCtx, deadline.Add(checksMargin/2))
	defer cancel()

	g := h.gate(p, story, task, start, deadline)
	defer g.release()
	if g.shared != nil { // the other registration of this hook ran them
		if g.shared.Passed {
			return 0
		}
		fmt.Fprintf(h.stderr, "saga-lsp: task %s cannot be completed yet: its check `%s` failed (%s); the other saga-lsp hook registered for TaskCompleted reported it in full.\n",
			task, g.shared.Command, g.shared.Outcome)
		return exitRefuse
	}

	// In a worker's run, the caches it gave the agent (the run's own
	// XDG_CACHE_HOME points inside them, so they cannot be found again).
	cache := h.getenv(runs.EnvCacheDir)
	if cache == "" {
		var err error
		if cache, err = buildcache.CacheDir(dir, story, h.getenv); err != nil {
			cache = ""
		}
	}
	// The tests that count are the fork point's: each check runs with the
	// story's protected files as they are there, and on the full tree.
	setup := verify.Setup{Dir: dir, Manifest: m, Cache: cache, Warm: buildcache.FindWarm(dir, h.getenv),
		Policy: verify.Policy{AllowUnconfined: h.getenv(runs.EnvAllowUnconfinedChecks) == "1"}}
	if m != nil {
		setup.Reference = m.ForkPoint
	}
	pctx, pcancel := context.WithTimeout(sigCtx, 30*time.Second)
	checks, err := verify.Prepare(pctx, setup)
	pcancel()
	if err != nil {
		fmt.Fprintf(h.stderr, "saga-lsp: task %s cannot be completed: %v\n", task, err)
		return exitRefuse
	}
	runner, prot := checks.Runner, checks.Protected
	events := h.getenv(runs.EnvEventsFile)
	if prot != nil && events != "" {
		e := verify.ProtectedEvent(prot.Changes)
		e.Story, e.Session = story, h.getenv(runs.EnvSession)
		if err := runs.Append(events, e); err != nil {
			h.warnf("report the protected files of %s: %v", story, err)
		}
	}
	res := checks.Run(ctx, task, tc, deadline, func(r verify.Result) {
		if r.Problem == "interrupted" || events == "" {
			return
		}
		e := verify.Event(task, r)
		e.Story, e.Session = story, h.getenv(runs.EnvSession)
		if err := runs.Append(events, e); err != nil {
			h.warnf("report the check of %s: %v", task, err)
		}
	})
	if sigCtx.Err() != nil {
		h.warnf("interrupted while running the checks of %s", task)
		return exitRefuse
	}
	// The verdict, after every check: a worker counts the completion only
	// with a passing one, since Claude Code lets a completion through when
	// this hook crashes or is killed (docs/hooks.md#failing-closed).
	if events != "" {
		commit := h.getenv(runs.EnvForkPoint)
		if m != nil {
			commit = m.ForkPoint
		}
		e := verify.Verdict(task, commit, res)
		e.Story, e.Session = story, h.getenv(runs.EnvSession)
		if err := runs.Append(events, e); err != nil {
			h.warnf("report the verdict on %s: %v", task, err)
		}
	}
	g.record(res)
	if res.Passed() {
		if runner.Mode == verify.Unconfined {
			h.warnf("%s", runner.Why)
		}
		return 0
	}
	fmt.Fprint(h.stderr, res.Refusal(runner.Why))
	return exitRefuse
}

// countedChecks finds the task's checks that count, and the story's whole
// manifest (nil where nothing was committed: the file itself is read
// then): from the worker's manifest when the run has one for this story
// and fork point, else read with git in dir — at the reference commit the
// story's last run recorded when HEAD holds it, else at HEAD's fork from
// the default branch. found is false for a task that is not the story's.
// bad is set when the repository holds a replacement for an object of the
// commit (planted: the completion is refused, never checked against the
// working copy).
func (h *checkRun) countedChecks(story, task, dir string) (m *verify.Manifest, tc verify.TaskChecks, found bool, bad error) {
	fork := h.getenv(runs.EnvForkPoint)
	if path := h.getenv(runs.EnvChecksFile); path != "" {
		m, err := runs.ReadChecksManifest(path)
		switch {
		case err != nil:
			h.warnf("%s: %v; reading the checks with git", runs.EnvChecksFile, err)
		case m.Story != story || m.ForkPoint != fork:
			h.warnf("%s is for story %s at %s, not %s at %s; reading the checks with git", path, m.Story, m.ForkPoint, story, fork)
		default:
			tc, found = m.Tasks[task]
			return m, tc, found, nil
		}
	}
	g := git.Repo{Dir: dir}
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	if fork == "" {
		if rec, ok := runs.ReadRecord(dir, story); ok && rec.Reference != "" && g.OK(ctx, "merge-base", "--is-ancestor", rec.Reference, "HEAD") {
			fork = rec.Reference
		}
	}
	if fork == "" {
		var err error
		if fork, err = verify.ForkPoint(ctx, g, "HEAD", verify.DefaultBranch(ctx, g)); err != nil {
			tc, found = h.uncommittedChecks(story, task, dir, err)
			return nil, tc, found, nil
		}
	}
	// Every task: the story's protection is all its tasks' together.
	m, err := verify.Resolve(ctx, g, story, fork, nil)
	if errors.Is(err, git.ErrBadObject) {
		return nil, tc, false, err
	}
	if err != nil {
		tc, found = h.uncommittedChecks(story, task, dir, err)
		return nil, tc, found, nil
	}
	tc, found = m.Tasks[task]
	return m, tc, found, nil
}

// uncommittedChecks reads the task file itself where git cannot say what
// was committed (no repository, no common history with the default
// branch): the file is then all there is to go by.
func (h *checkRun) uncommittedChecks(story, task, dir string, why error) (verify.TaskChecks, bool) {
	tc, found := verify.WorkingCopy(dir, story, task)
	if found {
		h.warnf("cannot read the committed checks of %s/%s (%v); using the file in %s", story, task, why, dir)
	}
	return tc, found
}

// sharedResult is what one run of a task's checks left for another
// registration of the hook waiting on the same completion.
type sharedResult struct {
	Stamp    string    `json:"stamp"` // the transcript's size when the completion was asked for
	Finished time.Time `json:"finished"`
	Passed   bool      `json:"passed"`
	Command  string    `json:"command,omitempty"` // the failing check
	Outcome  string    `json:"outcome,omitempty"`
}

// gate makes one hook process per completion run the checks when the hook
// is registered twice (the worker's --settings and a user install or the
// plugin): Claude Code starts both at once. The first to take the lock
// (session dir/checks/<session>--<task>.lock) runs them; the other waits
// for it and takes its result instead of running them again. A result
// counts for a later hook process when it finished after that process
// arrived and had to wait, or when it was made for the same completion:
// Claude Code's transcript has the same size for both hooks of one
// completion and grows before any retry.
type gate struct {
	h        *checkRun
	lock     *filesafe.Lock
	path     string // the result file
	stamp    string
	shared   *sharedResult
	disabled bool
}

// fileKey tells whether s can name a file as it is (Claude Code's session
// ids are UUIDs).
func fileKey(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, c := range s {
		if !(c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func (h *checkRun) gate(p *hook.HookPayload, story, task string, arrived, deadline time.Time) *gate {
	g := &gate{h: h, disabled: true}
	session := p.SessionID
	if !fileKey(session) {
		sum := sha256.Sum256([]byte(session))
		session = hex.EncodeToString(sum[:8])
	}
	dir := runs.SessionDir(h.env)
	base := runs.CheckShare(dir, session, story, task)
	if err := runs.MakeSessionDir(dir); err != nil {
		h.warnf("cannot share check results between hook registrations (%v)", err)
		return g
	}
	if err := os.MkdirAll(filepath.Dir(base), 0o700); err != nil {
		h.warnf("cannot share check results between hook registrations (%v)", err)
		return g
	}
	lock, free, err := filesafe.TryLockFile(base + ".lock")
	if err != nil {
		h.warnf("cannot share check results between hook registrations (%v)", err)
		return g
	}
	if fi, err := os.Stat(p.TranscriptPath); err == nil && p.TranscriptPath != "" {
		g.stamp = fmt.Sprintf("%d:%d", fi.Size(), fi.ModTime().UnixNano())
	}
	waited := !free
	if waited {
		ctx, cancel := context.WithDeadline(h.ctx, deadline)
		lock, err = filesafe.AcquireLockFile(ctx, base+".lock")
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			// The other one still runs them: run them here too rather
			// than let the completion through unchecked.
			h.warnf("the other saga-lsp hook is still running the checks of %s; running them here too", task)
		}
		if err != nil {
			return &gate{h: h, disabled: true}
		}
	}
	g.lock, g.path, g.disabled = lock, base+".json", false
	data, err := os.ReadFile(g.path)
	if err != nil {
		return g
	}
	var r sharedResult
	if json.Unmarshal(data, &r) != nil {
		return g
	}
	if (waited && r.Finished.After(arrived)) || (g.stamp != "" && r.Stamp == g.stamp) {
		g.shared = &r
	}
	return g
}

// record leaves res for a waiting registration.
func (g *gate) record(res verify.TaskResult) {
	if g.disabled {
		return
	}
	r := sharedResult{Stamp: g.stamp, Finished: time.Now(), Passed: res.Passed()}
	if f := res.Failed(); f != nil {
		r.Command, r.Outcome = f.Command, f.Outcome()
	}
	data, _ := json.Marshal(r)
	if err := filesafe.WriteFileAtomic(g.path, data, 0o600); err != nil {
		g.h.warnf("cannot share the check result (%v)", err)
	}
}

func (g *gate) release() {
	if g.lock != nil {
		_ = g.lock.Unlock()
		g.lock = nil
	}
}
