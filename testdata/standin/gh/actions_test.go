package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// A workflow exercising what the stand-in simulates: inputs through env:,
// a run-name, a concurrency group, GITHUB_PATH and GITHUB_STEP_SUMMARY,
// an upload when always(), and a step that blocks (until cancelled) when
// the input "block" is "yes".
const testWorkflow = `name: test-flow
run-name: "test ${{ inputs.story }} run ${{ inputs.run-id }}"
on:
  workflow_dispatch:
    inputs:
      story:
        required: true
        type: string
      run-id:
        required: true
        type: string
      block:
        required: false
        type: string
        default: "no"
concurrency:
  group: test-${{ inputs.story }}
  cancel-in-progress: false
jobs:
  one:
    name: job ${{ inputs.story }}
    runs-on: ubuntu-24.04
    timeout-minutes: 30
    steps:
      - name: Check out
        uses: actions/checkout@v6
        with:
          fetch-depth: 0
          persist-credentials: false
      - name: Tools
        id: tools
        run: |
          mkdir -p "$RUNNER_TEMP/bin"
          printf '#!/bin/sh\necho tool ran\n' > "$RUNNER_TEMP/bin/tool"
          chmod +x "$RUNNER_TEMP/bin/tool"
          echo "$RUNNER_TEMP/bin" >> "$GITHUB_PATH"
      - name: Work
        id: work
        env:
          STORY: ${{ inputs.story }}
          BLOCK: ${{ inputs.block }}
          KEY: ${{ secrets.THE_KEY }}
          TOKEN: ${{ github.token }}
        run: |
          mkdir -p "$RUNNER_TEMP/out"
          { echo "story=$STORY"; echo "key=$KEY"; echo "tool=$(tool)"; echo "branch=$(git rev-parse --abbrev-ref HEAD)"; } > "$RUNNER_TEMP/out/result.txt"
          echo "### done $STORY" >> "$GITHUB_STEP_SUMMARY"
          if [ "$BLOCK" = yes ]; then
            mkfifo "$RUNNER_TEMP/wait"
            read -r _ < "$RUNNER_TEMP/wait"
          fi
          [ -n "$KEY" ]
      - name: Never after a failure
        id: after
        run: touch "$RUNNER_TEMP/out/after"
      - name: Upload
        if: always() && steps.tools.outcome == 'success'
        uses: actions/upload-artifact@v6
        with:
          name: out-${{ inputs.run-id }}
          path: ${{ runner.temp }}/out
`

// withWorkflow is a repo whose origin's main holds testWorkflow.
func withWorkflow(t *testing.T) *repo {
	t.Helper()
	r := newRepo(t)
	testkit.WriteFiles(t, r.clone, map[string]string{".github/workflows/test.yml": testWorkflow})
	r.git("add", ".github")
	r.git("commit", "-q", "-m", "workflow")
	r.git("push", "-q", "origin", "main")
	r.env = append(r.env, "GH_STANDIN_SECRET_THE_KEY=k-123")
	t.Cleanup(func() { r.killJobs() })
	return r
}

// runs reads the state file's runs.
func (r *repo) runs() []*wfRun {
	r.t.Helper()
	data, err := os.ReadFile(r.state())
	if err != nil {
		return nil
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		r.t.Fatalf("state: %v", err)
	}
	return st.Runs
}

func (r *repo) state() string { return filepath.Join(r.root, "gh-state.json") }

// waitRun waits until the run titled title satisfies cond (the job runs
// in another process, which reports only through the state file).
func (r *repo) waitRun(title string, what string, cond func(*wfRun) bool) *wfRun {
	r.t.Helper()
	var got *wfRun
	if !testkit.WaitUntil(60*time.Second, func() bool {
		for _, run := range r.runs() {
			if run.DisplayTitle == title && cond(run) {
				got = run
				return true
			}
		}
		return false
	}) {
		r.t.Fatalf("run %q never %s; runs: %s", title, what, r.dump())
	}
	return got
}

func (r *repo) dump() string {
	data, _ := json.MarshalIndent(r.runs(), "", "  ")
	var logs strings.Builder
	for _, run := range r.runs() {
		b, _ := os.ReadFile(filepath.Join(run.Dir, "job.log"))
		logs.WriteString("\n--- job.log of " + run.DisplayTitle + "\n" + string(b))
	}
	return string(data) + logs.String()
}

