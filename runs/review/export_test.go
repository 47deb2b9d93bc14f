package review

// PRQueryForTest is the review query, for its validation against GitHub's schema.
const PRQueryForTest = prQuery

// MutationsForTest are the reply mutations, by name, with variables of
// the types they declare, for their validation against GitHub's schema.
var MutationsForTest = map[string]struct {
	Doc  string
	Vars map[string]any
}{
	"reply":   {replyMutation, map[string]any{"thread": "PRRT_x", "body": "b"}},
	"resolve": {resolveMutation, map[string]any{"thread": "PRRT_x"}},
	"comment": {commentMutation, map[string]any{"subject": "PR_x", "body": "b"}},
}
