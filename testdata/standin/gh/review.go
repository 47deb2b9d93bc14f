package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/saga-ai/saga-lsp/testdata/standin/gh/ghschema"
	"github.com/vektah/gqlparser/v2/ast"
)

// A pull request's review, as GitHub keeps it (seeded by tests in the state
// file) and answers it:
//
//	gh api graphql -f query=… [-f K=V | -F K=V]…   the query validated
//	        against GitHub's published schema (ghschema) and answered for
//	        the fields of a repository's pull request this file knows
//	        (reviewThreads, reviews, comments, and their nodes); a field it
//	        does not know is the stand-in's refusal, never a guess
//	gh api repos/{owner}/{repo}/collaborators/<login>/permission
//	        the collaborator's permission (admin, write, read, none) and
//	        role; a login GitHub does not know is a 404
//
// As on GitHub, a deleted comment is gone from every answer, a minimized one
// is answered with isMinimized, and an account's type says whether it is a
// Bot.

type comment struct {
	ID         string `json:"id"` // GitHub's node id, e.g. PRRC_… or IC_…
	Author     string `json:"author"`
	AuthorType string `json:"authorType,omitempty"` // User (default) or Bot
	Body       string `json:"body"`
	UpdatedAt  string `json:"updatedAt"`
	Minimized  bool   `json:"minimized,omitempty"`
	Deleted    bool   `json:"deleted,omitempty"`
}

type thread struct {
	ID       string     `json:"id"` // PRRT_…
	Path     string     `json:"path"`
	Line     int        `json:"line,omitempty"` // 0: null (an outdated thread's line)
	Resolved bool       `json:"resolved,omitempty"`
	Outdated bool       `json:"outdated,omitempty"`
	Comments []*comment `json:"comments"`
}

type review struct {
	ID         string `json:"id"` // PRR_…
	Author     string `json:"author"`
	AuthorType string `json:"authorType,omitempty"`
	Body       string `json:"body"`
	State      string `json:"state"` // COMMENTED, APPROVED, CHANGES_REQUESTED, DISMISSED, PENDING
	UpdatedAt  string `json:"updatedAt"`
}

// graphql answers `gh api graphql` as GitHub does: {"data": …} on stdout;
// errors printed too, and gh exits 1 naming the first.
func (g *gh) graphql(f *flags) error {
	repo, err := g.authRepo(f)
	if err != nil {
		return err
	}
	vars := map[string]any{}
	var query string
	for _, kv := range f.all["raw-field"] {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	owner, name, _ := strings.Cut(repo, "/")
	for _, kv := range f.all["field"] {
		k, v, _ := strings.Cut(kv, "=")
		// As gh fills in a typed field's placeholders.
		v = strings.NewReplacer("{owner}", owner, "{repo}", name).Replace(v)
		typed, err := magicField(v)
		if err != nil {
			return err
		}
		vars[k] = typed
	}
	query, _ = vars["query"].(string)
	delete(vars, "query")
	schema, err := ghschema.Load()
	if err != nil {
		return err
	}
	doc, vars, err := ghschema.Query(schema, query, vars)
	if err != nil {
		return g.graphqlErrors(err.Error())
	}
	op := doc.Operations[0]
	if op.Operation != ast.Query && op.Operation != ast.Mutation {
		return fail(1, "gh stand-in: GraphQL %s is not simulated", op.Operation)
	}
	if err := g.rateLimited(true); err != nil {
		return err
	}
	var data map[string]any
	var errs []string
	err = g.withState(func(st *state) (bool, error) {
		x := &executor{schema: schema, doc: doc, vars: vars, errs: &errs}
		root, changed := g.queryRoot(st), false
		if op.Operation == ast.Query {
			// The merge queue moves while no one looks (queue.go).
			if changed, err = g.advanceQueue(st); err != nil {
				return false, err
			}
		}
		if op.Operation == ast.Mutation {
			root = g.mutationRoot(st, repo, &changed)
		}
		data, err = x.object(op.SelectionSet, root)
		return changed && err == nil, err
	})
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		g.writeJSON(map[string]any{"data": data, "errors": messages(errs)})
		return fail(1, "gh: %s", errs[0])
	}
	return g.writeJSON(map[string]any{"data": data})
}

func (g *gh) graphqlErrors(msg string) error {
	g.writeJSON(map[string]any{"errors": messages([]string{msg})})
	return fail(1, "gh: %s", msg)
}