func completed(run *wfRun) bool { return run.Status == statusCompleted }

func stepStatus(run *wfRun, name string) string {
	for _, j := range run.Jobs {
		for _, s := range j.Steps {
			if s.Name == name {
				return s.Status + "/" + s.Conclusion
			}
		}
	}
	return ""
}

// killJobs ends job processes a failed test left.
func (r *repo) killJobs() {
	for _, run := range r.runs() {
		if run.Status != statusCompleted && run.PID > 0 {
			syscall.Kill(-run.PID, syscall.SIGKILL)
		}
	}
}

func TestWorkflowRunEndToEnd(t *testing.T) {
	r := withWorkflow(t)
	if o := r.ok("workflow", "run", "test.yml", "-f", "story=alpha", "-f", "run-id=r1"); o.Stdout != "" {
		t.Errorf("workflow run printed %q (gh prints nothing when GitHub returns no run details)", o.Stdout)
	}
	run := r.waitRun("test alpha run r1", "completed", completed)
	if run.Conclusion != conclusionSuccess {
		t.Fatalf("conclusion %q\n%s", run.Conclusion, r.dump())
	}
	// gh run list, as the dispatcher finds its run: by displayTitle.
	o := r.ok("run", "list", "--workflow", "test.yml", "--json", "databaseId,displayTitle,status,conclusion,url")
	var list []map[string]any
	if err := json.Unmarshal([]byte(o.Stdout), &list); err != nil || len(list) != 1 {
		t.Fatalf("run list %q: %v", o.Stdout, err)
	}
	id := strconv.FormatInt(run.ID, 10)
	want := map[string]any{"databaseId": float64(run.ID), "displayTitle": "test alpha run r1", "status": "completed",
		"conclusion": "success", "url": "https://github.com/standin/origin/actions/runs/" + id}
	for k, v := range want {
		if list[0][k] != v {
			t.Errorf("run list %s = %v, want %v", k, list[0][k], v)
		}
	}
	if len(list[0]) != len(want) {
		t.Errorf("run list gave fields %v", list[0])
	}
	// gh run view --json with jobs and steps, gh's names and shapes.
	o = r.ok("run", "view", id, "--json", "status,conclusion,jobs,headBranch,headSha,event,number,workflowName,createdAt")
	var view struct {
		Status, Conclusion, HeadBranch, HeadSha, Event, WorkflowName string
		Number                                                       int
		CreatedAt                                                    time.Time
		Jobs                                                         []struct {
			DatabaseID  int64 `json:"databaseId"`
			Name        string
			Status      string
			Conclusion  string
			StartedAt   time.Time
			CompletedAt *time.Time
			URL         string
			Steps       []struct {
				Name, Status, Conclusion string
				Number                   int
			}
		}
	}
	if err := json.Unmarshal([]byte(o.Stdout), &view); err != nil {
		t.Fatalf("run view %q: %v", o.Stdout, err)
	}
	if view.HeadBranch != "main" || view.HeadSha != strings.TrimSpace(r.git("rev-parse", "main")) || view.Event != "workflow_dispatch" ||
		view.Number != 1 || view.WorkflowName != "test-flow" || view.CreatedAt.IsZero() || len(view.Jobs) != 1 {
		t.Fatalf("run view %s", o.Stdout)
	}
	j := view.Jobs[0]
	var steps []string
	for _, s := range j.Steps {
		steps = append(steps, strconv.Itoa(s.Number)+" "+s.Name+" "+s.Status+"/"+s.Conclusion)
	}
	wantSteps := []string{"1 Set up job completed/success", "2 Check out completed/success", "3 Tools completed/success",
		"4 Work completed/success", "5 Never after a failure completed/success", "6 Upload completed/success", "7 Complete job completed/success"}
	if j.Name != "job alpha" || j.Conclusion != "success" || j.CompletedAt == nil || !strings.HasSuffix(j.URL, "/actions/runs/"+id+"/job/"+strconv.FormatInt(j.DatabaseID, 10)) ||
		!slices.Equal(steps, wantSteps) {
		t.Errorf("job %+v\nsteps %q", j, steps)
	}
	// The job ran in a fresh clone on the dispatched branch, with the
	// secret, the tool put on PATH by an earlier step; the summary kept.
	dl := t.TempDir()
	r.ok("run", "download", id, "-D", dl)
	got := testkit.ReadFile(t, filepath.Join(dl, "out-r1", "result.txt"))
	if got != "story=alpha\nkey=k-123\ntool=tool ran\nbranch=main\n" {
		t.Errorf("result.txt %q", got)
	}
	if s := testkit.ReadFile(t, filepath.Join(run.Dir, "summary.md")); s != "### done alpha\n" {
		t.Errorf("summary %q", s)
	}
	// One artifact by name goes straight into the folder; again refuses to
	// overwrite.
	one := t.TempDir()
	r.ok("run", "download", id, "-n", "out-r1", "-D", one)
	if _, err := os.Stat(filepath.Join(one, "result.txt")); err != nil {
		t.Error(err)
	}
	if o := r.gh(nil, "run", "download", id, "-n", "out-r1", "-D", one); o.Code != 1 || !strings.Contains(o.Stderr, "file exists") {
		t.Errorf("download over existing files: %d %q", o.Code, o.Stderr)
	}
}

