package land

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/review"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/store"
)

// DefaultEvery is the pause between two passes of --watch: checks take
// minutes, and GitHub's secondary rate limits punish a client that asks
// often.
const DefaultEvery = 60 * time.Second

// Options configure Land.
type Options struct {
	control.Setup
	// Target is an epic (its children land) or a story (it alone; its
	// blockers must have landed).
	Target    string
	Epic      bool
	Workspace *store.Workspace
	Parser    *store.Parser
	// Method is --method: merge, squash or rebase; "" takes the first the
	// repository allows of Methods.
	Method string
	DryRun bool
	Watch  bool
	// Every paces --watch's passes (DefaultEvery); Tick, when set, paces
	// them instead: one pass per value (tests).
	Every  time.Duration
	Tick   <-chan time.Time
	Policy verify.Policy // how a dependent's checks run after its restack
	GH     string        // gh; default runs.LookProgram
	// Passed, when set, hears of each pass as it ends.
	Passed func(Pass)
	Now    func() time.Time
}

// Result is what Land did, and where each story stands.
type Result struct {
	Repository *Repository `json:"repository,omitempty"`
	// Method is the merge method land uses ("queue" for the merge queue).
	Method  string    `json:"method"`
	Actions []Action  `json:"actions"`
	Stories []Outcome `json:"stories"`
	Passes  int       `json:"passes"`
}

// Action is one thing land did (or, with --dry-run, would do).
type Action struct {
	Pass   int    `json:"pass"`
	Story  string `json:"story"`
	Did    string `json:"did"` // merged, enqueued, followed, held (a sibling's conflict foreseen); dry run: would …
	Detail string `json:"detail"`
}

// Outcome is a story's readiness after the last pass.
type Outcome struct {
	Story string `json:"story"`
	PR    string `json:"pr,omitempty"`
	Verdict
}

// Pass is one pass: its number, the actions it took, the stories' states.
type Pass struct {
	N       int
	Actions []Action
	Stories []Outcome
	Err     error
}

