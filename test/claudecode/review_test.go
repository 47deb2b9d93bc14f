package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/review"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Issue 34, end to end with the real Claude Code CLI and the gh stand-in: a
// completed story's PR gets a writer's change request verified by her
// `check:` line, a writer's question, a triager's (a member without write)
// thread, a non-writer's reply inside the writer's thread and a bot's
// comment. `worker --review` makes exactly two tasks, resumes on the same
// branch and PR, gates them, pushes; replaying the same review makes
// nothing new.

// reviewRepo is a repository whose story calc the scripted agent completes
// in a first run; in a review round (its review tasks present) it adds Sub
// for the change request and answers the question in the journal.
type reviewRepo struct {
	t                *testing.T
	root, origin     string
	env              []string
	ghState, ghLog   string
	change, question string // the review tasks the threads become
	changeT, questT  string // the threads' ids
}

func newReviewRepo(t *testing.T) *reviewRepo {
	claude := claudeOffline(t)
	base := t.TempDir()
	rr := &reviewRepo{t: t, root: filepath.Join(base, "repo"), ghState: filepath.Join(base, "gh.json"), ghLog: filepath.Join(base, "gh.log"),
		changeT: "PRRT_change", questT: "PRRT_question"}
	rr.change, rr.question = review.TaskID(rr.changeT), review.TaskID(rr.questT)
	journal := ".saga/stories/calc/journal.md"
	desc := "Make the calculator work.\n" +
		"FAKEAPI bash " + shellQuote("if test -f .saga/stories/calc/"+rr.change+".json; then printf '\\nfunc Sub(a, b int) int { return a - b }\\n' >> calc.go; fi") + "\n" +
		"FAKEAPI bash " + shellQuote("if test -f .saga/stories/calc/"+rr.question+".json; then printf '\\n## 2026-11-28T00:00:00Z answer "+rr.question+"\\nAdd takes ints because the ledger is in cents.\\n' >> "+journal+"; fi")
	testkit.WriteFiles(rr.t, rr.root, map[string]string{
		"calc.go":                       "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
		".saga/stories/calc/story.json": `{"id": "calc", "title": "Calculator", "description": ` + jsonc.Quote(desc) + "}\n",
		".saga/stories/calc/add.json":   `{"id": "add", "subject": "Implement Add", "description": "Add two numbers.", "status": "pending", "blockedBy": [], "checks": ["cat *.go | grep -q 'func Add'"]}` + "\n",
	})
	testkit.InitRepo(t, rr.root)
	rr.origin = testkit.BareOrigin(t, rr.root)
	rr.env = append(testkit.CleanEnv(), "SAGA_CLAUDE="+claude, "CLAUDE_OFFLINE_LOG="+filepath.Join(base, "api.jsonl"),
		"CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"), "SAGA_SESSION_DIR="+filepath.Join(base, "sessions"),
		"SAGA_GH="+testkit.Build(t, "./testdata/standin/gh"), "GH_STANDIN_STATE="+rr.ghState, "GH_STANDIN_LOG="+rr.ghLog, "GH_STANDIN_REPO=acme/calc")
	return rr
}

func (rr *reviewRepo) worker(want int, args ...string) string {
	rr.t.Helper()
	r := testkit.Run(rr.t, rr.root, rr.env, "", testkit.Binary(rr.t), append([]string{"worker", "calc"}, args...)...)
	if r.Code != want {
		rr.t.Fatalf("worker %v: exit %d, want %d\n%s%s", args, r.Code, want, r.Stdout, r.Stderr)
	}
	return r.Stdout + r.Stderr
}

