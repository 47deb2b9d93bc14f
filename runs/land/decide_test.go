package land_test

// The property test of landing (docs/landing.md#the-property-test): the
// decisions every pass of land takes (land.Decide, the function land.Land
// itself calls) driven over random epics against a model of GitHub — its
// pull requests, reviews, checks, merge queue and stacks, and people who
// approve, fix CI and merge between passes — which records every mutation
// land asks for and judges it as GitHub would.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/land"
	"github.com/saga-ai/saga-lsp/test/chaos"
)

// mpr is a pull request of the model.
type mpr struct {
	n        int
	state    string // OPEN, MERGED, CLOSED
	head     string
	base     string
	draft    bool
	approved bool
	checks   string // green, red, pending, none: on the head commit
	// willApprove: a person approves it at some point; conflicts: its
	// rebuild on main conflicts; ejects: its merge group fails in the
	// queue (once, at this head).
	willApprove, conflicts, ejects bool
	mergeCommit                    string
	ejectedAt                      string // the head the queue ejected
}

// world is GitHub as the model keeps it, and what land asked of it.
type world struct {
	t        *testing.T
	r        *rand.Rand
	order    []string
	blockers map[string][]string
	pr       map[string]*mpr
	method   string // merge, squash or queue
	queue    []string
	stacks   map[int]*land.Stack
	contains map[string]map[string]bool // head → the merge commits it holds
	main     []string                   // stories merged into main, in order
	read     []string                   // main as the pass read it (fetched before it acts)
	last     map[string]*runs.LandRecord
	merged   map[string]bool // as the stories' run records say
	seq      int
	acts     int // the actions land asked for
	// counts
	landings, byPerson, ejections, follows int
}

func (w *world) fail(format string, args ...any) {
	w.t.Helper()
	w.t.Errorf(format, args...)
}

func (w *world) newHead(story string) string {
	w.seq++
	h := fmt.Sprintf("%s@%d", story, w.seq)
	w.contains[h] = map[string]bool{}
	return h
}

// randomChecks are a new head's checks.
func (w *world) randomChecks() string {
	switch x := w.r.IntN(20); {
	case x < 12:
		return "green"
	case x < 16:
		return "pending"
	case x < 18:
		return "red"
	default:
		return "none"
	}
}

// newWorld is a random epic: a DAG of up to 12 stories, its PRs stacked
// on their first blocker, random reviews and checks, perhaps a native
// stack.
func newWorld(t *testing.T, r *rand.Rand) *world {
	w := &world{t: t, r: r, blockers: map[string][]string{}, pr: map[string]*mpr{}, stacks: map[int]*land.Stack{},
		contains: map[string]map[string]bool{}, last: map[string]*runs.LandRecord{}, merged: map[string]bool{}}
	w.method = []string{"merge", "squash", "queue"}[r.IntN(3)]
	n := 1 + r.IntN(12)
	for i := range n {
		id := "s" + strconv.Itoa(i)
		w.order = append(w.order, id)
		for j := range i {
			if r.IntN(4) == 0 {
				w.blockers[id] = append(w.blockers[id], "s"+strconv.Itoa(j))
			}
		}
		if r.IntN(15) == 0 {
			continue // no PR: never run
		}
		p := &mpr{n: i + 1, state: "OPEN", base: "main", draft: r.IntN(15) == 0, approved: r.IntN(2) == 0,
			willApprove: r.IntN(5) != 0, conflicts: r.IntN(12) == 0, ejects: w.method == "queue" && r.IntN(4) == 0}
		p.head = w.newHead(id)
		p.checks = w.randomChecks()
		if b := w.blockers[id]; len(b) > 0 && r.IntN(4) != 0 { // else retargeted to main already (its base branch deleted)
			p.base = "story/" + b[0]
		}
		w.pr[id] = p
	}
	if r.IntN(5) == 0 && n >= 2 { // a native stack of a chain: a story and its first blocker
		for _, id := range w.order {
			if b := w.blockers[id]; len(b) > 0 && w.pr[id] != nil && w.pr[b[0]] != nil {
				w.stacks[w.pr[b[0]].n] = &land.Stack{Number: 1, Base: "main", Size: 2, Position: 1}
				w.stacks[w.pr[id].n] = &land.Stack{Number: 1, Base: "main", Size: 2, Position: 2}
				break
			}
		}
	}
	return w
}

