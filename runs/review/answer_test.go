package review_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/review"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/testdata/standin/gh/ghrest"
	"github.com/saga-ai/saga-lsp/testdata/standin/gh/ghschema"
)

const commit = "0123456789abcdef0123456789abcdef01234567"

var repo7 = review.Repo{Owner: "acme", Name: "shop", Number: 7}

// state reads the stand-in's state (what GitHub holds now).
func (f *fixture) github() map[string]any {
	f.t.Helper()
	data, err := os.ReadFile(f.state)
	if err != nil {
		f.t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(data, &st); err != nil {
		f.t.Fatal(err)
	}
	return st
}

// edit changes the stand-in's state.
func (f *fixture) edit(fn func(st map[string]any)) {
	f.t.Helper()
	st := f.github()
	fn(st)
	data, err := json.Marshal(st)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(f.state, data, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// thread is the state's thread id, as GitHub holds it.
func (f *fixture) thread(id string) map[string]any {
	f.t.Helper()
	for _, t := range f.github()["prs"].([]any)[0].(map[string]any)["reviewThreads"].([]any) {
		if t := t.(map[string]any); t["id"] == id {
			return t
		}
	}
	f.t.Fatalf("no thread %s", id)
	return nil
}

// ours are the comments saga-lsp posted in a list of comments.
func ours(list any) []map[string]any {
	var out []map[string]any
	l, _ := list.([]any)
	for _, c := range l {
		if c := c.(map[string]any); strings.HasPrefix(c["body"].(string), review.ReplyMarker) && c["author"] == "saga-standin" {
			out = append(out, c)
		}
	}
	return out
}

// outcomes: the rename done, the question answered, carol's review not done.
func (f *fixture) outcomes() []review.Outcome {
	f.t.Helper()
	tasks := f.tasks()
	out := func(key, result string) review.Outcome {
		t := tasks[key]
		if t == nil {
			f.t.Fatalf("no task for %s", key)
		}
		return review.Outcome{TaskID: t.ID, Source: t.Review, Result: result}
	}
	done := out("PRRT_rename", review.ResultDone)
	done.Commit, done.Files, done.Checks = commit, []string{"cart.go"}, []string{"go test ./..."}
	done.Answer = "Renamed foo to total."
	answered := out("PRRT_why", review.ResultAnswered)
	answered.Answer = "Because the cart is read once."
	notDone := out("PRR_carol", review.ResultNotDone)
	notDone.Why = "the check `go test ./...` failed"
	return []review.Outcome{done, answered, notDone}
}

func (f *fixture) post(outs []review.Outcome) (review.Posted, error) {
	f.t.Helper()
	pr, err := review.Read(context.Background(), f.gh, f.root, repo7)
	if err != nil {
		f.t.Fatal(err)
	}
	return review.Post(context.Background(), f.gh, f.root, repo7, pr, outs)
}

// Each task revision is answered once however often Post runs; a thread
// done is resolved, a question answered and a request not done stay open,
// a review is answered on the PR naming it.
func TestRepliesOncePerRevision(t *testing.T) {
	f := newFixture(t, lifeSeed())
	f.round()
	outs := f.outcomes()
	first, err := f.post(outs)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Replied) != 3 || len(first.Present) != 0 || !slices.Equal(first.Resolved, []string{"PRRT_rename"}) {
		t.Fatalf("first post: %+v", first)
	}
	for i := range 20 {
		p, err := f.post(outs)
		if err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
		if len(p.Replied)+len(p.Resolved) != 0 || len(p.Present) != 3 || !slices.Equal(p.Answered(), first.Answered()) {
			t.Fatalf("post %d did something again: %+v", i, p)
		}
	}
	rename, why := f.thread("PRRT_rename"), f.thread("PRRT_why")
	if r := ours(rename["comments"]); len(r) != 1 || rename["resolved"] != true ||
		!strings.Contains(r[0]["body"].(string), commit) || !strings.Contains(r[0]["body"].(string), "`cart.go`") || !strings.Contains(r[0]["body"].(string), "`go test ./...`") {
		t.Errorf("the done thread: resolved %v, replies %v", rename["resolved"], r)
	}
	if r := ours(why["comments"]); len(r) != 1 || why["resolved"] == true || !strings.Contains(r[0]["body"].(string), "> Because the cart is read once.") {
		t.Errorf("the question: resolved %v, replies %v", why["resolved"], r)
	}
	comments := ours(f.github()["prs"].([]any)[0].(map[string]any)["comments"])
	if len(comments) != 1 || !strings.Contains(comments[0]["body"].(string), "In answer to "+prURL+"#pullrequestreview-PRR_carol") ||
		!strings.Contains(comments[0]["body"].(string), "Not done") {
		t.Errorf("the review's answer on the PR: %v", comments)
	}
	// saga-lsp's replies are never requests: the next round writes nothing
	// (the tasks done and answered completed, as the worker leaves them).
	for _, o := range outs[:2] {
		if _, err := store.SetTaskStatus(context.Background(), f.root, "cart", o.TaskID, store.StatusCompleted); err != nil {
			t.Fatal(err)
		}
	}
	if _, ch := f.round(); len(ch.Created)+len(ch.Revised)+len(ch.Cancelled) != 0 {
		t.Errorf("the replies made review tasks: %+v", ch)
	}
	// A new revision of a task is a new reply.
	again := outs[1]
	src := *again.Source
	src.UpdatedAt = "2026-11-04T00:00:00Z"
	again.Source = &src
	if p, err := f.post([]review.Outcome{again}); err != nil || len(p.Replied) != 1 {
		t.Errorf("a new revision: %+v %v", p, err)
	}
}

// The agent's words are quoted at most MaxQuote bytes, cut at a character
// boundary, and the cut is said; the reply GitHub holds is that body.
func TestReplyBounded(t *testing.T) {
	huge := strings.Repeat("é", 1<<19) // 1 MiB
	o := review.Outcome{TaskID: "review-0123456789", Result: review.ResultAnswered, Answer: huge,
		Source: &store.ReviewSource{Key: "PRRT_why", Kind: review.KindThread, UpdatedAt: "2026-11-02T00:00:02Z"}}
	body := review.ReplyBody(o)
	if len(body) > review.MaxQuote+1024 || !utf8.ValidString(body) || !strings.Contains(body, "bytes more not shown") {
		t.Errorf("a 1 MiB answer: %d bytes, valid %v\n%.300s", len(body), utf8.ValidString(body), body)
	}
	if !strings.HasPrefix(body, review.ReplyMarker+" task=review-0123456789 rev=2026-11-02T00:00:02Z -->\n") {
		t.Errorf("the hidden line: %.120q", body)
	}
}

// An answer beginning with /merge and holding @mentions: no line of the
// reply begins with "/", and every mention is inside the code block of the
// quote (GitHub notifies no mention inside code); a backtick fence in the
// answer cannot close it.
func TestReplyNeutralised(t *testing.T) {
	f := newFixture(t, lifeSeed())
	f.round()
	o := f.outcomes()[1]
	o.Answer = "/merge\n@someone please look, cc @acme/owners\n````\n/close\n````\n@late"
	if _, err := f.post([]review.Outcome{o}); err != nil {
		t.Fatal(err)
	}
	r := ours(f.thread("PRRT_why")["comments"])
	if len(r) != 1 {
		t.Fatalf("replies: %v", r)
	}
	body := r[0]["body"].(string)
	fence := ""
	inside := false
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "/") {
			t.Errorf("a line begins with a command: %q", line)
		}
		q, quoted := strings.CutPrefix(line, "> ")
		switch {
		case quoted && !inside && strings.HasPrefix(q, "`````"):
			fence, inside = strings.TrimSuffix(q, "text"), true
		case quoted && inside && q == fence:
			inside = false
		case strings.Contains(line, "@") && !(quoted && inside):
			t.Errorf("a mention outside the quote's code block: %q", line)
		}
	}
	if fence == "" || inside {
		t.Errorf("the quote's fence (%q) is not longer than the answer's ````, or not closed:\n%s", fence, body)
	}
}