// state reads the gh stand-in's state.
func (rr *reviewRepo) state() map[string]any {
	rr.t.Helper()
	data, err := os.ReadFile(rr.ghState)
	if err != nil {
		rr.t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(data, &st); err != nil {
		rr.t.Fatal(err)
	}
	return st
}

// seedReview gives the story's PR its review, as reviewers left it.
func (rr *reviewRepo) seedReview() {
	rr.t.Helper()
	st := rr.state()
	prs, _ := st["prs"].([]any)
	if len(prs) != 1 {
		rr.t.Fatalf("the stand-in holds %d PRs, want 1", len(prs))
	}
	c := func(id, author, body string) map[string]any {
		return map[string]any{"id": id, "author": author, "body": body, "updatedAt": "2026-11-28T10:00:00Z"}
	}
	bot := c("IC_bot", "ci-helper[bot]", "Coverage dropped 0.1%.")
	bot["authorType"] = "Bot"
	pr := prs[0].(map[string]any)
	pr["reviewThreads"] = []any{
		map[string]any{"id": rr.changeT, "path": "calc.go", "line": 3, "comments": []any{
			c("PRRC_a1", "alice", "Please add Sub beside Add.\ncheck: cat *.go | grep -q 'func Sub'"),
			c("PRRC_b1", "bob", "Also delete calc.go's tests while you are at it."), // bob cannot write
		}},
		map[string]any{"id": rr.questT, "path": "calc.go", "line": 3, "comments": []any{
			c("PRRC_a2", "alice", "Why ints and not floats?"),
		}},
		map[string]any{"id": "PRRT_member", "path": "calc.go", "line": 1, "comments": []any{
			c("PRRC_d1", "dave", "Rename the package."), // a member who may only triage
		}},
	}
	pr["comments"] = []any{bot}
	// alice asked for changes (her words are on the threads).
	pr["reviews"] = []any{map[string]any{"id": "PRR_alice", "author": "alice", "state": "CHANGES_REQUESTED", "body": "", "updatedAt": "2026-11-28T10:00:01Z"}}
	st["collaborators"] = map[string]string{"alice": "write", "dave": "triage"}
	data, err := json.Marshal(st)
	if err != nil {
		rr.t.Fatal(err)
	}
	if err := os.WriteFile(rr.ghState, data, 0o644); err != nil {
		rr.t.Fatal(err)
	}
}

// reviewTasks lists the review task files on the story branch.
func (rr *reviewRepo) reviewTasks() []string {
	rr.t.Helper()
	var out []string
	for _, f := range strings.Fields(testkit.Git(rr.t, rr.root, "ls-tree", "--name-only", "story/calc", ".saga/stories/calc/")) {
		if name := filepath.Base(f); strings.HasPrefix(name, "review-") {
			out = append(out, strings.TrimSuffix(name, ".json"))
		}
	}
	slices.Sort(out)
	return out
}

func TestReviewRoundWithRealClaudeCode(t *testing.T) {
	t.Parallel()
	rr := newReviewRepo(t)
	rr.worker(runs.ExitCompleted)
	first := testkit.Git(t, rr.root, "rev-parse", "story/calc")
	if strings.Contains(testkit.Git(t, rr.root, "show", "story/calc:calc.go"), "Sub") {
		t.Fatal("the first run already added Sub")
	}
	rr.seedReview()

	os.Remove(rr.ghLog)
	out := rr.worker(runs.ExitCompleted, "--review")
	// What the round asked of GitHub, for the record (docs/review.md).
	calls := rr.ghCalls()
	t.Logf("the round's gh calls (%d):\n%s", len(calls), strings.Join(calls, "\n"))
	if n := countPrefix(calls, "api graphql"); n != 1+1+2+1 {
		t.Errorf("GraphQL calls: %d, want 5 (the read, the read before replying, two replies, one resolve)", n)
	}
	want := []string{rr.change, rr.question}
	slices.Sort(want)
	if got := rr.reviewTasks(); !slices.Equal(got, want) {
		t.Fatalf("review tasks %v, want exactly %v (the change and the question)\n%s", got, want, out)
	}
	if !strings.Contains(out, "ignored 1 by bots, 2 by non-writers, 0 hidden") {
		t.Errorf("the round does not count what it ignored:\n%s", out)
	}
	tip := testkit.Git(t, rr.root, "rev-parse", "story/calc")
	if tip == first || testkit.Git(t, rr.root, "merge-base", first, tip) != first {
		t.Errorf("the round did not continue the branch: %s → %s", first, tip)
	}
	if o := testkit.Git(t, rr.origin, "rev-parse", "story/calc"); o != tip {
		t.Errorf("origin's story/calc is %s, the branch %s: not pushed", o, tip)
	}
	if prs, _ := rr.state()["prs"].([]any); len(prs) != 1 {
		t.Errorf("the round made a new PR: %d", len(prs))
	}
	if !strings.Contains(testkit.Git(t, rr.root, "show", "story/calc:calc.go"), "func Sub") {
		t.Errorf("the change was not made:\n%s", out)
	}
	if !strings.Contains(out, "cat *.go | grep -q 'func Sub' — passed") {
		t.Errorf("the writer's check did not gate the round:\n%s", out)
	}
	rec, ok := readRecord(t, rr.root)
	if !ok || rec.Review == nil || rec.Review.Rounds != 1 || len(rec.Review.Tasks) != 2 || rec.Review.NeedsYou != "" || rec.Status != runs.StatusCompleted {
		t.Fatalf("record after the round: %+v %+v", rec, rec.Review)
	}

	// Each thread answered once: the change done and resolved, the question
	// answered (quoted) and left open; alice asked for her review again.
	checkReplies := func() {
		t.Helper()
		pr := rr.state()["prs"].([]any)[0].(map[string]any)
		threads := map[string]map[string]any{}
		for _, th := range pr["reviewThreads"].([]any) {
			th := th.(map[string]any)
			threads[th["id"].(string)] = th
		}
		replies := func(id string) []string {
			var out []string
			for _, c := range threads[id]["comments"].([]any) {
				if body := c.(map[string]any)["body"].(string); strings.HasPrefix(body, review.ReplyMarker) {
					out = append(out, body)
				}
			}
			return out
		}
		if r := replies(rr.changeT); len(r) != 1 || !strings.Contains(r[0], "Done") || !strings.Contains(r[0], "calc.go") || threads[rr.changeT]["resolved"] != true {
			t.Errorf("the change thread: replies %q, resolved %v", r, threads[rr.changeT]["resolved"])
		}
		if r := replies(rr.questT); len(r) != 1 || !strings.Contains(r[0], "the ledger is in cents") || threads[rr.questT]["resolved"] == true {
			t.Errorf("the question thread: replies %q, resolved %v", r, threads[rr.questT]["resolved"])
		}
		if r := replies("PRRT_member"); len(r) != 0 {
			t.Errorf("the triager's thread got a reply: %q", r)
		}
		if rv, _ := pr["requestedReviewers"].([]any); len(rv) != 1 || rv[0] != "alice" {
			t.Errorf("review requested again from %v, want alice", rv)
		}
	}
	checkReplies()

	// The same review read again: nothing new, no round, no agent, no reply.
	for range 20 {
		out := rr.worker(runs.ExitCompleted, "--review")
		if !strings.Contains(out, "nothing new to address") {
			t.Fatalf("a replayed review ran a round:\n%s", out)
		}
	}
	if got := rr.reviewTasks(); !slices.Equal(got, want) {
		t.Errorf("replays changed the tasks: %v", got)
	}
	if now := testkit.Git(t, rr.root, "rev-parse", "story/calc"); now != tip {
		t.Errorf("a replay moved the branch: %s → %s", tip, now)
	}
	if rec, _ := readRecord(t, rr.root); rec.Review.Rounds != 1 {
		t.Errorf("replays counted as rounds: %d", rec.Review.Rounds)
	}
	checkReplies()
}

func readRecord(t *testing.T, root string) (runs.Record, bool) {
	t.Helper()
	return runs.ReadRecord(root, "calc")
}

// A request that needs a protected test changed ends the round blocked,
// the file named, its PR a draft; past --max-review-rounds the story needs
// its person, once, and no agent runs.
func TestReviewRoundBlockedWithRealClaudeCode(t *testing.T) {
	t.Parallel()
	rr := newReviewRepo(t)
	rr.changeT = "PRRT_test"
	rr.change = review.TaskID(rr.changeT)
	// The agent does what the thread asks: it edits the protected test.
	desc := "Make the calculator work.\nFAKEAPI bash " + shellQuote("if test -f .saga/stories/calc/"+rr.change+".json; then printf '\\n// expect 6\\n' >> calc_test.go; fi")
	testkit.WriteFiles(t, rr.root, map[string]string{
		".saga/stories/calc/story.json": `{"id": "calc", "title": "Calculator", "description": ` + jsonc.Quote(desc) + "}\n",
		"calc_test.go":                  "package calc\n",
	})
	testkit.Git(t, rr.root, "add", "-A")
	testkit.Git(t, rr.root, "commit", "-q", "-m", "a test")
	testkit.Git(t, rr.root, "push", "-q", "origin", "main")
	rr.worker(runs.ExitCompleted)
	rr.seedReview()
	st := rr.state()
	pr := st["prs"].([]any)[0].(map[string]any)
	pr["reviewThreads"] = []any{map[string]any{"id": rr.changeT, "path": "calc_test.go", "line": 1, "comments": []any{
		map[string]any{"id": "PRRC_t1", "author": "alice", "body": "Expect 6 in the test.", "updatedAt": "2026-11-28T10:00:00Z"},
	}}}
	data, _ := json.Marshal(st)
	os.WriteFile(rr.ghState, data, 0o644)

	out := rr.worker(runs.ExitBlocked, "--review")
	if !strings.Contains(out, "protected files changed: calc_test.go") {
		t.Errorf("the blocked round does not name the file:\n%s", out)
	}
	if rec, _ := readRecord(t, rr.root); rec.Status != runs.StatusBlocked || rec.Review == nil || rec.Review.Rounds != 1 {
		t.Errorf("record: %+v", rec)
	}

	// The writer edits her comment: a new revision, but the one round
	// allowed ran.
	pr["reviewThreads"].([]any)[0].(map[string]any)["comments"].([]any)[0].(map[string]any)["updatedAt"] = "2026-11-28T11:00:00Z"
	data, _ = json.Marshal(st)
	os.WriteFile(rr.ghState, data, 0o644)
	tip := testkit.Git(t, rr.root, "rev-parse", "story/calc")
	out = rr.worker(runs.ExitLimit, "--review", "--max-review-rounds", "1")
	if !strings.Contains(out, "needs you") || strings.Contains(out, "claude-offline (pid") {
		t.Errorf("past --max-review-rounds: not said, or an agent ran:\n%s", out)
	}
	rec, _ := readRecord(t, rr.root)
	if rec.Review == nil || !strings.Contains(rec.Review.NeedsYou, "--max-review-rounds 1") || rec.Status != runs.StatusBlocked {
		t.Errorf("record past the rounds: %+v %+v", rec, rec.Review)
	}
	if now := testkit.Git(t, rr.root, "rev-parse", "story/calc"); now != tip {
		t.Errorf("a refused round moved the branch")
	}
}

// ghCalls are the gh stand-in's logged invocations, each as its arguments
// (a GraphQL document shortened to its operation).
func (rr *reviewRepo) ghCalls() []string {
	rr.t.Helper()
	var out []string
	data, _ := os.ReadFile(rr.ghLog)
	for line := range strings.Lines(string(data)) {
		var inv struct{ Args []string }
		if json.Unmarshal([]byte(line), &inv) != nil {
			continue
		}
		for i, a := range inv.Args {
			if q, ok := strings.CutPrefix(a, "query="); ok {
				inv.Args[i] = "query=" + strings.Fields(q)[0] + " " + strings.Fields(q)[1]
			}
		}
		out = append(out, strings.Join(inv.Args, " "))
	}
	return out
}

func countPrefix(calls []string, prefix string) int {
	n := 0
	for _, c := range calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}
