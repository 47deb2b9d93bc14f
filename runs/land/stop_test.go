//go:build unix

package land_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/land"
	"github.com/saga-ai/saga-lsp/testdata/standin/gh/ghschema"
)

func approve(p map[string]any) {
	p["reviews"] = []any{map[string]any{"id": "PRR_" + p["headRefName"].(string), "author": "alice", "state": "APPROVED", "body": "", "updatedAt": "2026-11-02T00:00:00Z"}}
}

// approvals makes the repository require an approval and gives one to
// every story's PR but the one of except.
func (f *fixture) approvals(except string) {
	f.edit(func(st map[string]any) {
		st["repository"].(map[string]any)["requiredApprovals"] = 1
		for _, p := range st["prs"].([]any) {
			if p := p.(map[string]any); p["headRefName"] != "story/"+except {
				approve(p)
			}
		}
	})
}

// A story without the approval the repository requires, then with a red
// check, then without any check (a job-token push) stops with the reason
// in its record, and its dependent waits; merged by a person on GitHub,
// it is recognised as landed and its dependent follows.
func TestLandStopsAndByHand(t *testing.T) {
	f := newFixture(t)
	f.approvals("shop--b")
	res, r := f.land("shop")
	if r.Code != 1 {
		t.Fatalf("land with b unapproved: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if got := did(res); strings.Join(got, ",") != "merged shop--a,followed shop--b,followed shop--c,merged shop--c" {
		t.Errorf("actions %q", got)
	}
	if b := outcome(res, "shop--b"); b.State != land.NotReady || !strings.Contains(b.Why, "has not the approval the repository requires") {
		t.Errorf("b: %+v", b)
	}
	if d := outcome(res, "shop--d"); d.State != land.Waiting || d.Why != "waits for shop--b to land" {
		t.Errorf("d: %+v", d)
	}
	if st := f.status("shop--b"); st.Land == nil || st.Land.State != land.NotReady || !strings.Contains(st.Land.Why, "approval") {
		t.Errorf("b's status: %+v", st.Land)
	}
	if out := f.saga("status", "shop").Stdout; !strings.Contains(out, "land: waiting: waits for shop--b to land") {
		t.Errorf("status shop does not say why d waits:\n%s", out)
	}

	// Approved, but its check is red on its head commit.
	head := strings.TrimSpace(testkit.Git(t, f.origin, "rev-parse", "story/shop--b"))
	f.edit(func(st map[string]any) {
		for _, p := range st["prs"].([]any) {
			if p := p.(map[string]any); p["headRefName"] == "story/shop--b" {
				approve(p)
			}
		}
		st["checks"] = map[string]any{head: []any{map[string]any{"name": "test", "conclusion": "FAILURE"}}}
	})
	res, r = f.land("shop")
	if b := outcome(res, "shop--b"); r.Code != 1 || b.State != land.NotReady || !strings.Contains(b.Why, "checks failed: test") {
		t.Errorf("b with a red check: exit %d %+v", r.Code, b)
	}
	if len(res.Actions) != 0 || outcome(res, "shop--d").State != land.Waiting {
		t.Errorf("a red check: actions %q, d %+v", did(res), outcome(res, "shop--d"))
	}
	if out := f.saga("status", "shop--b").Stdout; !strings.Contains(out, "land:     not ready: checks failed: test") {
		t.Errorf("status shop--b:\n%s", out)
	}

	// No check ran on its head (pushed with Actions' job token): needs CI,
	// with the remedy — never a silent wait.
	f.edit(func(st map[string]any) {
		delete(st, "checks")
		st["repository"].(map[string]any)["noCI"] = []any{head}
	})
	res, r = f.land("shop", "--dry-run")
	if b := outcome(res, "shop--b"); r.Code != 0 || b.State != land.NeedsCI || !strings.Contains(b.Next, "job token") {
		t.Errorf("b without checks: exit %d %+v", r.Code, b)
	}

	// A person merges b on GitHub: land recognises it and d follows.
	f.edit(func(st map[string]any) { delete(st["repository"].(map[string]any), "noCI") })
	if g := f.gh("pr", "merge", f.pr("shop--b")["url"].(string), "--merge"); g.Code != 0 {
		t.Fatalf("gh pr merge: exit %d\n%s", g.Code, g.Stderr)
	}
	res, r = f.land("shop")
	if got := did(res); r.Code != 0 || strings.Join(got, ",") != "followed shop--d,merged shop--d" {
		t.Errorf("after b merged by hand: exit %d, actions %q\n%s", r.Code, got, r.Stdout)
	}
	if st := f.status("shop--b"); st.PRState != "MERGED" || st.Land != nil {
		t.Errorf("b merged by hand: %+v %+v", st.PRState, st.Land)
	}
}

// A pass's query is one GitHub accepts, and the stand-in's answer has its
// shape; a merge GitHub refuses is gh's refusal.
func TestLandQueryAgainstGitHubSchema(t *testing.T) {
	s, err := ghschema.Load()
	if err != nil {
		t.Fatal(err)
	}
	q := land.LandQueryForTest(2)
	doc, _, err := ghschema.Query(s, q, map[string]any{"owner": "acme", "name": "shop", "p0": 1, "p1": 2})
	if err != nil {
		t.Fatalf("GitHub would refuse the query: %v\n%s", err, q)
	}
	root := t.TempDir()
	testkit.InitRepo(t, root)
	testkit.BareOrigin(t, root)
	stateFile := filepath.Join(t.TempDir(), "gh.json")
	env := append(testkit.CleanEnv(), "GH_STANDIN_STATE="+stateFile, "GH_STANDIN_REPO=acme/shop")
	gh := testkit.Build(t, "./testdata/standin/gh")
	run := func(args ...string) testkit.Result { return testkit.Run(t, root, env, "", gh, args...) }
	for _, b := range []string{"story/x", "story/y"} {
		testkit.Git(t, root, "checkout", "-q", "-b", b, "main")
		testkit.Git(t, root, "commit", "-q", "--allow-empty", "-m", b)
		testkit.Git(t, root, "push", "-q", "origin", b)
		if r := run("pr", "create", "--title", b, "--body", "", "--base", "main"); r.Code != 0 {
			t.Fatalf("pr create: %s", r.Stderr)
		}
	}
	if r := run("pr", "merge", "1", "--squash"); r.Code != 0 {
		t.Fatalf("pr merge: %s", r.Stderr)
	}
	r := run("api", "graphql", "-f", "query="+q, "-F", "owner=acme", "-F", "name=shop", "-F", "p0=1", "-F", "p1=2")
	if r.Code != 0 {
		t.Fatalf("gh api graphql: exit %d\n%s", r.Code, r.Stderr)
	}
	if err := ghschema.CheckAnswer(s, doc, []byte(r.Stdout)); err != nil {
		t.Errorf("the stand-in's answer is not what GitHub would send: %v\n%s", err, r.Stdout)
	}
	for _, want := range []string{`"mergeCommit":{"oid":"`, `"state":"MERGED"`, `"statusCheckRollup":null`, `"squashMergeAllowed":true`, `"mergeQueue":null`} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("the answer lacks %s: %s", want, r.Stdout)
		}
	}
	// The merge queue: the enqueue mutation is one GitHub accepts, and the
	// answers — the entry, then the PR's entry while its group's checks
	// run (this repository has no CI: they never finish) — have its shape.
	st := map[string]any{}
	json.Unmarshal([]byte(testkit.ReadFile(t, stateFile)), &st)
	st["repository"] = map[string]any{"mergeQueue": true}
	data, _ := json.Marshal(st)
	os.WriteFile(stateFile, data, 0o644)
	head := strings.TrimSpace(testkit.Git(t, root, "rev-parse", "story/y"))
	mdoc, _, err := ghschema.Query(s, land.EnqueueMutation, map[string]any{"pr": "PR_1", "head": head})
	if err != nil {
		t.Fatalf("GitHub would refuse the mutation: %v", err)
	}
	if r := run("api", "graphql", "-f", "query="+land.EnqueueMutation, "-F", "pr=PR_standin2", "-F", "head="+head); r.Code != 0 || ghschema.CheckAnswer(s, mdoc, []byte(r.Stdout)) != nil ||
		!strings.Contains(r.Stdout, `"mergeQueueEntry":{"position":1,"state":"QUEUED"}`) {
		t.Errorf("enqueue: exit %d %v\n%s%s", r.Code, ghschema.CheckAnswer(s, mdoc, []byte(r.Stdout)), r.Stdout, r.Stderr)
	}
	r = run("api", "graphql", "-f", "query="+q, "-F", "owner=acme", "-F", "name=shop", "-F", "p0=1", "-F", "p1=2")
	if err := ghschema.CheckAnswer(s, doc, []byte(r.Stdout)); err != nil || !strings.Contains(r.Stdout, `"mergeQueueEntry":{"position":1,"state":"AWAITING_CHECKS"}`) {
		t.Errorf("a queued PR's answer: %v\n%s", err, r.Stdout)
	}
	if r := run("pr", "merge", "2", "--merge"); r.Code != 1 || !strings.Contains(r.Stderr, "Changes must be made through the merge queue") {
		t.Errorf("a direct merge with a merge queue: exit %d %s", r.Code, r.Stderr)
	}
	// Refusals, as gh prints them.
	if r := run("pr", "merge", "1", "--squash"); r.Code != 1 || !strings.Contains(r.Stderr, "was already merged") {
		t.Errorf("merging twice: exit %d %s", r.Code, r.Stderr)
	}
	if r := run("pr", "merge", "2", "--merge", "--match-head-commit", "0123"); r.Code != 1 || !strings.Contains(r.Stderr, "Head branch was modified") {
		t.Errorf("a moved head: exit %d %s", r.Code, r.Stderr)
	}
}