func messages(errs []string) []any {
	out := make([]any, len(errs))
	for i, e := range errs {
		out[i] = map[string]any{"message": e}
	}
	return out
}

// magicField types a -F value as gh does: true, false, null, integers, and
// @file (the file's content).
func magicField(v string) (any, error) {
	switch v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "null":
		return nil, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, nil
	}
	if file, ok := strings.CutPrefix(v, "@"); ok {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fail(1, "open %s: no such file or directory", file)
		}
		return string(b), nil
	}
	return v, nil
}

// An object of the answer: its fields' values, or resolvers of fields that
// take arguments. __typename names its concrete type.
type (
	object   map[string]any
	resolver func(args map[string]any) (any, error)
)

// errNotResolved is a field GitHub answers with null and an error.
type errNotResolved string

func (e errNotResolved) Error() string { return string(e) }

func (g *gh) queryRoot(st *state) object {
	return object{"__typename": "Query", "repository": resolver(func(args map[string]any) (any, error) {
		repo := fmt.Sprint(args["owner"]) + "/" + fmt.Sprint(args["name"])
		if r, err := g.repo(&flags{vals: map[string]string{}}); err != nil || !strings.EqualFold(r, repo) {
			return nil, errNotResolved(fmt.Sprintf("Could not resolve to a Repository with the name '%s'.", repo))
		}
		o := object{"__typename": "Repository", "nameWithOwner": repo, "pullRequest": resolver(func(args map[string]any) (any, error) {
			n, _ := args["number"].(int64)
			for _, p := range inRepo(st, repo) {
				if int64(p.Number) == n {
					po := prObject(p)
					g.landPR(st, p, po) // land.go
					return po, nil
				}
			}
			return nil, errNotResolved(fmt.Sprintf("Could not resolve to a PullRequest with the number of %d.", n))
		})}
		g.landRepo(st, o)
		return o, nil
	})}
}

func prObject(p *pr) object {
	threads := []object{}
	for _, t := range p.ReviewThreads {
		if o := threadObject(p, t); o != nil {
			threads = append(threads, o)
		}
	}
	var reviews []object
	for _, r := range p.Reviews {
		reviews = append(reviews, object{"__typename": "PullRequestReview", "id": r.ID, "url": p.URL + "#pullrequestreview-" + r.ID,
			"body": r.Body, "state": r.State, "updatedAt": r.UpdatedAt, "author": actor(r.Author, r.AuthorType)})
	}
	var comments []object
	for _, c := range p.Comments {
		if !c.Deleted {
			comments = append(comments, commentObject("IssueComment", p, c))
		}
	}
	decision := any(nil)
	for _, r := range p.Reviews {
		switch r.State {
		case "CHANGES_REQUESTED":
			decision = "CHANGES_REQUESTED"
		case "APPROVED":
			if decision == nil {
				decision = "APPROVED"
			}
		}
	}
	return object{"__typename": "PullRequest", "id": prNodeID(p), "url": p.URL, "number": p.Number,
		"state": p.State, "headRefName": p.HeadRefName, "baseRefName": p.BaseRefName, "title": p.Title, "body": p.Body,
		"isDraft": p.IsDraft, "reviewDecision": decision,
		"reviewThreads": connection("PullRequestReviewThreadConnection", threads), "reviews": connection("PullRequestReviewConnection", reviews),
		"comments": connection("IssueCommentConnection", comments)}
}

// threadObject is a review thread as GitHub answers it; nil when every
// comment of it is deleted: the thread is gone.
func threadObject(p *pr, t *thread) object {
	var line any
	if t.Line > 0 {
		line = t.Line
	}
	var comments []object
	for _, c := range t.Comments {
		if !c.Deleted {
			comments = append(comments, commentObject("PullRequestReviewComment", p, c))
		}
	}
	if len(comments) == 0 {
		return nil
	}
	return object{"__typename": "PullRequestReviewThread", "id": t.ID, "isResolved": t.Resolved,
		"isOutdated": t.Outdated, "path": t.Path, "line": line, "comments": connection("PullRequestReviewCommentConnection", comments)}
}

func commentObject(typename string, p *pr, c *comment) object {
	return object{"__typename": typename, "id": c.ID, "url": p.URL + "#discussion_" + c.ID, "body": c.Body,
		"updatedAt": c.UpdatedAt, "isMinimized": c.Minimized, "author": actor(c.Author, c.AuthorType)}
}

