package land

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
)

// What a pass does, decided from what it read (docs/landing.md#order):
// Decide is a function of the snapshot and of what each action did, so
// that the property test drives the very rules a pass follows against a
// model of GitHub (decide_test.go) — 200 epics through git and the gh
// stand-in would take minutes.

// The actions a step asks for.
const (
	DoMerge   = "merge"   // gh pr merge --<method> --match-head-commit <head>
	DoEnqueue = "enqueue" // the enqueuePullRequest mutation: the base has a merge queue
	DoFollow  = "follow"  // rebuild on the default branch, retarget the PR to it
)

// Snapshot is what a pass knows before it acts: GitHub's answer (one
// query), the stacks, and what land recorded on earlier passes.
type Snapshot struct {
	Repository *Repository // nil: GitHub did not answer
	Method     string      // the method land uses (Options.method): merge, squash, rebase or "queue"
	// Order is the stories in dependency order; Blockers each one's.
	Order    []string
	Blockers map[string][]string
	// Acts is the stories land may act on: an epic's children, or the
	// story named (its blockers are only looked at).
	Acts map[string]bool
	// PR is each story's pull request; missing: it has none (or GitHub did
	// not answer for it).
	PR map[string]*PR
	// Merged is the stories whose run record says their PR merged (a story
	// whose PR is not read any more).
	Merged map[string]bool
	// Last is each story's land record of an earlier pass: a story queued
	// then missing from the queue, its PR still open, was ejected.
	Last map[string]*runs.LandRecord
	// Stacks is the open native stack of each PR that is in one, by number.
	Stacks map[int]*Stack
	// Contains reports whether commit is an ancestor of head (git
	// merge-base --is-ancestor): a landed blocker's merge on a dependent.
	Contains func(commit, head string) bool
}

// Stack is a pull request's native stack (GitHub's pull-request-stack).
type Stack struct {
	Number   int    `json:"number"`
	Base     string `json:"base"`
	Size     int    `json:"size"`
	Position int    `json:"position"`
}

// QueueEntry is a pull request's entry in its base's merge queue.
type QueueEntry struct {
	State    string `json:"state"` // QUEUED, AWAITING_CHECKS, MERGEABLE, UNMERGEABLE, LOCKED
	Position int    `json:"position"`
}

// Step is a story's verdict in a pass and, when Do is set, the action its
// verdict asks for.
type Step struct {
	Story string
	PR    *PR
	Do    string
	Verdict
}

// Decide is a pass: every story judged in dependency order, then the first
// action asked for is taken (act, which answers the story's verdict after
// it), and the stories judged again knowing it, until no action is left.
// An action is taken once a pass for a story. A merge moves the default
// branch: the stories after it that would merge or follow wait for the next
// pass, which reads the new branch. It returns the last judgement.
func Decide(s Snapshot, act func(Step) Verdict) []Step {
	done := map[string]Verdict{}
	known := map[[2]string]bool{}
	contains := s.Contains
	s.Contains = func(c, h string) bool { // each pair asked of git once a pass
		k := [2]string{c, h}
		v, ok := known[k]
		if !ok {
			v = contains(c, h)
			known[k] = v
		}
		return v
	}
	for {
		steps := s.judge(done)
		next := -1
		for i, st := range steps {
			if st.Do != "" {
				next = i
				break
			}
		}
		if next < 0 {
			return steps
		}
		done[steps[next].Story] = act(steps[next])
	}
}

// judge is every story's verdict, given what the actions of this pass did.
func (s Snapshot) judge(done map[string]Verdict) []Step {
	verdicts := map[string]Verdict{}
	moved := false // a merge of this pass moved the default branch
	var out []Step
	for _, id := range s.Order {
		x := s.PR[id]
		st := Step{Story: id, PR: x}
		if v, ok := done[id]; ok {
			st.Verdict = v
			moved = moved || v.State == Landed
		} else {
			st.Verdict = s.story(id, x, verdicts)
			if s.Acts[id] {
				st = s.action(st, moved)
			}
		}
		verdicts[id] = st.Verdict
		out = append(out, st)
	}
	return out
}

// action is what a story's verdict asks land to do, if anything.
func (s Snapshot) action(st Step, moved bool) Step {
	if st.State != Ready && st.State != Follow {
		return st
	}
	if stk := s.Stacks[st.PR.Number]; stk != nil {
		st.Verdict = stacked(st.PR, stk)
		return st
	}
	switch {
	case moved:
		st.Verdict = Verdict{State: Pending, Why: "another story landed in this pass: looked at again in the next"}
	case st.State == Follow:
		st.Do = DoFollow
	case s.Method == "queue":
		st.Do = DoEnqueue
	default:
		st.Do = DoMerge
	}
	return st
}