// GitHub's refusals — a rate limit, a deleted thread — are errors naming
// the thread; after recovery each reply is posted once, and a reply made
// before a refusal is never made again.
func TestRefusalsAndRecovery(t *testing.T) {
	f := newFixture(t, lifeSeed())
	f.round()
	outs := f.outcomes()[:1] // the rename, done
	// The reads (the round's, Post's) and the reply pass; resolving is
	// refused.
	f.edit(func(st map[string]any) { st["rateLimitAfter"], st["rateLimited"] = 3, 1 })
	p, err := f.post(outs)
	if err == nil || !strings.Contains(err.Error(), "API rate limit exceeded for user ID") || !strings.Contains(err.Error(), "PRRT_rename") {
		t.Fatalf("a rate limit on resolving: %v", err)
	}
	if len(p.Replied) != 1 || len(p.Resolved) != 0 {
		t.Errorf("before the refusal: %+v", p)
	}
	if p, err = f.post(outs); err != nil || len(p.Replied) != 0 || !slices.Equal(p.Resolved, []string{"PRRT_rename"}) {
		t.Errorf("after recovery: %+v %v", p, err)
	}
	if r := ours(f.thread("PRRT_rename")["comments"]); len(r) != 1 || f.thread("PRRT_rename")["resolved"] != true {
		t.Errorf("one reply, resolved: %d, %v", len(r), f.thread("PRRT_rename")["resolved"])
	}

	// The reply refused: nothing posted; then posted once.
	q := f.outcomes()[1]
	f.edit(func(st map[string]any) { st["rateLimitAfter"], st["rateLimited"] = 2, 1 })
	if _, err := f.post([]review.Outcome{q}); err == nil || !strings.Contains(err.Error(), "PRRT_why") {
		t.Fatalf("a rate limit on replying: %v", err)
	}
	if r := ours(f.thread("PRRT_why")["comments"]); len(r) != 0 {
		t.Fatalf("a refused reply was made: %v", r)
	}
	for range 3 {
		if _, err := f.post([]review.Outcome{q}); err != nil {
			t.Fatal(err)
		}
	}
	if r := ours(f.thread("PRRT_why")["comments"]); len(r) != 1 {
		t.Errorf("after recovery, %d replies", len(r))
	}

	// A thread whose comments were all deleted: GitHub's NOT_FOUND, named;
	// the other replies still go out.
	f = newFixture(t, lifeSeed())
	f.round()
	outs = f.outcomes()
	f.edit(func(st map[string]any) {
		for _, th := range st["prs"].([]any)[0].(map[string]any)["reviewThreads"].([]any) {
			if th := th.(map[string]any); th["id"] == "PRRT_why" {
				for _, c := range th["comments"].([]any) {
					c.(map[string]any)["deleted"] = true
				}
			}
		}
	})
	p, err = f.post(outs)
	if err == nil || !strings.Contains(err.Error(), "Could not resolve to a node with the global id of 'PRRT_why'") || !strings.Contains(err.Error(), "thread PRRT_why") {
		t.Fatalf("a deleted thread: %v", err)
	}
	if len(p.Replied) != 2 {
		t.Errorf("the other replies: %+v", p)
	}
	if p, _ := f.post(outs); len(p.Replied) != 0 || len(p.Present) != 2 {
		t.Errorf("again: %+v", p)
	}
}

