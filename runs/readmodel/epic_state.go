package readmodel

// The state of an epic run, derived from disk, git, worker locks and events
// files — never only from a runner's memory — so `status <epic>` is right
// with or without a live runner, and a runner started again after a crash
// resumes where the last one was (docs/commands.md#epic-runs-run--follow--status--stop-epic).

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/plan"
)

// States of a story in an epic run (EpicStory.State) beside the worker end
// statuses (runs.StatusCompleted, Failed, Timeout, Blocked, Stopped).
const (
	EpicWaiting = "waiting" // a blocker is not done yet
	EpicReady   = "ready"   // every blocker is done: it can start
	EpicRunning = "running" // its worker lives
	EpicHeld    = "held"    // a blocker failed, was blocked or stopped, or its blockers' branches conflict
)

// EpicStory is one child story's state in an epic run.
type EpicStory struct {
	ID        string   `json:"id"`
	State     string   `json:"state"`
	BlockedBy []string `json:"blockedBy"`
	HeldBy    []string `json:"heldBy"`
	Conflicts []string `json:"conflicts"` // files its blockers' branches conflict in (held)
	Branch    string   `json:"branch"`
	Base      string   `json:"base"`
	PR        string   `json:"pr"`
	// NoPR: completed without a pull request yet, why and the next step
	// (StoryState.NoPR).
	NoPR *NoPRState `json:"noPR,omitempty"`
	// Review is its review loop as recorded (StoryState.Review).
	Review *ReviewState `json:"review,omitempty"`
	// Step is its next step as the story's own (Next): what every face
	// offers for it.
	Step    NextStep `json:"next"`
	Cost    float64  `json:"cost"`    // USD, every headless run of the story (runs.Spent)
	Session string   `json:"session"` // its worker's tmux session, when it runs or ran
	Done    int      `json:"done"`    // tasks
	Total   int      `json:"total"`
	Merged  bool     `json:"merged"` // its PR is merged into the base (looked at with --after merged)
	// Why says, for a story whose last run did not complete, what stopped
	// it and the next step.
	Why string `json:"why,omitempty"`
	// Dry is what the story's dry-run attempt left, apart from its own
	// state and never counted in it (nil when nothing):
	// docs/worker.md#dry-runs.
	Dry *DryState `json:"dryRun,omitempty"`
	// Actions is its GitHub Actions run, when it runs or ran there.
	Actions *ActionsRun `json:"actions,omitempty"`
	// BaseMoved: the branch it is stacked on moved past it
	// (StoryState.BaseMoved).
	BaseMoved *BaseMoved `json:"baseMoved,omitempty"`
	// Land: why `saga-lsp land` last stopped it (StoryState.Land).
	Land *runs.LandRecord `json:"land,omitempty"`
	// PRState is its PR's state as last recorded (StoryState.PRState);
	// Conflict its open conflict-resolution task (StoryState.Conflict).
	PRState  string    `json:"prState,omitempty"`
	Conflict *Conflict `json:"conflict,omitempty"`
	// WaitsFor: it could start but waits for earlier stories in plan
	// order whose paths overlap its own until they end
	// (docs/landing.md#conflicts-foreseen).
	WaitsFor []plan.Wait `json:"waitsFor,omitempty"`
	// Foreseen: siblings whose branches conflicted with its own when the
	// last epic run started it (it ran anyway; landing resolves them).
	Foreseen []runs.Foreseen `json:"foreseen,omitempty"`
}

// EpicStatus is an epic run's state: the runner's (when one ran) and every
// child story's.
type EpicStatus struct {
	ID          string      `json:"id"`
	State       string      `json:"state"` // idle, running, or the last run's epic.end status
	Session     string      `json:"session"`
	PID         int         `json:"pid"`
	MaxParallel int         `json:"maxParallel"`
	Running     []string    `json:"running"`
	Done        int         `json:"done"`
	Total       int         `json:"total"`
	Cost        float64     `json:"cost"` // USD, every headless run of every story, reruns included
	Stories     []EpicStory `json:"stories"`
	ExitCode    *int        `json:"exitCode"`
	// AwaitingMerge are completed stories whose PR is not merged yet while
	// dependents wait for that (--after merged).
	AwaitingMerge []string `json:"awaitingMerge"`
	// Backend is where the last run ran its stories ("" tmux, github).
	Backend string `json:"backend,omitempty"`
	// DryRun: the last run was a dry run — its State is the dry run's,
	// its stories' progress stays their own (docs/worker.md#dry-runs).
	DryRun bool `json:"dryRun,omitempty"`
	// CapReached: the last run's spend reached its --max-cost.
	CapReached bool `json:"capReached,omitempty"`
}

