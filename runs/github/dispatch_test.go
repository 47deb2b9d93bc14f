package github_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// saga runs the saga-lsp binary in the repository with the fixture's
// environment (and more).
func (a *actions) saga(more []string, args ...string) testkit.Result {
	a.t.Helper()
	return testkit.Run(a.t, a.root, append(append([]string{}, a.env...), more...), "", testkit.Binary(a.t), args...)
}

// TestRunOnGitHub: `run <story> --on github --follow` dispatches the
// story, finds its run by name, follows it to its conclusion, and records
// the dispatch in the story's local events.
func TestRunOnGitHub(t *testing.T) {
	a := newActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	r := a.saga(nil, "run", "user-auth--api", "--on", "github", "--follow")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	runs0 := a.runs()
	if len(runs0) != 1 {
		t.Fatalf("%d runs dispatched", len(runs0))
	}
	url := "https://github.com/standin/origin/actions/runs/" + jsonNumber(runs0[0].ID)
	for _, want := range []string{"dispatched story user-auth--api to GitHub Actions (base main)\nrun " + url + " (",
		"\ncompleted: success\n"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.Stdout)
		}
	}
	if !strings.HasPrefix(runs0[0].Title, "saga story user-auth--api run ") {
		t.Errorf("run name %q", runs0[0].Title)
	}
	events, _ := filepath.Glob(filepath.Join(a.sessions(), "saga-story-user-auth--api-*"+runs.EventsSuffix))
	if len(events) != 1 {
		t.Fatalf("local events files %v", events)
	}
	run := runs.ReadRun(events[0])
	if run == nil || run.Backend != readmodel.BackendGitHub || run.URL != url || run.ActionsRun != runs0[0].ID || run.Base != "main" {
		t.Errorf("folded run %+v", run)
	}
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

// sessions is the session dir: the environment's last (as exec takes it).
func (a *actions) sessions() string {
	for _, kv := range slices.Backward(a.env) {
		if v, ok := strings.CutPrefix(kv, "SAGA_SESSION_DIR="); ok {
			return v
		}
	}
	return ""
}

// TestRunOnGitHubJSON: --format json reports the dispatch.
func TestRunOnGitHubJSON(t *testing.T) {
	a := newActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	r := a.saga(nil, "run", "user-auth--api", "--on", "github", "--format", "json", "--base", "main")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var d github.Dispatched
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil || d.Story != "user-auth--api" || d.Base != "main" || d.ActionsRun == 0 ||
		d.RunName != github.RunName("user-auth--api", d.RunID) || !strings.HasPrefix(d.Session, "saga-story-user-auth--api-") {
		t.Errorf("%+v, %v\n%s", d, err, r.Stdout)
	}
	// follow and status of a dispatched story: its Actions run.
	f := a.saga(nil, "follow", "user-auth--api")
	if f.Code != 0 || !strings.HasPrefix(f.Stdout, "story user-auth--api on GitHub Actions: "+d.URL+"\n") || !strings.HasSuffix(f.Stdout, "completed: success\n") {
		t.Errorf("follow: exit %d\n%s%s", f.Code, f.Stdout, f.Stderr)
	}
	st := a.saga(nil, "status", "user-auth--api")
	for _, want := range []string{"worker:   GitHub Actions success " + d.URL + "\n", "status:   completed, 5/5 tasks done (from origin/story/user-auth--api)"} {
		if !strings.Contains(st.Stdout, want) {
			t.Errorf("status lacks %q:\n%s%s", want, st.Stdout, st.Stderr)
		}
	}
	// What GitHub said is recorded in the dispatch's events for readers that
	// never ask GitHub (the language server).
	if run := runs.ReadRun(d.EventsFile); run == nil || !run.Ended || run.State != runs.StatusCompleted || run.Conclusion != "success" {
		t.Errorf("the dispatch's run after status: %+v", run)
	}
}

