package land

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
)

// Repository is what landing reads of the repository: its default branch,
// the merge methods it allows (in the order land prefers them: merge,
// squash, rebase) and whether its default branch has a merge queue.
type Repository struct {
	Default string   `json:"default"`
	Methods []string `json:"methods"`
	Queue   bool     `json:"queue,omitempty"`
}

// PR is a pull request as landing reads it.
type PR struct {
	ID          string `json:"id"` // GitHub's node id
	Number      int    `json:"number"`
	URL         string `json:"url"`
	State       string `json:"state"` // OPEN, MERGED, CLOSED
	IsDraft     bool   `json:"isDraft"`
	HeadRefName string `json:"headRefName"`
	BaseRefName string `json:"baseRefName"`
	HeadRefOid  string `json:"headRefOid"`
	// ReviewDecision: APPROVED, CHANGES_REQUESTED, REVIEW_REQUIRED, or ""
	// when the repository requires no review.
	ReviewDecision   string `json:"reviewDecision,omitempty"`
	Mergeable        string `json:"mergeable"`
	MergeStateStatus string `json:"mergeStateStatus"`
	MergeCommit      string `json:"mergeCommit,omitempty"`
	// Checks is the rollup of the head commit's checks; nil when none ran.
	Checks *Rollup `json:"checks,omitempty"`
	// Queue is its merge queue entry; nil when it is not queued.
	Queue *QueueEntry `json:"mergeQueueEntry,omitempty"`
}

// Rollup is GitHub's combined state of a commit's checks and statuses.
type Rollup struct {
	State   string   `json:"state"` // SUCCESS, PENDING, FAILURE, ERROR, EXPECTED
	Commit  string   `json:"commit"`
	Total   int      `json:"total"`
	Failed  []string `json:"failed,omitempty"`  // the checks that failed, by name
	Pending []string `json:"pending,omitempty"` // not completed yet
}

// maxAnswer bounds what is read of gh's answer.
const maxAnswer = 8 << 20

// Read asks GitHub, through gh in dir, for the repository's merge settings
// and the pull requests numbered, in one GraphQL query. A pull request
// GitHub cannot resolve is left out of the map and named in the error.
func Read(ctx context.Context, gh, dir, owner, name string, numbers []int) (*Repository, map[int]*PR, error) {
	var uniq []int
	for _, n := range numbers {
		if !slices.Contains(uniq, n) {
			uniq = append(uniq, n)
		}
	}
	args := []string{"api", "graphql", "-f", "query=" + landQuery(len(uniq)), "-F", "owner=" + owner, "-F", "name=" + name}
	for i, n := range uniq {
		args = append(args, "-F", "p"+strconv.Itoa(i)+"="+strconv.Itoa(n))
	}
	out, err := ghOutput(ctx, gh, dir, args...)
	var w struct {
		Data struct {
			Repository map[string]json.RawMessage `json:"repository"`
		} `json:"data"`
		Errors []struct {
			Message string `json:"message"`
			Path    []any  `json:"path"`
		} `json:"errors"`
	}
	if jerr := json.Unmarshal(out, &w); jerr != nil || w.Data.Repository == nil {
		if err == nil {
			err = fmt.Errorf("gh printed what is not GitHub's answer: %v", jerr)
		}
		if len(w.Errors) > 0 {
			err = fmt.Errorf("GitHub: %s", w.Errors[0].Message)
		}
		return nil, nil, fmt.Errorf("read %s/%s's pull requests: %w", owner, name, err)
	}
	r := w.Data.Repository
	repo := &Repository{}
	var allowed [3]bool
	json.Unmarshal(r["mergeCommitAllowed"], &allowed[0])
	json.Unmarshal(r["squashMergeAllowed"], &allowed[1])
	json.Unmarshal(r["rebaseMergeAllowed"], &allowed[2])
	for i, m := range Methods {
		if allowed[i] {
			repo.Methods = append(repo.Methods, m)
		}
	}
	var ref struct{ Name string }
	json.Unmarshal(r["defaultBranchRef"], &ref)
	repo.Default = ref.Name
	repo.Queue = len(r["mergeQueue"]) > 0 && string(r["mergeQueue"]) != "null"
	prs := map[int]*PR{}
	var errs []error
	for i, n := range uniq {
		alias := "pr" + strconv.Itoa(i)
		pr, derr := decodePR(r[alias])
		if derr != nil {
			for _, e := range w.Errors {
				if len(e.Path) > 1 && e.Path[1] == alias {
					derr = fmt.Errorf("GitHub: %s", e.Message)
				}
			}
			errs = append(errs, fmt.Errorf("read %s/%s#%d: %w", owner, name, n, derr))
			continue
		}
		prs[n] = pr
	}
	return repo, prs, errors.Join(errs...)
}