// EpicQuery says how to judge an epic's stories.
type EpicQuery struct {
	Root       string
	Epic       string
	SessionDir string
	After      string // runs.AfterReady (default) or runs.AfterMerged
	// Since ignores story outcomes other than completed that ended before
	// it: a new epic run retries what failed or stopped in an earlier one.
	Since time.Time
	// Conflicts are stories held because their blockers' branches
	// conflict, with the files: the runner's own finding; when nil, the
	// last epic run's story.held events.
	Conflicts map[string][]string
	Env       func(string) string
	Parser    *store.Parser
	// DryRun judges the stories as a dry epic run schedules them: a
	// story's dry attempt counts where it did not really complete. The
	// dry runner's alone: faces never ask for it (ViewQuery).
	DryRun bool
	// Actions asks GitHub about stories run on GitHub Actions
	// (Evidence.Actions); Discover about every story — set when the epic's
	// runs go to GitHub Actions, and implied when its last run's did. A
	// query with Actions (the runner's, status's network step) also asks gh
	// whether a completed story's PR is merged (--after merged) and records
	// what it saw; one without (ViewQuery: every face) renders the recorded
	// evidence only, never calling GitHub to draw itself.
	Actions  Actions
	Discover bool
	// Runs, when set, keeps the folds of the stories' events files
	// between queries (Evidence.Runs): the runner's, at every step.
	Runs *runs.RunCache
	// Branches, when set, keeps the story folders read from branches
	// between queries (Evidence.Branches): the runner's and the watchers'.
	Branches *BranchFolders
	// Kept, when set, keeps the workspace's files between the loads of
	// LoadEpicState (store.Parser.LoadKeeping): the runner's.
	Kept *store.Kept
	// WorkerLocks, when set, is the held worker locks (story → holder pid)
	// as the caller last probed them — the live watcher's, which its
	// State judges a story alive by — instead of each probed again here.
	WorkerLocks map[string]int
	// evidence is the runs and refs gathered (and Settled) before ws was
	// read from disk (LoadEpicState); nil: gathered by EpicState, after.
	evidence *Evidence
}

// ViewQuery is the query every face renders an epic with — status, plan,
// the language server's lenses and diagnostics, the dashboard and the live
// watcher — so that they agree: each story's own evidence as it stands
// now (its last outcome, whenever it ended; its dry run apart, in Dry).
// Since and DryRun are a runner's view of its own schedule, never a
// face's (docs/architecture.md#one-read-model-of-a-run).
func ViewQuery(root, epic string, env func(string) string, p *store.Parser) EpicQuery {
	return EpicQuery{Root: root, Epic: epic, Env: env, Parser: p}
}

// LoadEpicState loads the workspace at q.Root and derives the epic's
// state, the runs gathered first (Evidence.Settle): the derivation of a
// reader that loads the files itself — `status <epic>`, the runner at
// every step. A face whose snapshot follows the disk calls EpicState.
func LoadEpicState(ctx context.Context, q EpicQuery) (*store.Workspace, *EpicStatus, error) {
	ws, st, _, err := LoadEpicStates(ctx, q, nil)
	return ws, st, err
}

// LoadEpicStates is LoadEpicState deriving, from the one gather of q's,
// the state view judges too (nil: none): the runner's step, which derives
// its schedule's state and the faces' view it serves `status` from the
// same files, runs and branches (docs/architecture.md#status-asks-the-live-runner).
func LoadEpicStates(ctx context.Context, q EpicQuery, view *EpicQuery) (*store.Workspace, *EpicStatus, *EpicStatus, error) {
	ws, st, ev, err := loadEpicState(ctx, q)
	if err != nil || view == nil {
		return ws, st, nil, err
	}
	v := *view
	v.Runs, v.Branches, v.evidence = ev.Runs, ev.Branches, ev
	vst, err := EpicState(ctx, ws, v)
	return ws, st, vst, err
}

