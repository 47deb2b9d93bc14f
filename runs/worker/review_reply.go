package worker

import (
	"context"

	"github.com/saga-ai/saga-lsp/runs/review"
)

// postReplies posts the round's answers (pending the reply side).
func (r *run) postReplies(ctx context.Context, outs []review.Outcome, complete bool) {}