// TestRunOnGitHubNeverTwice: a story whose Actions run is queued or in
// progress is not dispatched again; `stop` cancels that run.
func TestRunOnGitHubNeverTwice(t *testing.T) {
	a := newActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	defer a.holdJobs()()
	if r := a.saga(nil, "run", "user-auth--api", "--on", "github"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	url := a.runs()[0].url()
	r := a.saga(nil, "run", "user-auth--api", "--on", "github")
	if r.Code != 1 || !strings.Contains(r.Stderr, "a GitHub Actions job ("+url+") is already running story user-auth--api") {
		t.Errorf("second dispatch: exit %d\n%s", r.Code, r.Stderr)
	}
	if n := len(a.runs()); n != 1 {
		t.Errorf("%d runs dispatched", n)
	}
	r = a.saga(nil, "stop", "user-auth--api")
	if r.Code != 0 || r.Stdout != "stopped story user-auth--api: cancelled its GitHub Actions run "+url+"\n" {
		t.Errorf("stop: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if run := a.runs()[0]; run.Conclusion != "cancelled" {
		t.Errorf("run %+v", run)
	}
	if st := a.saga(nil, "status", "user-auth--api"); !strings.Contains(st.Stdout, "status:   in_progress, 1/5 tasks done\nrun:      stopped") || !strings.Contains(st.Stdout, "why:      its Actions run was cancelled ("+url+")") {
		t.Errorf("status:\n%s", st.Stdout)
	}
}

// TestRunOnGitHubRefusals: what is refused before anything is dispatched,
// saying what to do; and a dispatch whose run never shows up.
func TestRunOnGitHubRefusals(t *testing.T) {
	a := newActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	testkit.WriteFiles(t, a.root, map[string]string{".saga/stories/local-only/story.json": `{"id": "local-only", "title": "Local", "description": ""}`})
	for _, tc := range []struct {
		args []string
		env  []string
		code int
		want string
	}{
		{[]string{"--dry-run"}, nil, 2, "--on github takes no --dry-run"},
		{[]string{"--model", "opus"}, nil, 2, "--model does not reach a GitHub Actions job"},
		{[]string{"--on", "gitlab"}, nil, 2, "--on"},
		{[]string{"--base", "nope"}, nil, 1, "the base branch nope is not on origin: push it"},
		{nil, []string{"GH_STANDIN_AUTH=none"}, 1, "gh is not logged in to GitHub: run `gh auth login`"},
		{nil, []string{"SAGA_GH=/nonexistent/gh"}, 1, "gh (GitHub's CLI) is not installed"},
	} {
		args := append([]string{"run", "user-auth--api", "--on", "github"}, tc.args...)
		if r := a.saga(tc.env, args...); r.Code != tc.code || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("%v %v: exit %d\n%s", args, tc.env, r.Code, r.Stderr)
		}
	}
	if r := a.saga(nil, "run", "local-only", "--on", "github"); r.Code != 1 || !strings.Contains(r.Stderr, "story local-only is not on origin's main: commit and push it") {
		t.Errorf("story not pushed: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := a.saga(nil, "run", "user-auth--api", "--on", "github", "--max-parallel", "2"); r.Code != 2 || !strings.Contains(r.Stderr, "--max-parallel is for an epic; user-auth--api is a story") {
		t.Errorf("an epic's flag: exit %d\n%s", r.Code, r.Stderr)
	}
	if n := len(a.runs()); n != 0 {
		t.Fatalf("%d runs dispatched by refused commands", n)
	}
	r := a.saga([]string{"GH_STANDIN_LIST_DELAY=1h"}, "run", "user-auth--api", "--on", "github", "--dispatch-wait", "300ms")
	if r.Code != 1 || !strings.Contains(r.Stderr, "no run named \"saga story user-auth--api run ") || !strings.Contains(r.Stderr, "within 300ms") {
		t.Errorf("run never listed: exit %d\n%s", r.Code, r.Stderr)
	}
	if n := len(a.runs()); n != 1 {
		t.Errorf("%d runs dispatched, want 1 (never twice)", n)
	}
	// Listed only after a while: found by its name once it is.
	r = a.saga([]string{"GH_STANDIN_LIST_DELAY=1500ms"}, "run", "user-auth--login-page", "--on", "github", "--format", "json")
	var d github.Dispatched
	if json.Unmarshal([]byte(r.Stdout), &d); r.Code != 0 || d.ActionsRun == 0 {
		t.Errorf("run listed late: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestRunOnGitHubNoWorkflow: no workflow on the default branch.
func TestRunOnGitHubNoWorkflow(t *testing.T) {
	a := newActionsRepo(t, false)
	// Written here but not pushed: GitHub runs the default branch's.
	if _, err := github.Install(a.root, github.Source{Version: "v1.4.2", GoVersion: "1.26"}, false); err != nil {
		t.Fatal(err)
	}
	r := a.saga(nil, "run", "user-auth--api", "--on", "github")
	if r.Code != 1 || !strings.Contains(r.Stderr, "origin's default branch main has no .github/workflows/saga-story.yml: run `saga-lsp install --github-actions`, commit the file and push it") {
		t.Errorf("exit %d\n%s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(a.state); err == nil && len(a.runs()) > 0 {
		t.Error("dispatched without a workflow")
	}
}

// TestRunOnGitHubCancelledFromTheWeb: a run followed by `run --follow`
// and cancelled on GitHub ends the follow with the cancelled conclusion
// (exit 1); the worker was interrupted and the run record still uploaded.
func TestRunOnGitHubCancelledFromTheWeb(t *testing.T) {
	a := newActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	a.env = append(a.env, "SAGA_STANDIN_SCRIPT=slow", "SAGA_STANDIN_DELAY_MS=600000", "GH_STANDIN_CANCEL_GRACE=30s")
	cmd := exec.Command(testkit.Binary(t), "run", "user-auth--api", "--on", "github", "--follow")
	cmd.Dir, cmd.Env = a.root, a.env
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	// The agent is at work once claude logged its invocation.
	if !testkit.WaitUntil(60*time.Second, func() bool {
		fi, err := os.Stat(a.log)
		return err == nil && fi.Size() > 0 && len(a.runs()) == 1
	}) {
		t.Fatalf("claude never started: %+v\n%s", a.runs(), out.String())
	}
	id := a.runs()[0].ID
	a.ghOK("run", "cancel", jsonNumber(id))
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(out.String(), "\ncompleted: cancelled (at Run the story)\n") {
		data, _ := os.ReadFile(a.state)
		t.Fatalf("follow: exit %d (%v)\n%s\n%s", code, err, out.String(), data)
	}
	r := a.runs()[0]
	if stepOf(r, "Run the story") != "completed/cancelled" || stepOf(r, "Upload the run record and events") != "completed/success" {
		t.Errorf("steps %+v\n%s", r.Jobs, a.jobLog(r))
	}
	dl := t.TempDir()
	a.ghOK("run", "download", jsonNumber(id), "-D", dl)
	events, _ := filepath.Glob(filepath.Join(dl, "*", "*"+runs.EventsSuffix))
	if len(events) != 1 {
		t.Fatalf("artifact events %v", events)
	}
	if end := runs.ReadRun(events[0]); !end.Ended || end.State == "completed" {
		t.Errorf("the interrupted worker's run: ended %v, state %q", end.Ended, end.State)
	}
}

// TestRunOnGitHubUnanswered: a dispatch GitHub took without answering
// exits 1 saying where to look; status finds the run by its name, and a
// second dispatch while it is live is refused.
func TestRunOnGitHubUnanswered(t *testing.T) {
	a := newActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	defer a.holdJobs()()
	a.unreliableGH(`if [ "$1 $2" = "workflow run" ]; then "$GH" "$@" >/dev/null 2>&1; echo 'error connecting to api.github.com' >&2; exit 1; fi`)
	r := a.saga(nil, "run", "user-auth--api", "--on", "github")
	if r.Code != 1 || !strings.Contains(r.Stderr, "error connecting to api.github.com — GitHub may have taken the dispatch all the same: `saga-lsp status user-auth--api` shows it") {
		t.Errorf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	url := a.runs()[0].url()
	if st := a.saga(nil, "status", "user-auth--api"); !strings.Contains(st.Stdout, "worker:   GitHub Actions queued "+url) {
		t.Errorf("status:\n%s%s", st.Stdout, st.Stderr)
	}
	if r := a.saga(nil, "run", "user-auth--api", "--on", "github"); r.Code != 1 || !strings.Contains(r.Stderr, "is already running story user-auth--api") {
		t.Errorf("again: exit %d\n%s", r.Code, r.Stderr)
	}
	if n := len(a.runs()); n != 1 {
		t.Errorf("%d runs", n)
	}
}

// A dispatch GitHub never lists (taken, then lost): `run` says so after
// --dispatch-wait; `status` shows it dispatched while it may still appear,
// and once readmodel.ActionsAppearWait has passed since (the events' times
// moved back, as if that long had gone by), the story failed: lost, with
// how to look and how to dispatch it again.
func TestRunOnGitHubLost(t *testing.T) {
	a := newActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	a.unreliableGH(`if [ "$1 $2" = "workflow run" ]; then exit 0; fi`)
	r := a.saga(nil, "run", "user-auth--api", "--on", "github", "--dispatch-wait", "1s")
	if r.Code != 1 || !strings.Contains(r.Stderr, "GitHub accepted the dispatch, but no run named") {
		t.Errorf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if st := a.saga(nil, "status", "user-auth--api"); !strings.Contains(st.Stdout, "worker:   GitHub Actions dispatched\n") {
		t.Errorf("status just after:\n%s%s", st.Stdout, st.Stderr)
	}
	var sessions string
	for _, kv := range a.env {
		if v, ok := strings.CutPrefix(kv, "SAGA_SESSION_DIR="); ok {
			sessions = v
		}
	}
	files := runs.Runs(sessions, runs.KindStory, "user-auth--api")
	if len(files) != 1 {
		t.Fatalf("%d runs in the session dir, want the dispatch", len(files))
	}
	backdate(t, files[0].EventsFile, readmodel.ActionsAppearWait+time.Minute)
	st := a.saga(nil, "status", "user-auth--api")
	if !strings.Contains(st.Stdout, "but GitHub lists no run named") || !strings.Contains(st.Stdout, "dispatches it again") || strings.Contains(st.Stdout, "GitHub Actions dispatched\n") {
		t.Errorf("status once the wait is over:\n%s%s", st.Stdout, st.Stderr)
	}
	if n := len(a.runs()); n != 0 {
		t.Errorf("%d runs listed by the stand-in, want none", n)
	}
}

// backdate moves every event of an events file back by d.
func backdate(t *testing.T, events string, d time.Duration) {
	t.Helper()
	data, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		at, err := time.Parse(time.RFC3339Nano, e["time"].(string))
		if err != nil {
			t.Fatal(err)
		}
		e["time"] = at.Add(-d).Format(time.RFC3339Nano)
		b, _ := json.Marshal(e)
		out = append(append(out, b...), '\n')
	}
	if err := os.WriteFile(events, out, 0o600); err != nil {
		t.Fatal(err)
	}
}