// loadEpicState is LoadEpicState with the evidence it gathered.
func loadEpicState(ctx context.Context, q EpicQuery) (*store.Workspace, *EpicStatus, *Evidence, error) {
	if q.Parser == nil {
		var err error
		if q.Parser, err = store.NewParser(); err != nil {
			return nil, nil, nil, err
		}
	}
	dir, err := SessionDirOf(q.SessionDir, q.Env)
	if err != nil {
		return nil, nil, nil, err
	}
	if q.Runs == nil {
		// A one-shot reader keeps ended runs' folds on disk: the next
		// `status <epic>` folds only the events files that changed.
		q.Runs = runs.LoadRunCache(q.Root)
		defer func() {
			if err := q.Runs.Save(); err != nil {
				slog.Debug("run folds not kept", "err", err)
			}
		}()
	}
	if q.Branches == nil {
		// A one-shot reader keeps the branches' folders on disk: the
		// next `status <epic>` reads from git only the tips that moved.
		q.Branches = LoadBranchFolders(q.Root)
		defer func() {
			if err := q.Branches.Save(); err != nil {
				slog.Debug("branch folders not kept", "err", err)
			}
		}()
	}
	// git lists the story refs, then reads the local branches' history not
	// in HEAD and the kept folders whose tips moved, while the runs are
	// settled and the workspace is loaded: three processes that were half
	// of `status <epic>`'s wall time (docs/architecture.md#an-epic-of-200-stories).
	// Listed during the two reads, the tips are no older than Gathered's,
	// listed before.
	listed := make(chan storyRefs, 1)
	go func() {
		r := listStoryRefs(ctx, q.Root)
		var wg sync.WaitGroup
		wg.Go(func() { q.Branches.refresh(ctx, q.Root, r.refsRead, r.refs, r.tips) })
		r.readGraph(ctx, q.Root, q.Branches)
		wg.Wait()
		listed <- r
	}()
	ev := evidenceOfRuns(q.Root, dir, q.Parser)
	ev.Runs = q.Runs
	ev.Settle()
	ws, err := q.Parser.LoadKeeping(q.Root, q.Kept)
	if err == nil {
		if e := ws.Epic(q.Epic); e != nil {
			for _, c := range e.Children { // while git reads: EpicState asks for each
				ev.record(c.ID, false)
			}
		}
	}
	ev.storyRefs = <-listed
	if err != nil {
		return nil, nil, nil, err
	}
	q.evidence = ev
	st, err := EpicState(ctx, ws, q)
	return ws, st, ev, err
}