// An outcome that cannot make a well-formed reply is refused before
// anything is sent.
func TestPostRefusesBadOutcomes(t *testing.T) {
	f := newFixture(t, lifeSeed())
	f.round()
	o := f.outcomes()[0]
	o.Commit = "not a commit"
	if _, err := f.post([]review.Outcome{o}); err == nil || !strings.Contains(err.Error(), "names no commit") {
		t.Errorf("done without a commit: %v", err)
	}
	o = f.outcomes()[0]
	o.TaskID = "x --> @all"
	if _, err := f.post([]review.Outcome{o}); err == nil {
		t.Error("a task id that would close the hidden line accepted")
	}
	if r := ours(f.thread("PRRT_rename")["comments"]); len(r) != 0 {
		t.Errorf("posted: %v", r)
	}
}

// Review is requested again from the writers who asked for changes, once
// each; a login that is none is refused before GitHub is asked, and GitHub's
// refusal (not a collaborator) is the error.
func TestRequestAgain(t *testing.T) {
	f := newFixture(t, lifeSeed())
	ctx := context.Background()
	if err := review.RequestAgain(ctx, f.gh, f.root, repo7, []string{"carol", "alice", "carol"}); err != nil {
		t.Fatal(err)
	}
	got := f.github()["prs"].([]any)[0].(map[string]any)["requestedReviewers"]
	if b, _ := json.Marshal(got); string(b) != `["carol","alice"]` {
		t.Errorf("requested: %s", b)
	}
	if err := review.RequestAgain(ctx, f.gh, f.root, repo7, []string{"../x"}); err == nil || !strings.Contains(err.Error(), "not a GitHub login") {
		t.Errorf("a bad login: %v", err)
	}
	err := review.RequestAgain(ctx, f.gh, f.root, repo7, []string{"mallory"})
	if err == nil || !strings.Contains(err.Error(), "Reviews may only be requested from collaborators") || !strings.Contains(err.Error(), "HTTP 422") {
		t.Errorf("a non-collaborator: %v", err)
	}
	if err := review.RequestAgain(ctx, f.gh, f.root, repo7, nil); err != nil {
		t.Errorf("nobody: %v", err)
	}
}

