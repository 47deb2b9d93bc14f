package review_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/review"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/testdata/standin/gh/ghschema"
)

// fixture: a story folder, and the gh stand-in holding its PR's review.
type fixture struct {
	t     *testing.T
	root  string
	gh    string
	state string
	p     *store.Parser
}

const prURL = "https://github.com/acme/shop/pull/7"

func newFixture(t *testing.T, seed map[string]any) *fixture {
	t.Helper()
	root := t.TempDir()
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/cart/story.json": `{"id": "cart", "title": "Cart", "description": "A cart."}` + "\n",
		".saga/stories/cart/build.json": `{"id": "build", "subject": "Build", "description": "Build it.", "status": "completed", "blockedBy": []}` + "\n",
	})
	f := &fixture{t: t, root: root, gh: testkit.Build(t, "./testdata/standin/gh"), state: filepath.Join(t.TempDir(), "gh.json")}
	t.Setenv("GH_STANDIN_STATE", f.state)
	t.Setenv("GH_STANDIN_REPO", "acme/shop")
	p, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	f.p = p
	f.seed(seed)
	return f
}

// seed writes the stand-in's state: PR 7 with the review given.
func (f *fixture) seed(pr map[string]any) {
	f.t.Helper()
	base := map[string]any{"number": 7, "url": prURL, "headRefName": "story/cart", "baseRefName": "main", "title": "cart",
		"body": "", "isDraft": false, "state": "OPEN", "createdAt": "2026-11-01T00:00:00Z"}
	for k, v := range pr {
		base[k] = v
	}
	st := map[string]any{"prs": []any{base}, "collaborators": map[string]string{"alice": "write", "carol": "maintain", "dave": "triage", "erin": "admin"}}
	data, err := json.Marshal(st)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(f.state, data, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// round reads the PR, counts it and applies it to the story, as a round does.
func (f *fixture) round() (review.Round, review.Changes) {
	f.t.Helper()
	ctx := context.Background()
	repo, err := review.RepoOfURL(prURL)
	if err != nil {
		f.t.Fatal(err)
	}
	pr, err := review.Read(ctx, f.gh, f.root, repo)
	if err != nil {
		f.t.Fatal(err)
	}
	rd, err := review.Count(ctx, pr, review.NewWriters(f.gh, f.root, repo))
	if err != nil {
		f.t.Fatal(err)
	}
	s, err := f.p.LoadStory(f.root, "cart")
	if err != nil {
		f.t.Fatal(err)
	}
	ch, err := review.Apply(ctx, f.p, f.root, "cart", s.Tasks, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	return rd, ch
}

func (f *fixture) tasks() map[string]*store.Task {
	f.t.Helper()
	s, err := f.p.LoadStory(f.root, "cart")
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]*store.Task{}
	for _, t := range s.Tasks {
		if t.Review != nil {
			out[t.Review.Key] = t
		}
	}
	return out
}

func c(id, author, body, at string) map[string]any {
	return map[string]any{"id": id, "author": author, "body": body, "updatedAt": at}
}

func lifeSeed() map[string]any {
	bot := c("PRRC_bot", "dependabot[bot]", "bump lodash", "2026-11-02T00:00:04Z")
	bot["authorType"] = "Bot"
	hidden := c("PRRC_hidden", "alice", "off-topic", "2026-11-02T00:00:06Z")
	hidden["minimized"] = true
	return map[string]any{
		"reviewThreads": []any{
			map[string]any{"id": "PRRT_rename", "path": "cart.go", "line": 3, "comments": []any{
				c("PRRC_a1", "alice", "Rename foo to total.\ncheck: go test ./...", "2026-11-02T00:00:01Z"),
				c("PRRC_b1", "bob", "+1, and also delete the tests", "2026-11-02T00:00:02Z"), // bob cannot write
			}},
			map[string]any{"id": "PRRT_why", "path": "cart.go", "line": 9, "comments": []any{
				c("PRRC_a2", "alice", "Why a map here?", "2026-11-02T00:00:03Z"),
			}},
			map[string]any{"id": "PRRT_member", "path": "cart.go", "line": 12, "comments": []any{
				c("PRRC_d1", "dave", "Use a slice.", "2026-11-02T00:00:03Z"), // a triager: no write
			}},
			map[string]any{"id": "PRRT_bot", "path": "go.mod", "line": 1, "comments": []any{bot}},
			map[string]any{"id": "PRRT_done", "path": "cart.go", "line": 2, "resolved": true, "comments": []any{
				c("PRRC_a3", "alice", "Typo.", "2026-11-02T00:00:05Z"),
			}},
			map[string]any{"id": "PRRT_hidden", "path": "cart.go", "line": 4, "comments": []any{hidden}},
		},
		"reviews": []any{
			map[string]any{"id": "PRR_carol", "author": "carol", "state": "CHANGES_REQUESTED", "body": "Handle an empty cart.", "updatedAt": "2026-11-02T00:00:07Z"},
			map[string]any{"id": "PRR_lgtm", "author": "erin", "state": "APPROVED", "body": "LGTM", "updatedAt": "2026-11-02T00:00:08Z"},
		},
		"comments": []any{
			c("IC_ours", "alice", review.ReplyMarker+" task=review-x -->\nDone.", "2026-11-02T00:00:09Z"),
		},
	}
}

// Who counts is decided per comment: writers' threads and review requests
// become tasks; a non-writer's reply inside a writer's thread, a triager,
// a bot, a minimized comment, a resolved thread, an approval and
// saga-lsp's own reply do not.
func TestWritersThreadsBecomeTasks(t *testing.T) {
	f := newFixture(t, lifeSeed())
	rd, ch := f.round()
	if rd.Ignored != (runs.ReviewIgnored{Bots: 1, NonWriters: 2, Hidden: 1}) {
		t.Errorf("ignored: %+v, want 1 bot, 2 non-writers (bob's reply, dave), 1 minimized", rd.Ignored)
	}
	if len(ch.Created) != 3 || ch.Left != 0 {
		t.Fatalf("created %v (left %d), want 3: the rename thread, the question, carol's review", ch.Created, ch.Left)
	}
	tasks := f.tasks()
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range tasks {
			if !yield(k) {
				return
			}
		}
	})
	if !slices.Equal(keys, []string{"PRRT_rename", "PRRT_why", "PRR_carol"}) {
		t.Fatalf("review tasks keyed %v", keys)
	}
	rename := tasks["PRRT_rename"]
	if rename.Status != store.StatusPending || rename.ID != review.TaskID("PRRT_rename") {
		t.Errorf("rename task: %s %s", rename.ID, rename.Status)
	}
	if strings.Contains(rename.Description, "delete the tests") || !strings.Contains(rename.Description, "> Rename foo to total.") {
		t.Errorf("the rename task quotes what it should not, or not what it should:\n%s", rename.Description)
	}
	if len(rename.Checks) != 1 || rename.Checks[0].Command != "go test ./..." {
		t.Errorf("the writer's check: %+v", rename.Checks)
	}
	if r := rename.Review; r.Kind != review.KindThread || r.Path != "cart.go" || r.Line != 3 || !slices.Equal(r.Authors, []string{"alice"}) || r.UpdatedAt != "2026-11-02T00:00:01Z" {
		t.Errorf("rename's source: %+v", r)
	}
	if tasks["PRR_carol"].Review.Kind != review.KindReview || !strings.Contains(tasks["PRR_carol"].Description, "carol wrote") {
		t.Errorf("carol's review task: %+v\n%s", tasks["PRR_carol"].Review, tasks["PRR_carol"].Description)
	}
	// Each file is schema-valid by saga-lsp's own rules.
	for _, task := range tasks {
		for _, d := range task.File.Local {
			t.Errorf("%s: %s %s", task.File.Rel, d.Code, d.Message)
		}
	}
}

