package main

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rhysd/actionlint"
)

// gh api: the REST endpoints saga-lsp calls, answered as GitHub does (its
// JSON names; a 404 prints GitHub's message body and exits 1), and GraphQL
// (review.go, reply.go):
//
//	GET repos/{owner}/{repo}/actions/workflows/<file>     a workflow: id, name, path, state, …
//	GET repos/{owner}/{repo}/actions/runs/<id>/artifacts  a run's artifacts: name, size_in_bytes, expired, …
//	GET repos/{owner}/{repo}/collaborators/<login>/permission
//	POST repos/{owner}/{repo}/pulls/<n>/requested_reviewers  -f reviewers[]=<login>…
//	GET repos/{owner}/{repo}/stacks                       the native stacks of pull requests (queue.go)
//	POST graphql                                          -f query=… with -f/-F variables
//
// A REST call is first checked against GitHub's published description
// (ghrest, reply.go): a call it does not describe is the stand-in's
// refusal, and each answer is checked before it is printed.
//
// {owner} and {repo} are the current repository's, as gh fills them in.
// An artifact's size_in_bytes is its files' total here (GitHub's is its
// zip's).
func (g *gh) api(args []string) error {
	f, err := parseFlags("api", args, flagSpec{long: "method", short: "X", value: true}, flagSpec{long: "repo", short: "R", value: true},
		flagSpec{long: "raw-field", short: "f", value: true}, flagSpec{long: "field", short: "F", value: true}, flagSpec{long: "paginate"})
	if err != nil {
		return err
	}
	if len(f.positional) == 1 && f.positional[0] == "graphql" {
		return g.graphql(f)
	}
	if len(f.positional) != 1 {
		return fail(1, "gh stand-in: api <endpoint>")
	}
	repo, err := g.authRepo(f)
	if err != nil {
		return err
	}
	owner, name, _ := strings.Cut(repo, "/")
	path := strings.TrimPrefix(f.positional[0], "/")
	path = strings.NewReplacer("{owner}", owner, "{repo}", name).Replace(path)
	op, vals, fields, err := g.restCall(f, path)
	if err != nil {
		return err
	}
	g.op = op
	notFound := func() error {
		return g.rest(404, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"})
	}
	if !strings.EqualFold(vals["owner"]+"/"+vals["repo"], repo) {
		return notFound()
	}
	if err := g.rateLimited(false); err != nil {
		return err
	}
	switch op.ID {
	case "repos/get-collaborator-permission-level":
		return g.permission(repo, vals["username"])
	case "pulls/request-reviewers":
		return g.requestReviewers(repo, vals["pull_number"], fields)
	case "pull-request-stacks/list":
		return g.stacks(repo) // queue.go; one page: --paginate changes nothing
	}
	path, _, _ = strings.Cut(path, "?")
	rest, ok := strings.CutPrefix(path, "repos/"+repo+"/actions/")
	if !ok {
		return fail(1, "gh stand-in: api %s is not simulated", path)
	}
	if file, ok := strings.CutPrefix(rest, "workflows/"); ok && !strings.Contains(file, "/") {
		if !g.workflowExists(repo, file) {
			return notFound()
		}
		wfName := file
		if origin, err := g.originDir(); err == nil {
			if content, err := originGit(origin, "show", "refs/heads/"+g.defaultBranch()+":.github/workflows/"+file); err == nil {
				if wf, errs := actionlint.Parse([]byte(content)); len(errs) == 0 && wf.Name != nil {
					wfName = wf.Name.Value
				}
			}
		}
		id := workflowID(file)
		return g.rest(200, map[string]any{"id": id, "node_id": fmt.Sprintf("W_standin%d", id), "name": wfName,
			"path": ".github/workflows/" + file, "state": "active",
			"url":      fmt.Sprintf("https://api.github.com/repos/%s/actions/workflows/%d", repo, id),
			"html_url": fmt.Sprintf("https://github.com/%s/blob/%s/.github/workflows/%s", repo, g.defaultBranch(), file)})
	}
	if runs, ok := strings.CutPrefix(rest, "runs/"); ok {
		idText, tail, _ := strings.Cut(runs, "/")
		if tail != "artifacts" {
			return fail(1, "gh stand-in: api %s is not simulated", path)
		}
		var run *wfRun
		err := g.withState(func(st *state) (bool, error) {
			r, err := runArg(st, repo, idText)
			if err != nil {
				return false, err
			}
			if r != nil {
				cp := *r
				run = &cp
			}
			return false, nil
		})
		if err != nil || run == nil {
			return notFound()
		}
		list := []any{}
		for i, a := range run.Artifacts {
			var size int64
			filepath.WalkDir(filepath.Join(run.Dir, "artifacts", a), func(_ string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					if fi, err := d.Info(); err == nil {
						size += fi.Size()
					}
				}
				return nil
			})
			id := run.ID*10 + int64(i)
			list = append(list, map[string]any{"id": id, "node_id": "MDg6QXJ0aWZhY3Q" + strconv.FormatInt(id, 10), "name": a,
				"size_in_bytes": size, "expired": false,
				"url":                  fmt.Sprintf("https://api.github.com/repos/%s/actions/artifacts/%d", repo, id),
				"archive_download_url": fmt.Sprintf("https://api.github.com/repos/%s/actions/artifacts/%d/zip", repo, id),
				"workflow_run":         map[string]any{"id": run.ID, "head_branch": run.HeadBranch, "head_sha": run.HeadSha}})
		}
		return g.rest(200, map[string]any{"total_count": len(list), "artifacts": list})
	}
	return fail(1, "gh stand-in: api %s is not simulated", path)
}
