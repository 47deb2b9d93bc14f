package review

// PollQueryForTest is a poll's query of n pull requests, for its
// validation against GitHub's schema.
func PollQueryForTest(n int) string { return pollQuery(n) }