// One thread is one task however often it is read.
func TestReplayedReviewMakesNothingNew(t *testing.T) {
	f := newFixture(t, lifeSeed())
	f.round()
	before := f.tasks()
	for i := range 20 {
		if _, ch := f.round(); len(ch.Created)+len(ch.Revised)+len(ch.Cancelled) != 0 {
			t.Fatalf("replay %d changed tasks: %+v", i, ch)
		}
	}
	if after := f.tasks(); len(after) != len(before) {
		t.Errorf("%d review tasks after 20 replays, %d before", len(after), len(before))
	}
}

// An edited comment is a new revision (pending again, its new words); a
// deleted one cancels a task not yet done; a completed task stays.
func TestRevisionsAndCancellations(t *testing.T) {
	f := newFixture(t, lifeSeed())
	f.round()
	ctx := context.Background()
	for _, key := range []string{"PRRT_rename", "PRR_carol"} {
		if _, err := store.SetTaskStatus(ctx, f.root, "cart", review.TaskID(key), store.StatusCompleted); err != nil {
			t.Fatal(err)
		}
	}
	seed := lifeSeed()
	threads := seed["reviewThreads"].([]any)
	threads[0].(map[string]any)["comments"].([]any)[0] = c("PRRC_a1", "alice", "Rename foo to grandTotal.", "2026-11-03T00:00:00Z")
	threads[1].(map[string]any)["comments"].([]any)[0].(map[string]any)["deleted"] = true
	seed["reviews"].([]any)[0].(map[string]any)["state"] = "DISMISSED"
	f.seed(seed)
	_, ch := f.round()
	if !slices.Equal(ch.Revised, []string{store.TaskFileRel("cart", review.TaskID("PRRT_rename"))}) ||
		!slices.Equal(ch.Cancelled, []string{store.TaskFileRel("cart", review.TaskID("PRRT_why"))}) || len(ch.Created) != 0 {
		t.Fatalf("changes: %+v", ch)
	}
	tasks := f.tasks()
	if r := tasks["PRRT_rename"]; r.Status != store.StatusPending || !strings.Contains(r.Description, "grandTotal") || r.Review.UpdatedAt != "2026-11-03T00:00:00Z" {
		t.Errorf("the revised task: %s %+v\n%s", r.Status, r.Review, r.Description)
	}
	if _, ok := tasks["PRRT_why"]; ok {
		t.Errorf("the deleted question's task is still there")
	}
	if r, ok := tasks["PRR_carol"]; !ok || r.Status != store.StatusCompleted {
		t.Errorf("the dismissed review's completed task must stay: %+v", r)
	}
}

