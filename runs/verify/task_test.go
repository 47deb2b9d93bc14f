//go:build unix

package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
)

const notRun = "not run: the time for the task's checks ran out (the hook's registered timeout)"

// RunTask runs a task's checks in order up to the first failure, within
// a deadline when there is one; report sees each result as it comes.
func TestRunTask(t *testing.T) {
	s := newSandbox(t)
	r := confined(t, s)
	ran := filepath.Join(s.dir, "ran.txt")
	type want struct {
		exit     int // of the last result
		timedOut bool
		problem  string // of the last result; "cut" for the deadline's
	}
	tests := []struct {
		name     string
		commands []string
		timeout  float64       // seconds per check; 0 the default
		deadline time.Duration // from now; 0 none
		ctx      func() context.Context
		results  int  // how many ran (or were refused)
		passed   bool // the task
		last     want
		ranFile  bool // the check touching ran.txt ran
	}{
		{name: "no checks", passed: true},
		{name: "all pass", commands: []string{"true", "echo ok", "touch ran.txt"}, results: 3, passed: true, ranFile: true},
		{name: "stops at the first failure", commands: []string{"true", "echo no; exit 4", "touch ran.txt"}, results: 2, last: want{exit: 4}},
		{name: "a timeout fails", commands: []string{"sleep 600", "touch ran.txt"}, timeout: 1, results: 1,
			last: want{exit: -1, timedOut: true}},
		{name: "a deadline passed: nothing runs", commands: []string{"touch ran.txt", "true"}, deadline: -time.Second, results: 1,
			last: want{exit: -1, problem: notRun}},
		{name: "less than a second left: nothing runs", commands: []string{"touch ran.txt"}, deadline: 900 * time.Millisecond, results: 1,
			last: want{exit: -1, problem: notRun}},
		{name: "the deadline cuts a check's timeout", commands: []string{"true", "sleep 600", "touch ran.txt"}, deadline: 4500 * time.Millisecond,
			results: 2, last: want{exit: -1, timedOut: true, problem: "cut"}},
		{name: "a cut timeout that is not reached", commands: []string{"touch ran.txt"}, deadline: time.Minute, results: 1, passed: true, ranFile: true},
		{name: "a deadline beyond the checks' own timeout", commands: []string{"sleep 600"}, timeout: 1, deadline: time.Hour, results: 1,
			last: want{exit: -1, timedOut: true}},
		{name: "interrupted", commands: []string{"sleep 600", "touch ran.txt"}, results: 1,
			ctx: func() context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			}, last: want{exit: -1, problem: "interrupted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(ran)
			tc := TaskChecks{Commands: tt.commands, TimeoutSeconds: tt.timeout, From: "f"}
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx()
			}
			var deadline time.Time
			if tt.deadline != 0 {
				deadline = time.Now().Add(tt.deadline)
			}
			var reported []Result
			res := RunTask(ctx, r, "t", tc, nil, deadline, func(r Result) { reported = append(reported, r) })
			if res.Task != "t" || !reflect.DeepEqual(res.Checks, tc) {
				t.Errorf("task %q, checks %+v", res.Task, res.Checks)
			}
			if len(res.Results) != tt.results || !reflect.DeepEqual(reported, res.Results) {
				t.Fatalf("%d results, want %d; reported %d:\n%+v", len(res.Results), tt.results, len(reported), res.Results)
			}
			for i, c := range res.Results {
				if c.Command != tt.commands[i] || c.Mode != Confined {
					t.Errorf("result %d: %+v", i, c)
				}
				if last := i == len(res.Results)-1; !last && !c.Passed {
					t.Errorf("result %d failed before the last: %+v", i, c)
				}
			}
			if res.Passed() != tt.passed || (res.Failed() == nil) != tt.passed {
				t.Errorf("Passed %v, Failed %+v; want passed %v", res.Passed(), res.Failed(), tt.passed)
			}
			if _, err := os.Stat(ran); (err == nil) != tt.ranFile {
				t.Errorf("the check touching ran.txt ran: %v, want %v", err == nil, tt.ranFile)
			}
			if tt.passed {
				if res.Refusal("why") != "" {
					t.Errorf("a refusal for a passing task: %s", res.Refusal("why"))
				}
				return
			}
			f := res.Failed()
			if f == nil || f != &res.Results[len(res.Results)-1] {
				t.Fatalf("Failed is not the last result: %+v", f)
			}
			if f.ExitCode != tt.last.exit || f.TimedOut != tt.last.timedOut {
				t.Errorf("the failure %+v, want exit %d, timed out %v", f, tt.last.exit, tt.last.timedOut)
			}
			switch tt.last.problem {
			case "cut":
				// What was left of 4.5 s, in whole seconds, after the first
				// check ran.
				if f.Timeout <= 0 || f.Timeout > 4*time.Second || f.Timeout%time.Second != 0 {
					t.Errorf("timeout %s, want what the deadline left in whole seconds", f.Timeout)
				}
				if want := fmt.Sprintf("the hook's registered timeout left it %s of its 10m0s", f.Timeout); f.Problem != want {
					t.Errorf("problem %q, want %q", f.Problem, want)
				}
				if want := fmt.Sprintf("timed out after %s (killed): %s", f.Timeout, f.Problem); f.Outcome() != want {
					t.Errorf("outcome %q, want %q", f.Outcome(), want)
				}
			default:
				if f.Problem != tt.last.problem {
					t.Errorf("problem %q, want %q", f.Problem, tt.last.problem)
				}
			}
			if tt.timeout != 0 && f.TimedOut && f.Timeout != time.Duration(tt.timeout*float64(time.Second)) {
				t.Errorf("timeout %s, want the check's own %gs", f.Timeout, tt.timeout)
			}
			refusal := res.Refusal("")
			for _, w := range []string{"task t cannot be completed yet", "check: " + f.Command + "\n", "result: " + f.Outcome() + "\n"} {
				if !strings.Contains(refusal, w) {
					t.Errorf("the refusal lacks %q:\n%s", w, refusal)
				}
			}
			if f.Output != "" && !strings.Contains(refusal, "last lines of its output:\n"+f.Output+"\n") {
				t.Errorf("the refusal lacks the output %q:\n%s", f.Output, refusal)
			}
		})
	}
}

