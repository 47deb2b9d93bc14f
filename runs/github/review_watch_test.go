package github_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// Issue 34, through the GitHub Actions backend: the diamond epic (K = 2,
// --after ready) run on GitHub Actions, then watched with --review --watch
// --on github. A writer's "changes requested" on the blocker a's PR is
// dispatched as one review round (the workflow's input review); the job
// pushes a's branch and answers the thread with its token. The watcher,
// seeing the round's run ended, takes in the job's record and a's pushed
// branch: b and c, stacked on a, are base moved and restacked here on a's
// new tip (their checks run, pushed with a lease), d on the merge of b and
// c the poll after. Nothing is dispatched twice.
func TestDiamondReviewWatchOnGitHub(t *testing.T) {
	a := newEpicOnActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	if end := a.runEpic(nil, "--max-parallel", "2"); end.Status != runs.StatusCompleted {
		t.Fatalf("epic.end %+v\n%+v", end, a.epicStatus())
	}
	// alice, a writer, asks for a change on a's PR.
	var gh map[string]any
	if err := json.Unmarshal([]byte(testkit.ReadFile(t, a.state)), &gh); err != nil {
		t.Fatal(err)
	}
	seeded := false
	for _, p := range gh["prs"].([]any) {
		pr := p.(map[string]any)
		if pr["headRefName"] != "story/shop--a" {
			continue
		}
		pr["reviewThreads"] = []any{map[string]any{"id": "PRRT_a", "path": "saga-work/shop--a/a1.md", "line": 1, "comments": []any{
			map[string]any{"id": "PRRC_a", "author": "alice", "body": "Say it in cents.", "updatedAt": "2026-11-28T10:00:00Z"}}}}
		pr["reviews"] = []any{map[string]any{"id": "PRR_a", "author": "alice", "state": "CHANGES_REQUESTED", "body": "", "updatedAt": "2026-11-28T10:00:01Z"}}
		seeded = true
	}
	if !seeded {
		t.Fatalf("no PR of story/shop--a in %s", testkit.ReadFile(t, a.state))
	}
	gh["collaborators"] = map[string]string{"alice": "write"}
	data, _ := json.Marshal(gh)
	if err := os.WriteFile(a.state, data, 0o644); err != nil {
		t.Fatal(err)
	}
	addReview := func(id, author, body, at string) {
		t.Helper()
		var gh map[string]any
		json.Unmarshal([]byte(testkit.ReadFile(t, a.state)), &gh)
		for _, p := range gh["prs"].([]any) {
			if pr := p.(map[string]any); pr["headRefName"] == "story/shop--a" {
				pr["reviews"] = append(pr["reviews"].([]any), map[string]any{"id": id, "author": author, "state": "CHANGES_REQUESTED", "body": body, "updatedAt": at})
			}
		}
		gh["collaborators"].(map[string]any)[author] = "write"
		data, _ := json.Marshal(gh)
		if err := os.WriteFile(a.state, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := a.ghCalls()
	// The round's job waits in the queue until released.
	release := a.holdJobs()
	defer release()
	// The watcher runs in the test's process, as `saga-lsp run shop
	// --review --watch --on github` would: its environment is the
	// command's (the jobs the stand-in runs inherit it).
	for _, kv := range a.env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			t.Setenv(k, v)
		}
	}
	testkit.Git(t, a.root, "fetch", "-q", "origin")
	aTip := testkit.Git(t, a.root, "rev-parse", "origin/story/shop--a")

	// The Actions backend's StartStory, as the command passes it; what it
	// refused (a run of the story is live) is noted apart.
	var started, refused []string
	backend := github.Backend{}
	start := func(ctx context.Context, o control.RunOptions) (*readmodel.Started, error) {
		if !o.Worker.Review {
			t.Errorf("a round of %s started without --review", o.Story)
		}
		s, err := backend.StartStory(ctx, o)
		var running *control.RunningError
		switch {
		case errors.As(err, &running):
			refused = append(refused, o.Story)
		case err == nil:
			started = append(started, o.Story)
		}
		return s, err
	}
	p, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	ticks, polls := make(chan time.Time), make(chan control.WatchPoll)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- control.WatchReview(ctx, control.WatchOptions{Setup: github.NewSetup(a.root, os.Getenv),
			Stories: []string{"shop--a", "shop--b", "shop--c", "shop--d"}, Workspace: workspace.Load(t, a.root), Parser: p,
			GH: a.gh, Tick: ticks, Start: start, Polled: func(wp control.WatchPoll) { polls <- wp }})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	poll := func() control.WatchPoll {
		t.Helper()
		wp := <-polls
		for _, err := range wp.Errs {
			t.Errorf("poll %d: %v", wp.N, err)
		}
		return wp
	}
	first := poll()
	if !slices.Equal(first.Started, []string{"shop--a"}) || first.PRs != 4 {
		t.Fatalf("poll 1 started %v of %d PRs, want shop--a's round", first.Started, first.PRs)
	}
	a.waitRun("shop--a", "queued")
	// bob, a writer too, asks for changes while the round is queued: its
	// dispatch is refused (a run of the story is live), asked again at the
	// next poll; alice's stays started.
	addReview("PRR_b", "bob", "Use integer cents everywhere.", "2026-11-28T10:05:00Z")
	ticks <- time.Now()
	if wp := poll(); len(wp.Started) > 0 || len(wp.Restacked) > 0 || !slices.Equal(wp.Later, []string{"shop--a"}) {
		t.Errorf("poll %d while a's round is queued: started %v, restacked %v, later %v", wp.N, wp.Started, wp.Restacked, wp.Later)
	}
	if rec, _ := runs.ReadRecord(a.root, "shop--a"); rec.Review == nil || !rec.Review.Addressed.Equal(time.Date(2026, 11, 28, 10, 0, 1, 0, time.UTC)) {
		t.Errorf("a's record while its round is queued: %+v", rec.Review)
	}
	// The round's run ends on GitHub; it read bob's review too.
	release()
	if !testkit.WaitUntil(5*time.Minute, func() bool {
		n := 0
		for _, r := range a.runs() {
			if s, _, _ := github.ParseRunName(r.Title); s == "shop--a" && r.Status == "completed" {
				n++
			}
		}
		return n == 2
	}) {
		t.Fatalf("a's round did not end: %+v", a.runs())
	}
	var restacked []string
	for n := 0; n < 4 && len(restacked) < 3; n++ {
		ticks <- time.Now()
		wp := poll()
		if len(wp.Started) > 0 {
			t.Errorf("poll %d started %v again", wp.N, wp.Started)
		}
		restacked = append(restacked, wp.Restacked...)
	}
	slices.Sort(restacked)
	if !slices.Equal(restacked, []string{"shop--b", "shop--c", "shop--d"}) {
		t.Errorf("restacked %v, want b, c and then d", restacked)
	}
	testkit.Git(t, a.root, "fetch", "-q", "origin")
	newA := testkit.Git(t, a.root, "rev-parse", "origin/story/shop--a")
	if newA == aTip {
		t.Fatal("a's round did not move its branch on origin")
	}
	if local := testkit.Git(t, a.root, "rev-parse", "story/shop--a"); local != newA {
		t.Errorf("story/shop--a here is %s, origin's %s", local, newA)
	}
	for _, id := range []string{"shop--b", "shop--c", "shop--d"} {
		b := "story/" + id
		if testkit.Git(t, a.root, "merge-base", newA, b) != newA {
			t.Errorf("%s does not build on a's new tip", b)
		}
		if testkit.Git(t, a.root, "rev-parse", b) != testkit.Git(t, a.root, "rev-parse", "origin/"+b) {
			t.Errorf("%s restacked here is not pushed", b)
		}
	}
	st := a.epicStatus()
	for _, s := range st.Stories {
		if s.BaseMoved != nil || s.State != runs.StatusCompleted {
			t.Errorf("%s after the restacks: %s (%s), base moved %+v", s.ID, s.State, s.Why, s.BaseMoved)
		}
	}
	if !slices.Equal(started, []string{"shop--a"}) || !slices.Equal(refused, []string{"shop--a"}) {
		t.Errorf("rounds started: %v; refused while one ran: %v", started, refused)
	}
	if n := a.dispatches(); n["shop--a"] != 2 || n["shop--b"] != 1 || n["shop--c"] != 1 || n["shop--d"] != 1 {
		t.Errorf("dispatches %v, want a's round once more", n)
	}
	rec, ok := runs.ReadRecord(a.root, "shop--a")
	if !ok || rec.Review == nil || rec.Review.Rounds != 1 || len(rec.Review.Replied) == 0 ||
		!rec.Review.Addressed.Equal(time.Date(2026, 11, 28, 10, 5, 0, 0, time.UTC)) || rec.Review.ChangesRequested != 0 {
		t.Fatalf("a's record here: %v %+v", ok, rec.Review)
	}
	// Its run lines: the first job's run, then the round's, each taken in
	// after the last (docs/landing.md#the-epics-outcome-counted).
	if h := rec.History; len(h) != 2 || h[0].Review || !h[1].Review || !h[0].Started.Before(h[1].Started) {
		t.Errorf("a's run lines here: %+v", rec.History)
	}
	// Each task revision answered once, by the job.
	state := testkit.ReadFile(t, a.state)
	for _, r := range rec.Review.Replied {
		task, _, _ := strings.Cut(r, "@")
		if n := strings.Count(state, "saga-lsp reply task="+task+" "); n != 1 {
			t.Errorf("%d replies to %s", n, task)
		}
	}
	if n := strings.Count(state, "saga-lsp reply task="); n != len(rec.Review.Replied) {
		t.Errorf("%d replies posted, %d recorded: %v", n, len(rec.Review.Replied), rec.Review.Replied)
	}
	calls := a.ghCalls()
	for k, n := range before {
		calls[k] -= n
	}
	t.Logf("gh invocations from the watch on (its polls, the round's dispatch, the job's worker, status): %v", calls)
	text := a.saga(nil, "status", "shop--a")
	if !strings.Contains(text.Stdout, "round 1") || strings.Contains(text.Stdout, "changes requested") {
		t.Errorf("status shop--a:\n%s", text.Stdout)
	}
}
