package github_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/github"
)

// actions is a repository holding examples/workspace with the generated
// workflow on origin's main, and the environment the gh stand-in runs its
// jobs in: saga-lsp on PATH (for the install step it takes as done), the
// stand-in claude.
type actions struct {
	t              *testing.T
	root, origin   string
	gh, state, log string
	env            []string
}

func newActions(t *testing.T, secrets ...string) *actions {
	t.Helper()
	return newActionsRepo(t, true, secrets...)
}

// newActionsRepo is newActions, with the workflow pushed to origin's main
// or not.
func newActionsRepo(t *testing.T, workflow bool, secrets ...string) *actions {
	t.Helper()
	base := t.TempDir()
	a := &actions{t: t, root: testkit.GitRepo(t, filepath.Join(testkit.ModuleRoot(t), "examples", "workspace")),
		gh: testkit.Build(t, "./testdata/standin/gh"), state: filepath.Join(base, "gh.json"), log: filepath.Join(base, "claude.log")}
	a.origin = testkit.BareOrigin(t, a.root)
	if workflow {
		if _, err := github.Install(a.root, github.Source{Version: "v1.4.2", GoVersion: "1.26"}, false); err != nil {
			t.Fatal(err)
		}
		testkit.Git(t, a.root, "add", ".github")
		testkit.Git(t, a.root, "commit", "-q", "-m", "saga-story workflow")
		testkit.Git(t, a.root, "push", "-q", "origin", "main")
	}
	a.env = append(testkit.CleanEnv(),
		"PATH="+filepath.Dir(testkit.Binary(t))+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+base, "GIT_CONFIG_NOSYSTEM=1", "CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"),
		"SAGA_CLAUDE="+testkit.Build(t, "./testdata/standin/claude"), "SAGA_GH="+a.gh,
		"SAGA_STANDIN_SCRIPT=all", "SAGA_STANDIN_LOG="+a.log, "GH_STANDIN_STATE="+a.state,
		"SAGA_SESSION_DIR="+filepath.Join(base, "sessions"))
	for _, s := range secrets {
		a.env = append(a.env, "GH_STANDIN_SECRET_"+s)
	}
	t.Cleanup(a.kill)
	return a
}

type standinRun struct {
	ID         int64  `json:"databaseId"`
	Title      string `json:"displayTitle"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion"`
	PID        int    `json:"pid"`
	Event      string `json:"event"`
	Cancel     string `json:"cancel"` // why it was cancelled: cancel (gh run cancel), superseded, timeout
	Dir        string `json:"dir"`
	Jobs       []struct {
		Steps []struct{ Name, Status, Conclusion string }
	}
}

func (a *actions) runs() []standinRun {
	var st struct{ Runs []standinRun }
	if data, err := os.ReadFile(a.state); err == nil {
		json.Unmarshal(data, &st)
	}
	return st.Runs
}

func (a *actions) kill() {
	for _, r := range a.runs() {
		if r.Status != "completed" && r.PID > 0 {
			testkit.Run(a.t, a.root, a.env, "", a.gh, "run", "cancel", strconv.FormatInt(r.ID, 10))
			testkit.WaitExit(r.PID, 30*time.Second)
		}
	}
}

func (a *actions) ghOK(args ...string) testkit.Result {
	a.t.Helper()
	r := testkit.Run(a.t, a.root, a.env, "", a.gh, args...)
	if r.Code != 0 {
		a.t.Fatalf("gh %v: exit %d\n%s%s", args, r.Code, r.Stdout, r.Stderr)
	}
	return r
}

// dispatch runs the story on "GitHub Actions" and waits for its run to
// complete.
func (a *actions) dispatch(story, runID string) standinRun {
	a.t.Helper()
	a.ghOK("workflow", "run", github.WorkflowFile, "-f", "story="+story, "-f", "base=main", "-f", "run-id="+runID)
	title := github.RunName(story, runID)
	var got standinRun
	if !testkit.WaitUntil(120*time.Second, func() bool {
		for _, r := range a.runs() {
			if r.Title == title && r.Status == "completed" {
				got = r
				return true
			}
		}
		return false
	}) {
		a.t.Fatalf("run %q did not complete: %+v", title, a.runs())
	}
	return got
}

func (a *actions) jobLog(r standinRun) string {
	return testkit.FileText(filepath.Join(r.Dir, "job.log"))
}

