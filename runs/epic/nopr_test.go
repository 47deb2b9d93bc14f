//go:build unix

package epic_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
)

// A story's PR is never lost (docs/commands.md#run--stop): these runs
// complete with gh logged out, so their workers open no PR; status says
// "no PR yet" and why; once gh is logged in, `run <story>` opens the PR
// without starting the agent, against the base the run built on.

// gh runs the stand-in gh as the test's user would (its login is kept in
// its state file, as gh keeps it in its config).
func (f *epicFixture) gh(stdin string, args ...string) {
	f.t.Helper()
	bin := ""
	for _, kv := range f.env {
		if v, ok := strings.CutPrefix(kv, "SAGA_GH="); ok {
			bin = v
		}
	}
	if r := testkit.Run(f.t, f.root, f.env, stdin, bin, args...); r.Code != 0 {
		f.t.Fatalf("gh %v: exit %d\n%s%s", args, r.Code, r.Stdout, r.Stderr)
	}
}

// agentRuns counts the stand-in claude's headless runs so far.
func (f *epicFixture) agentRuns() int {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join(f.base, "claude.jsonl"))
	if err != nil {
		f.t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

// storyStatus is `status <story> --format json`'s story.
func (f *epicFixture) storyStatus(story string) control.StoryStatus {
	f.t.Helper()
	r := f.saga(nil, "status", story, "--format", "json")
	var st struct{ Stories []control.StoryStatus }
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || r.Code != 0 || len(st.Stories) != 1 {
		f.t.Fatalf("status %s: exit %d, %v\n%s%s", story, r.Code, err, r.Stdout, r.Stderr)
	}
	return st.Stories[0]
}

func (f *epicFixture) runToEnd(story string) {
	f.t.Helper()
	if r := f.saga(nil, "run", story); r.Code != 0 {
		f.t.Fatalf("run %s: exit %d\n%s%s", story, r.Code, r.Stdout, r.Stderr)
	}
	if r := f.saga(nil, "follow", story); r.Code != 0 {
		f.t.Fatalf("follow %s: exit %d\n%s%s", story, r.Code, r.Stdout, r.Stderr)
	}
}

func TestCompletedWithoutPRThenRunOpensIt(t *testing.T) {
	f := newEpicFixture(t, true)
	f.gh("", "auth", "logout")
	f.runToEnd("shop--a")
	if prs := f.pullRequests(); len(prs) != 0 {
		t.Fatalf("a PR while gh was logged out: %v", prs)
	}

	// status: completed, no PR yet, why, and the next step.
	st := f.storyStatus("shop--a")
	if st.State != runs.StatusCompleted || st.PR != "" || st.NoPR == nil || st.NoPR.Reason != runs.NoPRLoggedOut ||
		!strings.Contains(st.NoPR.Detail, "You are not logged into any GitHub hosts") {
		t.Fatalf("status after a run with gh logged out: %+v %+v", st, st.NoPR)
	}
	r := f.saga(nil, "status", "shop--a")
	want := "PR:       none yet — gh was not logged in when its worker ran; log in with `gh auth login`; then `saga-lsp run shop--a` opens it, without running the agent again\n"
	if !strings.Contains(r.Stdout, want) {
		t.Errorf("status text: want %q in\n%s", want, r.Stdout)
	}
	if r := f.saga(nil, "status"); !strings.Contains(r.Stdout, "no PR yet (`saga-lsp status shop--a` says why)") {
		t.Errorf("status list:\n%s", r.Stdout)
	}

	// Still logged out: run says why it cannot open it, and starts nothing.
	agents, sessions := f.agentRuns(), len(runs.Runs(f.sessionDir, runs.KindStory, "shop--a"))
	r = f.saga(nil, "run", "shop--a")
	if r.Code != 0 || !strings.Contains(r.Stdout, "story shop--a is already completed (2/2 tasks): nothing to run; no PR yet, and it cannot be opened now: gh is not logged in (You are not logged into any GitHub hosts.") ||
		!strings.Contains(r.Stdout, "log in with `gh auth login`; then `saga-lsp run shop--a` opens it\n") {
		t.Errorf("run while logged out: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	// Logged in: run opens it, ready for review, against the run's base —
	// and no agent runs.
	f.gh("gho_standin\n", "auth", "login", "--with-token")
	r = f.saga(nil, "run", "shop--a")
	pr := f.pullRequests()["story/shop--a"]
	if r.Code != 0 || pr.URL == "" || !strings.Contains(r.Stdout, "story shop--a is already completed (2/2 tasks): opened its pull request "+pr.URL+" (story/shop--a into main), without running the agent again — its worker had none: gh was not logged in when its worker ran") {
		t.Fatalf("run once logged in: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if pr.BaseRefName != "main" || pr.IsDraft || !strings.Contains(pr.Body, "Part a of the shop.") || !strings.Contains(pr.Body, "<!-- saga-lsp graph -->") {
		t.Errorf("the PR: %+v", pr)
	}
	if n := f.agentRuns(); n != agents {
		t.Errorf("the agent ran %d more time(s) to open a PR", n-agents)
	}
	if n := len(runs.Runs(f.sessionDir, runs.KindStory, "shop--a")); n != sessions {
		t.Errorf("a worker was started to open a PR: %d runs, was %d", n, sessions)
	}
	if st := f.storyStatus("shop--a"); st.PR != pr.URL || st.PRState != runs.PROpen || st.NoPR != nil {
		t.Errorf("status after the PR was opened: %+v %+v", st, st.NoPR)
	}
	// And then there is nothing left to do.
	r = f.saga(nil, "run", "shop--a")
	if r.Code != 0 || !strings.Contains(r.Stdout, "story shop--a is already completed (2/2 tasks, PR "+pr.URL+"): nothing to run") || len(f.pullRequests()) != 1 {
		t.Errorf("run with the PR open: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// An epic run with gh logged out: no story gets a PR. Once logged in,
// `run <dependent>` opens its blocker's PR first and its own against the
// blocker's branch — stacked as in any epic run, never against main with
// all three stories' changes.
func TestEpicWithoutPRsGetsStackedPRsLater(t *testing.T) {
	f := newEpicFixture(t, true)
	f.gh("", "auth", "logout")
	if r := f.saga(nil, "run", "shop", "--max-parallel", "2"); r.Code != 0 {
		t.Fatalf("run shop: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := f.follow(); r.Code != 0 {
		t.Fatalf("follow: exit %d\n%s", r.Code, r.Stderr)
	}
	if prs := f.pullRequests(); len(prs) != 0 {
		t.Fatalf("PRs while gh was logged out: %v", prs)
	}
	st := f.status()
	for _, s := range st.Stories {
		if s.State != runs.StatusCompleted || s.NoPR == nil || s.NoPR.Reason != runs.NoPRLoggedOut {
			t.Errorf("status shop: %s %s %+v", s.ID, s.State, s.NoPR)
		}
	}
	if r := f.saga(nil, "status", "shop"); strings.Count(r.Stdout, "no PR yet: gh was not logged in when its worker ran") != 5 {
		t.Errorf("status shop text:\n%s", r.Stdout)
	}

	agents := f.agentRuns()
	f.gh("gho_standin\n", "auth", "login", "--with-token")
	r := f.saga(nil, "run", "shop--b")
	prs := f.pullRequests()
	a, b := prs["story/shop--a"], prs["story/shop--b"]
	if r.Code != 0 || a.URL == "" || b.URL == "" ||
		!strings.Contains(r.Stdout, "opened its pull request "+b.URL+" (story/shop--b into story/shop--a)") ||
		!strings.Contains(r.Stdout, "first, for the branch it is stacked on, story shop--a's: "+a.URL+" (story/shop--a into main)") {
		t.Fatalf("run shop--b: exit %d\n%s%s\n%v", r.Code, r.Stdout, r.Stderr, prs)
	}
	if b.BaseRefName != "story/shop--a" || a.BaseRefName != "main" {
		t.Errorf("bases: b into %q (want story/shop--a), a into %q (want main)", b.BaseRefName, a.BaseRefName)
	}
	if !strings.Contains(b.Body, "Stacked on `story/shop--a`") {
		t.Errorf("b's description:\n%s", b.Body)
	}
	// c, stacked on a too, now that a has its PR; d, on a merge of b and
	// c, against the base (as the runner started it).
	for story, base := range map[string]string{"shop--c": "story/shop--a", "shop--d": "main"} {
		if r := f.saga(nil, "run", story); r.Code != 0 || !strings.Contains(r.Stdout, "opened its pull request") {
			t.Fatalf("run %s: exit %d\n%s%s", story, r.Code, r.Stdout, r.Stderr)
		}
		if got := f.pullRequests()["story/"+story].BaseRefName; got != base {
			t.Errorf("%s's PR into %q, want %q", story, got, base)
		}
	}
	if n := f.agentRuns(); n != agents {
		t.Errorf("the agent ran %d more time(s) to open PRs", n-agents)
	}
	for _, s := range f.status().Stories {
		if want := s.ID != "shop--e"; (s.PR != "") != want || (s.NoPR == nil) != want {
			t.Errorf("status after: %s PR %q %+v", s.ID, s.PR, s.NoPR)
		}
	}
}