// TestWorkflowRunRefusals: what GitHub refuses at dispatch, with gh's
// messages; nothing is recorded.
func TestWorkflowRunRefusals(t *testing.T) {
	r := withWorkflow(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"workflow", "run", "test.yml", "-f", "story=a"}, "HTTP 422: Required input 'run-id' not provided"},
		{[]string{"workflow", "run", "test.yml", "-f", "story=a", "-f", "run-id=1", "-f", "color=red"}, `HTTP 422: Unexpected inputs provided: ["color"]`},
		{[]string{"workflow", "run", "missing.yml"}, "could not find any workflows named missing.yml"},
		{[]string{"workflow", "run", "test.yml", "--ref", "nope", "-f", "story=a", "-f", "run-id=1"}, "could not find any workflows named test.yml"},
		{[]string{"run", "view", "999"}, "failed to get run: HTTP 404: Not Found"},
		{[]string{"run", "cancel", "999"}, "Could not find any workflow run with ID 999"},
		{[]string{"run", "cancel", "abc"}, `invalid run-id "abc"`},
		{[]string{"run", "download", "999"}, "HTTP 404"},
		{[]string{"run", "list", "--workflow", "missing.yml"}, "could not find any workflows named missing.yml"},
		{[]string{"run", "list", "--json", "id"}, `Unknown JSON field: "id"`},
	} {
		if o := r.gh(nil, tc.args...); o.Code != 1 || !strings.Contains(o.Stderr, tc.want) {
			t.Errorf("gh %v: exit %d %q, want %q", tc.args, o.Code, o.Stderr, tc.want)
		}
	}
	if o := r.gh([]string{"GH_STANDIN_AUTH=none"}, "workflow", "run", "test.yml"); o.Code != 4 {
		t.Errorf("logged out: exit %d", o.Code)
	}
	if n := len(r.runs()); n != 0 {
		t.Errorf("%d runs recorded", n)
	}
	// A workflow with no runs yet lists as empty, not as missing.
	if o := r.ok("run", "list", "--workflow", "test.yml", "--json", "databaseId"); o.Stdout != "[]\n" {
		t.Errorf("empty run list %q", o.Stdout)
	}
	// The dispatch details GitHub may return: the run's URL.
	o := r.gh([]string{"GH_STANDIN_DISPATCH_DETAILS=1"}, "workflow", "run", "test.yml", "-f", "story=a", "-f", "run-id=1")
	run := r.waitRun("test a run 1", "completed", completed)
	if o.Stdout != "https://github.com/standin/origin/actions/runs/"+strconv.FormatInt(run.ID, 10)+"\n" {
		t.Errorf("dispatch details %q", o.Stdout)
	}
}

