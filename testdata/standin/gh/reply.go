package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/testdata/standin/gh/ghrest"
)

// What saga-lsp posts on a review, as GitHub takes it:
//
//	mutation addPullRequestReviewThreadReply   a reply on a thread, by the
//	        authenticated user; a thread that does not exist, or whose every
//	        comment is deleted, is GitHub's NOT_FOUND ("Could not resolve to
//	        a node with the global id of '…'."); a resolved thread takes
//	        replies, as on GitHub
//	mutation resolveReviewThread               the thread resolved (again:
//	        no change); a thread that does not exist is NOT_FOUND
//	mutation addComment                        a comment on the PR (its
//	        subjectId the PR's node id)
//	POST repos/{owner}/{repo}/pulls/{n}/requested_reviewers  reviewers[]
//	        asked again; one who is no collaborator is GitHub's 422
//
// Every REST call is checked against GitHub's published description
// (ghrest): a method and path it has, query and body fields it takes, and
// the stand-in's answer of its shape, before it is printed.
//
// Rate limits: while the state file's "rateLimited" is above 0, each `gh
// api` call counts it down and is refused as GitHub refuses it (GraphQL:
// type RATE_LIMITED; REST: HTTP 403), exit 1 — after the first
// "rateLimitAfter" calls, which pass (counted down too).

// rateLimitUser is the user id GitHub's rate-limit message names.
const rateLimitUser = 1000

// rateLimited refuses this call when the state says the rate limit is
// spent, counting the refusal.
func (g *gh) rateLimited(graphql bool) error {
	if g.getenv("GH_STANDIN_STATE") == "" {
		return nil // no state, no rate limit (a test of workflows needs none)
	}
	hit := false
	if err := g.withState(func(st *state) (bool, error) {
		if st.RateLimited <= 0 {
			return false, nil
		}
		if st.RateLimitAfter > 0 {
			st.RateLimitAfter--
			return true, nil
		}
		st.RateLimited--
		hit = true
		return true, nil
	}); err != nil || !hit {
		return err
	}
	msg := fmt.Sprintf("API rate limit exceeded for user ID %d.", rateLimitUser)
	if graphql {
		g.writeJSON(map[string]any{"errors": []any{map[string]any{"type": "RATE_LIMITED", "message": msg}}})
		return fail(1, "gh: %s", msg)
	}
	return g.rest(403, map[string]any{"message": msg + " If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000 and timestamp " +
		time.Now().UTC().Format("2006-01-02 15:04:05 UTC") + ".", "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api", "status": "403"})
}

// mutationRoot answers the mutations saga-lsp sends; each that changes the
// state sets *changed.
func (g *gh) mutationRoot(st *state, repo string, changed *bool) object {
	findThread := func(id string) (*pr, *thread) {
		for _, p := range inRepo(st, repo) {
			for _, t := range p.ReviewThreads {
				if t.ID == id && slices.ContainsFunc(t.Comments, func(c *comment) bool { return !c.Deleted }) {
					return p, t
				}
			}
		}
		return nil, nil
	}
	notFound := func(id any) error {
		return errNotResolved(fmt.Sprintf("Could not resolve to a node with the global id of '%v'.", id))
	}
	newComment := func(prefix string, body any) *comment {
		st.Seq++
		*changed = true
		return &comment{ID: fmt.Sprintf("%s_standin%d", prefix, st.Seq), Author: g.user(), Body: fmt.Sprint(body),
			UpdatedAt: time.Now().UTC().Format(time.RFC3339)}
	}
	input := func(args map[string]any) map[string]any {
		in, _ := args["input"].(map[string]any)
		return in
	}
	return object{"__typename": "Mutation",
		"addPullRequestReviewThreadReply": resolver(func(args map[string]any) (any, error) {
			in := input(args)
			p, t := findThread(fmt.Sprint(in["pullRequestReviewThreadId"]))
			if t == nil {
				return nil, notFound(in["pullRequestReviewThreadId"])
			}
			c := newComment("PRRC", in["body"])
			t.Comments = append(t.Comments, c)
			return object{"__typename": "AddPullRequestReviewThreadReplyPayload", "clientMutationId": in["clientMutationId"],
				"comment": commentObject("PullRequestReviewComment", p, c)}, nil
		}),
		"resolveReviewThread": resolver(func(args map[string]any) (any, error) {
			in := input(args)
			p, t := findThread(fmt.Sprint(in["threadId"]))
			if t == nil {
				return nil, notFound(in["threadId"])
			}
			if !t.Resolved {
				t.Resolved, *changed = true, true
			}
			return object{"__typename": "ResolveReviewThreadPayload", "clientMutationId": in["clientMutationId"], "thread": threadObject(p, t)}, nil
		}),
		"enqueuePullRequest": g.enqueue(st, repo, changed), // queue.go
		"addComment": resolver(func(args map[string]any) (any, error) {
			in := input(args)
			for _, p := range inRepo(st, repo) {
				if prNodeID(p) == fmt.Sprint(in["subjectId"]) {
					c := newComment("IC", in["body"])
					p.Comments = append(p.Comments, c)
					node := commentObject("IssueComment", p, c)
					return object{"__typename": "AddCommentPayload", "clientMutationId": in["clientMutationId"],
						"commentEdge": object{"__typename": "IssueCommentEdge", "cursor": c.ID, "node": node}}, nil
				}
			}
			return nil, notFound(in["subjectId"])
		}),
	}
}