// stacked is the refusal of a story whose PR is in a native stack: GitHub
// refuses a base edit and a synchronous merge inside one, and the stack's
// own merge is not in the REST description land is built against
// (docs/landing.md#native-stacks).
func stacked(x *PR, stk *Stack) Verdict {
	return Verdict{State: Refused,
		Why: fmt.Sprintf("#%d is in GitHub's stack #%d (%d of %d, on %s): GitHub refuses a base edit and a merge of one PR inside a stack, and the stack's merge is not in the REST description land is built against (@octokit/openapi 23.0.2)",
			x.Number, stk.Number, stk.Position, stk.Size, stk.Base),
		Next: fmt.Sprintf("merge the stack on GitHub (its merge box), or unstack #%d; then land again", x.Number)}
}

// story is the story's readiness: landed, waiting for a blocker, in the
// merge queue or ejected from it, due to follow the default branch, or its
// PR's own (Judge). Its blockers' verdicts are known: they come first.
func (s Snapshot) story(id string, x *PR, verdicts map[string]Verdict) Verdict {
	def := ""
	if s.Repository != nil {
		def = s.Repository.Default
	}
	if x == nil {
		if s.Merged[id] {
			return Verdict{State: Landed}
		}
		return Verdict{State: NoPR, Why: "it has no pull request", Next: "`saga-lsp run " + id + "` (or `saga-lsp status " + id + "`)"}
	}
	if x.State != "OPEN" {
		return Judge(x, def)
	}
	var waits []string
	following := false
	for _, b := range s.Blockers[id] {
		if verdicts[b].State != Landed {
			waits = append(waits, b)
			continue
		}
		// Landed: the story follows the default branch when the blocker's
		// merge is not on the story's head yet.
		if bp := s.PR[b]; bp != nil && bp.MergeCommit != "" && !s.Contains(bp.MergeCommit, x.HeadRefOid) {
			following = true
		}
	}
	if len(waits) > 0 {
		return Verdict{State: Waiting, Why: "waits for " + strings.Join(waits, ", ") + " to land"}
	}
	if v, ok := s.queued(id, x, def); ok {
		return v
	}
	if following {
		return Verdict{State: Follow, Why: "its blockers landed: it is rebuilt on " + def + " first"}
	}
	if x.BaseRefName == def && x.MergeStateStatus == "DIRTY" {
		// A conflict with the default branch (a sibling or a person landed
		// first): following it makes the conflict the story's conflict task
		// for `land --resolve`, where a stop would be a dead end.
		return Verdict{State: Follow, Why: fmt.Sprintf("#%d conflicts with %s: it is rebuilt on it, a conflict becoming its conflict task", x.Number, def)}
	}
	return Judge(x, def)
}

// queued is the verdict of a story land put in the merge queue: in it, or
// ejected — its entry gone (or UNMERGEABLE), its PR open, at the head land
// enqueued. A new head (a fix pushed) is judged anew.
func (s Snapshot) queued(id string, x *PR, def string) (Verdict, bool) {
	n := "#" + strconv.Itoa(x.Number)
	if q := x.Queue; q != nil {
		if q.State == "UNMERGEABLE" {
			return ejected(n, def, "its merge group cannot be merged (UNMERGEABLE)"), true
		}
		return Verdict{State: Queued, Why: fmt.Sprintf("%s is in the merge queue of %s: position %d, %s", n, def, q.Position, q.State),
			Next: "wait: the queue merges it when its merge group's checks pass"}, true
	}
	last := s.Last[id]
	if last == nil || last.Head != x.HeadRefOid {
		return Verdict{}, false
	}
	switch last.State {
	case Queued:
		return ejected(n, def, "it left the queue without being merged: its merge group's checks failed, or it conflicts with a PR ahead of it"), true
	case Ejected:
		return Verdict{State: Ejected, Why: strings.TrimSuffix(last.Why, "; "+ejectedNext(n)), Next: ejectedNext(n)}, true
	}
	return Verdict{}, false
}

func ejected(n, def, why string) Verdict {
	return Verdict{State: Ejected, Why: fmt.Sprintf("%s was ejected from the merge queue of %s: %s", n, def, why), Next: ejectedNext(n)}
}

func ejectedNext(n string) string {
	return "see " + n + "'s timeline on GitHub; push a fix (land enqueues the new head once it is ready) or add it to the queue again on GitHub"
}

// Record is what a story's verdict leaves in its run record's land part
// (runs.LandRecord), for every face: why it did not land; nil clears it (a
// landed story, a ready one, one without a PR).
func Record(v Verdict, x *PR, now time.Time) *runs.LandRecord {
	if v.State == Landed || v.State == Ready || v.State == NoPR {
		return nil
	}
	why := v.Why
	if v.Next != "" {
		why += "; " + v.Next
	}
	lr := &runs.LandRecord{At: now.UTC(), State: v.State, Why: why}
	if x != nil {
		lr.Head = x.HeadRefOid
	}
	return lr
}