// Methods are the merge methods, in the order land prefers them when
// --method does not choose: GitHub's own merge button's order.
var Methods = []string{"merge", "squash", "rebase"}

func decodePR(raw json.RawMessage) (*PR, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("no such pull request")
	}
	var p struct {
		PR
		// The same JSON names as PR's, so that these win.
		MergeCommit *struct{ Oid string } `json:"mergeCommit"`
		// ReviewDecision is null when no review is required.
		ReviewDecision    *string `json:"reviewDecision"`
		StatusCheckRollup *struct {
			State  string
			Commit struct{ Oid string }
			// Contexts are check runs (name, status, conclusion) and
			// commit statuses (context, state).
			Contexts struct {
				TotalCount int
				Nodes      []struct {
					Name, Status, Conclusion string
					Context, State           string
				}
			}
		}
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("GitHub's answer: %w", err)
	}
	pr := p.PR
	if p.MergeCommit != nil {
		pr.MergeCommit = p.MergeCommit.Oid
	}
	if p.ReviewDecision != nil {
		pr.ReviewDecision = *p.ReviewDecision
	}
	if s := p.StatusCheckRollup; s != nil {
		pr.Checks = &Rollup{State: s.State, Commit: s.Commit.Oid, Total: s.Contexts.TotalCount}
		for _, n := range s.Contexts.Nodes {
			name, done, ok := n.Name, n.Status == "COMPLETED", slices.Contains([]string{"SUCCESS", "NEUTRAL", "SKIPPED"}, n.Conclusion)
			if n.Context != "" { // a commit status
				name, done, ok = n.Context, n.State != "PENDING" && n.State != "EXPECTED", n.State == "SUCCESS"
			}
			switch {
			case !done:
				pr.Checks.Pending = append(pr.Checks.Pending, name)
			case !ok:
				pr.Checks.Failed = append(pr.Checks.Failed, name)
			}
		}
	}
	return &pr, nil
}

// ghOutput is gh's answer, bounded (runs.GHOutput).
func ghOutput(ctx context.Context, gh, dir string, args ...string) ([]byte, error) {
	return runs.GHOutput(ctx, gh, dir, maxAnswer, args...)
}

// Stacks are the open native stacks (GitHub's pull request stacks, a
// public preview) of the repository, by the number of each open PR in
// one: one REST call a pass, all pages (`gh api --paginate`). A
// repository GitHub has no stacks for answers 404: none.
func Stacks(ctx context.Context, gh, dir, owner, name string) (map[int]*Stack, error) {
	out, err := ghOutput(ctx, gh, dir, "api", "--paginate", "repos/"+owner+"/"+name+"/stacks?per_page=100")
	if err != nil {
		if strings.Contains(err.Error(), "HTTP 404") {
			return map[int]*Stack{}, nil
		}
		return nil, fmt.Errorf("list %s/%s's pull request stacks: %w", owner, name, err)
	}
	type stackPR struct {
		Number int
		State  string
	}
	stacks := map[int]*Stack{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() { // --paginate prints one array a page
		var page []struct {
			Number       int
			Open         bool
			Base         struct{ Ref string }
			PullRequests []stackPR `json:"pull_requests"`
		}
		if err := dec.Decode(&page); err != nil {
			return nil, fmt.Errorf("list %s/%s's pull request stacks: GitHub's answer: %w", owner, name, err)
		}
		for _, s := range page {
			if !s.Open {
				continue
			}
			for i, p := range s.PullRequests {
				if p.State == "open" {
					stacks[p.Number] = &Stack{Number: s.Number, Base: s.Base.Ref, Size: len(s.PullRequests), Position: i + 1}
				}
			}
		}
	}
	return stacks, nil
}
