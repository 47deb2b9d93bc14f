package review

import (
	"fmt"
	"strings"
)

// The GraphQL documents saga-lsp sends GitHub, each in one place; the
// tests validate them against GitHub's published schema
// (docs/review.md#what-saga-lsp-asks-github).

// prQuery reads everything a round needs of one pull request. Each list
// is its first 100 (GitHub's largest page); a longer list is reported, and
// what is past it is left for a later round (docs/review.md#limits).
const prQuery = `query SagaReview($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) { ...SagaReviewPR }
  }
}
` + prFragment

// prFragment is what saga-lsp reads of one pull request: prQuery's, and
// each pull request's of a watcher's poll (pollQuery).
const prFragment = `fragment SagaReviewPR on PullRequest {
  id
  url
  number
  state
  headRefName
  reviewDecision
  reviewThreads(first: 100) {
    pageInfo { hasNextPage }
    nodes {
      id
      isResolved
      isOutdated
      path
      line
      comments(first: 100) {
        pageInfo { hasNextPage }
        nodes { id url body updatedAt isMinimized author { __typename login } }
      }
    }
  }
  reviews(first: 100) {
    pageInfo { hasNextPage }
    nodes { id url body state updatedAt author { __typename login } }
  }
  comments(first: 100) {
    pageInfo { hasNextPage }
    nodes { id url body updatedAt isMinimized author { __typename login } }
  }
}
`

// pollQuery reads the reviews of n pull requests in one query (a
// watcher's poll, docs/review.md#watching): the alias prI is the
// repository $oI/$nI, with its pull request $pI. GitHub's secondary rate
// limits count requests, and its points a query's connections whichever
// pull requests share it: one query a poll, not one per pull request.
func pollQuery(n int) string {
	var b strings.Builder
	b.WriteString("query SagaPoll(")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$o%d: String!, $n%d: String!, $p%d: Int!", i, i, i)
	}
	b.WriteString(") {\n")
	for i := range n {
		fmt.Fprintf(&b, "  pr%d: repository(owner: $o%d, name: $n%d) { pullRequest(number: $p%d) { ...SagaReviewPR } }\n", i, i, i, i)
	}
	b.WriteString("}\n")
	b.WriteString(prFragment)
	return b.String()
}

// The replies (docs/review.md#what-goes-out-the-replies): a reply on a
// review thread, a thread resolved, a comment on the PR itself. Each asks
// back only what saga-lsp logs.
const (
	replyMutation = `mutation SagaReply($thread: ID!, $body: String!) {
  addPullRequestReviewThreadReply(input: {pullRequestReviewThreadId: $thread, body: $body}) {
    comment { id url }
  }
}`
	resolveMutation = `mutation SagaResolve($thread: ID!) {
  resolveReviewThread(input: {threadId: $thread}) {
    thread { id isResolved }
  }
}`
	commentMutation = `mutation SagaComment($subject: ID!, $body: String!) {
  addComment(input: {subjectId: $subject, body: $body}) {
    commentEdge { node { id url } }
  }
}`
)
