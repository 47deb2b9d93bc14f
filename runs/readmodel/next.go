package readmodel

import (
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// The actions a face offers as a story's next step (StoryState.Next): the
// lens's command, the dashboard's button, `status`'s "next:" line.
const (
	NextRun    = "run"     // start it, or continue its last attempt
	NextStop   = "stop"    // it runs: follow it, or stop it
	NextReview = "review"  // completed: review its work and its PR
	NextOpenPR = "open-pr" // completed without a PR yet: `run` opens it, without its agent
	// NextAddressReview: completed, its PR's review asks for changes the
	// loop may address: `run <s> --review` (the lens's "Address review (n)").
	NextAddressReview = "address-review"
	// NextResolve: a restack or land's follow of the default branch stopped
	// on a conflict, and its task waits for a run (StoryState.Conflict):
	// `land --resolve <s>` (the dashboard's Resolve).
	NextResolve = "resolve"
)

// NextStep is a story's next step: the action every face offers for it, and
// the step in words.
type NextStep struct {
	Action string `json:"action"`
	Text   string `json:"text"`
}

// Next is the story's next step, from its state alone: the one derivation
// every face renders (docs/architecture.md#one-read-model-of-a-run). A
// completed story is never offered a run — its next step is its review
// (then its PR), or `run --again` from a terminal; with review requests
// recorded on its PR, a review round (`run <s> --review`). When the review
// loop waits for its person (ReviewState.NeedsYou) the step is the review
// (NextReview: nothing to start) and its text is the one "needs you: …"
// line every face shows, once.
func (s StoryState) Next() NextStep {
	run := "`saga-lsp run " + s.ID + "`"
	switch s.State {
	case EpicRunning:
		return NextStep{NextStop, "follow it (`saga-lsp follow " + s.ID + "`) or stop it (`saga-lsp stop " + s.ID + "`)"}
	case runs.StatusCompleted:
		again := " (or `saga-lsp run " + s.ID + " --again`)"
		switch {
		case s.BaseMoved != nil:
			// Still a review for the faces' actions; the words say the step.
			return NextStep{NextReview, "restack it: `saga-lsp restack " + s.ID + "` rebuilds it on " + s.BaseMoved.Base + "'s new tip and runs its checks again"}
		case s.NoPR != nil:
			return NextStep{NextOpenPR, s.NoPR.Next}
		case s.PR != "" && s.Review != nil && s.Review.NeedsYou != "":
			return NextStep{NextReview, NeedsYouText(s.Review.NeedsYou) + " — read its PR " + s.PR +
				"; `saga-lsp run " + s.ID + " --review` starts another round"}
		case s.PR != "" && s.Review != nil && s.Review.Requests > 0:
			return NextStep{NextAddressReview, fmt.Sprintf("address its review (%d): `saga-lsp run %s --review`", s.Review.Requests, s.ID)}
		case s.PR != "":
			return NextStep{NextReview, "review its PR " + s.PR + again}
		}
		if s.Branch != "" {
			return NextStep{NextReview, "review its work on " + s.Branch + again}
		}
		// No branch, no PR: its tasks are completed in the checkout itself
		// (merged, its branch cleaned away).
		return NextStep{NextReview, "nothing to run: its work is in the checkout" + again}
	case runs.StatusBlocked:
		return NextStep{NextRun, "resolve the blocker in " + store.JournalFileRel(s.ID) + ", then " + run}
	case StoryPending:
		return NextStep{NextRun, "run it: " + run}
	}
	if c := s.Conflict; c != nil {
		return NextStep{NextResolve, fmt.Sprintf("resolve its conflict in %s: `saga-lsp land --resolve %s` starts its run on task %s",
			strings.Join(c.Files, ", "), s.ID, c.Task)}
	}
	// failed, timeout, stopped: the attempt goes on from its branch.
	return NextStep{NextRun, run + " continues its attempt"}
}

// Next is an epic's story's next step, as the story's own: waiting, ready
// or held for its epic, it is pending to itself.
func (es EpicStory) Next() NextStep {
	state := es.State
	switch state {
	case EpicWaiting, EpicReady, EpicHeld:
		state = StoryPending
	}
	return StoryState{ID: es.ID, State: state, PR: es.PR, NoPR: es.NoPR, Branch: es.Branch, BaseMoved: es.BaseMoved, Review: es.Review,
		Conflict: es.Conflict}.Next()
}