// snapshot is what a pass of land reads of the model: GitHub's answer as
// land.Read decodes it.
func (w *world) snapshot() land.Snapshot {
	s := land.Snapshot{Repository: &land.Repository{Default: "main", Methods: []string{"merge", "squash"}, Queue: w.method == "queue"},
		Method: w.method, Order: w.order, Blockers: w.blockers, Acts: map[string]bool{}, PR: map[string]*land.PR{},
		Merged: map[string]bool{}, Last: map[string]*runs.LandRecord{}, Stacks: map[int]*land.Stack{},
		Contains: func(c, h string) bool { return w.contains[h][c] }}
	for _, id := range w.order {
		s.Acts[id] = true
		s.Merged[id] = w.merged[id]
		s.Last[id] = w.last[id]
		if p := w.pr[id]; p != nil {
			s.PR[id] = w.prOf(p)
			if p.state == "MERGED" {
				w.merged[id] = true
			}
		}
	}
	for n, st := range w.stacks {
		if w.stackOpen(st.Number) {
			s.Stacks[n] = st
		}
	}
	return s
}

func (w *world) stackOpen(number int) bool {
	for _, id := range w.order {
		if p := w.pr[id]; p != nil && p.state == "OPEN" && w.stacks[p.n] != nil && w.stacks[p.n].Number == number {
			return true
		}
	}
	return false
}

// prOf is the PR as GitHub answers it.
func (w *world) prOf(p *mpr) *land.PR {
	x := &land.PR{ID: "PR_" + strconv.Itoa(p.n), Number: p.n, URL: "https://github.com/acme/shop/pull/" + strconv.Itoa(p.n),
		State: p.state, IsDraft: p.draft, BaseRefName: p.base, HeadRefOid: p.head, MergeCommit: p.mergeCommit, ReviewDecision: "REVIEW_REQUIRED"}
	if p.approved {
		x.ReviewDecision = "APPROVED"
	}
	switch p.checks {
	case "green":
		x.Checks = &land.Rollup{State: "SUCCESS", Commit: p.head, Total: 1}
	case "red":
		x.Checks = &land.Rollup{State: "FAILURE", Commit: p.head, Total: 1, Failed: []string{"test"}}
	case "pending":
		x.Checks = &land.Rollup{State: "PENDING", Commit: p.head, Total: 1, Pending: []string{"test"}}
	}
	x.MergeStateStatus = w.mergeState(p)
	if i := slices.IndexFunc(w.queue, func(id string) bool { return w.pr[id] == p }); i >= 0 {
		x.Queue = &land.QueueEntry{State: "AWAITING_CHECKS", Position: i + 1}
	}
	return x
}

func (w *world) mergeState(p *mpr) string {
	switch {
	case p.state != "OPEN":
		return "UNKNOWN"
	case p.draft:
		return "DRAFT"
	case !p.approved:
		return "BLOCKED"
	case p.checks == "red":
		return "UNSTABLE"
	case p.checks != "green":
		return "BLOCKED"
	}
	return "CLEAN"
}

func (w *world) story(p *mpr) string {
	for id, q := range w.pr {
		if q == p {
			return id
		}
	}
	return ""
}

// landsOnMain merges the story into main, checking the order.
func (w *world) landsOnMain(id string, by string) {
	p := w.pr[id]
	for _, b := range w.blockers[id] {
		if !slices.Contains(w.main, b) {
			w.fail("%s %s lands %s before its blocker %s", w.method, by, id, b)
		}
	}
	if slices.Contains(w.main, id) {
		w.fail("%s is merged twice (%s)", id, by)
	}
	w.seq++
	p.state, p.mergeCommit = "MERGED", fmt.Sprintf("merge-%s-%d", id, w.seq)
	w.main = append(w.main, id)
}

