package readmodel

import (
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
)

// ReviewState is a story's review loop as its run record last left it
// (runs.Record.Review, written by a round or a watcher): every face shows it
// from here, never asking GitHub (docs/review.md#in-every-face).
type ReviewState struct {
	// Rounds is how many review rounds ran.
	Rounds int `json:"rounds"`
	// Requests are the review requests the last read left to address: the
	// n of "Address review (n)".
	Requests int `json:"requests"`
	// ChangesRequested are, of them, writers' reviews in state "changes
	// requested": the n of "changes requested (n)".
	ChangesRequested int `json:"changesRequested"`
	// Ignored counts what the last read did not count (bots, non-writers,
	// hidden comments).
	Ignored runs.ReviewIgnored `json:"ignored"`
	// NeedsYou, when set, is why the loop waits for its person: the next
	// step says it (NextStep.Text "needs you: …"), once in every face.
	NeedsYou string `json:"needsYou,omitempty"`
}

// reviewOf is the review state a record holds; nil when it holds none.
func reviewOf(rec runs.Record, haveRec bool) *ReviewState {
	if !haveRec || rec.Review == nil {
		return nil
	}
	r := rec.Review
	return &ReviewState{Rounds: r.Rounds, Requests: r.Requests, ChangesRequested: r.ChangesRequested, Ignored: r.Ignored,
		NeedsYou: strings.TrimSpace(r.NeedsYou)}
}

// RecordedReview is the story's review state as its record holds it (nil
// when none): for a face that shows the end of a run without deriving the
// whole state (`follow`).
func RecordedReview(root, story string) *ReviewState {
	rec, ok := runs.ReadRecord(root, story)
	return reviewOf(rec, ok)
}

// Text is the review state as every face words it: "changes requested (2)
// · 3 to address · 4 ignored (bots 1, non-writers 2, hidden 1) · round 1".
// The needs-you part is the next step's, never repeated here.
func (r *ReviewState) Text() string {
	var parts []string
	if r.ChangesRequested > 0 {
		parts = append(parts, fmt.Sprintf("changes requested (%d)", r.ChangesRequested))
	}
	switch {
	case r.Requests > 0:
		parts = append(parts, fmt.Sprintf("%d to address", r.Requests))
	case r.ChangesRequested == 0:
		parts = append(parts, "nothing to address")
	}
	if n := r.Ignored.Bots + r.Ignored.NonWriters + r.Ignored.Hidden; n > 0 {
		parts = append(parts, fmt.Sprintf("%d ignored (bots %d, non-writers %d, hidden %d)", n, r.Ignored.Bots, r.Ignored.NonWriters, r.Ignored.Hidden))
	}
	if r.Rounds > 0 {
		parts = append(parts, fmt.Sprintf("round %d", r.Rounds))
	} else {
		parts = append(parts, "no round yet")
	}
	return strings.Join(parts, " · ")
}

// AddressTitle is the action's title in every face that offers it: the
// lens's and the dashboard's "Address review (n)".
func (r *ReviewState) AddressTitle() string {
	return fmt.Sprintf("Address review (%d)", r.Requests)
}

// NeedsYouText is the one line that says the loop waits for its person.
func NeedsYouText(why string) string {
	return "needs you: " + why
}