// EpicState derives every child story's state. The order of Stories is
// plan's order for the epic's children.
func EpicState(ctx context.Context, ws *store.Workspace, q EpicQuery) (*EpicStatus, error) {
	e := ws.Epic(q.Epic)
	if e == nil {
		return nil, store.Usagef("no epic %q in %s: `saga-lsp status` lists the stories and their epics", q.Epic, q.Root)
	}
	var err error
	if q.SessionDir, err = SessionDirOf(q.SessionDir, q.Env); err != nil {
		return nil, err
	}
	if q.Parser == nil {
		if q.Parser, err = store.NewParser(); err != nil {
			return nil, err
		}
	}
	st := &EpicStatus{ID: e.ID, State: "idle", Running: []string{}, Stories: []EpicStory{}, AwaitingMerge: []string{}}
	foreseen := map[string][]runs.Foreseen{}
	if last := q.Runs.LatestIn(q.SessionDir, runs.KindEpic, e.ID, q.Root); last != nil {
		st.Session, st.PID, st.MaxParallel = last.Session, last.PID, last.MaxParallel
		for id, rec := range last.Stories {
			foreseen[id] = rec.Foreseen
		}
		if q.After == "" {
			q.After = last.After // judged as the last run judges
		}
		if q.Conflicts == nil {
			// Without the runner's own finding, the last run's: a story
			// it held for conflicting branches stays held until a run
			// tries the merge again.
			q.Conflicts = map[string][]string{}
			for id, rec := range last.Stories {
				if len(rec.Conflicts) > 0 {
					q.Conflicts[id] = rec.Conflicts
				}
			}
		}
		st.Backend, st.DryRun, st.CapReached = last.Backend, last.DryRun, last.CapReached
		q.Discover = q.Discover || last.Backend == BackendGitHub
		last, alive := settled(last)
		switch {
		case last.Ended:
			st.State, st.ExitCode = last.State, last.ExitCode
		case alive:
			st.State = EpicRunning
		default:
			st.State = "died"
		}
	}
	ev := q.evidence
	if ev == nil {
		ev = NewEvidence(ctx, q.Root, q.SessionDir, q.Parser)
		ev.Runs = q.Runs
	}
	ev.Actions, ev.Discover = q.Actions, q.Discover && q.Actions != nil
	ev.Branches = cmp.Or(ev.Branches, q.Branches)
	if q.WorkerLocks != nil {
		ev.locks.Held = q.WorkerLocks
	}

	stories := map[string]*EpicStory{}
	var items []plan.Item
	for _, c := range e.Children {
		if stories[c.ID] != nil {
			continue
		}
		es := &EpicStory{ID: c.ID, BlockedBy: refIDs(c.BlockedBy), HeldBy: []string{}, Conflicts: []string{}, Foreseen: foreseen[c.ID]}
		stories[c.ID] = es
		items = append(items, plan.Item{ID: c.ID, BlockedBy: es.BlockedBy, Paths: ws.StoryPaths(c.ID)})
	}
	ids := make([]string, 0, len(items))
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	ev.Prefetch(ids)
	outcome := map[string]string{} // a story's own state, before its blockers are looked at
	for id, es := range stories {
		outcome[id] = q.storyOutcome(ctx, ws, es, ev)
	}
	// Blockers decide the rest, in dependency order; a cycle (refused by the
	// preflight, possible in a broken workspace) leaves its members waiting.
	var resolve func(id string, seen map[string]bool) string
	resolve = func(id string, seen map[string]bool) string {
		es := stories[id]
		if es.State != "" {
			return es.State
		}
		if o := outcome[id]; o != "" {
			es.State = o
			return o
		}
		if seen[id] {
			return EpicWaiting
		}
		seen[id] = true
		if files := q.Conflicts[id]; len(files) > 0 {
			es.State, es.Conflicts = EpicHeld, slices.Clone(files)
			es.HeldBy = append(es.HeldBy, es.BlockedBy...)
			return EpicHeld
		}
		ready := true
		for _, b := range es.BlockedBy {
			if stories[b] == nil {
				ready = false // a dangling blocker (a check error) never clears
				continue
			}
			switch resolve(b, seen) {
			case runs.StatusCompleted:
				if q.After == runs.AfterMerged && !stories[b].Merged {
					ready = false // its work counts once merged into the base
					if !slices.Contains(st.AwaitingMerge, b) {
						st.AwaitingMerge = append(st.AwaitingMerge, b)
					}
				}
			case runs.StatusFailed, runs.StatusBlocked, runs.StatusTimeout, runs.StatusStopped, EpicHeld:
				es.HeldBy = append(es.HeldBy, b)
				ready = false
			default:
				ready = false
			}
		}
		switch {
		case len(es.HeldBy) > 0:
			es.State = EpicHeld
		case ready:
			es.State = EpicReady
		default:
			es.State = EpicWaiting
		}
		return es.State
	}
	for id := range stories {
		resolve(id, map[string]bool{})
	}
	overlapWaits(stories, items)
	// plan's order: completed items apart, then the waves.
	pl := plan.Compute(items, len(items)+1)
	var order []string
	inWave := map[string]bool{}
	for _, w := range pl.Waves {
		order = append(order, w...)
		for _, id := range w {
			inWave[id] = true
		}
	}
	for _, it := range items {
		if !inWave[it.ID] {
			order = append(order, it.ID)
		}
	}
	for _, id := range order {
		es := stories[id]
		es.Step = es.Next()
		st.Stories = append(st.Stories, *es)
		st.Total++
		st.Cost += runs.Cost(es.Cost)
		switch es.State {
		case runs.StatusCompleted:
			st.Done++
		case EpicRunning:
			st.Running = append(st.Running, id)
		}
	}
	return st, nil
}

// overlapWaits keeps a ready story waiting while an earlier story in plan
// order whose paths overlap its own has not ended — its worker ended,
// whatever the outcome, or it is held and cannot start in this run
// (docs/landing.md#conflicts-foreseen). Waits come in plan order, so the
// earlier story's state is final when a later one looks at it; they only
// point back in that order, so they never wait in a circle.
func overlapWaits(stories map[string]*EpicStory, items []plan.Item) {
	for _, w := range plan.Overlaps(items, false) {
		es, other := stories[w.ID], stories[w.For]
		if es == nil || other == nil || !(es.State == EpicReady || es.State == EpicWaiting && len(es.WaitsFor) > 0) {
			continue
		}
		switch other.State {
		case runs.StatusCompleted, runs.StatusFailed, runs.StatusBlocked, runs.StatusTimeout, runs.StatusStopped, EpicHeld:
			continue // ended, or never starts in this run
		}
		es.State = EpicWaiting
		es.WaitsFor = append(es.WaitsFor, w)
	}
}

// WaitsText says what a story waits for because their paths overlap:
// "waits for auth: both touch api/**" (terminal-safe).
func WaitsText(st EpicStory) string {
	parts := make([]string, len(st.WaitsFor))
	for i, w := range st.WaitsFor {
		parts[i] = "waits for " + esc(w.For) + ": " + w.Why()
	}
	return strings.Join(parts, "; ")
}