// actor is a comment's author: null for a deleted account ("ghost").
func actor(login, typ string) any {
	if login == "" {
		return nil
	}
	if typ == "" {
		typ = "User"
	}
	return object{"__typename": typ, "login": login}
}

// connection pages a list as GitHub's connections do: `first` or `last`
// required, at most 100.
func connection(typename string, items []object) resolver {
	return func(args map[string]any) (any, error) {
		first, hasFirst := args["first"].(int64)
		if !hasFirst {
			return nil, errNotResolved("You must provide a `first` or `last` value to properly paginate the connection.")
		}
		if first > 100 || first < 0 {
			return nil, errNotResolved(fmt.Sprintf("Requesting %d records on the connection exceeds the `first` limit of 100 records.", first))
		}
		page := items[:min(int(first), len(items))]
		nodes := make([]any, len(page))
		for i, n := range page {
			nodes[i] = n
		}
		return object{"__typename": typename, "nodes": nodes, "totalCount": len(items),
			"pageInfo": object{"__typename": "PageInfo", "hasNextPage": len(items) > len(page), "hasPreviousPage": false}}, nil
	}
}

// executor answers a validated query's selections from objects.
type executor struct {
	schema *ast.Schema
	doc    *ast.QueryDocument
	vars   map[string]any
	errs   *[]string
}

func (x *executor) object(set ast.SelectionSet, o object) (map[string]any, error) {
	out := map[string]any{}
	typ, _ := o["__typename"].(string)
	for _, f := range x.fields(typ, set) {
		if f.Name == "__typename" {
			out[f.Alias] = typ
			continue
		}
		v, ok := o[f.Name]
		if !ok {
			return nil, fail(1, "gh stand-in: the field %s of %s is not simulated", f.Name, typ)
		}
		if r, ok := v.(resolver); ok {
			got, err := r(f.ArgumentMap(x.vars))
			if msg, ok := err.(errNotResolved); ok {
				*x.errs = append(*x.errs, string(msg))
				got, err = nil, nil
			}
			if err != nil {
				return nil, err
			}
			v = got
		}
		val, err := x.value(f.SelectionSet, v)
		if err != nil {
			return nil, err
		}
		out[f.Alias] = val
	}
	return out, nil
}

func (x *executor) value(set ast.SelectionSet, v any) (any, error) {
	switch v := v.(type) {
	case object:
		return x.object(set, v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			val, err := x.value(set, e)
			if err != nil {
				return nil, err
			}
			out[i] = val
		}
		return out, nil
	}
	return v, nil
}

// fields flattens a selection set for an object of type typ, fragments
// included when they apply to it.
func (x *executor) fields(typ string, set ast.SelectionSet) []*ast.Field {
	var out []*ast.Field
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			out = append(out, s)
		case *ast.InlineFragment:
			if s.TypeCondition == "" || ghschema.Matches(x.schema, typ, s.TypeCondition) {
				out = append(out, x.fields(typ, s.SelectionSet)...)
			}
		case *ast.FragmentSpread:
			if d := x.doc.Fragments.ForName(s.Name); d != nil && ghschema.Matches(x.schema, typ, d.TypeCondition) {
				out = append(out, x.fields(typ, d.SelectionSet)...)
			}
		}
	}
	return out
}

// permission answers GET repos/{owner}/{repo}/collaborators/<login>/permission.
func (g *gh) permission(repo, login string) error {
	var role string
	var known bool
	err := g.withState(func(st *state) (bool, error) {
		role = st.Collaborators[login]
		known = role != "" || authorIn(st, login)
		return false, nil
	})
	if err != nil {
		return err
	}
	if !known {
		return g.rest(404, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user", "status": "404"})
	}
	// The legacy permission folds maintain into write and triage into read;
	// role_name keeps the role.
	perm := map[string]string{"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read", "": "read"}[role]
	if role == "" {
		role = "read" // a user of a public repository who is no collaborator
	}
	return g.rest(200, map[string]any{"permission": perm, "role_name": role,
		"user": map[string]any{"login": login, "type": "User", "site_admin": false}})
}

// authorIn reports whether login wrote anything in the state: a user
// GitHub knows.
func authorIn(st *state, login string) bool {
	for _, p := range st.PRs {
		for _, t := range p.ReviewThreads {
			for _, c := range t.Comments {
				if c.Author == login {
					return true
				}
			}
		}
		for _, r := range p.Reviews {
			if r.Author == login {
				return true
			}
		}
		for _, c := range p.Comments {
			if c.Author == login {
				return true
			}
		}
	}
	return false
}
