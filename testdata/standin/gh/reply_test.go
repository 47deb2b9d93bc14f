package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// GitHub's refusals as gh prints them: a REST rate limit (HTTP 403, then
// the next call passes), resolving a thread that does not exist
// (NOT_FOUND), and a reply by the authenticated user seen by a later query.
func TestReplyRefusals(t *testing.T) {
	r := newRepo(t)
	state := filepath.Join(r.root, "gh-state.json")
	seed := `{"prs":[{"number":7,"url":"https://github.com/acme/shop/pull/7","headRefName":"story/x","baseRefName":"main","state":"OPEN",
	"reviewThreads":[{"id":"PRRT_a","path":"a.go","line":1,"comments":[{"id":"PRRC_1","author":"alice","body":"Fix.","updatedAt":"2026-11-02T00:00:00Z"}]}]}],
	"collaborators":{"alice":"write"},"rateLimited":1}`
	if err := os.WriteFile(state, []byte(seed), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"GH_STANDIN_REPO=acme/shop"}
	perm := []string{"api", "repos/{owner}/{repo}/collaborators/alice/permission"}
	if o := r.gh(env, perm...); o.Code != 1 || !strings.Contains(o.Stderr, "gh: API rate limit exceeded for user ID 1000.") || !strings.Contains(o.Stderr, "(HTTP 403)") {
		t.Errorf("a rate limit: exit %d, %s", o.Code, o.Stderr)
	}
	if o := r.gh(env, perm...); o.Code != 0 || !strings.Contains(o.Stdout, `"permission":"write"`) {
		t.Errorf("after it: exit %d, %s%s", o.Code, o.Stdout, o.Stderr)
	}
	resolve := "mutation($t: ID!) { resolveReviewThread(input: {threadId: $t}) { thread { id isResolved } } }"
	if o := r.gh(env, "api", "graphql", "-f", "query="+resolve, "-f", "t=PRRT_nope"); o.Code != 1 || !strings.Contains(o.Stderr, "gh: Could not resolve to a node with the global id of 'PRRT_nope'.") {
		t.Errorf("an unknown thread: exit %d, %s", o.Code, o.Stderr)
	}
	reply := "mutation($t: ID!, $b: String!) { addPullRequestReviewThreadReply(input: {pullRequestReviewThreadId: $t, body: $b}) { comment { id author { login } } } }"
	if o := r.gh(append(env, "GH_STANDIN_USER=saga-bot"), "api", "graphql", "-f", "query="+reply, "-f", "t=PRRT_a", "-f", "b=Done."); o.Code != 0 || !strings.Contains(o.Stdout, `"login":"saga-bot"`) {
		t.Errorf("a reply: exit %d, %s%s", o.Code, o.Stdout, o.Stderr)
	}
	read := `query { repository(owner: "acme", name: "shop") { pullRequest(number: 7) { reviewThreads(first: 10) { nodes { comments(first: 10) { nodes { body } } } } } } }`
	if o := r.gh(env, "api", "graphql", "-f", "query="+read); o.Code != 0 || !strings.Contains(o.Stdout, `{"body":"Fix."},{"body":"Done."}`) {
		t.Errorf("the reply read back: %s%s", o.Stdout, o.Stderr)
	}
}
