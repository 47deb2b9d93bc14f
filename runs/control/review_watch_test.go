package control_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/review"
)

// watchFixture: two stories with open PRs (#7, #8) in the gh stand-in, a
// watcher whose polls the test paces, and its round starts observed.
type watchFixture struct {
	t          *testing.T
	root       string
	state, log string
	prs        map[int][]any // each PR's reviews
	tick       chan time.Time
	polls      chan control.WatchPoll
	starts     chan control.RunOptions
	refuse     chan error // what the next start answers (nil: started)
	stop       func()
	done       chan error
}

func newWatchFixture(t *testing.T) *watchFixture {
	t.Helper()
	root := t.TempDir()
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/cart/story.json": `{"id": "cart", "title": "Cart", "description": ""}` + "\n",
		".saga/stories/pay/story.json":  `{"id": "pay", "title": "Pay", "description": ""}` + "\n",
		".saga/stories/new/story.json":  `{"id": "new", "title": "New", "description": ""}` + "\n",
	})
	testkit.InitRepo(t, root)
	for story, n := range map[string]string{"cart": "7", "pay": "8"} {
		if err := runs.WriteRecord(root, runs.Record{Story: story, Status: runs.StatusCompleted, Branch: runs.StoryBranch(story),
			PR: "https://github.com/acme/shop/pull/" + n, PRState: runs.PROpen}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	f := &watchFixture{t: t, root: root, state: filepath.Join(dir, "gh.json"), log: filepath.Join(dir, "gh.log"),
		prs: map[int][]any{7: {}, 8: {}}, tick: make(chan time.Time), polls: make(chan control.WatchPoll, 1),
		starts: make(chan control.RunOptions, 4), refuse: make(chan error, 4), done: make(chan error, 1)}
	t.Setenv("GH_STANDIN_STATE", f.state)
	t.Setenv("GH_STANDIN_REPO", "acme/shop")
	t.Setenv("GH_STANDIN_LOG", f.log)
	f.seed()
	ctx, cancel := context.WithCancel(context.Background())
	gh := testkit.Build(t, "./testdata/standin/gh")
	go func() {
		f.done <- control.WatchReview(ctx, control.WatchOptions{Setup: control.NewSetup(root, os.Getenv), Stories: []string{"cart", "pay", "new"},
			GH: gh, Tick: f.tick, Polled: func(p control.WatchPoll) { f.polls <- p },
			Start: func(_ context.Context, o control.RunOptions) (*readmodel.Started, error) {
				var err error
				select {
				case err = <-f.refuse:
				default:
				}
				if err == nil {
					f.starts <- o
					return &readmodel.Started{Story: o.Story}, nil
				}
				return nil, err
			}})
	}()
	f.stop = func() {
		cancel()
		if err := <-f.done; err != nil {
			t.Errorf("WatchReview: %v", err)
		}
	}
	t.Cleanup(func() {
		if f.stop != nil {
			f.stop()
		}
	})
	return f
}

func (f *watchFixture) seed() {
	f.t.Helper()
	var prs []any
	for _, n := range []int{7, 8} {
		prs = append(prs, map[string]any{"number": n, "url": "https://github.com/acme/shop/pull/" + strconv.Itoa(n),
			"headRefName": "story/x", "baseRefName": "main", "title": "x", "body": "", "isDraft": false, "state": "OPEN",
			"createdAt": "2026-11-01T00:00:00Z", "reviews": f.prs[n]})
	}
	data, err := json.Marshal(map[string]any{"prs": prs, "collaborators": map[string]string{"alice": "write", "carol": "maintain", "dave": "triage"}})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(f.state, data, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// next lets the watcher poll once more, and returns what the poll did.
func (f *watchFixture) next() control.WatchPoll {
	f.t.Helper()
	f.tick <- time.Now()
	return <-f.polls
}

// queries counts the GraphQL queries gh was asked so far.
func (f *watchFixture) queries() int { return f.calls("graphql") }

// calls counts the gh api calls of endpoint so far.
func (f *watchFixture) calls(endpoint string) int {
	f.t.Helper()
	fh, err := os.Open(f.log)
	if err != nil {
		f.t.Fatal(err)
	}
	defer fh.Close()
	n := 0
	for sc := bufio.NewScanner(fh); sc.Scan(); {
		var inv struct{ Args []string }
		json.Unmarshal(sc.Bytes(), &inv)
		if len(inv.Args) > 1 && inv.Args[0] == "api" && inv.Args[1] == endpoint {
			n++
		}
	}
	return n
}

func (f *watchFixture) review(story string) runs.ReviewRecord {
	f.t.Helper()
	rec, ok := runs.ReadRecord(f.root, story)
	if !ok || rec.Review == nil {
		f.t.Fatalf("story %s: no review recorded (%+v)", story, rec)
	}
	return *rec.Review
}

func rv(id, author, state, body, at string) map[string]any {
	return map[string]any{"id": id, "author": author, "state": state, "body": body, "updatedAt": at}
}

// A watched epic's pull requests are read in one query a poll; a writer's
// "changes requested" starts one round of its story, once; a
// non-writer's, a comment, an answered review start nothing; a round
// that cannot start now (its worker runs) starts at a later poll.
func TestWatchReview(t *testing.T) {
	f := newWatchFixture(t)
	first := <-f.polls // at the start, before any tick
	if first.PRs != 2 || len(first.Started) != 0 || len(first.Errs) != 0 || f.queries() != 1 {
		t.Fatalf("first poll %+v, %d queries", first, f.queries())
	}

	// A triager's changes request and a writer's comment: nothing starts;
	// the comment is counted for the faces.
	f.prs[7] = []any{rv("PRR_dave", "dave", "CHANGES_REQUESTED", "Use a slice.", "2026-11-02T00:00:01Z"),
		rv("PRR_note", "alice", "COMMENTED", "Why a map?", "2026-11-02T00:00:02Z")}
	f.seed()
	p := f.next()
	if len(p.Started) != 0 || len(p.Errs) != 0 || f.queries() != 2 {
		t.Fatalf("poll %+v, %d queries", p, f.queries())
	}
	if r := f.review("cart"); r.Requests != 1 || r.ChangesRequested != 0 || r.Ignored.NonWriters != 1 || r.ReadAt.IsZero() {
		t.Errorf("cart's review read: %+v", r)
	}

	// A writer asks for changes on #8: one round of pay, as --review.
	f.prs[8] = []any{rv("PRR_pay", "alice", "CHANGES_REQUESTED", "", "2026-11-02T00:00:03Z")}
	f.seed()
	alice := "repos/acme/shop/collaborators/alice/permission"
	before := f.calls(alice)
	p = f.next()
	if n := f.calls(alice) - before; n != 1 {
		t.Errorf("alice's permission asked %d times in one poll of two PRs she reviewed", n)
	}
	if !slices.Equal(p.Started, []string{"pay"}) || len(p.Errs) != 0 {
		t.Fatalf("poll %+v", p)
	}
	if o := <-f.starts; o.Story != "pay" || !o.Worker.Review || o.Root != f.root {
		t.Errorf("started %+v", o)
	}
	at, _ := time.Parse(time.RFC3339, "2026-11-02T00:00:03Z")
	if r := f.review("pay"); r.ChangesRequested != 1 || !r.Addressed.Equal(at) {
		t.Errorf("pay's review read: %+v", r)
	}
	// The same review, polled again: nothing.
	for range 2 {
		if p = f.next(); len(p.Started) != 0 || len(p.Later) != 0 {
			t.Fatalf("the same review polled again: %+v", p)
		}
	}

	// A changes request a round already answered (run --review: its reply
	// recorded) starts nothing either.
	f.prs[8] = append(f.prs[8], rv("PRR_carol", "carol", "CHANGES_REQUESTED", "Handle errors.", "2026-11-02T00:00:04Z"))
	f.seed()
	if err := runs.UpdateReview(f.root, "pay", func(r *runs.ReviewRecord) {
		r.Replied = append(r.Replied, review.TaskID("PRR_carol")+"@2026-11-02T00:00:04Z")
	}); err != nil {
		t.Fatal(err)
	}
	if p = f.next(); len(p.Started) != 0 {
		t.Fatalf("an answered review: %+v", p)
	}

	// A writer asks for changes on #7 while cart's worker runs: later,
	// then started once.
	f.prs[7] = append(f.prs[7], rv("PRR_cart", "carol", "CHANGES_REQUESTED", "", "2026-11-02T00:00:05Z"))
	f.seed()
	f.refuse <- &control.RunningError{Story: "cart", PID: 1}
	if p = f.next(); len(p.Started) != 0 || !slices.Equal(p.Later, []string{"cart"}) {
		t.Fatalf("while cart's worker runs: %+v", p)
	}
	if r := f.review("cart"); !r.Addressed.IsZero() || r.ChangesRequested != 1 {
		t.Errorf("a round that did not start is not addressed: %+v", r)
	}
	if p = f.next(); !slices.Equal(p.Started, []string{"cart"}) {
		t.Fatalf("once cart's worker ended: %+v", p)
	}
	if o := <-f.starts; o.Story != "cart" {
		t.Errorf("started %+v", o)
	}
	// An approval by the same writer after it: nothing, and nothing again.
	f.prs[7] = append(f.prs[7], rv("PRR_ok", "carol", "APPROVED", "", "2026-11-02T00:00:06Z"))
	f.seed()
	if p = f.next(); len(p.Started) != 0 {
		t.Fatalf("after the approval: %+v", p)
	}
	if r := f.review("cart"); r.ChangesRequested != 0 {
		t.Errorf("an approved PR's changes requested: %+v", r)
	}
	if n, polls := f.queries(), 9; n != polls {
		t.Errorf("%d GraphQL queries in %d polls", n, polls)
	}
	f.stop()
	f.stop = nil
	if len(f.starts) != 0 {
		t.Errorf("a round started twice: %+v", <-f.starts)
	}
}