func TestTaskResultPassedFailed(t *testing.T) {
	pass, fail := Result{Command: "true", Passed: true}, Result{Command: "false", ExitCode: 1}
	tests := []struct {
		name     string
		commands int
		results  []Result
		passed   bool
		failed   string
	}{
		{name: "nothing to run", passed: true},
		{name: "all passed", commands: 2, results: []Result{pass, pass}, passed: true},
		{name: "one failed", commands: 3, results: []Result{pass, fail}, failed: "false"},
		{name: "not all ran", commands: 2, results: []Result{pass}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := TaskResult{Task: "t", Checks: TaskChecks{Commands: make([]string, tt.commands)}, Results: tt.results}
			if tr.Passed() != tt.passed {
				t.Errorf("Passed = %v", tr.Passed())
			}
			f := tr.Failed()
			if (f == nil && tt.failed != "") || (f != nil && f.Command != tt.failed) {
				t.Errorf("Failed = %+v, want %q", f, tt.failed)
			}
		})
	}
}

func TestOutcome(t *testing.T) {
	tests := []struct {
		r    Result
		want string
	}{
		{Result{Passed: true}, "passed"},
		{Result{Passed: true, Problem: "a process it started kept its output open after it ended; the output was cut"}, "passed"},
		{Result{ExitCode: 1}, "exit status 1"},
		{Result{ExitCode: 143}, "exit status 143"},
		{Result{ExitCode: 2, Problem: "the output was cut"}, "exit status 2"},
		{Result{ExitCode: -1, TimedOut: true, Timeout: 10 * time.Second}, "timed out after 10s (killed)"},
		{Result{ExitCode: -1, TimedOut: true, Timeout: 1500 * time.Millisecond, Problem: "cut short"}, "timed out after 1.5s (killed): cut short"},
		{Result{ExitCode: -1, Problem: "interrupted"}, "interrupted"},
		{Result{ExitCode: -1, Problem: notRun}, notRun},
	}
	for _, tt := range tests {
		if got := tt.r.Outcome(); got != tt.want {
			t.Errorf("%+v: Outcome = %q, want %q", tt.r, got, tt.want)
		}
	}
}

