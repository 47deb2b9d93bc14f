package github_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// A story's run is the one its dispatch created
// (docs/github-actions.md#which-run-is-the-storys; issue 32, attack 4).

const idStory = "user-auth--api"

// storyStatus is `status <story> --verbose --format json`'s one story.
func (a *actions) storyStatus(story string) control.StoryStatus {
	a.t.Helper()
	r := a.saga(nil, "status", story, "--verbose", "--format", "json")
	var st control.Status
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || len(st.Stories) != 1 {
		a.t.Fatalf("status: exit %d %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	return st.Stories[0]
}

// dispatched dispatches the story with saga-lsp and returns its run.
func (a *actions) dispatched(story string) standinRun {
	a.t.Helper()
	if r := a.saga(nil, "run", story, "--on", "github"); r.Code != 0 {
		a.t.Fatalf("run --on github: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	rs := a.runs()
	return rs[len(rs)-1]
}

// pushWorkflow pushes content as saga-story.yml on origin's branch (a
// pull request's branch, or another one).
func (a *actions) pushWorkflow(branch, content string) {
	a.t.Helper()
	testkit.Git(a.t, a.root, "checkout", "-q", "-b", branch)
	if err := os.WriteFile(filepath.Join(a.root, github.WorkflowPath), []byte(content), 0o644); err != nil {
		a.t.Fatal(err)
	}
	testkit.Git(a.t, a.root, "commit", "-q", "-am", "edit the workflow")
	testkit.Git(a.t, a.root, "push", "-q", "origin", branch)
	testkit.Git(a.t, a.root, "checkout", "-q", "main")
}

// forgedWorkflow is a workflow a pull request (or another branch) brings:
// it names its run as the story's dispatch and uploads a forged record.
func forgedWorkflow(on, runName, artifact string) string {
	return `name: saga-story
run-name: "` + runName + `"
on:
  ` + on + `
jobs:
  story:
    runs-on: ubuntu-24.04
    steps:
      - name: Forge
        run: |
          mkdir -p "$RUNNER_TEMP/forged"
          printf '%s' '{"story":"` + idStory + `","status":"completed","branch":"story/` + idStory + `","pr":"https://evil.example/pull/1","why":"forged","cost":-1000}' > "$RUNNER_TEMP/forged/record.json"
      - name: Upload
        uses: actions/upload-artifact@v6
        with:
          name: ` + artifact + `
          path: ${{ runner.temp }}/forged
`
}

// TestLookAlikeRunsIgnored: runs named as the story's dispatch — a
// look-alike someone dispatched with an id of their own, a copy of the
// dispatch's very name dispatched after it, a pull request's run and a
// dispatch on another branch, both uploading a forged record — decide
// nothing: the story's state, pull request and branch are its own run's;
// status --verbose shows each ignored, with why; stop cancels the
// dispatched run only.
func TestLookAlikeRunsIgnored(t *testing.T) {
	a := newActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	release := a.holdJobs()
	real := a.dispatched(idStory)
	_, realID, _ := github.ParseRunName(real.Title)

	// Someone else's dispatches: their own id, then the real one copied.
	a.ghOK("workflow", "run", github.WorkflowFile, "-f", "story="+idStory, "-f", "base=main", "-f", "run-id="+github.NewRunID(time.Now()))
	a.ghOK("workflow", "run", github.WorkflowFile, "-f", "story="+idStory, "-f", "base=main", "-f", "run-id="+realID)
	// A pull request editing the workflow, and a dispatch on another branch.
	a.pushWorkflow("evil-pr", forgedWorkflow("pull_request:", real.Title, github.ArtifactPrefix+realID))
	a.ghOK("__event", "pull_request", github.WorkflowFile, "--ref", "evil-pr")
	a.pushWorkflow("evil-branch", forgedWorkflow("workflow_dispatch:", real.Title, github.ArtifactPrefix+realID))
	a.ghOK("workflow", "run", github.WorkflowFile, "--ref", "evil-branch")
	if n := len(a.runs()); n != 5 {
		t.Fatalf("%d runs: %+v", n, a.runs())
	}

	st := a.storyStatus(idStory)
	if st.Actions == nil || st.Actions.ID != real.ID || st.State != readmodel.EpicRunning {
		t.Errorf("the story's run: %+v, state %s (want run %d)", st.Actions, st.State, real.ID)
	}
	if len(st.IgnoredRuns) != 4 {
		t.Errorf("ignored runs %+v: want the 4 others", st.IgnoredRuns)
	}
	whys := ""
	for _, r := range st.IgnoredRuns {
		whys += r.Why + "\n"
	}
	for _, want := range []string{"not the run recorded for the story's dispatch (" + jsonNumber(real.ID) + ")", "started by a pull_request event", `run on branch "evil-branch"`} {
		if !strings.Contains(whys, want) {
			t.Errorf("no ignored run says %q:\n%s", want, whys)
		}
	}
	if out := a.saga(nil, "status", idStory, "--verbose").Stdout; strings.Count(out, "ignored:  "+idStory+": GitHub Actions run ") != 4 {
		t.Errorf("status --verbose:\n%s", out)
	}

	// stop cancels the dispatched run, and only it.
	if r := a.saga(nil, "stop", idStory); r.Code != 0 {
		t.Fatalf("stop: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, r := range a.runs() {
		if cancelled := r.Cancel == "cancel"; cancelled != (r.ID == real.ID) {
			t.Errorf("run %d %q: %s/%s, cancel %q", r.ID, r.Title, r.Status, r.Conclusion, r.Cancel)
		}
	}
	release()
	// The forged runs complete, their records uploaded; the story stays
	// its own run's.
	for _, r := range a.runs() {
		if r.Event == "pull_request" || r.Title == real.Title && r.ID != real.ID {
			a.waitRunID(r.ID, "completed")
		}
	}
	st = a.storyStatus(idStory)
	if st.State != runs.StatusStopped || st.Actions == nil || st.Actions.ID != real.ID || strings.Contains(st.PR, "evil") {
		t.Errorf("after the forged runs ended: state %s, run %+v, PR %q", st.State, st.Actions, st.PR)
	}
}

// waitRunID waits for run id in the given status.
func (a *actions) waitRunID(id int64, status string) standinRun {
	a.t.Helper()
	var got standinRun
	if !testkit.WaitUntil(90*time.Second, func() bool {
		for _, r := range a.runs() {
			if r.ID == id && r.Status == status {
				got = r
				return true
			}
		}
		return false
	}) {
		a.t.Fatalf("run %d never %s: %+v", id, status, a.runs())
	}
	return got
}

// TestForgedRecordRefused: what the dispatched run's artifact says is
// checked before it is believed — a pull request elsewhere, another
// story's record or branch, a negative cost, what is no record, a
// record.json over its bound: each ends the story failed, saying so, and
// none of it shows as the story's.
func TestForgedRecordRefused(t *testing.T) {
	a := newActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	real := a.dispatched(idStory)
	real = a.waitRunID(real.ID, "completed")
	if real.Conclusion != "success" {
		t.Fatalf("run %+v\n%s", real, a.jobLog(real))
	}
	_, realID, _ := github.ParseRunName(real.Title)
	recFile := filepath.Join(real.Dir, "artifacts", github.ArtifactPrefix+realID, "record.json")
	var good map[string]any
	if err := json.Unmarshal([]byte(testkit.ReadFile(t, recFile)), &good); err != nil {
		t.Fatal(err)
	}
	if st := a.storyStatus(idStory); st.State != runs.StatusCompleted || st.PR == "" {
		t.Fatalf("the real record: %+v", st)
	}
	forge := func(change func(m map[string]any)) []byte {
		m := map[string]any{}
		for k, v := range good {
			m[k] = v
		}
		change(m)
		data, _ := json.Marshal(m)
		return data
	}
	for _, c := range []struct {
		name, want string
		record     []byte
	}{
		{"evil PR", "is not one of the run's repository", forge(func(m map[string]any) { m["pr"] = "https://evil.example/standin/origin/pull/1" })},
		{"PR of another repository", "is not one of the run's repository", forge(func(m map[string]any) { m["pr"] = "https://github.com/standin/other/pull/1" })},
		{"other story's branch", "is not the story's", forge(func(m map[string]any) { m["branch"] = "story/other--story" })},
		{"other story's record", `it is story "other--story"'s`, forge(func(m map[string]any) { m["story"] = "other--story" })},
		{"negative cost", "is not a non-negative number", forge(func(m map[string]any) { m["cost"] = -1000.0 })},
		{"NaN cost", "is not a run record", []byte(strings.Replace(string(forge(func(m map[string]any) { m["cost"] = 1.5 })), "1.5", "NaN", 1))},
		{"huge record.json", "over 1048576 bytes", forge(func(m map[string]any) { m["why"] = strings.Repeat("x", 2<<20) })},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(recFile, c.record, 0o644); err != nil {
				t.Fatal(err)
			}
			os.RemoveAll(filepath.Join(a.sessions(), "actions")) // downloaded again
			st := a.storyStatus(idStory)
			if st.State != runs.StatusFailed || !strings.Contains(st.Why, "not believed: ") || !strings.Contains(st.Why, c.want) {
				t.Errorf("state %s, why %q: want failed, saying %q", st.State, st.Why, c.want)
			}
			if strings.Contains(st.PR, "evil") || strings.Contains(st.PR, "other") || st.Branch != runs.StoryBranch(idStory) {
				t.Errorf("the forged record shows: PR %q, branch %q", st.PR, st.Branch)
			}
		})
	}
}

// TestOlderWorkflowRefused: a workflow on the default branch whose
// run-name lacks the dispatch's id (an older saga-lsp's, or edited) is
// refused before anything is dispatched, saying how to bring it up to
// date.
func TestOlderWorkflowRefused(t *testing.T) {
	a := newActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	wf := filepath.Join(a.root, github.WorkflowPath)
	content := testkit.ReadFile(t, wf)
	old := strings.Replace(content, `run-name: "saga story ${{ inputs.story }} run ${{ inputs.run-id }}"`, `run-name: "saga story ${{ inputs.story }}"`, 1)
	if old == content {
		t.Fatalf("no run-name to change in:\n%s", content)
	}
	os.WriteFile(wf, []byte(old), 0o644)
	testkit.Git(t, a.root, "commit", "-q", "-am", "an older workflow")
	testkit.Git(t, a.root, "push", "-q", "origin", "main")
	r := a.saga(nil, "run", idStory, "--on", "github")
	if r.Code != 1 || !strings.Contains(r.Stderr, "does not take the input run-id in its run-name") || !strings.Contains(r.Stderr, "saga-lsp install --github-actions") {
		t.Errorf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if n := len(a.runs()); n != 0 {
		t.Errorf("%d runs dispatched", n)
	}
}