func prNodeID(p *pr) string { return "PR_standin" + strconv.Itoa(p.Number) }

// restCall is a REST `gh api` call, checked against GitHub's description:
// its operation, path parameters and fields (-f/-F, `k[]=v` making an
// array; a GET's are its query).
func (g *gh) restCall(f *flags, path string) (*ghrest.Operation, map[string]string, map[string]any, error) {
	fields := map[string]any{}
	add := func(kv string, typed bool) error {
		k, v, _ := strings.Cut(kv, "=")
		var val any = v
		if typed {
			var err error
			if val, err = magicField(v); err != nil {
				return err
			}
		}
		if name, ok := strings.CutSuffix(k, "[]"); ok {
			list, _ := fields[name].([]any)
			fields[name] = append(list, val)
			return nil
		}
		fields[k] = val
		return nil
	}
	for _, kv := range f.all["raw-field"] {
		if err := add(kv, false); err != nil {
			return nil, nil, nil, err
		}
	}
	for _, kv := range f.all["field"] {
		if err := add(kv, true); err != nil {
			return nil, nil, nil, err
		}
	}
	method := strings.ToUpper(f.vals["method"])
	if method == "" {
		method = "GET"
		if len(fields) > 0 {
			method = "POST" // as gh does when fields are given
		}
	}
	spec, err := ghrest.Load()
	if err != nil {
		return nil, nil, nil, err
	}
	p, rawQuery, _ := strings.Cut(path, "?")
	op, vals, err := spec.Find(method, p)
	if err != nil {
		return nil, nil, nil, fail(1, "gh stand-in: %v", err)
	}
	query := map[string]any{}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, nil, nil, fail(1, "gh stand-in: %s: %v", path, err)
	}
	for k, v := range q {
		query[k] = v[len(v)-1]
	}
	if method == "GET" {
		for k, v := range fields {
			query[k] = fmt.Sprint(v)
		}
		fields = map[string]any{}
	}
	if err := op.CheckFields("query", query); err != nil {
		return nil, nil, nil, fail(1, "gh stand-in: %v", err)
	}
	if err := op.CheckFields("body", fields); err != nil && len(fields) > 0 {
		return nil, nil, nil, fail(1, "gh stand-in: %v", err)
	}
	return op, vals, fields, nil
}

// rest prints a REST answer with its HTTP status, once it is of the shape
// GitHub's description gives that status (one it does not describe is
// printed unchecked); a status of 400 or more is gh's error, exit 1.
func (g *gh) rest(status int, v any) error {
	if g.op != nil {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, described := g.op.Responses[strconv.Itoa(status)]; described || status < 400 {
			if err := g.op.CheckAnswer(status, data); err != nil {
				return fail(1, "gh stand-in: its answer is not one GitHub's description allows: %v", err)
			}
		}
	}
	if err := g.writeJSON(v); err != nil {
		return err
	}
	if status >= 400 {
		msg := "HTTP error"
		if m, ok := v.(map[string]any); ok {
			msg = fmt.Sprint(m["message"])
		}
		return fail(1, "gh: %s (HTTP %d)", msg, status)
	}
	return nil
}

// requestReviewers answers POST repos/{owner}/{repo}/pulls/{n}/requested_reviewers.
func (g *gh) requestReviewers(repo, number string, fields map[string]any) error {
	var answer map[string]any
	status := 201
	err := g.withState(func(st *state) (bool, error) {
		var p *pr
		for _, x := range inRepo(st, repo) {
			if strconv.Itoa(x.Number) == number {
				p = x
			}
		}
		if p == nil {
			status, answer = 404, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest/pulls/review-requests#request-reviewers-for-a-pull-request", "status": "404"}
			return false, nil
		}
		logins, _ := fields["reviewers"].([]any)
		for _, l := range logins {
			if st.Collaborators[fmt.Sprint(l)] == "" {
				status, answer = 422, map[string]any{"message": "Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the " + repo + " repository.",
					"documentation_url": "https://docs.github.com/rest/pulls/review-requests#request-reviewers-for-a-pull-request", "status": "422"}
				return false, nil
			}
		}
		for _, l := range logins {
			if !slices.Contains(p.RequestedReviewers, fmt.Sprint(l)) {
				p.RequestedReviewers = append(p.RequestedReviewers, fmt.Sprint(l))
			}
		}
		var users []any
		for i, l := range p.RequestedReviewers {
			users = append(users, map[string]any{"login": l, "id": 1000 + i, "node_id": "U_standin" + l, "type": "User", "site_admin": false,
				"url": "https://api.github.com/users/" + l, "html_url": "https://github.com/" + l})
		}
		answer = map[string]any{"id": p.Number, "node_id": prNodeID(p), "number": p.Number, "state": strings.ToLower(p.State),
			"title": p.Title, "body": p.Body, "draft": p.IsDraft, "html_url": p.URL,
			"url": "https://api.github.com/repos/" + repo + "/pulls/" + number, "requested_reviewers": users, "requested_teams": []any{}}
		return true, nil
	})
	if err != nil {
		return err
	}
	return g.rest(status, answer)
}
