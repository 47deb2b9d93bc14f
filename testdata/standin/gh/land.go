package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// What landing a pull request needs of GitHub (docs/landing.md), as
// GitHub answers it:
//
//	GraphQL  PullRequest: headRefOid, reviewDecision (REVIEW_REQUIRED when
//	         the repository requires approvals and none is given),
//	         statusCheckRollup on the head commit (null when no check ran
//	         on it: a push with Actions' job token), mergeable,
//	         mergeStateStatus, mergedAt, mergeCommit.
//	         Repository: mergeCommitAllowed, squashMergeAllowed,
//	         rebaseMergeAllowed, defaultBranchRef, mergeQueue(branch:).
//	         The merge queue and stacks: queue.go.
//	gh pr merge [<number>|<url>|<branch>] --merge|--squash|--rebase
//	         [--match-head-commit SHA] [--delete-branch] [--subject T] [-R O/R]
//	         the merge made on origin's base branch (in a temporary clone),
//	         or gh's refusal: a draft, not mergeable (conflicts), the base
//	         branch policy (a review or a check missing), a method the
//	         repository does not allow, a head that moved.
//
// The state file seeds them:
//
//	"repository": {"mergeMethods": ["merge","squash","rebase"] (default all),
//	   "requiredApprovals": N, "requireChecks": bool, "mergeQueue": bool,
//	   "ci": [{"name","status","conclusion"}]   the checks every pushed
//	         commit gets (a workflow on push / pull_request),
//	   "noCI": [sha…]  commits pushed with the job token: no check runs}
//	"checks": {"<sha>": [{"name","status","conclusion"}]}  a commit's own
//
// Not modelled: required checks by name (every check counts as required
// when requireChecks is set), "require branches to be up to date"
// (BEHIND), and GitHub retargeting a dependent PR when its base branch is deleted.

type repoSettings struct {
	MergeMethods      []string    `json:"mergeMethods,omitempty"`
	RequiredApprovals int         `json:"requiredApprovals,omitempty"`
	RequireChecks     bool        `json:"requireChecks,omitempty"`
	MergeQueue        bool        `json:"mergeQueue,omitempty"`
	CI                []*checkRun `json:"ci,omitempty"`
	NoCI              []string    `json:"noCI,omitempty"`
	// QueueChecks: the checks of the merge group of the PR numbered
	// (queue.go).
	QueueChecks map[string][]*checkRun `json:"queueChecks,omitempty"`
}

type checkRun struct {
	Name       string `json:"name"`
	Status     string `json:"status,omitempty"`     // COMPLETED (default), IN_PROGRESS, QUEUED…
	Conclusion string `json:"conclusion,omitempty"` // SUCCESS, FAILURE… (when completed)
}

func (s *repoSettings) methods() []string {
	if s == nil || len(s.MergeMethods) == 0 {
		return []string{"merge", "squash", "rebase"}
	}
	return s.MergeMethods
}

// landRepo adds the repository's merge settings to its object.
func (g *gh) landRepo(st *state, o object) {
	m := st.Repo.methods()
	o["mergeCommitAllowed"] = slices.Contains(m, "merge")
	o["squashMergeAllowed"] = slices.Contains(m, "squash")
	o["rebaseMergeAllowed"] = slices.Contains(m, "rebase")
	def := g.defaultBranch()
	o["defaultBranchRef"] = object{"__typename": "Ref", "name": def, "prefix": "refs/heads/"}
	o["mergeQueue"] = resolver(func(args map[string]any) (any, error) {
		branch, _ := args["branch"].(string)
		if st.Repo == nil || !st.Repo.MergeQueue || (branch != "" && branch != def) {
			return nil, nil
		}
		return object{"__typename": "MergeQueue", "id": "MQ_standin", "url": "https://github.com/queue/" + def}, nil
	})
}

// landPR adds to a pull request's object what landing reads.
func (g *gh) landPR(st *state, p *pr, o object) {
	origin, _ := g.originDir()
	head := p.HeadOid
	if p.State == "OPEN" && origin != "" {
		head = strings.TrimSpace(must(originGit(origin, "rev-parse", "--verify", "-q", "refs/heads/"+p.HeadRefName)))
	}
	o["headRefOid"] = head
	if o["reviewDecision"] == nil && st.Repo != nil && st.Repo.RequiredApprovals > 0 {
		o["reviewDecision"] = "REVIEW_REQUIRED"
	}
	rollup := st.rollup(head)
	o["statusCheckRollup"] = nil
	if rollup != nil {
		o["statusCheckRollup"] = rollup.object(head)
	}
	mergeable, status := g.mergeState(st, p, origin, head, o["reviewDecision"], rollup)
	o["mergeable"], o["mergeStateStatus"] = mergeable, status
	o["mergeQueueEntry"] = st.queueEntryObject(p)
	o["mergeQueueEntry"] = st.queueEntryObject(p)
	o["mergedAt"], o["mergeCommit"] = nil, nil
	if p.State == "MERGED" {
		o["mergedAt"] = p.MergedAt
		o["mergeCommit"] = object{"__typename": "Commit", "oid": p.MergeCommit}
	}
}

