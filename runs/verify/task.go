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
	"path"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
)

// TaskResult is one task's checks run in order, up to the first failure.
type TaskResult struct {
	Task   string
	Checks TaskChecks
	// Protected is what the story changed of its protected files (nil:
	// not looked at); when its view differs from the worktree, each check
	// ran twice, on the protected view first.
	Protected *Protected
	Results   []Result
}

// twice tells whether each check runs twice.
func (t TaskResult) twice() bool { return t.Protected != nil && !t.Protected.View.Empty() }

// Passed tells whether every check ran and passed.
func (t TaskResult) Passed() bool {
	want := len(t.Checks.Commands)
	if t.twice() {
		want *= 2
	}
	if len(t.Results) != want {
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

// RunTask runs a task's checks in order and stops at the first failure.
// With p, each check runs first on the protected view (the story's tree
// with its protected files as they are at the reference commit) and then
// on the full tree, and must pass on both; the protected run is skipped
// when the view is the worktree itself. A non-zero deadline bounds them
// all (the hook's registered timeout): a check gets what is left when that
// is less than its own timeout, and one that would start after the
// deadline fails unrun — never passes. report, when not nil, gets each
// result as it comes.
func runTask(ctx context.Context, r *Runner, task string, tc TaskChecks, p *Protected, deadline time.Time, report func(Result)) TaskResult {
	out := TaskResult{Task: task, Checks: tc, Protected: p}
	var view *mounted
	if out.twice() && r.Mode != Refused && len(tc.Commands) > 0 {
		var err error
		if view, err = p.View.mount(r.Mode == Unconfined || !viewsMounted); err != nil {
			res := Result{Command: tc.Commands[0], ExitCode: -1, Mode: r.Mode, Protected: true, Problem: "not run: " + err.Error()}
			out.Results = append(out.Results, res)
			if report != nil {
				report(res)
			}
			return out
		}
		defer view.remove()
	}
	views := []*mounted{nil}
	if view != nil {
		views = []*mounted{view, nil}
	}
	for _, c := range tc.Commands {
		for _, v := range views {
			res := runOne(ctx, r, c, tc, v, deadline)
			out.Results = append(out.Results, res)
			if report != nil {
				report(res)
			}
			if !res.Passed {
				return out
			}
		}
	}
	return out
}

// runOne runs one check once, on view v (nil: the full tree), within the
// deadline.
func runOne(ctx context.Context, r *Runner, c string, tc TaskChecks, v *mounted, deadline time.Time) Result {
	timeout, cut := tc.Timeout(), false
	if !deadline.IsZero() {
		left := time.Until(deadline).Truncate(time.Second)
		if left < timeout {
			timeout, cut = left, true
		}
	}
	if timeout <= 0 {
		return Result{Command: c, ExitCode: -1, Mode: r.Mode, Protected: v != nil,
			Problem: "not run: the time for the task's checks ran out (the hook's registered timeout)"}
	}
	res := r.run(ctx, c, timeout, tc.Limits, v)
	if res.TimedOut && cut {
		res.Problem = fmt.Sprintf("the hook's registered timeout left it %s of its %s", timeout, tc.Timeout())
	}
	return res
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
	if f.Protected {
		restored, hidden := t.Protected.View.Restored()
		fmt.Fprintf(&b, "It failed on your tree with the protected files as they are at the fork point %s", Short(t.Protected.Fork))
		if len(restored) > 0 {
			fmt.Fprintf(&b, " (put back: %s)", strings.Join(restored, ", "))
		}
		if len(hidden) > 0 {
			fmt.Fprintf(&b, " (left out, test files you added: %s)", strings.Join(hidden, ", "))
		}
		b.WriteString("; each check runs there and on your full tree, and must pass on both.\n")
	}
	if f.Output != "" {
		fmt.Fprintf(&b, "last lines of its output:\n%s\n", f.Output)
	} else if f.ExitCode >= 0 || f.TimedOut {
		b.WriteString("(it printed nothing)\n")
	}
	if t.Protected != nil {
		if changed := Blocking(t.Protected.Changes); len(changed) > 0 {
			fmt.Fprintf(&b, "You changed protected files: %s. Their versions at the fork point %s are what count, whatever the story's copy says, and while they differ the pull request stays a draft: put them back and fix the code instead (a person can allow a story to change them with \"mayChangeTests\" in the task on the base).\n",
				Paths(changed), Short(t.Protected.Fork))
		}
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
	if r.Protected {
		msg = strings.TrimSpace(ProtectedRun + ": " + msg)
	}
	return runs.Event{Event: runs.KindCheckEnd, Task: task, Command: r.Command, ExitCode: runs.Int(r.ExitCode),
		DurationMs: runs.Int64(r.Duration.Milliseconds()), Passed: runs.Bool(r.Passed), TimedOut: r.TimedOut, Message: msg}
}

// Verdict is the gate's verdict on a task as a check.verdict event: every
// check of t ran and passed (or not), with the checks read at commit.
func Verdict(task, commit string, t TaskResult) runs.Event {
	return runs.Event{Event: runs.KindCheckVerdict, Task: task, Commit: commit, Passed: runs.Bool(t.Passed())}
}

// ProtectedRun names the protected run in results.
const ProtectedRun = "with the fork point's protected files"

// Digest is the Markdown summary of a final re-run for the PR body and the
// journal: one row per check that ran (the protected run's marked), then
// every protected file the story modified, deleted or added.
func Digest(results []TaskResult, changes []FileChange) string {
	var b strings.Builder
	b.WriteString("| task | check | result | time |\n|---|---|---|---|\n")
	for _, t := range results {
		for _, r := range t.Results {
			mark := "✓ " + r.Outcome()
			if !r.Passed {
				mark = "✗ " + r.Outcome()
			}
			if r.Protected {
				mark += " (" + ProtectedRun + ")"
			} else if t.twice() {
				mark += " (full tree)"
			}
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", t.Task, tableCell(r.Command), tableCell(mark), r.Duration.Round(time.Millisecond))
		}
	}
	b.WriteString(ChangesText(changes))
	return b.String()
}

// ChangesText lists the protected files a story changed, as Markdown ("" for
// none).
func ChangesText(changes []FileChange) string {
	if len(changes) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nProtected files the story changed:\n\n")
	for _, c := range changes {
		what := ""
		switch c.Rule {
		case RuleProtected:
			what = "protected: the fork point's version counts, and the pull request stays a draft"
			if c.Change == Added {
				what = "protected: left out of the run with the fork point's protected files, and the pull request stays a draft"
			}
		case RuleSection:
			what = "its test-runner section changed: the pull request stays a draft"
			if path.Base(c.Path) == "go.mod" {
				what = "its replace or toolchain lines changed: the pull request stays a draft"
			}
		case RuleAllowed:
			what = "allowed by mayChangeTests: the story's version is used"
		case RuleAddedTest:
			what = "a test file added: left out of the run with the fork point's protected files"
		case RuleListed:
			what = "listed, not protected"
		}
		fmt.Fprintf(&b, "- `%s` %s — %s\n", tableCell(c.Path), c.Change, what)
	}
	return b.String()
}

// tableCell keeps a Markdown table cell on one line and its pipes escaped.
func tableCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "`", "'").Replace(s)
}