// act is GitHub answering what land asks, as Options.act's gh calls get
// answered: every mutation checked against the rules.
func (w *world) act(st land.Step) land.Verdict {
	w.acts++
	p := w.pr[st.Story]
	if p == nil || st.PR == nil || st.PR.HeadRefOid != p.head {
		w.fail("%s: land acts on a PR it did not read: %+v", st.Story, st.PR)
		return st.Verdict
	}
	if w.stacks[p.n] != nil && w.stackOpen(w.stacks[p.n].Number) {
		w.fail("%s: land asks to %s #%d inside a stack", st.Story, st.Do, p.n)
	}
	if p.state != "OPEN" {
		w.fail("%s: land asks to %s #%d, %s", st.Story, st.Do, p.n, p.state)
		return land.Verdict{State: land.Refused}
	}
	switch st.Do {
	case land.DoFollow:
		// The rebuild is on main as the pass fetched it: it must hold
		// every blocker's merge already.
		for _, b := range w.blockers[st.Story] {
			if !slices.Contains(w.read, b) {
				w.fail("%s follows main before its blocker %s landed (or in the pass that landed it)", st.Story, b)
			}
		}
		if p.conflicts {
			return land.Verdict{State: land.Failed, Why: "conflicts"}
		}
		w.follows++
		p.head = w.newHead(st.Story)
		for _, b := range w.read {
			w.contains[p.head][w.pr[b].mergeCommit] = true
		}
		p.base, p.checks = "main", w.randomChecks()
		return land.Verdict{State: land.Pending}
	case land.DoMerge:
		if w.method == "queue" || w.mergeState(p) != "CLEAN" || p.base != "main" {
			w.fail("%s: land merges #%d, %s, into %s (method %s)", st.Story, p.n, w.mergeState(p), p.base, w.method)
			return land.Verdict{State: land.Refused}
		}
		w.holdsBlockers(st.Story, "merges")
		w.landsOnMain(st.Story, "land")
		w.landings++
		w.merged[st.Story] = true
		return land.Verdict{State: land.Landed}
	case land.DoEnqueue:
		for _, b := range w.blockers[st.Story] {
			if !slices.Contains(w.main, b) {
				w.fail("%s is enqueued before its blocker %s landed", st.Story, b)
			}
		}
		if w.method != "queue" || w.mergeState(p) != "CLEAN" || slices.Contains(w.queue, st.Story) || p.base != "main" {
			w.fail("%s: land enqueues #%d (%s, queued %v, base %s)", st.Story, p.n, w.mergeState(p), slices.Contains(w.queue, st.Story), p.base)
			return land.Verdict{State: land.Refused}
		}
		if p.ejectedAt == p.head {
			w.fail("%s is enqueued again at the head the queue ejected", st.Story)
		}
		w.holdsBlockers(st.Story, "enqueues")
		w.queue = append(w.queue, st.Story)
		return land.Verdict{State: land.Queued, Why: "queued"}
	}
	w.fail("%s: unknown action %q", st.Story, st.Do)
	return st.Verdict
}

// holdsBlockers checks that the story's head holds every blocker's merge:
// it followed main after they landed.
func (w *world) holdsBlockers(id, what string) {
	for _, b := range w.blockers[id] {
		if !w.contains[w.pr[id].head][w.pr[b].mergeCommit] {
			w.fail("land %s %s, whose head lacks its blocker %s's merge", what, id, b)
		}
	}
}

// pass is one pass of land, its verdicts recorded as land records them.
func (w *world) pass(now time.Time) []land.Step {
	w.read = slices.Clone(w.main)
	steps := land.Decide(w.snapshot(), w.act)
	for _, st := range steps {
		w.last[st.Story] = land.Record(st.Verdict, st.PR, now)
	}
	return steps
}

