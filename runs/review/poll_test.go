package review_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/review"
	"github.com/saga-ai/saga-lsp/testdata/standin/gh/ghschema"
)

// twoPRs seeds the stand-in with PR 7 (lifeSeed's review) and PR 8 (a
// writer's changes-requested review), and logs its invocations.
func twoPRs(t *testing.T) (*fixture, string) {
	t.Helper()
	f := newFixture(t, lifeSeed())
	var st map[string]any
	if err := json.Unmarshal([]byte(testkit.ReadFile(t, f.state)), &st); err != nil {
		t.Fatal(err)
	}
	second := map[string]any{"number": 8, "url": "https://github.com/acme/shop/pull/8", "headRefName": "story/pay", "baseRefName": "main",
		"title": "pay", "body": "", "isDraft": false, "state": "OPEN", "createdAt": "2026-11-01T00:00:00Z",
		"reviews": []any{map[string]any{"id": "PRR_pay", "author": "alice", "state": "CHANGES_REQUESTED", "body": "", "updatedAt": "2026-11-02T00:00:09Z"}}}
	st["prs"] = append(st["prs"].([]any), second)
	data, _ := json.Marshal(st)
	if err := os.WriteFile(f.state, data, 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "gh.log")
	t.Setenv("GH_STANDIN_LOG", log)
	return f, log
}

func invocations(t *testing.T, log string) [][]string {
	t.Helper()
	fh, err := os.Open(log)
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out [][]string
	for sc := bufio.NewScanner(fh); sc.Scan(); {
		var inv struct{ Args []string }
		if err := json.Unmarshal(sc.Bytes(), &inv); err != nil {
			t.Fatal(err)
		}
		out = append(out, inv.Args)
	}
	return out
}

// A poll reads every pull request's review in one query, each as Read
// reads it alone.
func TestPollOneQuery(t *testing.T) {
	f, log := twoPRs(t)
	ctx := context.Background()
	seven, eight := review.Repo{Owner: "acme", Name: "shop", Number: 7}, review.Repo{Owner: "acme", Name: "shop", Number: 8}
	got, err := review.Poll(ctx, f.gh, f.root, []review.Repo{seven, eight, seven})
	if err != nil {
		t.Fatal(err)
	}
	if calls := invocations(t, log); len(calls) != 1 || calls[0][0] != "api" || calls[0][1] != "graphql" {
		t.Fatalf("gh calls of one poll: %q", calls)
	}
	for _, r := range []review.Repo{seven, eight} {
		alone, err := review.Read(ctx, f.gh, f.root, r)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got[r], alone) {
			t.Errorf("#%d polled:\n%+v\nread alone:\n%+v", r.Number, got[r], alone)
		}
	}
	if len(got) != 2 || got[eight].ReviewDecision != "CHANGES_REQUESTED" || len(got[seven].Threads) == 0 {
		t.Errorf("polled %+v", got)
	}

	// A pull request GitHub cannot resolve is named; the others answered.
	missing := review.Repo{Owner: "acme", Name: "shop", Number: 99}
	got, err = review.Poll(ctx, f.gh, f.root, []review.Repo{seven, missing})
	if err == nil || !strings.Contains(err.Error(), "acme/shop#99") || !strings.Contains(err.Error(), "Could not resolve to a PullRequest with the number of 99") {
		t.Errorf("a missing PR: %v", err)
	}
	if _, ok := got[seven]; !ok || len(got) != 1 {
		t.Errorf("the resolved PR beside a missing one: %+v", got)
	}
}

// A poll's query is one GitHub accepts, and the stand-in's answer has its
// shape (as TestReviewQueryAgainstGitHubSchema for a round's).
func TestPollQueryAgainstGitHubSchema(t *testing.T) {
	s, err := ghschema.Load()
	if err != nil {
		t.Fatal(err)
	}
	q := review.PollQueryForTest(2)
	vars := map[string]any{"o0": "acme", "n0": "shop", "p0": 7, "o1": "acme", "n1": "shop", "p1": 8}
	doc, _, err := ghschema.Query(s, q, vars)
	if err != nil {
		t.Fatalf("GitHub would refuse the poll query: %v\n%s", err, q)
	}
	f, _ := twoPRs(t)
	r := testkit.Run(t, f.root, nil, "", f.gh, "api", "graphql", "-f", "query="+q, "-F", "o0=acme", "-F", "n0=shop", "-F", "p0=7",
		"-F", "o1=acme", "-F", "n1=shop", "-F", "p1=8")
	if r.Code != 0 {
		t.Fatalf("gh api graphql: exit %d\n%s", r.Code, r.Stderr)
	}
	if err := ghschema.CheckAnswer(s, doc, []byte(r.Stdout)); err != nil {
		t.Errorf("the stand-in's answer is not what GitHub would send: %v", err)
	}
	if !strings.Contains(r.Stdout, `"pr0":`) || !strings.Contains(r.Stdout, `"pr1":`) {
		t.Errorf("the answer lacks an alias: %.300s", r.Stdout)
	}
}
