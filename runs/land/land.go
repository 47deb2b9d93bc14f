package land

import (
	"cmp"
	"context"
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
	Did    string `json:"did"` // merged, followed, retargeted (dry run: would …)
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

// pass reads every story's PR in one query, then, in dependency order,
// lands the ready ones and makes those whose blockers all landed follow
// the default branch. After a merge it ends: the next pass reads the new
// default branch.
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
	verdicts := map[string]Verdict{}
	pr := func(id string) *PR {
		if u, ok := prOf[id]; ok {
			r, _ := review.RepoOfURL(u)
			return prs[r.Number]
		}
		return nil
	}
	merged := false
	for _, id := range order {
		x := pr(id)
		v := o.judge(ctx, g, id, x, pr, verdicts, def)
		if x != nil && x.State == "MERGED" {
			_ = runs.RecordPRState(o.Root, id, runs.PRMerged, o.Now())
		}
		if !o.Epic && id != o.Target {
			verdicts[id] = v
			continue // a story's blockers are looked at, never landed
		}
		if v.State == Ready {
			v = o.foresee(ctx, id, order, verdicts, v) // its branch against its siblings' (foresee.go)
		}
		switch {
		case merged && (v.State == Ready || v.State == Follow):
			v = Verdict{State: Pending, Why: "another story landed in this pass: looked at again in the next"}
		case v.State == Follow:
			v = o.follow(ctx, &p, id, x, pr, def, target)
		case v.State == Ready && res.Repository != nil && res.Repository.Queue:
			v = Verdict{State: Refused, Why: fmt.Sprintf("%s has a merge queue, and land does not enqueue yet", def), Next: "add #" + strconv.Itoa(x.Number) + " to the merge queue on GitHub (docs/landing.md#the-merge-queue)"}
		case v.State == Ready && o.DryRun:
			p.Actions = append(p.Actions, Action{Pass: p.N, Story: id, Did: "would merge", Detail: fmt.Sprintf("#%d with %s", x.Number, res.Method)})
		case v.State == Ready:
			v = o.merge(ctx, &p, id, x, res.Method)
			merged = merged || v.State == Landed
		}
		verdicts[id] = v
		o.record(id, v, x)
	}
	res.Stories = res.Stories[:0]
	for _, id := range order {
		if o.Epic || id == o.Target {
			res.Stories = append(res.Stories, Outcome{Story: id, PR: prOf[id], Verdict: verdicts[id]})
		}
	}
	res.Actions = append(res.Actions, p.Actions...)
	p.Stories = slices.Clone(res.Stories)
	return p
}

// method is the merge method land uses in rp.
func (o Options) method(rp *Repository) (string, error) {
	if rp.Queue {
		return "queue", nil
	}
	if o.Method != "" {
		if !slices.Contains(rp.Methods, o.Method) {
			return "", store.Usagef("the repository does not allow %s merges (it allows: %s)", o.Method, strings.Join(rp.Methods, ", "))
		}
		return o.Method, nil
	}
	if len(rp.Methods) == 0 {
		return "", fmt.Errorf("the repository allows no merge method")
	}
	return rp.Methods[0], nil
}

// judge is the story's readiness: landed, waiting for a blocker, due to
// follow the default branch, or its PR's own (Judge).
func (o Options) judge(ctx context.Context, g git.Repo, id string, x *PR, pr func(string) *PR, verdicts map[string]Verdict, def string) Verdict {
	if x == nil {
		if rec, ok := runs.ReadRecord(o.Root, id); ok && rec.PRState == runs.PRMerged {
			return Verdict{State: Landed}
		}
		return Verdict{State: NoPR, Why: "it has no pull request", Next: "`saga-lsp run " + id + "` (or `saga-lsp status " + id + "`)"}
	}
	if x.State == "MERGED" {
		return Verdict{State: Landed}
	}
	var waits []string
	following := false
	// Its blockers come before it in order: their verdicts are known.
	for _, b := range o.Workspace.EpicBlockers(id) {
		if verdicts[b].State != Landed {
			waits = append(waits, b)
			continue
		}
		// Landed: the story follows the default branch when the blocker's
		// merge is not on the story's head yet.
		if bp := pr(b); bp != nil && bp.MergeCommit != "" && !g.OK(ctx, "merge-base", "--is-ancestor", bp.MergeCommit, x.HeadRefOid) {
			following = true
		}
	}
	if len(waits) > 0 && x.State == "OPEN" {
		return Verdict{State: Waiting, Why: "waits for " + strings.Join(waits, ", ") + " to land"}
	}
	if following && x.State == "OPEN" {
		return Verdict{State: Follow, Why: "its blockers landed: it is rebuilt on " + def + " first"}
	}
	return Judge(x, def)
}

// follow makes a story whose blockers all landed follow the default
// branch: rebuilt on it (control.Restack, its checks run again), its PR
// retargeted to it. It is not ready in this pass: GitHub's checks run on
// its new head.
func (o Options) follow(ctx context.Context, p *Pass, id string, x *PR, pr func(string) *PR, def, target string) Verdict {
	if o.DryRun {
		p.Actions = append(p.Actions, Action{Pass: p.N, Story: id, Did: "would follow", Detail: fmt.Sprintf("rebuild on %s, retarget #%d to %s", def, x.Number, def)})
		return Verdict{State: Follow, Why: "its blockers landed: it would be rebuilt on " + def + " and #" + strconv.Itoa(x.Number) + " retargeted"}
	}
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

// record keeps why the story did not land in its run record's land part,
// for every face; a landed story's is cleared. A dry run records nothing.
func (o Options) record(id string, v Verdict, x *PR) {
	if o.DryRun {
		return
	}
	var lr *runs.LandRecord
	if v.State != Landed && v.State != Ready && v.State != NoPR {
		why := v.Why
		if v.Next != "" {
			why += "; " + v.Next
		}
		lr = &runs.LandRecord{At: o.Now().UTC(), State: v.State, Why: why}
		if x != nil {
			lr.Head = x.HeadRefOid
		}
	}
	_ = runs.UpdateLand(o.Root, id, lr)
}
