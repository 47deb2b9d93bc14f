package review

// The GraphQL documents saga-lsp sends GitHub, each in one place; the
// tests validate them against GitHub's published schema
// (docs/review.md#what-saga-lsp-asks-github).

// prQuery reads everything a round needs of one pull request. Each list
// is its first 100 (GitHub's largest page); a longer list is reported, and
// what is past it is left for a later round (docs/review.md#limits).
const prQuery = `query SagaReview($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
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
  }
}`

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
