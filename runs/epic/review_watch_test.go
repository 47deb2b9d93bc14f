//go:build unix

package epic_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// Issue 34: the diamond epic (K = 2, --after ready) watched with
// --review --watch. A writer's "changes requested" on the blocker a's PR
// starts one review round (a's worker --review); its new commits leave b
// and c, stacked on a, base moved: the next poll restacks them on a's new
// tip (their checks run again), and d, built on the merge of b and c, the
// poll after. Nothing is started twice.
func TestDiamondReviewWatchRestacks(t *testing.T) {
	f := newEpicFixture(t, true)
	if r := f.saga(nil, "run", "shop", "--max-parallel", "2"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if fr := f.follow(); fr.Code != 0 {
		t.Fatalf("follow: exit %d\n%s", fr.Code, fr.Stderr)
	}
	// alice, a writer, asks for a change on a's PR.
	state := filepath.Join(f.base, "gh.json")
	var gh map[string]any
	data, _ := os.ReadFile(state)
	if err := json.Unmarshal(data, &gh); err != nil {
		t.Fatal(err)
	}
	for _, p := range gh["prs"].([]any) {
		pr := p.(map[string]any)
		if pr["headRefName"] != "story/shop--a" {
			continue
		}
		pr["reviewThreads"] = []any{map[string]any{"id": "PRRT_a", "path": "saga-work/shop--a/a1.md", "line": 1, "comments": []any{
			map[string]any{"id": "PRRC_a", "author": "alice", "body": "Say it in cents.", "updatedAt": "2026-11-28T10:00:00Z"}}}}
		pr["reviews"] = []any{map[string]any{"id": "PRR_a", "author": "alice", "state": "CHANGES_REQUESTED", "body": "", "updatedAt": "2026-11-28T10:00:01Z"}}
	}
	gh["collaborators"] = map[string]string{"alice": "write"}
	data, _ = json.Marshal(gh)
	if err := os.WriteFile(state, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, kv := range f.env {
		if k, v, ok := strings.Cut(kv, "="); ok && (strings.HasPrefix(k, "GH_STANDIN_") || k == "SAGA_GH") {
			t.Setenv(k, v)
		}
	}
	getenv := func(k string) string {
		for i := len(f.env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(f.env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	aTip := testkit.Git(t, f.root, "rev-parse", "story/shop--a")

	// A round runs to its end in the test's own process: the worker, as
	// the tmux session would run it.
	var started []string
	start := func(ctx context.Context, o control.RunOptions) (*readmodel.Started, error) {
		started = append(started, o.Story)
		if !o.Worker.Review {
			t.Errorf("a round of %s started without --review", o.Story)
		}
		r := f.saga(nil, "worker", o.Story, "--review")
		if r.Code != 0 {
			t.Errorf("the round of %s: exit %d\n%s%s", o.Story, r.Code, r.Stdout, r.Stderr)
		}
		return &readmodel.Started{Story: o.Story}, nil
	}
	p, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	ticks, polls := make(chan time.Time), make(chan control.WatchPoll)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- control.WatchReview(ctx, control.WatchOptions{Setup: control.Setup{Root: f.root, SessionDir: f.sessionDir, Env: getenv},
			Stories: []string{"shop--a", "shop--b", "shop--c", "shop--d", "shop--e"}, Workspace: workspace.Load(t, f.root), Parser: p,
			GH: getenv("SAGA_GH"), Tick: ticks, Start: start, Polled: func(wp control.WatchPoll) { polls <- wp }})
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
	if !slices.Equal(first.Started, []string{"shop--a"}) || first.PRs != 5 {
		t.Fatalf("poll 1 started %v of %d PRs, want shop--a's round", first.Started, first.PRs)
	}
	if testkit.Git(t, f.root, "rev-parse", "story/shop--a") == aTip {
		t.Fatal("a's round did not move its branch")
	}
	st := f.status()
	for _, id := range []string{"shop--b", "shop--c"} {
		if s := storyState(st, id); s.BaseMoved == nil || s.BaseMoved.Base != "story/shop--a" {
			t.Errorf("%s after a's round: base moved %+v", id, s.BaseMoved)
		}
	}
	var restacked []string
	for n := 0; n < 3 && len(restacked) < 3; n++ {
		ticks <- time.Now()
		wp := poll()
		if len(wp.Started) > 0 {
			t.Errorf("poll %d started %v again", wp.N, wp.Started)
		}
		restacked = append(restacked, wp.Restacked...)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	slices.Sort(restacked)
	if !slices.Equal(restacked, []string{"shop--b", "shop--c", "shop--d"}) {
		t.Errorf("restacked %v, want b, c and then d", restacked)
	}
	newA := testkit.Git(t, f.root, "rev-parse", "story/shop--a")
	for _, id := range []string{"shop--b", "shop--c", "shop--d"} {
		if testkit.Git(t, f.root, "merge-base", newA, "story/"+id) != newA {
			t.Errorf("story/%s does not build on a's new tip", id)
		}
	}
	st = f.status()
	for _, s := range st.Stories {
		if s.BaseMoved != nil || s.State != runs.StatusCompleted {
			t.Errorf("%s after the restacks: %s, base moved %+v", s.ID, s.State, s.BaseMoved)
		}
	}
	if !slices.Equal(started, []string{"shop--a"}) {
		t.Errorf("rounds started: %v", started)
	}
}