// storyOutcome is what the story's own evidence says (Evidence.Story):
// running, completed, or the end status of a run that counts (one that
// ended since q.Since); "" when it says nothing final. A dry epic run
// (q.DryRun) counts its stories' dry attempts where they did not
// really complete.
func (q EpicQuery) storyOutcome(ctx context.Context, ws *store.Workspace, es *EpicStory, ev *Evidence) string {
	st := ev.Story(ctx, ws, es.ID)
	es.Done, es.Total, es.Branch, es.Base, es.PR, es.Cost, es.Session = st.Done, st.Total, st.Branch, st.Base, st.PR, st.Cost, st.Session
	es.NoPR, es.Review = st.NoPR, st.Review
	es.Actions = st.Actions
	es.Dry = st.Dry
	es.BaseMoved = st.BaseMoved
	es.Land, es.PRState, es.Conflict = st.Land, st.PRState, st.Conflict
	state, ended := st.State, st.Ended
	if q.DryRun && state != runs.StatusCompleted && st.Dry != nil {
		state, es.Branch, es.Session = st.Dry.State, st.Dry.Branch, st.Dry.Session
		ended = q.Since // a dry attempt's outcome counts in the dry run that made it
		if d, ok := ev.record(es.ID, true); ok {
			ended, es.Base = d.Ended, d.Base
		}
	}
	switch {
	case state == EpicRunning:
		es.Why = st.Why // GitHub's state unknown, for one
		return EpicRunning
	case q.After == runs.AfterMerged && (ev.HasBranch(es.ID) || st.Branch != "") &&
		(st.PRState == runs.PRMerged || q.Actions != nil && Merged(ctx, q.Root, es.ID, q.Env)):
		es.Merged = true
		return runs.StatusCompleted
	case state == runs.StatusCompleted:
		return runs.StatusCompleted // the constant: state may point into the load's chunks (store.Load), which a runner's memory of it would keep
	case !ended.Before(q.Since):
		es.Why = st.Why
		return outcomeOf(state)
	}
	return ""
}

// outcomeOf keeps the end statuses that hold a story's dependents.
func outcomeOf(status string) string {
	for _, end := range []string{runs.StatusFailed, runs.StatusBlocked, runs.StatusTimeout, runs.StatusStopped} {
		if status == end {
			return end // the constant, as above
		}
	}
	return ""
}

// storyBranches lists the story/<s> branches of the repository, with one
// git call.
func StoryBranches(ctx context.Context, root string) map[string]bool {
	out := map[string]bool{}
	b, err := git.Repo{Dir: root}.Run(ctx, "for-each-ref", "--format=%(refname:strip=3)", "refs/heads/"+runs.StoryBranchPrefix)
	if err != nil {
		return out
	}
	for _, name := range strings.Fields(b) {
		out[name] = true
	}
	return out
}

// dryBranches lists the stories with a dry-run branch saga-dry/<s>.
func DryBranches(ctx context.Context, root string) map[string]bool {
	out := map[string]bool{}
	b, err := git.Repo{Dir: root}.Run(ctx, "for-each-ref", "--format=%(refname:strip=3)", "refs/heads/"+runs.DryBranchPrefix)
	if err != nil {
		return out
	}
	for _, name := range strings.Fields(b) {
		out[name] = true
	}
	return out
}

// merged tells whether the story's PR is merged into its base (gh pr view).
func Merged(ctx context.Context, root, story string, env func(string) string) bool {
	out, err := runs.GHCommand(ctx, runs.Program(env, runs.ProgramGH), root, "pr", "view", runs.StoryBranch(story), "--json", "state").Output()
	var pr struct{ State string }
	if err != nil || json.Unmarshal(out, &pr) != nil || pr.State == "" {
		return false
	}
	// What gh said, kept for readers of local evidence (Evidence.Story);
	// a record that cannot be written only leaves them asking gh again.
	_ = runs.RecordPRState(root, story, pr.State, time.Now())
	return pr.State == runs.PRMerged
}

func refIDs(refs []store.Ref) []string {
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		if !slices.Contains(out, r.ID) {
			out = append(out, r.ID)
		}
	}
	return out
}

// GraphStates are the states the dependency graph of the epic's stories
// draws (plan.WriteMermaid, WriteDot): each story's run state, but broken
// for a story whose files cannot be trusted.
func (s *EpicStatus) GraphStates(items []plan.Item) map[string]string {
	states := plan.States(items)
	for _, st := range s.Stories {
		if states[st.ID] != plan.StateBroken {
			states[st.ID] = st.State
		}
	}
	return states
}

// String is a one-line summary: "3/8 stories · 2 running".
func (s *EpicStatus) String() string {
	return fmt.Sprintf("%d/%d stories · %d running", s.Done, s.Total, len(s.Running))
}