// Land lands every ready story of the target in dependency order, and
// goes on while a pass landed or rebuilt one (a dependent's checks may
// pass at once); with Watch, until every story landed or ctx ends.
func Land(ctx context.Context, o Options) (*Result, error) {
	if o.GH == "" {
		gh, err := runs.LookProgram(o.Env, runs.ProgramGH)
		if err != nil {
			return nil, fmt.Errorf("land asks GitHub through gh, which is not installed: %w", err)
		}
		o.GH = gh
	}
	if o.Method != "" && !slices.Contains(Methods, o.Method) {
		return nil, store.Usagef("--method %q: one of %s", o.Method, strings.Join(Methods, ", "))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	order, err := o.stories(ctx)
	if err != nil {
		return nil, err
	}
	tick := o.Tick
	if o.Watch && tick == nil {
		t := time.NewTicker(cmp.Or(o.Every, DefaultEvery))
		defer t.Stop()
		tick = t.C
	}
	res := &Result{Actions: []Action{}}
	for {
		p := o.pass(ctx, order, res)
		if o.Passed != nil {
			o.Passed(p)
		}
		if p.Err != nil && !o.Watch {
			return res, p.Err
		}
		if ctx.Err() != nil || o.DryRun || allLanded(res.Stories, o) {
			return res, nil
		}
		if len(p.Actions) > 0 && res.Passes < 4*len(order)+4 {
			continue // a dependent rebuilt, a blocker landed: look again now
		}
		if !o.Watch {
			return res, nil
		}
		select {
		case <-ctx.Done():
			return res, nil
		case <-tick:
		}
	}
}

func allLanded(out []Outcome, o Options) bool {
	for _, s := range out {
		if s.State != Landed && (o.Epic || s.Story == o.Target) {
			return false
		}
	}
	return true
}

// stories are the stories land looks at, in dependency order: an epic's
// children (plan's order), or a story after its blockers.
func (o Options) stories(ctx context.Context) ([]string, error) {
	if !o.Epic {
		if o.Workspace.Story(o.Target) == nil {
			return nil, store.Usagef("no story %q in %s", o.Target, o.Root)
		}
		return append(slices.Clone(o.Workspace.EpicBlockers(o.Target)), o.Target), nil
	}
	q := readmodel.ViewQuery(o.Root, o.Target, o.Env, o.Parser)
	q.SessionDir = o.SessionDir
	st, err := readmodel.EpicState(ctx, o.Workspace, q)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range st.Stories {
		out = append(out, s.ID)
	}
	return out, nil
}

// pass reads every story's PR in one query (and the repository's stacks
// in one call), then, in dependency order (Decide), lands the ready ones —
// merged, or enqueued in the merge queue — and makes those whose blockers
// all landed follow the default branch.
func (o Options) pass(ctx context.Context, order []string, res *Result) Pass {
	res.Passes++
	p := Pass{N: res.Passes}
	ev := readmodel.NewEvidence(ctx, o.Root, o.SessionDir, o.Parser)
	prOf := map[string]string{}
	var repo review.Repo
	var numbers []int
	for _, id := range order {
		st := ev.Story(ctx, o.Workspace, id)
		if st.PR == "" {
			continue
		}
		r, err := review.RepoOfURL(st.PR)
		if err != nil {
			p.Err = err
			return p
		}
		if repo.Owner != "" && (r.Owner != repo.Owner || r.Name != repo.Name) {
			p.Err = fmt.Errorf("the stories' pull requests are in %s/%s and %s/%s: land lands one repository's", repo.Owner, repo.Name, r.Owner, r.Name)
			return p
		}
		repo.Owner, repo.Name = r.Owner, r.Name
		prOf[id] = st.PR
		numbers = append(numbers, r.Number)
	}
	var prs map[int]*PR
	if len(numbers) > 0 {
		var rp *Repository
		var err error
		rp, prs, err = Read(ctx, o.GH, o.Root, repo.Owner, repo.Name, numbers)
		p.Err = err // a PR GitHub did not answer: its story has no PR this pass
		if rp == nil {
			return p
		}
		res.Repository = rp
		if res.Method, err = o.method(rp); err != nil {
			p.Err = err
			return p
		}
	}
	g := git.Repo{Dir: o.Root}
	def := ""
	if res.Repository != nil {
		def = res.Repository.Default
	}
	target := ""
	if def != "" && g.HasRemote(ctx) {
		// The default branch as origin has it, for the dependents to follow.
		if _, err := g.Run(ctx, "fetch", "-q", "origin", "+refs/heads/"+def+":refs/remotes/origin/"+def); err == nil {
			target = "refs/remotes/origin/" + def
		}
	}
	snap := Snapshot{Repository: res.Repository, Method: res.Method, Order: order, Blockers: map[string][]string{},
		Acts: map[string]bool{}, PR: map[string]*PR{}, Merged: map[string]bool{}, Last: map[string]*runs.LandRecord{},
		Contains: func(c, h string) bool { return g.OK(ctx, "merge-base", "--is-ancestor", c, h) }}
	for _, id := range order {
		snap.Blockers[id] = o.Workspace.EpicBlockers(id)
		snap.Acts[id] = o.Epic || id == o.Target
		if u, ok := prOf[id]; ok {
			r, _ := review.RepoOfURL(u)
			if x := prs[r.Number]; x != nil {
				snap.PR[id] = x
			}
		}
		if rec, ok := runs.ReadRecord(o.Root, id); ok {
			snap.Merged[id] = rec.PRState == runs.PRMerged
			snap.Last[id] = rec.Land
		}
	}
	if len(numbers) > 0 {
		stacks, err := Stacks(ctx, o.GH, o.Root, repo.Owner, repo.Name)
		if err != nil {
			// GitHub itself refuses a base edit or a merge inside a stack.
			p.Err = errors.Join(p.Err, err)
		}
		snap.Stacks = stacks
	}
	landed := func(s string) bool { return snap.Merged[s] || snap.PR[s] != nil && snap.PR[s].State == "MERGED" }
	steps := Decide(snap, func(st Step) Verdict {
		if st.Do == DoMerge || st.Do == DoEnqueue {
			// Its branch against its siblings' before GitHub is asked (foresee.go).
			if v, stop := o.foresee(ctx, st.Story, order, landed); stop {
				p.Actions = append(p.Actions, Action{Pass: p.N, Story: st.Story, Did: "held", Detail: v.Why})
				return v
			}
		}
		return o.act(ctx, &p, st, res.Method, def, target)
	})
	res.Stories = res.Stories[:0]
	for _, st := range steps {
		if st.PR != nil && st.PR.State == "MERGED" {
			_ = runs.RecordPRState(o.Root, st.Story, runs.PRMerged, o.Now())
		}
		if !snap.Acts[st.Story] {
			continue // a story's blockers are looked at, never landed
		}
		if !o.DryRun {
			_ = runs.UpdateLand(o.Root, st.Story, Record(st.Verdict, st.PR, o.Now()))
		}
		res.Stories = append(res.Stories, Outcome{Story: st.Story, PR: prOf[st.Story], Verdict: st.Verdict})
	}
	res.Actions = append(res.Actions, p.Actions...)
	p.Stories = slices.Clone(res.Stories)
	return p
}

// act takes the action a story's verdict asks for (or, with --dry-run,
// says it would) and answers its verdict after it. The checks before a
// merge or an enqueue (foresee) come before it, in pass.
func (o Options) act(ctx context.Context, p *Pass, st Step, method, def, target string) Verdict {
	x := st.PR
	if o.DryRun {
		would := map[string]Action{
			DoMerge:   {Did: "would merge", Detail: fmt.Sprintf("#%d with %s", x.Number, method)},
			DoEnqueue: {Did: "would enqueue", Detail: fmt.Sprintf("#%d in the merge queue of %s", x.Number, def)},
			DoFollow:  {Did: "would follow", Detail: fmt.Sprintf("rebuild on %s, retarget #%d to %s", def, x.Number, def)},
		}[st.Do]
		would.Pass, would.Story = p.N, st.Story
		p.Actions = append(p.Actions, would)
		if st.Do == DoFollow {
			return Verdict{State: Follow, Why: "its blockers landed: it would be rebuilt on " + def + " and #" + strconv.Itoa(x.Number) + " retargeted"}
		}
		return st.Verdict
	}
	switch st.Do {
	case DoFollow:
		return o.follow(ctx, p, st.Story, x, def, target)
	case DoEnqueue:
		return o.enqueue(ctx, p, st.Story, x, def)
	default:
		return o.merge(ctx, p, st.Story, x, method)
	}
}

// method is the merge method land uses in rp (Method).
func (o Options) method(rp *Repository) (string, error) { return Method(rp, o.Method) }

// Method is the merge method land uses in rp (docs/landing.md#landing):
// "queue" when its default branch has a merge queue, else want (--method)
// when the repository allows it, else the first it allows of Methods.
func Method(rp *Repository, want string) (string, error) {
	if rp.Queue {
		return "queue", nil
	}
	if want != "" {
		if !slices.Contains(rp.Methods, want) {
			return "", store.Usagef("the repository does not allow %s merges (it allows: %s)", want, strings.Join(rp.Methods, ", "))
		}
		return want, nil
	}
	if len(rp.Methods) == 0 {
		return "", fmt.Errorf("the repository allows no merge method")
	}
	return rp.Methods[0], nil
}

// follow makes a story whose blockers all landed follow the default
// branch: rebuilt on it (control.Restack, its checks run again), its PR
// retargeted to it. It is not ready in this pass: GitHub's checks run on
// its new head.
func (o Options) follow(ctx context.Context, p *Pass, id string, x *PR, def, target string) Verdict {
	if target == "" {
		return Verdict{State: Failed, Why: "origin's " + def + " could not be fetched", Next: "`git fetch origin " + def + "`, then land again"}
	}
	r, err := control.Restack(ctx, control.RestackOptions{Setup: o.Setup, Story: id, Workspace: o.Workspace, Parser: o.Parser,
		Policy: o.Policy, Now: o.Now, Landed: o.Workspace.EpicBlockers(id), Target: target, TargetBranch: def})
	if err != nil {
		return Verdict{State: Failed, Why: "rebuilding it on " + def + ": " + err.Error(), Next: "fix that, then land again"}
	}
	if r.Restacked && (len(r.Conflicts) > 0 || !r.Passed) {
		why := "its checks fail after its rebuild on " + def
		if len(r.Conflicts) > 0 {
			why = "rebuilding it on " + def + " conflicts in " + strings.Join(r.Conflicts, ", ")
		}
		return Verdict{State: Failed, Why: why, Next: r.Next}
	}
	detail := fmt.Sprintf("rebuilt on %s (%s → %s, checks passed)", def, short(r.Old), short(r.New))
	if !r.Restacked {
		detail = r.Why
	}
	if r.Restacked && !r.Pushed {
		return Verdict{State: Failed, Why: "rebuilt on " + def + " but not pushed: " + strings.Join(r.Notes, "; "), Next: "push story/" + id + ", then land again"}
	}
	if x.BaseRefName != def {
		if _, err := ghOutput(ctx, o.GH, o.Root, "pr", "edit", x.URL, "--base", def); err != nil {
			return Verdict{State: Failed, Why: fmt.Sprintf("retargeting #%d to %s: %v", x.Number, def, err), Next: fmt.Sprintf("`gh pr edit %d --base %s`, then land again", x.Number, def)}
		}
		detail += fmt.Sprintf("; #%d retargeted from %s to %s", x.Number, x.BaseRefName, def)
	}
	p.Actions = append(p.Actions, Action{Pass: p.N, Story: id, Did: "followed", Detail: detail})
	return Verdict{State: Pending, Why: "rebuilt on " + def + ": GitHub's checks run again on its new head", Next: "wait: `saga-lsp land --watch` lands it when they pass"}
}

// merge merges the story's PR with method, at the head commit it was
// judged at: a head that moved meanwhile is GitHub's refusal.
func (o Options) merge(ctx context.Context, p *Pass, id string, x *PR, method string) Verdict {
	_, err := ghOutput(ctx, o.GH, o.Root, "pr", "merge", x.URL, "--"+method, "--match-head-commit", x.HeadRefOid)
	if err != nil {
		return Verdict{State: Refused, Why: fmt.Sprintf("GitHub refused to merge #%d: %v", x.Number, err), Next: "see the PR on GitHub, then land again"}
	}
	_ = runs.RecordPRState(o.Root, id, runs.PRMerged, o.Now())
	p.Actions = append(p.Actions, Action{Pass: p.N, Story: id, Did: "merged", Detail: fmt.Sprintf("#%d with %s at %s", x.Number, method, short(x.HeadRefOid))})
	return Verdict{State: Landed}
}

// enqueue adds the story's PR to the merge queue of its base, at the head
// commit it was judged at. The queue merges it (or ejects it) later:
// following passes read its entry.
func (o Options) enqueue(ctx context.Context, p *Pass, id string, x *PR, def string) Verdict {
	out, err := ghOutput(ctx, o.GH, o.Root, "api", "graphql", "-f", "query="+enqueueMutation, "-F", "pr="+x.ID, "-F", "head="+x.HeadRefOid)
	var w struct {
		Data struct {
			EnqueuePullRequest *struct{ MergeQueueEntry *QueueEntry } `json:"enqueuePullRequest"`
		} `json:"data"`
		Errors []struct{ Message string } `json:"errors"`
	}
	_ = json.Unmarshal(out, &w)
	if len(w.Errors) > 0 {
		err = errors.New(w.Errors[0].Message)
	}
	if err == nil && (w.Data.EnqueuePullRequest == nil || w.Data.EnqueuePullRequest.MergeQueueEntry == nil) {
		err = errors.New("GitHub answered no merge queue entry")
	}
	if err != nil {
		return Verdict{State: Refused, Why: fmt.Sprintf("GitHub refused to add #%d to the merge queue of %s: %v", x.Number, def, err), Next: "see the PR on GitHub, then land again"}
	}
	q := w.Data.EnqueuePullRequest.MergeQueueEntry
	p.Actions = append(p.Actions, Action{Pass: p.N, Story: id, Did: "enqueued", Detail: fmt.Sprintf("#%d in the merge queue of %s at %s (position %d)", x.Number, def, short(x.HeadRefOid), q.Position)})
	return Verdict{State: Queued, Why: fmt.Sprintf("#%d is in the merge queue of %s: position %d, %s", x.Number, def, q.Position, q.State),
		Next: "wait: the queue merges it when its merge group's checks pass"}
}
