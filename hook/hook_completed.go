package hook

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// TaskCompleted (docs/hooks.md#taskcompleted-the-completion-gate): Claude Code runs it before a TaskUpdate
// sets a task completed, and exit 2 refuses the completion — the model
// reads the hook's stderr as the tool's error. The hook runs the task's
// checks (those that count: package checks) and exits 2 only when one
// fails; anything else it cannot decide (no task id, no story, a runtime
// task, an unreadable repository) lets the completion through with a
// warning, so that it never blocks a run by accident.
//
// Speed: most tasks have no checks, and the hook runs at every completion.
// In a worker's run the worker read the checks with git once, before any
// agent ran, into a file of the session dir (runs.EnvChecksFile) where the
// agent's sandbox cannot write; deciding "no checks" is then one small
// read, no git, here. Everything else — reading the checks with git (a
// session started by hand), running them — is the Checker's: hook/gate in
// `saga-lsp hook`, and saga-lsp-hook hands it to that program
// (ExecSagaLSP), so that the program Claude Code starts at every tool call
// links none of it (docs/hooks.md#the-hook-program).

// exitRefuse is the exit status that makes Claude Code refuse the
// completion.
const exitRefuse = 2

// ExitRefuse is exitRefuse for a Checker.
const ExitRefuse = exitRefuse

// Completion is a TaskCompleted of a SAGA story's task that the worker's
// manifest does not settle: a Checker's to decide.
type Completion struct {
	Payload *HookPayload
	// Raw is the payload as read, for a program that reads it again.
	Raw         []byte
	Story, Task string
	// Dir is the story's worktree (or checkout) the checks run in.
	Dir string
	// Start is when the hook started: the checks' deadline counts from it.
	Start          time.Time
	Env            func(string) string
	Stdout, Stderr io.Writer
}

// Getenv is the trimmed value of an environment variable.
func (c *Completion) Getenv(key string) string {
	return (&hookRun{env: c.Env}).getenv(key)
}

// Warnf writes one warning line as the hook does.
func (c *Completion) Warnf(format string, args ...any) {
	(&hookRun{stderr: c.Stderr}).warnf(format, args...)
}

// Checker decides a Completion: it reads the task's checks that count,
// runs them and returns the exit status (0, or ExitRefuse).
type Checker func(ctx context.Context, c *Completion) int

// taskCompleted handles a TaskCompleted payload and returns the exit
// status.
func (h *hookRun) taskCompleted(p *HookPayload, raw []byte) int {
	start := time.Now()
	task := p.TaskID
	if task == "" {
		h.warnf("TaskCompleted payload has no task_id; the completion is not checked")
		return 0
	}
	cwd := absPathFrom("", h.hookCwd(p))
	story, ok := h.syncStory("the completion is not checked")
	if !ok && (h.getenv(runs.EnvStoryID) != "" || claudecode.IsSagaList(h.getenv(claudecode.EnvTaskListID))) {
		return 0 // the run's story context is inconsistent (warned)
	}
	if story == "" {
		wt, inWorktree := DetectStoryWorktree(cwd)
		if !inWorktree {
			return 0 // not a SAGA story's session
		}
		story = wt.Story
	}
	if !store.ValidID(task) {
		h.warnf("task id %q is not a SAGA task id (a task created during the run?); the completion is not checked", task)
		return 0
	}
	dir := h.getenv(runs.EnvProjectDir)
	if dir == "" {
		dir = h.getenv(claudecode.EnvProjectDir)
	}
	if dir == "" {
		dir = cwd
	}
	dir = absPathFrom(cwd, dir)

	// The worker's reading, for this story and fork point: a task without
	// checks (or not the story's) completes here. Whatever else the file
	// says, the Checker reads it again and warns.
	if path := h.getenv(runs.EnvChecksFile); path != "" {
		if m, err := runs.ReadChecksManifest(path); err == nil && m.Story == story && m.ForkPoint == h.getenv(runs.EnvForkPoint) {
			if tc, found := m.Tasks[task]; !found || len(tc.Commands) == 0 {
				return 0
			}
		}
	}
	if h.checks == nil {
		// Fail closed: a task whose checks may exist is never let through
		// unchecked by a hook that cannot run them.
		fmt.Fprintf(h.stderr, "saga-lsp: task %s cannot be completed: this hook cannot run its checks\n", task)
		return exitRefuse
	}
	return h.checks(h.ctx, &Completion{Payload: p, Raw: raw, Story: story, Task: task, Dir: dir, Start: start,
		Env: h.env, Stdout: h.stdout, Stderr: h.stderr})
}
