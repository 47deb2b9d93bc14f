package github_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/github"
)

// TestReviewRoundOnGitHub: `run <story> --review --on github` is a
// dispatch like any other, with the input review; the job's worker runs
// with --review.
func TestReviewRoundOnGitHub(t *testing.T) {
	a := newActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	// The job's saga-lsp (from PATH) notes how its worker was started.
	args, bin := filepath.Join(t.TempDir(), "worker-args"), t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = worker ]; then printf '%%s\\n' \"$*\" >> %q; fi\nexec %q \"$@\"\n", args, testkit.Binary(t))
	if err := os.WriteFile(filepath.Join(bin, "saga-lsp"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	a.env = append(a.env, "PATH="+bin+string(os.PathListSeparator)+filepath.Dir(testkit.Binary(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
	// No PR: no review to address (as run says on this machine).
	if r := a.saga(nil, "run", idStory, "--review", "--on", "github"); r.Code != 2 || !strings.Contains(r.Stderr, "has no pull request to review") || len(a.runs()) != 0 {
		t.Fatalf("a round of a story without a PR: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// Its earlier run opened one.
	if err := runs.WriteRecord(a.root, runs.Record{Story: idStory, Session: "saga-story-" + idStory + "-1", Status: runs.StatusCompleted,
		Ended: time.Now().UTC(), Branch: "story/" + idStory, PR: "https://github.com/acme/shop/pull/1"}); err != nil {
		t.Fatal(err)
	}
	r := a.saga(nil, "run", idStory, "--review", "--on", "github", "--format", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var d github.Dispatched
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil || d.ActionsRun == 0 {
		t.Fatalf("%+v, %v\n%s", d, err, r.Stdout)
	}
	run := a.waitRun(idStory, "completed")
	var st struct {
		Runs []struct {
			ID     int64             `json:"databaseId"`
			Inputs map[string]string `json:"inputs"`
		}
	}
	json.Unmarshal([]byte(testkit.ReadFile(t, a.state)), &st)
	if len(st.Runs) != 1 || st.Runs[0].ID != d.ActionsRun || st.Runs[0].Inputs[github.InputReview] != "true" {
		t.Errorf("the dispatch's inputs: %+v", st.Runs)
	}
	if got := testkit.FileText(args); !strings.HasPrefix(got, "worker "+idStory+" --base main --review --session ") {
		t.Errorf("the job's worker ran as %q\n%s", got, a.jobLog(run))
	}
}

// TestReviewRoundRefusedByOlderWorkflow: a workflow on the default branch
// without the input review refuses a review round — a dispatch, and
// --watch before its first poll — saying how to bring it up to date; other
// runs still dispatch.
func TestReviewRoundRefusedByOlderWorkflow(t *testing.T) {
	a := newActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	wf := filepath.Join(a.root, github.WorkflowPath)
	content := testkit.ReadFile(t, wf)
	// As an older saga-lsp wrote it: neither the input nor its use.
	old := strings.Replace(content, "          REVIEW: ${{ inputs."+github.InputReview+" }}\n", "", 1)
	old = regexp.MustCompile(`(?m)^      `+github.InputReview+`:\n(?:        .*\n)+`).ReplaceAllString(old, "")
	if strings.Contains(old, github.InputReview+":") || strings.Contains(old, "inputs."+github.InputReview) {
		t.Fatalf("no input review in:\n%s", content)
	}
	os.WriteFile(wf, []byte(old), 0o644)
	testkit.Git(t, a.root, "commit", "-q", "-am", "an older workflow")
	testkit.Git(t, a.root, "push", "-q", "origin", "main")
	for _, args := range [][]string{{"run", idStory, "--review", "--on", "github"}, {"run", idStory, "--review", "--watch", "--on", "github"}} {
		r := a.saga(nil, args...)
		if r.Code != 1 || !strings.Contains(r.Stderr, "does not take the input review") || !strings.Contains(r.Stderr, "saga-lsp install --github-actions") {
			t.Errorf("%v: exit %d\n%s%s", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	if n := len(a.runs()); n != 0 {
		t.Errorf("%d runs dispatched", n)
	}
	defer a.holdJobs()()
	if r := a.saga(nil, "run", idStory, "--on", "github"); r.Code != 0 || len(a.runs()) != 1 {
		t.Errorf("a run that is no review round: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestReviewRoundOnGitHubPastMaxRounds: the job's worker starts in a fresh
// clone with no record, so --max-review-rounds is kept here, against the
// rounds the story's record counts: past it no round is dispatched and the
// story needs you (said in the record, for every face); a higher bound
// dispatches it.
func TestReviewRoundOnGitHubPastMaxRounds(t *testing.T) {
	a := newActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	pr := "https://github.com/acme/shop/pull/1"
	if err := runs.WriteRecord(a.root, runs.Record{Story: idStory, Session: "saga-story-" + idStory + "-1", Status: runs.StatusCompleted,
		Ended: time.Now().UTC(), Branch: "story/" + idStory, PR: pr, Review: &runs.ReviewRecord{Rounds: runs.DefaultMaxReviewRounds}}); err != nil {
		t.Fatal(err)
	}
	r := a.saga(nil, "run", idStory, "--review", "--on", "github")
	want := fmt.Sprintf("%d review round(s) ran, --max-review-rounds %d: the review of %s needs you", runs.DefaultMaxReviewRounds, runs.DefaultMaxReviewRounds, pr)
	if r.Code != 1 || !strings.Contains(r.Stderr, want) || len(a.runs()) != 0 {
		t.Fatalf("a round past the bound: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if rec, _ := runs.ReadRecord(a.root, idStory); rec.Review == nil || !strings.HasPrefix(rec.Review.NeedsYou, want) {
		t.Errorf("the record: %+v", rec.Review)
	}
	if st := a.saga(nil, "status", idStory); !strings.Contains(st.Stdout, "needs you") {
		t.Errorf("status:\n%s", st.Stdout)
	}
	defer a.holdJobs()()
	r = a.saga(nil, "run", idStory, "--review", "--on", "github", "--max-review-rounds", fmt.Sprint(runs.DefaultMaxReviewRounds+1))
	if r.Code != 0 || len(a.runs()) != 1 {
		t.Errorf("a higher bound: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
