package worker

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// Refused completions between runs (docs/worker.md#refused-completions):
// the TaskCompleted hook reports every check it runs as a check.end event
// in the run's events file. After each headless run the worker reads what
// the run's hooks reported; a task whose completion was refused and that
// the run left unfinished goes back to pending — so that the next run
// takes it again — and the next run's prompt says which check refused it
// and how (the command, its outcome and the last lines of its output). A
// task refused in --max-check-failures runs in a row ends the story
// failed, with the same facts in the log, the journal, the run's end event
// (status, follow) and the pull request.

// promptOutputLines bounds the check output a prompt quotes.
const promptOutputLines = 20

// refusal is a task's completion refused by a check in a run.
type refusal struct {
	task    string
	command string
	outcome string // "exit status 1", "timed out after 10s (killed)", …
	output  string // the last lines of its output
	runs    int    // how many runs in a row refused it, this one included
}

// skipEvents moves the reading of the events file past what it holds now,
// so that after a run only what that run reported is read.
func (r *run) skipEvents() {
	for {
		if n, err := r.hookEvents.Read(func(runs.Event) {}); n == 0 || err != nil {
			return
		}
	}
}

// runEvents are the events written to the run's events file since
// skipEvents: what the run just ended and its hooks reported, in order.
func (r *run) runEvents() []runs.Event {
	var out []runs.Event
	for {
		n, err := r.hookEvents.Read(func(e runs.Event) { out = append(out, e) })
		if n == 0 || err != nil {
			return out
		}
	}
}

// reportedRefusals are the checks that refused a completion in the run
// just ended, by task: each task's last failing result, unless a later
// check of the task passed.
func reportedRefusals(evs []runs.Event) map[string]refusal {
	out := map[string]refusal{}
	for _, e := range evs {
		if e.Event != runs.KindCheckEnd || e.Task == "" || e.Passed == nil {
			continue
		}
		if *e.Passed {
			delete(out, e.Task)
			continue
		}
		outcome, output, _ := strings.Cut(e.Message, "\n")
		out[e.Task] = refusal{task: e.Task, command: e.Command, outcome: outcome, output: lastLines(output, promptOutputLines)}
	}
	return out
}

// countRefused counts, by command, each check the run's hooks reported
// failing for a task (evs, runEvents): the run's record line says them
// (runs.RunLine.Refused).
func (r *run) countRefused(evs []runs.Event) {
	for _, e := range evs {
		if e.Event == runs.KindCheckEnd && e.Task != "" && e.Passed != nil && !*e.Passed {
			r.refusedBy(e.Command)
		}
	}
}

// refusedBy counts one refusal by command.
func (r *run) refusedBy(command string) {
	if r.refused == nil {
		r.refused = map[string]int{}
	}
	r.refused[command]++
}

// takeRefusals reads the refusals of the run just ended (evs, runEvents):
// each refused task the run left unfinished goes back to pending for the
// next run, which is told about it (r.refusals). It returns the refusal
// that reached --max-check-failures runs in a row, if one did.
func (r *run) takeRefusals(ctx context.Context, evs []runs.Event) *refusal {
	found := reportedRefusals(evs)
	status := r.statuses()
	counts := map[string]int{}
	r.refusals = nil
	for _, task := range slices.Sorted(maps.Keys(found)) {
		ref := found[task]
		if status[task] == store.StatusCompleted {
			continue // completed later in the run: a check passed then
		}
		ref.runs = r.refusedRuns[task] + 1
		counts[task] = ref.runs
		r.refusals = append(r.refusals, ref)
		if status[task] == store.StatusInProgress {
			r.toPending(ctx, runs.StepLoop, task, store.StatusInProgress,
				fmt.Sprintf("%s: its check refused the completion (`%s` — %s); back to pending for the next run", task, ref.command, ref.outcome))
		}
	}
	r.refusedRuns = counts
	for i := range r.refusals {
		if r.refusals[i].runs >= r.o.MaxCheckFailures {
			return &r.refusals[i]
		}
	}
	return nil
}

// refusalPrompt is what the next run's prompt says about the last run's
// refused completions ("" when there were none).
func (r *run) refusalPrompt() string {
	if len(r.refusals) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nThe last run's completion of these tasks was refused by their checks. Each is pending again: take it first, find and fix what its check found, then mark it completed.\n")
	for _, ref := range r.refusals {
		fmt.Fprintf(&b, "\n- task %s (refused in %d run(s) in a row; the story stops after %d): check `%s` — %s\n", ref.task, ref.runs, r.o.MaxCheckFailures, ref.command, ref.outcome)
		if ref.output != "" {
			b.WriteString("  last lines of its output:\n")
			for _, l := range strings.Split(ref.output, "\n") {
				b.WriteString("    " + l + "\n")
			}
		}
	}
	return strings.ReplaceAll(b.String(), "\x00", "")
}

// failedText is the story's end when a task's checks kept refusing it:
// the task, the command, its outcome, the last lines of its output, and
// what to do next.
func (r *run) failedText(ref *refusal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "task %s: its check refused the completion in %d runs in a row (--max-check-failures %d): `%s` — %s",
		ref.task, ref.runs, r.o.MaxCheckFailures, ref.command, ref.outcome)
	if ref.output != "" {
		b.WriteString("\nlast lines of its output:\n" + ref.output)
	}
	fmt.Fprintf(&b, "\nnext: fix what the check found — the code on %s (the next run takes it in) or in %s, committed on %s; or the check itself, on %s in %s — then %s",
		r.refBase, rel(r.root, r.wt), r.branch, r.refBase, store.TaskFileRel(r.o.Story, ref.task), r.runAgain())
	return b.String()
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append([]string{"[… earlier output not shown]"}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