// between is what happens on GitHub between two passes: reviews, CI, the
// queue, people merging. settle: no new randomness but CI finishing and
// the queue moving, to reach a state where nothing more happens.
func (w *world) between(settle bool) (moved bool) {
	for _, id := range w.order {
		p := w.pr[id]
		if p == nil || p.state != "OPEN" {
			continue
		}
		if p.checks == "pending" && (settle || w.r.IntN(2) == 0) {
			p.checks, moved = []string{"green", "green", "green", "red"}[w.r.IntN(4)], true
		}
		if !p.approved && p.willApprove && (settle || w.r.IntN(3) == 0) {
			p.approved, moved = true, true
		}
		if !settle && p.ejectedAt == p.head && w.r.IntN(8) == 0 { // a fix pushed
			p.head, p.checks, p.ejects, moved = w.newHead(id), "pending", false, true
			for _, b := range w.main {
				w.contains[p.head][w.pr[b].mergeCommit] = true
			}
		}
	}
	// The queue: its first entry's group is merged, or ejected.
	if len(w.queue) > 0 && (settle || w.r.IntN(2) == 0) {
		id := w.queue[0]
		w.queue = w.queue[1:]
		p := w.pr[id]
		if p.ejects {
			p.ejectedAt = p.head
			w.ejections++
		} else {
			w.landsOnMain(id, "the queue")
			w.landings++
		}
		return true
	}
	if settle {
		return moved
	}
	// A person merges a PR that could be merged (into main, its blockers
	// landed), or a whole stack on GitHub.
	if w.r.IntN(6) == 0 {
		for _, id := range w.order {
			p := w.pr[id]
			if p != nil && p.state == "OPEN" && p.base == "main" && w.mergeState(p) == "CLEAN" && w.method != "queue" &&
				w.stacks[p.n] == nil && w.blockersLanded(id) {
				w.landsOnMain(id, "a person")
				w.byPerson++
				return true
			}
		}
	}
	if w.r.IntN(5) == 0 {
		for _, id := range w.order {
			p := w.pr[id]
			if p != nil && p.state == "OPEN" && w.stacks[p.n] != nil && w.stacks[p.n].Position == 1 && w.blockersLanded(id) && w.mergeState(p) == "CLEAN" {
				// The stack's merge, bottom up, as far as its PRs are ready.
				for _, jd := range w.order {
					q := w.pr[jd]
					if q != nil && q.state == "OPEN" && w.stacks[q.n] != nil && w.stacks[q.n].Number == w.stacks[p.n].Number &&
						w.mergeState(q) == "CLEAN" && w.blockersLanded(jd) {
						w.landsOnMain(jd, "a stack's merge")
						w.byPerson++
					}
				}
				return true
			}
		}
	}
	return moved
}

func (w *world) blockersLanded(id string) bool {
	for _, b := range w.blockers[id] {
		if !slices.Contains(w.main, b) {
			return false
		}
	}
	return true
}

// canLand is whether the story could land now, by the model alone: its
// PR open, not a draft, approved, its blockers landed, not in a stack, not
// ejected at its head, and either following main with green checks or due
// to follow it without a conflict.
func (w *world) canLand(id string) bool {
	p := w.pr[id]
	if p == nil || p.state != "OPEN" || p.draft || !p.approved || !w.blockersLanded(id) || w.stacks[p.n] != nil || p.ejectedAt == p.head {
		return false
	}
	follow := p.base != "main"
	for _, b := range w.blockers[id] {
		follow = follow || !w.contains[p.head][w.pr[b].mergeCommit]
	}
	if follow {
		return !p.conflicts
	}
	return p.checks == "green"
}

// Over 200 random epics: every landing in dependency order, no story
// before a blocker, nothing merged twice, no base edited nor a merge asked
// inside a stack, and every story that can land does.
func TestLandProperty(t *testing.T) {
	r, _ := chaos.Start(t, 0)
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	var landings, byPerson, ejections, stops, follows, stories int
	for epic := range 200 {
		w := newWorld(t, r)
		quiet := 0
		for round := 0; round < 200 && quiet < 3; round++ {
			// land's loop: passes while a pass acted
			for range 4*len(w.order) + 4 {
				before := w.acts
				if w.pass(now); w.acts == before {
					break
				}
			}
			if w.between(round >= 40) || len(w.queue) > 0 {
				quiet = 0
			} else {
				quiet++
			}
		}
		steps := w.pass(now)
		for _, st := range steps {
			p := w.pr[st.Story]
			if p != nil && p.state == "MERGED" && st.State != land.Landed {
				t.Errorf("epic %d: %s merged but judged %+v", epic, st.Story, st.Verdict)
			}
			if p != nil && p.state == "OPEN" && p.ejectedAt == p.head && st.State != land.Ejected {
				t.Errorf("epic %d: %s was ejected at its head but is %s: %s", epic, st.Story, st.State, st.Why)
			}
			if st.State != land.Landed && w.canLand(st.Story) {
				t.Errorf("epic %d (%s): %s could land but is %s: %s", epic, w.method, st.Story, st.State, st.Why)
			}
			switch st.State {
			case land.Landed, land.Waiting:
			default:
				stops++
			}
		}
		landings, byPerson, ejections, follows, stories = landings+w.landings, byPerson+w.byPerson, ejections+w.ejections, follows+w.follows, stories+len(w.order)
		if t.Failed() {
			t.Fatalf("epic %d: %s, blockers %v, main %v", epic, w.method, w.blockers, w.main)
		}
	}
	t.Logf("200 epics, %d stories: %d landed by land (merged or through the queue), %d merged by a person, %d followed main, %d queue ejections, %d stops",
		stories, landings, byPerson, follows, ejections, stops)
}