func must(s string, _ error) string { return s }

// rollupOf is a commit's checks: its own, else none for a job-token push,
// else the repository's CI.
type rollupOf []*checkRun

func (st *state) rollup(sha string) rollupOf {
	if sha == "" {
		return nil
	}
	if c, ok := st.Checks[sha]; ok {
		return c
	}
	if st.Repo == nil || slices.Contains(st.Repo.NoCI, sha) {
		return nil
	}
	return st.Repo.CI
}

// state is the rollup's combined state, as GitHub combines it.
func (r rollupOf) state() string {
	out := "SUCCESS"
	for _, c := range r {
		switch {
		case c.Status != "" && c.Status != "COMPLETED":
			if out == "SUCCESS" {
				out = "PENDING"
			}
		case !slices.Contains([]string{"SUCCESS", "NEUTRAL", "SKIPPED"}, c.Conclusion):
			out = "FAILURE"
		}
	}
	return out
}

func (r rollupOf) object(sha string) object {
	nodes := []object{}
	for _, c := range r {
		status, conclusion := c.Status, any(c.Conclusion)
		if status == "" {
			status = "COMPLETED"
		}
		if status != "COMPLETED" {
			conclusion = nil
		}
		nodes = append(nodes, object{"__typename": "CheckRun", "name": c.Name, "status": status, "conclusion": conclusion})
	}
	return object{"__typename": "StatusCheckRollup", "id": "SCR_" + sha, "state": r.state(),
		"commit": object{"__typename": "Commit", "oid": sha}, "contexts": connection("StatusCheckRollupContextConnection", nodes)}
}

// mergeState is mergeable and mergeStateStatus as GitHub computes them
// (the subset docs/landing.md names).
func (g *gh) mergeState(st *state, p *pr, origin, head string, decision any, rollup rollupOf) (string, string) {
	if p.State != "OPEN" || origin == "" || head == "" {
		return "UNKNOWN", "UNKNOWN"
	}
	base := strings.TrimSpace(must(originGit(origin, "rev-parse", "--verify", "-q", "refs/heads/"+p.BaseRefName)))
	if base == "" {
		return "UNKNOWN", "UNKNOWN"
	}
	mergeable := "MERGEABLE"
	if _, err := originGit(origin, "merge-tree", "--write-tree", base, head); err != nil {
		mergeable = "CONFLICTING"
	}
	switch {
	case p.IsDraft:
		return mergeable, "DRAFT"
	case mergeable == "CONFLICTING":
		return mergeable, "DIRTY"
	case decision == "REVIEW_REQUIRED" || decision == "CHANGES_REQUESTED":
		return mergeable, "BLOCKED"
	}
	required := st.Repo != nil && st.Repo.RequireChecks
	switch {
	case rollup == nil && required:
		return mergeable, "BLOCKED"
	case rollup != nil && rollup.state() != "SUCCESS":
		if required {
			return mergeable, "BLOCKED"
		}
		return mergeable, "UNSTABLE"
	}
	return mergeable, "CLEAN"
}

// ---- pr merge ----