// A round writes at most MaxTasks tasks and MaxText bytes of reviewers'
// text; the rest waits, counted.
func TestRoundBounds(t *testing.T) {
	var threads []any
	for i := range review.MaxTasks + 2 {
		threads = append(threads, map[string]any{"id": fmt.Sprintf("PRRT_%02d", i), "path": "a.go", "line": i + 1, "comments": []any{
			c(fmt.Sprintf("PRRC_%02d", i), "alice", fmt.Sprintf("Fix %d.", i), fmt.Sprintf("2026-11-02T00:00:%02dZ", i)),
		}})
	}
	f := newFixture(t, map[string]any{"reviewThreads": threads})
	if _, ch := f.round(); len(ch.Created) != review.MaxTasks || ch.Left != 2 {
		t.Fatalf("created %d, left %d", len(ch.Created), ch.Left)
	}
	if _, ch := f.round(); len(ch.Created) != 2 || ch.Left != 0 {
		t.Fatalf("the next round: created %d, left %d", len(ch.Created), ch.Left)
	}

	huge := strings.Repeat("é", 1<<19) // 1 MiB of two-byte runes
	f = newFixture(t, map[string]any{"reviewThreads": []any{
		map[string]any{"id": "PRRT_huge", "path": "a.go", "line": 1, "comments": []any{c("PRRC_huge", "alice", huge, "2026-11-02T00:00:00Z")}},
		map[string]any{"id": "PRRT_next", "path": "a.go", "line": 2, "comments": []any{c("PRRC_next", "alice", "Also this.", "2026-11-02T00:00:01Z")}},
	}})
	_, ch := f.round()
	if len(ch.Created) != 1 || ch.Left != 1 {
		t.Fatalf("a 1 MiB comment: created %v, left %d (the budget is spent by it)", ch.Created, ch.Left)
	}
	d := f.tasks()["PRRT_huge"].Description
	if len(d) > review.MaxText+2048 || !strings.Contains(d, "bytes more: see") {
		t.Errorf("the huge comment's task holds %d bytes", len(d))
	}
}

// What saga-lsp asks GitHub is a query GitHub accepts, and the stand-in's
// answer has exactly its shape and types (GitHub's published schema,
// vendored: ghschema).
func TestReviewQueryAgainstGitHubSchema(t *testing.T) {
	s, err := ghschema.Load()
	if err != nil {
		t.Fatal(err)
	}
	q := review.PRQueryForTest
	doc, _, err := ghschema.Query(s, q, map[string]any{"owner": "acme", "name": "shop", "number": 7})
	if err != nil {
		t.Fatalf("GitHub would refuse the review query: %v", err)
	}
	f := newFixture(t, lifeSeed())
	r := testkit.Run(t, f.root, nil, "", f.gh, "api", "graphql", "-f", "query="+q, "-F", "owner=acme", "-F", "name=shop", "-F", "number=7")
	if r.Code != 0 {
		t.Fatalf("gh api graphql: exit %d\n%s", r.Code, r.Stderr)
	}
	if err := ghschema.CheckAnswer(s, doc, []byte(r.Stdout)); err != nil {
		t.Errorf("the stand-in's answer is not what GitHub would send: %v", err)
	}
	// And a field GitHub has not is refused as GitHub refuses it.
	bad := strings.Replace(q, "isOutdated", "isStale", 1)
	if r := testkit.Run(t, f.root, nil, "", f.gh, "api", "graphql", "-f", "query="+bad, "-F", "owner=acme", "-F", "name=shop", "-F", "number=7"); r.Code != 1 || !strings.Contains(r.Stderr, `Cannot query field "isStale"`) {
		t.Errorf("an unknown field: exit %d, %s", r.Code, r.Stderr)
	}
}

// A missing PR, or GitHub failing, stops the round with the reason.
func TestReadErrors(t *testing.T) {
	f := newFixture(t, nil)
	_, err := review.Read(context.Background(), f.gh, f.root, review.Repo{Owner: "acme", Name: "shop", Number: 99})
	if err == nil || !strings.Contains(err.Error(), "Could not resolve to a PullRequest with the number of 99") {
		t.Errorf("a missing PR: %v", err)
	}
	for _, bad := range []string{"https://github.com/acme/shop/issues/7", "not a url", "https://github.com/acme/shop/pull/x"} {
		if _, err := review.RepoOfURL(bad); err == nil {
			t.Errorf("RepoOfURL(%q) accepted", bad)
		}
	}
}
