package store

import "github.com/saga-ai/saga-lsp/internal/filesafe"

// What a story of an epic builds on (docs/commands.md#epic-runs-run--follow--status--stop-epic): its blockers in the
// epic, each with its pull request and the decisions its journal records.
// The runner starts a dependent story from its blockers' branches; the
// handoff tells the agent (its prompt) and the reviewer (its PR body) what
// that work is.

// Handoff is one blocker a story builds on.
type Handoff struct {
	Story     string
	Title     string
	PR        string   // the blocker's story.json "pr"; empty when it has none
	Decisions []string // the blocker journal's decision entries, oldest first
}

// EpicBlockers are the story's blockers in its epic (its child entry's
// blockedBy): the epic it names (its "epic" field or its "<epic>--"
// prefix) when that epic lists it, else the first epic that lists it.
func (w *Workspace) EpicBlockers(story string) []string {
	if e := w.EpicOf(story); e != nil {
		return refIDs(e.Child(story).BlockedBy)
	}
	return nil
}

// EpicOf is the epic whose child entry gives the story its blockers (as
// EpicBlockers chooses it), or nil for a story no epic lists.
func (w *Workspace) EpicOf(story string) *Epic {
	s := w.Story(story)
	if s == nil {
		return nil
	}
	for _, id := range append([]string{s.EpicID()}, w.ListedBy(story)...) {
		if e := w.Epic(id); e != nil && e.Child(story) != nil {
			return e
		}
	}
	return nil
}

// journal is the story's journal text: an overlay's, else read from disk
// (a load keeps no journal text).
func (w *Workspace) journal(s *Story) []byte {
	if s.Journal == nil {
		return nil
	}
	if s.Journal.Src != nil {
		return s.Journal.Src
	}
	// Confined: a blocker's journal made a link to a file outside the
	// workspace must not reach the next story's prompt.
	src, _ := filesafe.ReadWorkspaceFile(w.Root, s.Journal.Rel)
	return src
}

// Handoffs lists what the story builds on, in its blockedBy order. A
// blocker this workspace does not hold is listed by id alone.
func Handoffs(w *Workspace, story string) []Handoff {
	var out []Handoff
	for _, b := range w.EpicBlockers(story) {
		h := Handoff{Story: b}
		if s := w.Story(b); s != nil {
			h.Title, h.PR = s.Title, s.PR
			h.Decisions = JournalDecisions(w.journal(s))
		}
		out = append(out, h)
	}
	return out
}