func (g *gh) prMerge(args []string) error {
	f, err := parseFlags("pr merge", args, flagSpec{long: "merge", short: "m"}, flagSpec{long: "squash", short: "s"},
		flagSpec{long: "rebase", short: "r"}, flagSpec{long: "match-head-commit", value: true},
		flagSpec{long: "delete-branch", short: "d"}, flagSpec{long: "subject", short: "t", value: true},
		flagSpec{long: "body", short: "b", value: true}, flagSpec{long: "auto"}, flagSpec{long: "repo", short: "R", value: true})
	if err != nil {
		return err
	}
	var method string
	for _, m := range []string{"merge", "squash", "rebase"} {
		if f.vals[m] == "true" {
			if method != "" {
				return fail(1, "only one of --merge, --rebase, or --squash can be enabled")
			}
			method = m
		}
	}
	if method == "" {
		return fail(1, "--merge, --rebase, or --squash required when not running interactively")
	}
	if f.vals["auto"] == "true" {
		return fail(1, "gh stand-in: --auto is not simulated")
	}
	repo, arg, err := g.prTarget(f)
	if err != nil {
		return err
	}
	origin, err := g.originDir()
	if err != nil {
		return err
	}
	var msg string
	err = g.withState(func(st *state) (bool, error) {
		p, err := g.find(st, repo, arg)
		if err != nil {
			return false, err
		}
		if p.State == "MERGED" {
			return false, fail(1, "X Pull request %s#%d was already merged", repo, p.Number)
		}
		if p.State != "OPEN" {
			return false, fail(1, "X Pull request %s#%d is closed", repo, p.Number)
		}
		o := prObject(p)
		g.landPR(st, p, o)
		head := o["headRefOid"].(string)
		if f.set["match-head-commit"] && f.vals["match-head-commit"] != head {
			return false, fail(1, "GraphQL: Head branch was modified. Review and try the merge again. (mergePullRequest)")
		}
		switch o["mergeStateStatus"] {
		case "DRAFT":
			return false, fail(1, "X Pull request %s#%d is still a draft", repo, p.Number)
		case "DIRTY":
			return false, fail(1, "X Pull request %s#%d is not mergeable: the merge commit cannot be cleanly created.", repo, p.Number)
		case "BLOCKED":
			return false, fail(1, "X Pull request %s#%d is not mergeable: the base branch policy prohibits the merge.\nTo have the pull request merged after all the requirements have been met, add the `--auto` flag.", repo, p.Number)
		}
		if s := st.stackOf(repo, p.Number); s != nil {
			return false, stackRefusal(s, "merging")
		}
		if s := st.stackOf(repo, p.Number); s != nil {
			return false, stackRefusal(s, "merging")
		}
		if st.Repo != nil && st.Repo.MergeQueue {
			return false, fail(1, "GraphQL: Changes must be made through the merge queue (mergePullRequest)")
		}
		if !slices.Contains(st.Repo.methods(), method) {
			what := map[string]string{"merge": "Merge commits", "squash": "Squash merges", "rebase": "Rebase merges"}[method]
			return false, fail(1, "GraphQL: %s are not allowed on this repository. (mergePullRequest)", what)
		}
		subject := f.vals["subject"]
		if subject == "" {
			subject = map[string]string{"merge": fmt.Sprintf("Merge pull request #%d from %s", p.Number, p.HeadRefName),
				"squash": fmt.Sprintf("%s (#%d)", p.Title, p.Number)}[method]
		}
		commit, err := mergeOnOrigin(origin, method, p.BaseRefName, p.HeadRefName, subject)
		if err != nil {
			return false, err
		}
		p.State, p.HeadOid, p.MergeCommit = "MERGED", head, commit
		p.MergedAt = time.Now().UTC().Format(time.RFC3339)
		if f.vals["delete-branch"] == "true" {
			originGit(origin, "update-ref", "-d", "refs/heads/"+p.HeadRefName)
		}
		verb := map[string]string{"merge": "Merged", "squash": "Squashed and merged", "rebase": "Rebased and merged"}[method]
		msg = fmt.Sprintf("✓ %s pull request %s#%d (%s)", verb, repo, p.Number, p.Title)
		return true, nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(g.stderr, msg)
	return nil
}

// mergeOnOrigin merges head into base on origin, in a temporary clone, by
// method, and returns base's new tip.
func mergeOnOrigin(origin, method, base, head, subject string) (string, error) {
	dir, err := os.MkdirTemp("", "gh-standin-merge-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	wt := filepath.Join(dir, "w")
	id := []string{"-c", "user.name=GitHub", "-c", "user.email=noreply@github.com", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"}
	run := func(args ...string) error {
		out, err := execGit(wt, append(slices.Clone(id), args...)...)
		if err != nil {
			return fail(1, "gh stand-in: merge on origin: git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if out, err := execGit(dir, "clone", "-q", origin, wt); err != nil {
		return "", fail(1, "gh stand-in: clone origin: %v\n%s", err, out)
	}
	steps := map[string][][]string{
		"merge":  {{"checkout", "-q", base}, {"merge", "-q", "--no-ff", "-m", subject, "origin/" + head}},
		"squash": {{"checkout", "-q", base}, {"merge", "-q", "--squash", "origin/" + head}, {"commit", "-q", "--allow-empty", "-m", subject}},
		"rebase": {{"checkout", "-q", "-B", "landing", "origin/" + head}, {"rebase", "-q", "origin/" + base}, {"checkout", "-q", base}, {"merge", "-q", "--ff-only", "landing"}},
	}[method]
	for _, s := range steps {
		if err := run(s...); err != nil {
			return "", err
		}
	}
	if err := run("push", "-q", "origin", "HEAD:refs/heads/"+base); err != nil {
		return "", err
	}
	out, err := execGit(wt, "rev-parse", "HEAD")
	return strings.TrimSpace(out), err
}

func execGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}