// TestWorkflowRunFailureAndCancel: a failing step fails the job and skips
// what depends on success, while always() steps run; a cancel from "the
// web" interrupts a running step; a cancelled queued run never starts.
func TestWorkflowRunFailureAndCancel(t *testing.T) {
	r := withWorkflow(t)
	r.env = slices.DeleteFunc(r.env, func(kv string) bool { return strings.HasPrefix(kv, "GH_STANDIN_SECRET_") })
	r.ok("workflow", "run", "test.yml", "-f", "story=nokey", "-f", "run-id=f1")
	run := r.waitRun("test nokey run f1", "completed", completed)
	if run.Conclusion != conclusionFailure || stepStatus(run, "Work") != "completed/failure" ||
		stepStatus(run, "Never after a failure") != "completed/skipped" || stepStatus(run, "Upload") != "completed/success" ||
		!slices.Equal(run.Artifacts, []string{"out-f1"}) {
		t.Fatalf("failed run: %s", r.dump())
	}

	r.ok("workflow", "run", "test.yml", "-f", "story=slow", "-f", "run-id=c1", "-f", "block=yes")
	run = r.waitRun("test slow run c1", "reached its blocking step", func(run *wfRun) bool {
		_, err := os.Stat(filepath.Join(run.Dir, "temp", "wait"))
		return err == nil
	})
	if run.Status != statusInProgress || stepStatus(run, "Work") != "in_progress/" {
		t.Fatalf("blocked run: %s", r.dump())
	}
	if o := r.ok("run", "cancel", strconv.FormatInt(run.ID, 10)); o.Stdout != "✓ Request to cancel workflow "+strconv.FormatInt(run.ID, 10)+" submitted.\n" {
		t.Errorf("cancel printed %q", o.Stdout)
	}
	run = r.waitRun("test slow run c1", "completed", completed)
	if run.Conclusion != conclusionCancelled || run.Cancel != "cancel" || stepStatus(run, "Work") != "completed/cancelled" ||
		stepStatus(run, "Never after a failure") != "completed/skipped" || stepStatus(run, "Upload") != "completed/success" {
		t.Fatalf("cancelled run: %s", r.dump())
	}
	if o := r.gh(nil, "run", "cancel", strconv.FormatInt(run.ID, 10)); o.Code != 1 || !strings.Contains(o.Stderr, "Cannot cancel a workflow run that is completed") {
		t.Errorf("cancel a completed run: %d %q", o.Code, o.Stderr)
	}

	hold := filepath.Join(r.root, "hold")
	os.WriteFile(hold, nil, 0o644)
	r.env = append(r.env, "GH_STANDIN_HOLD="+hold)
	r.ok("workflow", "run", "test.yml", "-f", "story=held", "-f", "run-id=q1")
	run = r.waitRun("test held run q1", "has its job process", func(run *wfRun) bool { return run.PID > 0 })
	if run.Status != statusQueued {
		t.Fatalf("held run: %s", r.dump())
	}
	r.ok("run", "cancel", strconv.FormatInt(run.ID, 10))
	run = r.waitRun("test held run q1", "completed", completed)
	if !testkit.WaitExit(run.PID, 10*time.Second) {
		t.Error("the cancelled queued job's process lives on")
	}
	os.Remove(hold)
	if run = r.runs()[len(r.runs())-1]; run.Conclusion != conclusionCancelled || len(run.Jobs) != 0 {
		t.Errorf("cancelled queued run: %s", r.dump())
	}
	if o := r.ok("run", "view", strconv.FormatInt(run.ID, 10), "--json", "jobs,status"); o.Stdout != `{"status":"completed"}`+"\n" {
		t.Errorf("a run without jobs: %q (gh leaves out jobs then)", o.Stdout)
	}
}

// TestWorkflowRunTimeout: timeout-minutes stops the job; GitHub reports it
// as cancelled.
func TestWorkflowRunTimeout(t *testing.T) {
	r := withWorkflow(t)
	// timeout-minutes is 30: 6 s, so that the checkout and the Tools step
	// are over before it on a loaded machine (at 600 ms CI once saw the
	// timeout stop Tools, and Work skipped, not stopped).
	r.env = append(r.env, "GH_STANDIN_MINUTE=200ms", "GH_STANDIN_CANCEL_GRACE=100ms")
	r.ok("workflow", "run", "test.yml", "-f", "story=long", "-f", "run-id=t1", "-f", "block=yes")
	run := r.waitRun("test long run t1", "completed", completed)
	if run.Conclusion != conclusionCancelled || run.Cancel != "timeout" || stepStatus(run, "Work") != "completed/cancelled" {
		t.Fatalf("timed out run: %s", r.dump())
	}
}

