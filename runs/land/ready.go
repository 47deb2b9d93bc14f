package land

import (
	"fmt"
	"strings"
)

// The readiness of a story (docs/landing.md#readiness), from the least to
// the most ready.
const (
	NoPR       = "no PR"     // no pull request to land (not run, or opened none)
	Closed     = "closed"    // its PR was closed unmerged
	Waiting    = "waiting"   // a blocker has not landed
	Follow     = "follow"    // every blocker landed; it must follow the default branch first
	NotReady   = "not ready" // a review, a check, the merge state or a draft stops it
	NeedsCI    = "needs CI"  // no check ran on its head commit
	Pending    = "pending"   // checks running, or GitHub computing its merge state: wait
	Ready      = "ready"     // it lands now
	Queued     = "queued"    // in the merge queue: the queue merges it
	Ejected    = "ejected"   // the merge queue ejected it (a red or conflicting merge group)
	Refused    = "refused"   // GitHub refused its merge
	Failed     = "failed"    // following the default branch failed or conflicted
	Landed     = "landed"    // its PR merged
	NeedsCIFix = "push the branch with a token that triggers workflows (a personal access token or a GitHub App's, from a secret), or re-run CI on its head commit (an empty commit pushed by you, or the workflow re-run): GitHub Actions starts no workflow for a push made with its job token"
)

// Verdict is a story's readiness and why.
type Verdict struct {
	State string `json:"state"`
	Why   string `json:"why,omitempty"`
	Next  string `json:"next,omitempty"`
}

// Judge is the readiness of an open PR whose blockers all landed and which
// follows the default branch def: its review, its head commit's checks,
// its merge state (docs/landing.md#readiness).
func Judge(p *PR, def string) Verdict {
	n := fmt.Sprintf("#%d", p.Number)
	switch p.State {
	case "MERGED":
		return Verdict{State: Landed}
	case "CLOSED":
		return Verdict{State: Closed, Why: n + " was closed without being merged", Next: "reopen it, or run the story again"}
	}
	if p.BaseRefName != def {
		return Verdict{State: Follow, Why: fmt.Sprintf("%s is based on %s, not %s", n, p.BaseRefName, def)}
	}
	if p.IsDraft {
		return Verdict{State: NotReady, Why: n + " is a draft", Next: "finish the story (`saga-lsp status` says what is left), then mark it ready for review"}
	}
	switch p.ReviewDecision {
	case "CHANGES_REQUESTED":
		return Verdict{State: NotReady, Why: "a reviewer requested changes on " + n, Next: "address them (`saga-lsp run <story> --review`), then ask for a new review"}
	case "REVIEW_REQUIRED":
		return Verdict{State: NotReady, Why: n + " has not the approval the repository requires", Next: "a reviewer approves it on GitHub"}
	}
	c := p.Checks
	switch {
	case c == nil:
		return Verdict{State: NeedsCI, Why: fmt.Sprintf("no check ran on %s's head commit %s", n, short(p.HeadRefOid)), Next: NeedsCIFix}
	case len(c.Failed) > 0 || c.State == "FAILURE" || c.State == "ERROR":
		what := "its checks failed"
		if len(c.Failed) > 0 {
			what = "checks failed: " + strings.Join(c.Failed, ", ")
		}
		return Verdict{State: NotReady, Why: fmt.Sprintf("%s on %s's head commit %s", what, n, short(p.HeadRefOid)), Next: "fix them (or re-run a flaky one on GitHub), then land again"}
	case len(c.Pending) > 0 || c.State != "SUCCESS":
		return Verdict{State: Pending, Why: fmt.Sprintf("checks still running on %s's head commit %s", n, short(p.HeadRefOid)), Next: "wait: `saga-lsp land --watch` lands it when they pass"}
	}
	switch p.MergeStateStatus {
	case "CLEAN", "HAS_HOOKS":
		return Verdict{State: Ready}
	case "DIRTY":
		return Verdict{State: NotReady, Why: fmt.Sprintf("%s conflicts with %s", n, def), Next: "resolve the conflict on its branch (merge " + def + " into it), then land again"}
	case "BEHIND":
		return Verdict{State: NotReady, Why: fmt.Sprintf("%s is behind %s, and the branch protection requires it up to date", n, def), Next: "update its branch (`gh pr update-branch`), then land again"}
	case "BLOCKED":
		return Verdict{State: NotReady, Why: fmt.Sprintf("the branch protection of %s blocks %s (a required review or check)", def, n), Next: "see the PR's merge box on GitHub"}
	case "DRAFT":
		return Verdict{State: NotReady, Why: n + " is a draft", Next: "mark it ready for review"}
	case "UNSTABLE":
		return Verdict{State: NotReady, Why: "a check not required failed on " + n, Next: "fix it or re-run it, then land again"}
	}
	return Verdict{State: Pending, Why: fmt.Sprintf("GitHub has not computed %s's merge state yet", n), Next: "wait: land again, or `saga-lsp land --watch`"}
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
