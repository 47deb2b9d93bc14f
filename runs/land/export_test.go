package land

// LandQueryForTest is a pass's query of n pull requests, for its
// validation against GitHub's schema.
func LandQueryForTest(n int) string { return landQuery(n) }

// EnqueueMutation is the mutation that enqueues a pull request.
const EnqueueMutation = enqueueMutation