// TestWorkflowRunConcurrency: a second run of a story's group waits
// (pending) while the first runs; a third supersedes the waiting one.
func TestWorkflowRunConcurrency(t *testing.T) {
	r := withWorkflow(t)
	r.ok("workflow", "run", "test.yml", "-f", "story=same", "-f", "run-id=1", "-f", "block=yes")
	first := r.waitRun("test same run 1", "reached its blocking step", func(run *wfRun) bool {
		_, err := os.Stat(filepath.Join(run.Dir, "temp", "wait"))
		return err == nil
	})
	r.ok("workflow", "run", "test.yml", "-f", "story=same", "-f", "run-id=2")
	r.waitRun("test same run 2", "pending", func(run *wfRun) bool { return run.Status == statusPending })
	r.ok("workflow", "run", "test.yml", "-f", "story=other", "-f", "run-id=3")
	if run := r.waitRun("test other run 3", "completed", completed); run.Conclusion != conclusionSuccess {
		t.Errorf("another story's run waited or failed: %s", r.dump())
	}
	r.ok("workflow", "run", "test.yml", "-f", "story=same", "-f", "run-id=4")
	if run := r.waitRun("test same run 2", "completed", completed); run.Conclusion != conclusionCancelled || run.Cancel != "superseded" {
		t.Errorf("superseded run: %s", r.dump())
	}
	r.waitRun("test same run 4", "pending", func(run *wfRun) bool { return run.Status == statusPending })
	os.WriteFile(filepath.Join(first.Dir, "temp", "wait"), []byte("go\n"), 0o644)
	if run := r.waitRun("test same run 1", "completed", completed); run.Conclusion != conclusionSuccess {
		t.Errorf("first run: %s", r.dump())
	}
	if run := r.waitRun("test same run 4", "completed", completed); run.Conclusion != conclusionSuccess {
		t.Errorf("the waiting run: %s", r.dump())
	}
	o := r.ok("run", "list", "--workflow", "test.yml", "--json", "displayTitle,number", "-L", "2")
	if o.Stdout != `[{"displayTitle":"test same run 4","number":4},{"displayTitle":"test other run 3","number":3}]`+"\n" {
		t.Errorf("run list, newest first: %s", o.Stdout)
	}
}

// The stand-in's JSON fields are gh's: where Debian's gh is installed,
// every field it lists for `run list` and `run view` (`--json` without a
// value prints them, offline) is one the stand-in answers, and none it
// answers beyond them.
func TestJSONFieldsAreDebianGH(t *testing.T) {
	real, err := exec.LookPath("gh")
	if err != nil {
		testkit.Needs(t, "no gh on PATH to compare with (Debian's package: gh)")
	}
	fields := func(args ...string) []string {
		out, _ := exec.Command(real, append(slices.Clone(args), "--json")...).CombinedOutput()
		var fs []string
		for _, line := range strings.Split(string(out), "\n") {
			if f, ok := strings.CutPrefix(line, "  "); ok && f != "" && !strings.Contains(f, " ") {
				fs = append(fs, f)
			}
		}
		if len(fs) == 0 {
			t.Fatalf("gh %v --json listed no fields:\n%s", args, out)
		}
		return fs
	}
	r := withWorkflow(t)
	r.ok("workflow", "run", "test.yml", "-f", "story=alpha", "-f", "run-id=r1")
	run := r.waitRun("test alpha run r1", "completed", completed)
	id := strconv.FormatInt(run.ID, 10)
	for _, cmd := range [][]string{{"run", "list"}, {"run", "view", id}} {
		want := fields(cmd[:2]...)
		o := r.ok(append(cmd, "--json", strings.Join(want, ","))...)
		var got map[string]any
		if cmd[1] == "list" {
			var list []map[string]any
			if err := json.Unmarshal([]byte(o.Stdout), &list); err != nil || len(list) != 1 {
				t.Fatalf("gh %v: %q %v", cmd, o.Stdout, err)
			}
			got = list[0]
		} else if err := json.Unmarshal([]byte(o.Stdout), &got); err != nil {
			t.Fatalf("gh %v: %q %v", cmd, o.Stdout, err)
		}
		for _, f := range want {
			if _, ok := got[f]; !ok {
				t.Errorf("gh %v: Debian's gh has field %q, the stand-in's answer lacks it", cmd[:2], f)
			}
		}
		for f := range got {
			if !slices.Contains(want, f) {
				t.Errorf("gh %v: the stand-in answers field %q, which Debian's gh does not list", cmd[:2], f)
			}
		}
	}
}