func stepOf(r standinRun, name string) string {
	for _, j := range r.Jobs {
		for _, s := range j.Steps {
			if s.Name == name {
				return s.Status + "/" + s.Conclusion
			}
		}
	}
	return ""
}

// TestWorkflowRunsStory: the generated workflow, executed by the gh
// stand-in in a fresh clone of origin (its worker step as written in the
// file), runs the story end to end: its branch pushed, its pull request
// opened with the job token, its record and events in the artifact, its
// status in the step summary — and the token never in the agent's
// environment.
func TestWorkflowRunsStory(t *testing.T) {
	a := newActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	story := "user-auth--api"
	runID := github.NewRunID(time.Now())
	r := a.dispatch(story, runID)
	if r.Conclusion != "success" || stepOf(r, "Run the story") != "completed/success" {
		t.Fatalf("run %+v\n%s", r, a.jobLog(r))
	}
	if out := testkit.Git(t, a.root, "ls-remote", "origin", runs.StoryBranch(story)); !strings.Contains(out, runs.StoryBranch(story)) {
		t.Errorf("story branch not pushed: %q", out)
	}
	prs := a.ghOK("pr", "list", "--head", runs.StoryBranch(story), "--json", "isDraft,title")
	if prs.Stdout != `[{"isDraft":false,"title":"Story: `+story+`"}]`+"\n" {
		t.Errorf("pull requests %s", prs.Stdout)
	}
	dl := t.TempDir()
	a.ghOK("run", "download", strconv.FormatInt(r.ID, 10), "-n", github.ArtifactPrefix+runID, "-D", dl)
	var rec runs.Record
	if err := json.Unmarshal([]byte(testkit.ReadFile(t, filepath.Join(dl, "record.json"))), &rec); err != nil || rec.Story != story || rec.Status != "completed" || rec.PR == "" {
		t.Errorf("record %+v, %v", rec, err)
	}
	events, _ := filepath.Glob(filepath.Join(dl, "*"+runs.EventsSuffix))
	if len(events) != 1 {
		out, _ := exec.Command("find", dl).Output()
		t.Errorf("artifact holds events files %v:\n%s\n%s", events, out, a.jobLog(r))
	}
	summary := testkit.FileText(filepath.Join(r.Dir, "summary.md"))
	if !strings.Contains(summary, "### saga-lsp: story `"+story+"`") || !strings.Contains(summary, "status:   completed") {
		t.Errorf("step summary:\n%s", summary)
	}
	f, err := os.Open(a.log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		var inv struct{ Secrets []string }
		json.Unmarshal(sc.Bytes(), &inv)
		if !slices.Contains(inv.Secrets, "ANTHROPIC_API_KEY") || slices.Contains(inv.Secrets, "GH_TOKEN") || slices.Contains(inv.Secrets, "GIT_CONFIG_KEY_0") {
			t.Errorf("claude's credentials %v: want ANTHROPIC_API_KEY only", inv.Secrets)
		}
	}
	if n == 0 {
		t.Error("claude never ran")
	}
}

// TestWorkflowMissingSecret: without the Claude Code secret the job fails
// at once, at the step that says so; nothing runs, nothing is uploaded.
func TestWorkflowMissingSecret(t *testing.T) {
	a := newActions(t)
	r := a.dispatch("user-auth--api", github.NewRunID(time.Now()))
	if r.Conclusion != "failure" || stepOf(r, "Check the Claude Code secret") != "completed/failure" ||
		stepOf(r, "Run the story") != "completed/skipped" || stepOf(r, "Check out") != "completed/skipped" {
		t.Fatalf("run %+v\n%s", r, a.jobLog(r))
	}
	if log := a.jobLog(r); !strings.Contains(log, "::error title=saga-lsp: no Claude Code secret::neither the secret ANTHROPIC_API_KEY nor CLAUDE_CODE_OAUTH_TOKEN is set") {
		t.Errorf("job log:\n%s", log)
	}
	if o := testkit.Run(t, a.root, a.env, "", a.gh, "run", "download", strconv.FormatInt(r.ID, 10)); o.Code != 1 || !strings.Contains(o.Stderr, "no valid artifacts") {
		t.Errorf("download: %d %s", o.Code, o.Stderr)
	}
	if s := testkit.FileText(filepath.Join(r.Dir, "summary.md")); !strings.Contains(s, "The story did not start") {
		t.Errorf("summary %q", s)
	}
}
