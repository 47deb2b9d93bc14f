package worker

import (
	"context"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/review"
)

// postReplies answers the round's tasks on GitHub (review.Post, which
// reads the review again just before, so that a reply already there is
// never posted twice) and asks the writers who requested changes for their
// review again once the story completed. A reply the record says was
// posted is not offered again either. What fails is said; the next
// `run --review` posts what is missing.
func (r *run) postReplies(ctx context.Context, outs []review.Outcome, complete bool) {
	rs := r.review
	outs = slices.DeleteFunc(outs, func(o review.Outcome) bool { return slices.Contains(rs.rec.Replied, o.Revision()) })
	gh := lookPath(r.o.GH)
	if len(outs) == 0 || gh == "" {
		return
	}
	posted, err := review.Post(ctx, gh, r.wt, rs.repo, nil, outs) // it reads the PR again first
	for _, rev := range posted.Answered() {
		if !slices.Contains(rs.rec.Replied, rev) {
			rs.rec.Replied = append(rs.rec.Replied, rev)
		}
	}
	if len(posted.Replied) > 0 {
		r.j.Step(runs.StepReview, "replied on %s: %s", r.pr, strings.Join(posted.Replied, ", "))
	}
	if len(posted.Resolved) > 0 {
		r.j.Step(runs.StepReview, "resolved: %s", strings.Join(posted.Resolved, ", "))
	}
	for _, h := range posted.Held {
		r.j.Warn(runs.StepReview, "reply held: %s", h)
	}
	if err != nil {
		r.j.Warn(runs.StepReview, "the replies: %v; the next `saga-lsp run %s --review` posts what is missing", err, r.o.Story)
		return
	}
	if complete && len(rs.changesFrom) > 0 {
		if err := review.RequestAgain(ctx, gh, r.wt, rs.repo, rs.changesFrom); err != nil {
			r.j.Warn(runs.StepReview, "ask %s for a review again: %v", strings.Join(rs.changesFrom, ", "), err)
		} else {
			r.j.Step(runs.StepReview, "review requested again from %s", strings.Join(rs.changesFrom, ", "))
		}
	}
}
