package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The default branch's merge queue and native stacks of pull requests, as
// far as landing meets them (docs/landing.md#the-gh-stand-ins-limits):
//
//	GraphQL  enqueuePullRequest(input: {pullRequestId, expectedHeadOid})
//	         → {mergeQueueEntry {state position}}; PullRequest.mergeQueueEntry
//	         (null when not queued). Refused: no queue, a moved head, a PR
//	         not open, a draft, conflicting or blocked, one in a stack,
//	         one already queued.
//	GET repos/{owner}/{repo}/stacks   the stacks (pull-request-stack-minimal)
//	gh pr edit --base, gh pr merge    refused for a PR in an open stack
//
// The queue moves when GitHub is read (a GraphQL query): GitHub builds its
// merge groups asynchronously; here a PR enqueued by one pass of land is
// merged or ejected when the next one reads. Each entry in order is merged
// (a merge commit) onto the base as the entries before it left it: its
// merge group. The group's commit gets the repository's checks
// ("queueChecks": {"<PR number>": [check…]} the group of that PR's, else
// the commit's own, else the repository's CI). Green: the group is merged
// (the base moves to it, the PR is MERGED with the group's commit as its
// merge commit); red or conflicting: the PR is ejected (its entry is gone,
// the PR stays open); running: it and those after it wait
// (AWAITING_CHECKS, QUEUED). Guessed: the refusals' wording, a group of
// one PR's merge commit each (ALLGREEN), the merge commit method.
//
// Stacks are seeded: "stacks": [{"number", "base", "prs": [numbers, bottom
// first]}]; a stack is open while one of its PRs is.

type queueEntry struct {
	Number     int    `json:"number"`
	Head       string `json:"head"`
	State      string `json:"state"` // QUEUED, AWAITING_CHECKS
	EnqueuedAt string `json:"enqueuedAt"`
}

type stackDef struct {
	Number int    `json:"number"`
	Base   string `json:"base"`
	PRs    []int  `json:"prs"`
}

// stackOf is the open stack pull request n is in, or nil.
func (st *state) stackOf(repo string, n int) *stackDef {
	for _, s := range st.Stacks {
		if slices.Contains(s.PRs, n) && st.stackOpen(repo, s) {
			return s
		}
	}
	return nil
}

func (st *state) stackOpen(repo string, s *stackDef) bool {
	for _, p := range inRepo(st, repo) {
		if slices.Contains(s.PRs, p.Number) && p.State == "OPEN" {
			return true
		}
	}
	return false
}

func stackRefusal(s *stackDef, what string) error {
	return fail(1, "GraphQL: %s is not allowed for a pull request in a stack (stack #%d): merge the stack, or unstack the pull request (%s)", strings.ToUpper(what[:1])+what[1:], s.Number, map[string]string{"changing the base branch": "updatePullRequest", "merging": "mergePullRequest", "enqueuing": "enqueuePullRequest"}[what])
}

// queueEntryObject is a PR's merge queue entry, or nil.
func (st *state) queueEntryObject(p *pr) any {
	for i, e := range st.Queue {
		if e.Number == p.Number {
			return object{"__typename": "MergeQueueEntry", "id": "MQE_standin" + strconv.Itoa(p.Number), "state": e.State, "position": i + 1}
		}
	}
	return nil
}

// enqueue answers the enqueuePullRequest mutation.
func (g *gh) enqueue(st *state, repo string, changed *bool) resolver {
	return func(args map[string]any) (any, error) {
		in, _ := args["input"].(map[string]any)
		var p *pr
		for _, x := range inRepo(st, repo) {
			if prNodeID(x) == fmt.Sprint(in["pullRequestId"]) {
				p = x
			}
		}
		if p == nil {
			return nil, errNotResolved(fmt.Sprintf("Could not resolve to a node with the global id of '%v'.", in["pullRequestId"]))
		}
		if st.Repo == nil || !st.Repo.MergeQueue || p.BaseRefName != g.defaultBranch() {
			return nil, errNotResolved(fmt.Sprintf("Pull request #%d's base branch %s has no merge queue", p.Number, p.BaseRefName))
		}
		if p.State != "OPEN" {
			return nil, errNotResolved(fmt.Sprintf("Pull request #%d is %s", p.Number, strings.ToLower(p.State)))
		}
		if s := st.stackOf(repo, p.Number); s != nil {
			return nil, errNotResolved(stackRefusal(s, "enqueuing").Error())
		}
		if st.queueEntryObject(p) != nil {
			return nil, errNotResolved(fmt.Sprintf("Pull request #%d is already in the merge queue", p.Number))
		}
		o := prObject(p)
		g.landPR(st, p, o)
		if h, ok := in["expectedHeadOid"]; ok && h != nil && fmt.Sprint(h) != o["headRefOid"] {
			return nil, errNotResolved("Head branch was modified. Review and try the merge again.")
		}
		if s := o["mergeStateStatus"]; s != "CLEAN" && s != "HAS_HOOKS" && s != "UNSTABLE" {
			return nil, errNotResolved(fmt.Sprintf("Pull request #%d is not mergeable (%s)", p.Number, s))
		}
		st.Queue = append(st.Queue, &queueEntry{Number: p.Number, Head: o["headRefOid"].(string), State: "QUEUED", EnqueuedAt: time.Now().UTC().Format(time.RFC3339)})
		*changed = true
		return object{"__typename": "EnqueuePullRequestPayload", "clientMutationId": in["clientMutationId"], "mergeQueueEntry": st.queueEntryObject(p)}, nil
	}
}