// Every mutation saga-lsp sends is one GitHub accepts, and the stand-in's
// answer has exactly its shape and types.
func TestReplyMutationsAgainstGitHubSchema(t *testing.T) {
	s, err := ghschema.Load()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, lifeSeed())
	real := map[string]map[string]any{
		"reply":   {"thread": "PRRT_why", "body": "b"},
		"resolve": {"thread": "PRRT_why"},
		"comment": {"subject": "PR_standin7", "body": "b"},
	}
	for name, m := range review.MutationsForTest {
		doc, _, err := ghschema.Query(s, m.Doc, m.Vars)
		if err != nil {
			t.Errorf("GitHub would refuse the %s mutation: %v", name, err)
			continue
		}
		args := []string{"api", "graphql", "-f", "query=" + m.Doc}
		for k, v := range real[name] {
			args = append(args, "-f", k+"="+v.(string))
		}
		r := testkit.Run(t, f.root, nil, "", f.gh, args...)
		if r.Code != 0 {
			t.Errorf("%s: exit %d\n%s", name, r.Code, r.Stderr)
			continue
		}
		if err := ghschema.CheckAnswer(s, doc, []byte(r.Stdout)); err != nil {
			t.Errorf("%s: the stand-in's answer is not what GitHub would send: %v", name, err)
		}
	}
	bad := strings.Replace(review.MutationsForTest["reply"].Doc, "pullRequestReviewThreadId", "threadId", 1)
	if r := testkit.Run(t, f.root, nil, "", f.gh, "api", "graphql", "-f", "query="+bad, "-f", "thread=PRRT_why", "-f", "body=b"); r.Code != 1 || !strings.Contains(r.Stderr, "threadId") {
		t.Errorf("an input field GitHub has not: exit %d, %s", r.Code, r.Stderr)
	}
}

// Every REST call a round and its replies make through gh (the permission
// of each author, review requested again) is an operation of GitHub's
// published description with fields it takes, and what saga-lsp reads of
// the answers is in it — checked here from the calls gh was given, beside
// the stand-in's own check of each call and answer.
func TestRESTAgainstGitHubDescription(t *testing.T) {
	spec, err := ghrest.Load()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "gh.log")
	t.Setenv("GH_STANDIN_LOG", log)
	f := newFixture(t, lifeSeed())
	f.round()
	if err := review.RequestAgain(context.Background(), f.gh, f.root, repo7, []string{"carol"}); err != nil {
		t.Fatal(err)
	}
	file, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var inv struct {
			Args     []string `json:"args"`
			ExitCode int      `json:"exitCode"`
		}
		if err := json.Unmarshal(sc.Bytes(), &inv); err != nil {
			t.Fatal(err)
		}
		if len(inv.Args) < 2 || inv.Args[0] != "api" || inv.Args[1] == "graphql" {
			continue
		}
		method, path, body := "GET", "", map[string]any{}
		for i := 1; i < len(inv.Args); i++ {
			switch a := inv.Args[i]; a {
			case "-X":
				i++
				method = inv.Args[i]
			case "-f":
				i++
				k, v, _ := strings.Cut(inv.Args[i], "=")
				if name, ok := strings.CutSuffix(k, "[]"); ok {
					l, _ := body[name].([]any)
					body[name] = append(l, v)
				} else {
					body[k] = v
				}
			default:
				path = a
			}
		}
		op, _, err := spec.Find(method, path)
		if err != nil {
			t.Errorf("saga-lsp called what GitHub does not describe: %v", err)
			continue
		}
		if err := op.CheckFields("body", body); err != nil && len(body) > 0 {
			t.Errorf("%s %s: %v", method, path, err)
		}
		seen[op.ID] = true
	}
	if !seen["repos/get-collaborator-permission-level"] || !seen["pulls/request-reviewers"] {
		t.Errorf("calls seen: %v", seen)
	}
	// What Writers.Can reads of the permission's answer.
	perm, _, _ := spec.Find("GET", "repos/acme/shop/collaborators/alice/permission")
	if err := perm.Field(200, "permission"); err != nil {
		t.Error(err)
	}
	// The stand-in refuses a REST call GitHub does not describe.
	if r := testkit.Run(t, f.root, nil, "", f.gh, "api", "-X", "PUT", "repos/acme/shop/pulls/7/requested_reviewers", "-f", "reviewers[]=carol"); r.Code != 1 || !strings.Contains(r.Stderr, "has no PUT") {
		t.Errorf("an undescribed call: exit %d, %s", r.Code, r.Stderr)
	}
	if r := testkit.Run(t, f.root, nil, "", f.gh, "api", "repos/acme/shop/pulls/7/requested_reviewers", "-f", "reviewer[]=carol"); r.Code != 1 || !strings.Contains(r.Stderr, `no field "reviewer"`) {
		t.Errorf("an undescribed field: exit %d, %s", r.Code, r.Stderr)
	}
}
