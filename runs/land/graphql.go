package land

import (
	"fmt"
	"strings"
)

// landQuery reads, in one query, the repository's merge settings and n of
// its pull requests (the alias prI is the pull request $pI): GitHub's
// secondary rate limits count requests, so one query a pass, not one per
// pull request (as runs/review's poll).
func landQuery(n int) string {
	var b strings.Builder
	b.WriteString("query SagaLand($owner: String!, $name: String!")
	for i := range n {
		fmt.Fprintf(&b, ", $p%d: Int!", i)
	}
	b.WriteString(") {\n  repository(owner: $owner, name: $name) {\n")
	b.WriteString("    mergeCommitAllowed\n    squashMergeAllowed\n    rebaseMergeAllowed\n    defaultBranchRef { name }\n    mergeQueue { id }\n")
	for i := range n {
		fmt.Fprintf(&b, "    pr%d: pullRequest(number: $p%d) { ...SagaLandPR }\n", i, i)
	}
	b.WriteString("  }\n}\n")
	if n > 0 { // GitHub refuses a fragment never used
		b.WriteString(prFragment)
	}
	return b.String()
}

// prFragment is what landing reads of a pull request. The checks are the
// rollup of its head commit: null when no check ran on it at all. Its
// merge queue entry is null when it is not queued.
const prFragment = `fragment SagaLandPR on PullRequest {
  id
  number
  url
  state
  isDraft
  headRefName
  baseRefName
  headRefOid
  reviewDecision
  mergeable
  mergeStateStatus
  mergeCommit { oid }
  mergeQueueEntry { state position }
  statusCheckRollup {
    state
    commit { oid }
    contexts(first: 100) {
      totalCount
      nodes {
        __typename
        ... on CheckRun { name status conclusion }
        ... on StatusContext { context state }
      }
    }
  }
}
`

// enqueueMutation adds a pull request to its base's merge queue, at the
// head commit it was judged at (expectedHeadOid: a push meanwhile is
// GitHub's refusal).
const enqueueMutation = `mutation SagaEnqueue($pr: ID!, $head: GitObjectID!) {
  enqueuePullRequest(input: {pullRequestId: $pr, expectedHeadOid: $head}) {
    mergeQueueEntry { state position }
  }
}
`