// advanceQueue builds the queue's merge groups on origin and merges the
// green ones, ejecting the red and the conflicting (the header above).
func (g *gh) advanceQueue(st *state) (bool, error) {
	if len(st.Queue) == 0 {
		return false, nil
	}
	origin, err := g.originDir()
	if err != nil {
		return false, err
	}
	repo, _ := g.repo(&flags{vals: map[string]string{}})
	def := g.defaultBranch()
	dir, err := os.MkdirTemp("", "gh-standin-queue-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	wt := filepath.Join(dir, "w")
	git := func(args ...string) (string, error) {
		return execGit(wt, append([]string{"-c", "user.name=GitHub", "-c", "user.email=noreply@github.com", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"}, args...)...)
	}
	if out, err := execGit(dir, "clone", "-q", "-b", def, origin, wt); err != nil {
		return false, fail(1, "gh stand-in: clone origin: %v\n%s", err, out)
	}
	base, _ := git("rev-parse", "HEAD")
	cur := strings.TrimSpace(base)
	type landed struct {
		p      *pr
		commit string
		head   string
	}
	var merged []landed
	var kept []*queueEntry
	waiting := false
	for _, e := range st.Queue {
		var p *pr
		for _, x := range inRepo(st, repo) {
			if x.Number == e.Number {
				p = x
			}
		}
		head := ""
		if p != nil {
			head = strings.TrimSpace(must(originGit(origin, "rev-parse", "--verify", "-q", "refs/heads/"+p.HeadRefName)))
		}
		if p == nil || p.State != "OPEN" || head != e.Head {
			continue // closed, merged or pushed to: GitHub removes it
		}
		if waiting {
			e.State = "QUEUED"
			kept = append(kept, e)
			continue
		}
		if _, err := git("merge", "-q", "--no-ff", "-m", fmt.Sprintf("Merge pull request #%d from %s", p.Number, p.HeadRefName), e.Head); err != nil {
			git("merge", "--abort")
			continue // conflicts with the group ahead of it: ejected
		}
		commit, _ := git("rev-parse", "HEAD")
		commit = strings.TrimSpace(commit)
		checks := rollupOf(st.Repo.QueueChecks[strconv.Itoa(p.Number)])
		if checks == nil {
			checks = st.rollup(commit)
		}
		switch {
		case checks == nil || checks.state() == "PENDING":
			git("reset", "-q", "--hard", cur)
			e.State, waiting = "AWAITING_CHECKS", true
			kept = append(kept, e)
		case checks.state() == "SUCCESS":
			cur = commit
			merged = append(merged, landed{p, commit, e.Head})
		default:
			git("reset", "-q", "--hard", cur) // red: ejected
		}
	}
	if len(merged) > 0 {
		if out, err := git("push", "-q", "origin", "HEAD:refs/heads/"+def); err != nil {
			return false, fail(1, "gh stand-in: the merge queue's push: %v\n%s", err, out)
		}
	}
	now := time.Now().UTC().Format(time.RFC3339)
	for _, m := range merged {
		m.p.State, m.p.HeadOid, m.p.MergeCommit, m.p.MergedAt = "MERGED", m.head, m.commit, now
	}
	st.Queue = kept
	return true, nil
}

// stacks answers GET repos/{owner}/{repo}/stacks.
func (g *gh) stacks(repo string) error {
	list := []any{}
	err := g.withState(func(st *state) (bool, error) {
		origin, _ := g.originDir()
		for _, s := range st.Stacks {
			prs := []any{}
			for _, n := range s.PRs {
				for _, p := range inRepo(st, repo) {
					if p.Number != n {
						continue
					}
					head := p.HeadOid
					if p.State == "OPEN" && origin != "" {
						head = strings.TrimSpace(must(originGit(origin, "rev-parse", "--verify", "-q", "refs/heads/"+p.HeadRefName)))
					}
					var mergedAt any
					if p.State == "MERGED" {
						mergedAt = p.MergedAt
					}
					state := "closed"
					if p.State == "OPEN" {
						state = "open"
					}
					prs = append(prs, map[string]any{"number": p.Number, "state": state, "draft": p.IsDraft, "merged_at": mergedAt,
						"head": map[string]any{"ref": p.HeadRefName, "sha": head}})
				}
			}
			list = append(list, map[string]any{"id": 9000 + s.Number, "number": s.Number, "node_id": "S_standin" + strconv.Itoa(s.Number),
				"url": fmt.Sprintf("https://api.github.com/repos/%s/stacks/%d", repo, s.Number), "base": map[string]any{"ref": s.Base},
				"open": st.stackOpen(repo, s), "created_at": "2026-11-01T00:00:00Z", "pull_requests": prs})
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	return g.rest(200, list)
}