// Refusal is the whole text the model reads.
func TestRefusal(t *testing.T) {
	const fork = "0123456789abcdef0123456789abcdef01234567"
	fixTail := "Fix what the check found, then mark the task completed again. The checks that count are those committed on the story's base (at 0123456789ab); editing the task file does not change them.\n"
	head := "saga-lsp: task t cannot be completed yet: its check failed.\n"
	pass := Result{Command: "true", Passed: true, Mode: Confined}
	tests := []struct {
		name    string
		from    string
		results []Result
		why     string
		want    string
	}{
		{name: "passed", results: []Result{pass}, want: ""},
		{name: "a failure with output", results: []Result{pass, {Command: "make test", ExitCode: 2, Output: "FAIL x\nFAIL y", Mode: Confined}},
			want: head + "check: make test\nresult: exit status 2\nlast lines of its output:\nFAIL x\nFAIL y\n" + fixTail},
		{name: "read from the working tree", from: WorkingTree, results: []Result{{Command: "false", ExitCode: 1, Output: "no", Mode: Confined}},
			want: head + "check: false\nresult: exit status 1\nlast lines of its output:\nno\nFix what the check found, then mark the task completed again.\n"},
		{name: "nothing printed", results: []Result{{Command: "false", ExitCode: 1, Mode: Confined}},
			want: head + "check: false\nresult: exit status 1\n(it printed nothing)\n" + fixTail},
		{name: "timed out, nothing printed", results: []Result{{Command: "sleep 9", ExitCode: -1, TimedOut: true, Timeout: time.Second, Mode: Confined}},
			want: head + "check: sleep 9\nresult: timed out after 1s (killed)\n(it printed nothing)\n" + fixTail},
		{name: "not run", results: []Result{{Command: "make", ExitCode: -1, Problem: notRun, Mode: Confined}},
			want: head + "check: make\nresult: " + notRun + "\n" + fixTail},
		{name: "unconfined says why", why: "bwrap is missing; running UNCONFINED",
			results: []Result{{Command: "false", ExitCode: 1, Output: "no", Mode: Unconfined}},
			want:    head + "check: false\nresult: exit status 1\nnote: bwrap is missing; running UNCONFINED\nlast lines of its output:\nno\n" + fixTail},
		{name: "confined: no note", why: "ignored",
			results: []Result{{Command: "false", ExitCode: 1, Output: "no", Mode: Confined}},
			want:    head + "check: false\nresult: exit status 1\nlast lines of its output:\nno\n" + fixTail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from := tt.from
			if from == "" {
				from = fork
			}
			tr := TaskResult{Task: "t", Checks: TaskChecks{Commands: make([]string, len(tt.results)), From: from}, Results: tt.results}
			if got := tr.Refusal(tt.why); got != tt.want {
				t.Errorf("Refusal:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// Event is a check.end event: the output for a pass, the outcome and the
// output for a failure.
func TestEvent(t *testing.T) {
	tests := []struct {
		name string
		r    Result
		want runs.Event
		json []string // in the encoded event
	}{
		{name: "passed", r: Result{Command: "go test", ExitCode: 0, Passed: true, Duration: 1234567 * time.Microsecond, Output: "ok"},
			want: runs.Event{Event: runs.KindCheckEnd, Task: "t", Command: "go test", ExitCode: runs.Int(0), DurationMs: runs.Int64(1234),
				Passed: runs.Bool(true), Message: "ok"},
			json: []string{`"event":"check.end"`, `"exitCode":0`, `"passed":true`, `"durationMs":1234`}},
		{name: "failed", r: Result{Command: "false", ExitCode: 1, Duration: time.Millisecond, Output: "line 1\nline 2"},
			want: runs.Event{Event: runs.KindCheckEnd, Task: "t", Command: "false", ExitCode: runs.Int(1), DurationMs: runs.Int64(1),
				Passed: runs.Bool(false), Message: "exit status 1\nline 1\nline 2"},
			json: []string{`"exitCode":1`, `"passed":false`}},
		{name: "failed silently", r: Result{Command: "false", ExitCode: 1},
			want: runs.Event{Event: runs.KindCheckEnd, Task: "t", Command: "false", ExitCode: runs.Int(1), DurationMs: runs.Int64(0),
				Passed: runs.Bool(false), Message: "exit status 1"}},
		{name: "timed out", r: Result{Command: "sleep 9", ExitCode: -1, TimedOut: true, Timeout: time.Second, Duration: time.Second, Output: "started"},
			want: runs.Event{Event: runs.KindCheckEnd, Task: "t", Command: "sleep 9", ExitCode: runs.Int(-1), DurationMs: runs.Int64(1000),
				Passed: runs.Bool(false), TimedOut: true, Message: "timed out after 1s (killed)\nstarted"},
			json: []string{`"timedOut":true`, `"exitCode":-1`}},
		{name: "not run", r: Result{Command: "make", ExitCode: -1, Problem: notRun},
			want: runs.Event{Event: runs.KindCheckEnd, Task: "t", Command: "make", ExitCode: runs.Int(-1), DurationMs: runs.Int64(0),
				Passed: runs.Bool(false), Message: notRun}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Event("t", tt.r)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Event:\n%+v\nwant:\n%+v", got, tt.want)
			}
			data, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.json {
				if !strings.Contains(string(data), w) {
					t.Errorf("%s lacks %s", data, w)
				}
			}
		})
	}
}

// tableCells splits a Markdown table row at its unescaped pipes, as GitHub
// does, and unescapes the cells.
func tableCells(row string) []string {
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cell.WriteByte('|')
			i++
		case row[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(row[i])
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

// Digest is a Markdown table with one row per check that ran; what a
// command or an outcome holds does not break it.
func TestDigest(t *testing.T) {
	results := []TaskResult{
		{Task: "a", Results: []Result{
			{Command: "true", Passed: true, Duration: 12345 * time.Microsecond},
			{Command: "exit 3", ExitCode: 3, Duration: 1234567 * time.Microsecond, Output: "a | b\n| c |"},
		}},
		{Task: "none"},
		{Task: "b", Results: []Result{
			{Command: "sleep 9", ExitCode: -1, TimedOut: true, Timeout: time.Second, Duration: time.Second},
		}},
		{Task: "c", Results: []Result{{Command: "make", ExitCode: -1, Problem: notRun}}},
	}
	want := "| task | check | result | time |\n|---|---|---|---|\n" +
		"| a | `true` | ✓ passed | 12ms |\n" +
		"| a | `exit 3` | ✗ exit status 3 | 1.235s |\n" +
		"| b | `sleep 9` | ✗ timed out after 1s (killed) | 1s |\n" +
		"| c | `make` | ✗ " + notRun + " | 0s |\n"
	if got := Digest(results, nil); got != want {
		t.Errorf("Digest:\n%s\nwant:\n%s", got, want)
	}
	if got, want := Digest(nil, nil), "| task | check | result | time |\n|---|---|---|---|\n"; got != want {
		t.Errorf("Digest(nil, nil) = %q", got)
	}

	tests := []struct {
		name, command, problem string
		cell, result           string // the cells as GitHub reads them
	}{
		{name: "a pipe", command: "go test ./... | tee log", cell: "`go test ./... | tee log`"},
		{name: "an escaped pipe", command: `grep 'a\|b' x`, cell: "`grep 'a\\|b' x`"},
		{name: "newlines", command: "cd x\nmake\r\nmake test", cell: "`cd x make  make test`"},
		{name: "backticks", command: "test \"`ls`\" = x", cell: "`test \"'ls'\" = x`"},
		{name: "a pipe in the outcome", command: "sleep 9", problem: "a | b\nc", cell: "`sleep 9`",
			result: "✗ timed out after 1s (killed): a | b c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Result{Command: tt.command, ExitCode: 1, Output: "x | y\n|z|\n"}
			if tt.problem != "" {
				r = Result{Command: tt.command, ExitCode: -1, TimedOut: true, Timeout: time.Second, Problem: tt.problem}
			}
			d := Digest([]TaskResult{{Task: "t", Results: []Result{r, {Command: "true", Passed: true}}}}, nil)
			lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
			if len(lines) != 4 {
				t.Fatalf("%d lines, want 4:\n%s", len(lines), d)
			}
			for i, l := range lines {
				if n := len(tableCells(l)); n != 6 {
					t.Errorf("line %d has %d cells, want 4:\n%s", i, n-2, d)
				}
			}
			cells := tableCells(lines[2])
			want := tt.result
			if want == "" {
				want = "✗ exit status 1"
			}
			if cells[1] != "t" || cells[2] != tt.cell || cells[3] != want {
				t.Errorf("cells %q, want %q and %q:\n%s", cells, tt.cell, want, d)
			}
			if strings.Contains(d, "x | y") || strings.Contains(d, "|z|") {
				t.Errorf("the digest holds the output:\n%s", d)
			}
		})
	}
}
