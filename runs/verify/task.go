// Package verify owns verified completion (docs/worker.md#verified-completion): which checks
// count for a task (read with git from the task file as committed at the
// story branch's fork point: resolve.go), running them confined like the
// agent's Bash with bounded output, a timeout and nothing left behind
// (run.go), and what their results become — the text the model reads when
// the TaskCompleted hook refuses a completion, the check.end events, and
// the digest the worker puts in the PR body and the journal (this file).
// The hook, the worker's final re-run and `saga-lsp verify` all go through
// it.
package verify

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
)

// TaskResult is one task's checks run in order, up to the first failure.
type TaskResult struct {
	Task    string
	Checks  TaskChecks
	Results []Result
}

// Passed tells whether every check ran and passed.
func (t TaskResult) Passed() bool {
	if len(t.Results) != len(t.Checks.Commands) {
		return false
	}
	for _, r := range t.Results {
		if !r.Passed {
			return false
		}
	}
	return true
}

// Failed is the failing result, nil when all passed.
func (t TaskResult) Failed() *Result {
	for i := range t.Results {
		if !t.Results[i].Passed {
			return &t.Results[i]
		}
	}
	return nil
}

// RunTask runs a task's checks in order and stops at the first failure. A
// non-zero deadline bounds them all (the hook's registered timeout): a check
// gets what is left when that is less than its own timeout, and one that
// would start after the deadline fails unrun — never passes. report, when
// not nil, gets each result as it comes.
func RunTask(ctx context.Context, r *Runner, task string, tc TaskChecks, deadline time.Time, report func(Result)) TaskResult {
	out := TaskResult{Task: task, Checks: tc}
	for _, c := range tc.Commands {
		timeout, cut := tc.Timeout(), false
		if !deadline.IsZero() {
			left := time.Until(deadline).Truncate(time.Second)
			if left < timeout {
				timeout, cut = left, true
			}
		}
		var res Result
		if timeout <= 0 {
			res = Result{Command: c, ExitCode: -1, Mode: r.Mode,
				Problem: "not run: the time for the task's checks ran out (the hook's registered timeout)"}
		} else {
			res = r.RunLimited(ctx, c, timeout, tc.Limits)
			if res.TimedOut && cut {
				res.Problem = fmt.Sprintf("the hook's registered timeout left it %s of its %s", timeout, tc.Timeout())
			}
		}
		out.Results = append(out.Results, res)
		if report != nil {
			report(res)
		}
		if !res.Passed {
			break
		}
	}
	return out
}

// Outcome is a result in a few words: "passed", "exit status 1", "timed
// out after 10s", "not run: …".
func (r Result) Outcome() string {
	switch {
	case r.Passed:
		return "passed"
	case r.Limit != "":
		return r.Limit
	case r.TimedOut:
		s := fmt.Sprintf("timed out after %s (killed)", r.Timeout)
		if r.Problem != "" {
			s += ": " + r.Problem
		}
		return s
	case r.ExitCode < 0 && r.Problem != "":
		return r.Problem
	}
	return fmt.Sprintf("exit status %d", r.ExitCode)
}

// Refusal is what the model reads when the hook refuses a completion: the
// failing command, how it failed, and the last lines of its output.
func (t TaskResult) Refusal(why string) string {
	f := t.Failed()
	if f == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "saga-lsp: task %s cannot be completed yet: its check failed.\n", t.Task)
	fmt.Fprintf(&b, "check: %s\nresult: %s\n", f.Command, f.Outcome())
	if f.Mode == Unconfined && why != "" {
		fmt.Fprintf(&b, "note: %s\n", why)
	}
	if f.Output != "" {
		fmt.Fprintf(&b, "last lines of its output:\n%s\n", f.Output)
	} else if f.ExitCode >= 0 || f.TimedOut {
		b.WriteString("(it printed nothing)\n")
	}
	if t.Checks.From == WorkingTree {
		b.WriteString("Fix what the check found, then mark the task completed again.\n")
	} else {
		fmt.Fprintf(&b, "Fix what the check found, then mark the task completed again. The checks that count are those committed on the story's base (at %s); editing the task file does not change them.\n", Short(t.Checks.From))
	}
	return b.String()
}

// Event is a result as a check.end event of the run protocol.
func Event(task string, r Result) runs.Event {
	msg := r.Output
	if !r.Passed {
		msg = strings.TrimSpace(r.Outcome() + "\n" + r.Output)
	}
	return runs.Event{Event: runs.KindCheckEnd, Task: task, Command: r.Command, ExitCode: runs.Int(r.ExitCode),
		DurationMs: runs.Int64(r.Duration.Milliseconds()), Passed: runs.Bool(r.Passed), TimedOut: r.TimedOut, Message: msg}
}

// Digest is the Markdown summary of a final re-run for the PR body and the
// journal: one row per check that ran.
func Digest(results []TaskResult) string {
	var b strings.Builder
	b.WriteString("| task | check | result | time |\n|---|---|---|---|\n")
	for _, t := range results {
		for _, r := range t.Results {
			mark := "✓ " + r.Outcome()
			if !r.Passed {
				mark = "✗ " + r.Outcome()
			}
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", t.Task, tableCell(r.Command), tableCell(mark), r.Duration.Round(time.Millisecond))
		}
	}
	return b.String()
}

// tableCell keeps a Markdown table cell on one line and its pipes escaped.
func tableCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "`", "'").Replace(s)
}
