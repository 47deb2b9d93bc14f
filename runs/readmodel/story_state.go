package readmodel

// One answer to "is it done?" (docs/commands.md#a-storys-state): the one
// derivation of a story's state that `plan`, `status` (of a story and of an
// epic), `run`, the epic runner, the language server's lenses and so the
// execute-story skill all read, so they agree before, during and after
// runs and after `clean`. It reads local evidence only — run records,
// events files, worker locks, the story's worktree copy, its local and
// remote-tracking branches and its files on the checkout — never the
// network.

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// StoryPending is the state of a story no evidence says anything final
// of: never run, reset, or its last attempt's files are gone.
const StoryPending = "pending"

// Where a StoryState's task statuses were read (StoryState.From).
const (
	FromWorktree = "worktree" // the story's worktree copy
	FromBranch   = "branch"   // the task files committed on story/<s>
	FromOrigin   = "origin"   // … on origin/story/<s>, as last fetched
	FromMain     = "main"     // the checkout's own copy
)

// StoryState is what the local evidence says of one story.
type StoryState struct {
	ID string `json:"id"`
	// State: pending, running, or the outcome of its last real run —
	// completed, failed, timeout, blocked, stopped (a run killed before
	// its end is failed). Completed also when its tasks are all completed
	// where its statuses are read (From).
	State string `json:"state"`
	// Done and Total count its tasks where they were read (From).
	Done  int    `json:"done"`
	Total int    `json:"total"`
	From  string `json:"from"`
	// Tasks are its tasks' statuses as read (From), by id.
	Tasks map[string]string `json:"-"`

	Branch string `json:"branch"` // its branch, when it has one (locally or on origin)
	Base   string `json:"base"`   // the base its last run built on (a stacked story: its blocker's branch)
	PR     string `json:"pr"`
	// PRState is its PR's state as last recorded (runs.Record.PRState:
	// OPEN, MERGED, CLOSED), never asked of GitHub here.
	PRState string `json:"prState,omitempty"`
	// NoPR, for a completed story whose run opened no pull request, says
	// so, why and the next step: "no PR yet" (its worker recorded why:
	// runs.KindPRMissing). Nil otherwise — a PR, or no branch to open one
	// from.
	NoPR    *NoPRState `json:"noPR,omitempty"`
	Session string     `json:"session"` // its last real run's
	Cost    float64    `json:"cost"`    // every headless run of every attempt, reruns and the one in progress too
	// Why says, when its last run did not complete, what stopped it and
	// the next step.
	Why string `json:"why,omitempty"`
	// Ended is when the outcome was reached (the last run's start, else its
	// record's end): the epic runner retries what ended before its own start.
	Ended time.Time `json:"-"`
	// Dry is what its dry run left, apart from the rest; nil when nothing.
	Dry *DryState `json:"dryRun,omitempty"`
	// Actions is its Actions run, when that decides its state (a story run
	// on GitHub Actions: actions.go).
	Actions *ActionsRun `json:"actions,omitempty"`
	// IgnoredRuns are runs on GitHub named as the story's that are not
	// the run saga-lsp dispatched (actions.go): they decide nothing.
	IgnoredRuns []IgnoredRun `json:"ignoredRuns,omitempty"`
	// BaseMoved, for a stacked story not running, says that the branch it
	// is stacked on moved past it (a review round pushed to its blocker):
	// its next step is `saga-lsp restack <story>` (docs/restack.md). Nil
	// otherwise.
	BaseMoved *BaseMoved `json:"baseMoved,omitempty"`
	// Review is its review loop as its record last left it (review.go);
	// nil before any read of its PR's review.
	Review *ReviewState `json:"review,omitempty"`
	// Land is why `saga-lsp land` last stopped the story, as its record
	// keeps it (docs/landing.md); nil once it landed.
	Land *runs.LandRecord `json:"land,omitempty"`
	// Conflict is its open conflict-resolution task: a restack (or land's
	// follow of the default branch) stopped on a conflict, no run has
	// taken it in since and its branch is where the conflict left it. Its
	// next step is `saga-lsp land --resolve <story>` (docs/landing.md#a-conflict).
	// Nil otherwise.
	Conflict *Conflict `json:"conflict,omitempty"`
}

// Conflict is a story's open conflict-resolution task
// (runs.RestackRecord's conflict).
type Conflict struct {
	Task  string   `json:"task"`  // the task's id (restack-<hash>)
	Files []string `json:"files"` // where the rebuild conflicted
	Onto  []string `json:"onto"`  // the branches it was to be rebuilt on
}

// BaseMoved is a stacked story whose base branch's tip is not on its own
// branch.
type BaseMoved struct {
	Base string `json:"base"` // its base, a blocker's story/<x>
	Tip  string `json:"tip"`  // the base's tip now (a full hash)
	// Conflicts are the files the last restack onto it conflicted in, and
	// Task the task it wrote for the next run (runs.RestackRecord); empty
	// when no restack was tried.
	Conflicts []string `json:"conflicts,omitempty"`
	Task      string   `json:"task,omitempty"`
}

// Text is the state in words, with the next step: "base moved: story/a is
// at 1a2b3c4d5e6f now — `saga-lsp restack b` rebuilds it on that".
func (b *BaseMoved) Text(story string) string {
	if len(b.Conflicts) > 0 {
		return fmt.Sprintf("base moved: %s is at %s now, and rebuilding on it conflicts in %s — task %s asks its next run to resolve it: `saga-lsp run %s`",
			b.Base, shortSHA(b.Tip), strings.Join(b.Conflicts, ", "), b.Task, story)
	}
	return fmt.Sprintf("base moved: %s is at %s now — `saga-lsp restack %s` rebuilds the story on it", b.Base, shortSHA(b.Tip), story)
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// NoPRState is why a completed story has no pull request yet, and the
// next step: `saga-lsp run <story>` opens it without running the agent
// again (docs/commands.md#run--stop).
type NoPRState struct {
	// Reason is what its worker recorded (runs.NoPR*), "unknown" for a
	// run that recorded none (a release before it).
	Reason string `json:"reason"`
	Why    string `json:"why"`              // in words
	Detail string `json:"detail,omitempty"` // what the worker met, as it said it
	Next   string `json:"next"`
}

// NoPRUnknown is NoPRState.Reason when the run recorded no reason.
const NoPRUnknown = "unknown"

// DryState is a story's dry-run attempt (docs/worker.md#dry-runs).
type DryState struct {
	State string `json:"state"` // running, the last dry run's end status, or "left" (its branch or worktree only)
	// Done and Total are the simulated agent's tasks as its last dry run
	// reported them (0/0 when none did): never the story's.
	Done     int    `json:"done"`
	Total    int    `json:"total"`
	Branch   string `json:"branch"`
	Worktree string `json:"worktree"` // relative to the root; "" when gone
	Session  string `json:"session"`
}

// Evidence reads the state of a workspace's stories; one value serves a
// whole command (the session dir is listed and the story refs are read
// once).
type Evidence struct {
	Root       string
	SessionDir string
	Parser     *store.Parser
	// Actions, when set, asks GitHub about stories dispatched to GitHub
	// Actions from here; with Discover, about every story (a runner resumed
	// in a fresh clone, with no local trace of its dispatches).
	Actions  Actions
	Discover bool
	// Runs, when set, decodes the runs' events files and records again
	// only when they changed (a long-lived reader: the epic runner, a
	// face's watcher).
	Runs *runs.RunCache
	// Branches, when set, keeps the story folders read from branches
	// between Evidences (a long-lived reader), read again where a tip moved.
	Branches *BranchFolders

	runs map[string][]runs.RunFile // story → its runs, oldest first
	storyRefs

	// Git read in batches, once per Evidence, so that an epic's 200
	// stories cost a few git processes, not several each
	// (docs/architecture.md#speed):
	wanted   []string                     // stories whose branches the first branch read fetches too (Prefetch)
	branches map[string]map[string][]byte // ref → the story folder's files committed there, as fetched
	records  *runs.Records                // the root's run records, their folder checked once
	recs     map[recordKey]recordRead     // the records read (record)
	locks    runs.WorkerLocks
	looked   map[string]lookedRuns // each story's runs as judged, once (Settle)
}

// lookedRuns are a story's last run and last dry run, each with whether its
// process lived, as one look found them.
type lookedRuns struct {
	last, dry       *runs.Run
	alive, dryAlive bool
}

// Settle reads every story's last runs now and looks at their processes,
// and Story judges each story by what it found then. A caller that reads
// the stories' files after it (a workspace loaded from disk) sees them at
// least as new as the runs, since a worker writes its statuses before its
// end. Read the other way round, a worker that ended between the two
// reads was "completed (0/1 tasks)": its end read, its statuses not yet
// (the epic runner's log, under load). Only stories with a folder here are
// looked at: the session dir is shared by every repository of the user.
func (ev *Evidence) Settle() {
	for id := range ev.runs {
		if _, err := os.Lstat(filepath.Join(ev.Root, filepath.FromSlash(store.StoryDirRel(id)))); err == nil {
			ev.lookAt(id)
		} else if _, err := os.Lstat(store.WorktreeDir(ev.Root, id)); err == nil {
			ev.lookAt(id)
		}
	}
}

// lookAt is the story's runs as Settle found them, or as found now for a
// story it did not look at (then kept: one Evidence judges a story once).
func (ev *Evidence) lookAt(id string) lookedRuns {
	if l, ok := ev.looked[id]; ok {
		return l
	}
	last, dry := ev.LastRuns(id)
	var l lookedRuns
	l.last, l.alive = settled(last)
	l.dry, l.dryAlive = settled(dry)
	if ev.looked == nil {
		ev.looked = map[string]lookedRuns{}
	}
	ev.looked[id] = l
	return l
}

// Prefetch names the stories a caller is about to ask about (an epic's
// children, every story of status): the first read of a story branch's
// tasks reads all of theirs with the same git process.
func (ev *Evidence) Prefetch(ids []string) { ev.wanted = append(ev.wanted, ids...) }

// Records reads the root's run records (runs.ReadRecord), finding and
// listing their folder once per Evidence.
func (ev *Evidence) Records() runs.Records {
	if ev.records == nil {
		rr := ev.Runs.OpenRecords(ev.Root).Listed()
		ev.records = &rr
	}
	return *ev.records
}

// record is the story's run record, real or dry, read once per Evidence:
// an epic's derivation asks for a blocker's again with each of its
// dependents.
func (ev *Evidence) record(id string, dry bool) (runs.Record, bool) {
	key := recordKey{id, dry}
	if r, ok := ev.recs[key]; ok {
		return r.rec, r.ok
	}
	var r recordRead
	if dry {
		r.rec, r.ok = ev.Records().ReadDry(id)
	} else {
		r.rec, r.ok = ev.Records().Read(id)
	}
	if ev.recs == nil {
		ev.recs = map[recordKey]recordRead{}
	}
	ev.recs[key] = r
	return r.rec, r.ok
}

// recordKey names a record an Evidence read.
type recordKey struct {
	story string
	dry   bool
}

// recordRead is a record as read: ok false when there is none.
type recordRead struct {
	rec runs.Record
	ok  bool
}

// Gathered is NewEvidence of the session dir (SessionDirOf) through the
// cache of runs (nil: none), Settled: the evidence to read before the
// workspace it judges is loaded.
func Gathered(ctx context.Context, root, sessionDir string, env func(string) string, p *store.Parser, rc *runs.RunCache) (*Evidence, error) {
	dir, err := SessionDirOf(sessionDir, env)
	if err != nil {
		return nil, err
	}
	ev := NewEvidence(ctx, root, dir, p)
	ev.Runs = rc
	ev.Settle()
	return ev, nil
}

// NewEvidence lists the runs of sessionDir and the story branches of the
// repository at root.
func NewEvidence(ctx context.Context, root, sessionDir string, p *store.Parser) *Evidence {
	ev := evidenceOfRuns(root, sessionDir, p)
	ev.storyRefs = listStoryRefs(ctx, root)
	return ev
}

// evidenceOfRuns is an Evidence of sessionDir's runs, its refs not listed
// yet.
func evidenceOfRuns(root, sessionDir string, p *store.Parser) *Evidence {
	return &Evidence{Root: root, SessionDir: sessionDir, Parser: p, runs: runs.ListRuns(sessionDir, runs.KindStory),
		locks: runs.WorkerLocks{Root: root}}
}

// HasBranch tells whether the story has a local branch story/<s>.
func (ev *Evidence) HasBranch(story string) bool {
	return ev.refs["refs/heads/"+runs.StoryBranch(story)]
}

// settled is a run with its liveness, as of one look: read unended while
// its process is gone, its events are read again — a worker writes its end
// before it exits, so an end that landed between the first read and the
// look counts (under load an epic runner saw a story that had just
// completed as dead, and held its dependents for a step).
func settled(r *runs.Run) (run *runs.Run, alive bool) {
	if r == nil || r.Ended {
		return r, false
	}
	if r.Alive() {
		return r, true
	}
	if again := runs.ReadRun(r.EventsFile); again != nil {
		return again, false
	}
	return r, false
}

// Story derives the story's state.
func (ev *Evidence) Story(ctx context.Context, ws *store.Workspace, id string) StoryState {
	st := StoryState{ID: id, State: StoryPending}
	look := ev.lookAt(id)
	last, alive, lastDry, dryAlive := look.last, look.alive, look.dry, look.dryAlive
	rec, haveRec := ev.record(id, false)

	// A live worker that has not recorded its worktree yet is still making
	// it: a copy git is checking out holds some task files only.
	ev.readTasks(ctx, ws, &st, !alive || last == nil || last.Worktree != "")
	if haveRec {
		st.Branch, st.Base, st.PR, st.Session, st.Ended = rec.Branch, rec.Base, rec.PR, rec.Session, rec.Ended
		st.PRState = rec.PRState
		st.Review = reviewOf(rec, haveRec)
		if rec.PRState != runs.PRMerged {
			st.Land = rec.Land
		}
	}
	if last != nil {
		st.Branch, st.Base, st.PR = first(last.Branch, st.Branch), first(last.Base, st.Base), first(last.PR, st.PR)
		st.Session, st.Ended = last.Session, last.Started
	}
	st.Cost = runs.Spent(rec, haveRec, last)
	branch, pr := workerFields(ws, id)
	st.PR, st.Branch = first(st.PR, pr), first(st.Branch, branch)
	if st.Branch == "" && (ev.refs["refs/heads/"+runs.StoryBranch(id)] || ev.refs["refs/remotes/origin/"+runs.StoryBranch(id)]) {
		st.Branch = runs.StoryBranch(id)
	}
	// Its branch is named while it is there, locally or on origin as last
	// fetched: the run record outlives a branch `clean` deleted, and status
	// and the next step named the deleted branch.
	if st.Branch == runs.StoryBranch(id) && ev.refsRead && !ev.refs["refs/heads/"+st.Branch] && !ev.refs["refs/remotes/origin/"+st.Branch] {
		st.Branch = ""
	}
	st.Dry = ev.dry(id, lastDry, dryAlive)
	if ar, ok := ev.actionsRun(ctx, &st, last); ok {
		ev.fromActions(ctx, &st, ar, last)
		st.BaseMoved = ev.baseMoved(ctx, ws, &st, rec, haveRec) // nil while it runs
		return st
	}

	// The lock is shared by a story's real and dry workers: a live dry run
	// is the dry attempt's, not the story's. A worker holds its lock a
	// moment past its worker.end: once its run ended, a lock naming its
	// pid does not count (as the live watcher judges: watch.State.Alive) —
	// the epic runner, woken by that end, saw the story running still and
	// rested before its dependents started.
	if pid, held, err := ev.locks.Probe(id); err == nil && held && pid > 0 && !dryAlive && !(last != nil && last.Ended && last.PID == pid) {
		st.State = EpicRunning
		return st
	}
	if alive {
		st.State = EpicRunning
		return st
	}
	// The newest of the last run's events and the record (which outlives
	// an emptied session dir) decides; all tasks completed where they are
	// read is completed whatever ended last.
	// A run on GitHub Actions whose end was recorded as GitHub gave it
	// (recordEnd) was judged then — its record, its branch's statuses —
	// and its recorded state stands, as when it was asked.
	fromGitHub := false
	switch {
	case last != nil && (!haveRec || last.Session == rec.Session || last.Started.After(rec.Ended)):
		fromGitHub = last.Ended && last.Backend == BackendGitHub && last.Conclusion != ""
		st.State = runs.StatusFailed // died without its end (killed)
		st.Why = fmt.Sprintf("its worker ended without reporting an end (killed?): see %s, then `saga-lsp run %s`", last.OutputFile, id)
		if last.Ended {
			st.State, st.Why = outcomeOr(last.State), last.Message
		}
		st.Actions = Dispatched(last) // its end as recorded from GitHub (actions.go)
	case haveRec:
		st.State, st.Why = outcomeOr(rec.Status), rec.Why
	}
	// A completed run whose work is nowhere any more — its branch gone
	// here and on origin, no PR holding it, its tasks not completed where
	// they are read (a merge would have brought them) — left nothing to
	// review: the story is to run again. Status said "completed, 0/2
	// tasks done" and run refused it as completed.
	if st.State == runs.StatusCompleted && ev.refsRead && st.Branch == "" && st.PR == "" && st.Total > 0 && st.Done < st.Total {
		st.State = StoryPending
	}
	if st.Total > 0 && st.Done == st.Total && !fromGitHub {
		st.State = runs.StatusCompleted
	}
	// A restack since its last run that left it not ready (its checks
	// failed on the rebuilt branch, or the rebuild conflicted): what the
	// restack found stands until a run supersedes it (docs/restack.md).
	if haveRec && rec.Restack != nil && (last == nil || last.Session == rec.Session) {
		st.State, st.Why = runs.StatusFailed, rec.Restack.Why
		if rs := rec.Restack; len(rs.Conflicts) > 0 && rs.Task != "" && ev.tips["refs/heads/"+runs.StoryBranch(id)] == rs.Head {
			st.Conflict = &Conflict{Task: rs.Task, Files: rs.Conflicts, Onto: rs.Onto}
		}
	}
	// Its PR merged, as last recorded: the work landed, whatever ended last.
	if haveRec && rec.PRState == runs.PRMerged && (last == nil || last.Session == rec.Session) {
		st.State = runs.StatusCompleted
	}
	if st.State == runs.StatusCompleted || st.State == StoryPending {
		st.Why = ""
	}
	if st.State == runs.StatusCompleted {
		st.NoPR = ev.noPR(ctx, &st, last, rec, haveRec)
	}
	st.BaseMoved = ev.baseMoved(ctx, ws, &st, rec, haveRec)
	return st
}

// baseMoved tells whether the stacked story's base branch moved past it:
// the base's local tip is not on the story's local branch (one git call,
// for stories stacked on a blocker's branch only). A base merged and
// deleted, or a story without its local branch, has nothing to say.
func (ev *Evidence) baseMoved(ctx context.Context, ws *store.Workspace, st *StoryState, rec runs.Record, haveRec bool) *BaseMoved {
	if st.Branch != runs.StoryBranch(st.ID) || st.State == EpicRunning {
		return nil
	}
	head := ev.tips["refs/heads/"+st.Branch]
	if head == "" {
		return nil
	}
	// Stacked on one blocker's branch; or, with several, built on their
	// merge on the epic's base (its Base): each blocker's branch counts.
	bases := []string{st.Base}
	if _, dry, stacked := runs.StoryOfRunBranch(st.Base); dry {
		return nil
	} else if !stacked {
		bases = nil
		if ws != nil && len(ws.EpicBlockers(st.ID)) > 1 {
			for _, b := range ws.EpicBlockers(st.ID) {
				bases = append(bases, runs.StoryBranch(b))
			}
		}
	}
	base, tip := "", ""
	for _, b := range bases {
		// A blocker landed (its PR merged) is on the default branch: its
		// branch's tip no longer counts (docs/landing.md).
		if blocker, _, ok := runs.StoryOfRunBranch(b); ok {
			if r, ok := ev.record(blocker, false); ok && r.PRState == runs.PRMerged {
				continue
			}
		}
		t := ev.tips["refs/heads/"+b]
		if t != "" && !ev.isAncestor(ctx, t, head) {
			base, tip = b, t
			break
		}
	}
	if tip == "" {
		return nil
	}
	b := &BaseMoved{Base: base, Tip: tip}
	if haveRec && rec.Restack != nil && rec.Restack.Head == head && len(rec.Restack.Conflicts) > 0 {
		b.Conflicts, b.Task = rec.Restack.Conflicts, rec.Restack.Task
	}
	return b
}

// noPR is why the completed story has no pull request yet: nil when it
// has one, when no real run of it is known, or when its branch is gone
// or merged into the checkout's HEAD (its work landed without one).
func (ev *Evidence) noPR(ctx context.Context, st *StoryState, last *runs.Run, rec runs.Record, haveRec bool) *NoPRState {
	branch := runs.StoryBranch(st.ID)
	local := ev.refs["refs/heads/"+branch]
	if st.PR != "" || (last == nil && !haveRec) || (!local && !ev.refs["refs/remotes/origin/"+branch]) {
		return nil
	}
	if local && ev.mergedIntoHEAD(ctx, branch) {
		return nil
	}
	np := rec.NoPR
	if last != nil && (!haveRec || last.Session == rec.Session || last.Started.After(rec.Ended)) {
		np = last.NoPR
	}
	out := &NoPRState{Reason: NoPRUnknown, Why: "its worker opened none"}
	if np != nil {
		out.Reason, out.Detail = np.Reason, np.Message
	}
	run := fmt.Sprintf("`saga-lsp run %s` opens it, without running the agent again", st.ID)
	out.Next = run
	switch out.Reason {
	case runs.NoPRNoGH:
		out.Why, out.Next = "gh was not installed when its worker ran", "install gh and log in (`gh auth login`); then "+run
	case runs.NoPRLoggedOut:
		out.Why, out.Next = "gh was not logged in when its worker ran", "log in with `gh auth login`; then "+run
	case runs.NoPRNoOrigin:
		out.Why, out.Next = "the repository had no remote named origin when its worker ran", "add one (`git remote add origin <url>`); then "+run
	case runs.NoPRPush:
		out.Why = "its worker could not push " + branch
	case runs.NoPRGH:
		out.Why = "gh failed when its worker opened it"
	}
	return out
}

// outcomeOr keeps an end status; anything else is pending.
func outcomeOr(status string) string {
	switch status {
	case runs.StatusFailed, runs.StatusBlocked, runs.StatusTimeout, runs.StatusStopped, runs.StatusCompleted:
		return status
	}
	return StoryPending
}

// lastRuns folds the story's newest real run and its newest dry run.
func (ev *Evidence) LastRuns(id string) (last, dry *runs.Run) {
	files := ev.runs[id]
	for i := len(files) - 1; i >= 0 && (last == nil || dry == nil); i-- {
		r := ev.Runs.Read(files[i].EventsFile)
		switch {
		case r == nil, !r.In(ev.Root): // another repository's story of that name
		case r.DryRun && dry == nil:
			dry = r
		case !r.DryRun && last == nil:
			last = r
		}
	}
	return last, dry
}

// readTasks reads the story's task statuses from the best evidence: its
// worktree copy while it has one, else its branch (local, else origin's as
// last fetched: the worktree and local branch of a finished story may be
// cleaned away), else the checkout's own copy.
func (ev *Evidence) readTasks(ctx context.Context, ws *store.Workspace, st *StoryState, worktreeMade bool) {
	copies := ws.Copies(st.ID)
	set := func(s *store.Story, from string) {
		st.Tasks, st.From, st.Total, st.Done = map[string]string{}, from, len(s.Tasks), s.Done()
		for _, t := range s.Tasks {
			st.Tasks[t.ID] = t.Status
		}
	}
	if worktreeMade && copies.Worktree != nil && copies.Live() == copies.Worktree {
		set(copies.Worktree, FromWorktree)
		return
	}
	for _, b := range []struct{ ref, from string }{
		{"refs/heads/" + runs.StoryBranch(st.ID), FromBranch},
		{"refs/remotes/origin/" + runs.StoryBranch(st.ID), FromOrigin},
	} {
		if !ev.refs[b.ref] || ev.Parser == nil {
			continue
		}
		if tasks, ok := ev.branchTasks(ctx, b.ref, st.ID); ok {
			st.Tasks, st.From, st.Total, st.Done = tasks, b.from, len(tasks), 0
			for _, s := range tasks {
				if s == store.StatusCompleted {
					st.Done++
				}
			}
			return
		}
	}
	if copies.Main != nil {
		set(copies.Main, FromMain)
	}
}

// branchTasks reads the task statuses committed at ref (a story branch,
// local or origin's); ok is false when the story's folder is not there or
// a file cannot be read.
func (ev *Evidence) branchTasks(ctx context.Context, ref, story string) (map[string]string, bool) {
	files, fetched := ev.branches[ref]
	if !fetched {
		ev.fetchBranches(ctx, ref, story)
		files = ev.branches[ref]
	}
	dir := store.StoryDirRel(story)
	tasks := map[string]string{}
	for name, data := range files {
		if !strings.HasSuffix(name, ".json") || name == "story.json" {
			continue
		}
		f := ev.Parser.Parse(dir+"/"+name, data, 0)
		if f.Task == nil {
			return nil, false
		}
		tasks[f.Task.ID] = f.Task.Status
	}
	return tasks, len(tasks) > 0
}

// fetchBranches reads the story folder at ref, and at the branches of
// every story named by Prefetch not read yet, with one batch.
func (ev *Evidence) fetchBranches(ctx context.Context, ref, story string) {
	if ev.branches == nil {
		ev.branches = map[string]map[string][]byte{}
	}
	var refs []string
	var dirs []git.RevDir
	added := map[string]bool{}
	add := func(ref, story string) {
		if _, done := ev.branches[ref]; done || added[ref] {
			return
		}
		added[ref] = true
		if files, kept := ev.Branches.at(ref, ev.tips[ref]); kept {
			ev.branches[ref] = files
			return
		}
		// The tip as listed, not the ref: what is read is what the
		// listing saw, and the commit is the key it is kept under.
		rev := cmp.Or(ev.tips[ref], ref)
		refs, dirs = append(refs, ref), append(dirs, git.RevDir{Rev: rev, Dir: store.StoryDirRel(story)})
	}
	add(ref, story)
	for _, id := range ev.wanted {
		for _, r := range []string{"refs/heads/" + runs.StoryBranch(id), "refs/remotes/origin/" + runs.StoryBranch(id)} {
			if ev.refs[r] {
				add(r, id)
			}
		}
	}
	ev.wanted = nil
	read := map[string]branchFolder{}
	if len(dirs) > 0 {
		files, err := git.Repo{Dir: ev.Root}.FilesAtRevs(ctx, dirs)
		for i, r := range refs {
			if err == nil {
				ev.branches[r] = files[i]
				read[r] = branchFolder{Commit: ev.tips[r], Files: files[i]}
			} else {
				ev.branches[r] = nil // unreadable: no tasks there, as a failed read of one (not kept)
			}
		}
	}
	var live map[string]bool
	if ev.refsRead {
		live = ev.refs
	}
	ev.Branches.keep(read, live)
}

// mergedIntoHEAD tells whether the local branch's tip is in the
// checkout's HEAD.
func (ev *Evidence) mergedIntoHEAD(ctx context.Context, branch string) bool {
	tip := ev.tips["refs/heads/"+branch]
	if g := ev.graph(ctx); g != nil && tip != "" {
		_, unmerged := g[tip]
		return !unmerged
	}
	return git.Repo{Dir: ev.Root}.OK(ctx, "merge-base", "--is-ancestor", "refs/heads/"+branch, "HEAD")
}

// isAncestor tells whether commit a is an ancestor of commit b (or b
// itself), from the unmerged history (ev.graph) when that decides, else
// from git.
func (ev *Evidence) isAncestor(ctx context.Context, a, b string) bool {
	g := ev.graph(ctx)
	_, unmerged := g[a]
	// The walk below meets every commit of b's history that is not in
	// HEAD, and the first ones of it that are: a is among them whenever a
	// branch was made from a's tip, which then only got into HEAD — asking
	// git about each such story cost an epic's status a process per story.
	seen := map[string]bool{}
	for next := []string{b}; len(next) > 0; {
		c := next[len(next)-1]
		next = next[:len(next)-1]
		if c == a {
			return true
		}
		if parents, in := g[c]; in && !seen[c] {
			seen[c] = true
			next = append(next, parents...)
		}
	}
	if unmerged {
		return false // a commit not in HEAD is reached from b only through commits not in HEAD
	}
	return git.Repo{Dir: ev.Root}.OK(ctx, "merge-base", "--is-ancestor", a, b)
}

// graph is the local story branches' history not in HEAD (storyRefs.readGraph),
// or nil when it cannot be read.
func (ev *Evidence) graph(ctx context.Context) map[string][]string {
	ev.readGraph(ctx, ev.Root, ev.Branches)
	if ev.graphErr != nil {
		return nil
	}
	return ev.unmerged
}

// dry is what the story's dry run left: its last dry run, its dry record,
// its dry branch and worktree.
func (ev *Evidence) dry(id string, last *runs.Run, alive bool) *DryState {
	d := &DryState{}
	wt := store.DryWorktreeDir(ev.Root, id)
	if _, err := os.Lstat(wt); err == nil {
		d.Worktree = store.DryWorktreeDirRel(id)
	}
	if ev.refs["refs/heads/"+runs.DryBranch(id)] {
		d.Branch = runs.DryBranch(id)
	}
	rec, haveRec := ev.record(id, true)
	if last != nil && last.Total > 0 {
		d.Done, d.Total = max(last.Done, 0), last.Total
	}
	switch {
	case alive:
		d.State, d.Session = EpicRunning, last.Session
	case last != nil && last.Ended:
		d.State, d.Session = last.State, last.Session
	case haveRec:
		d.State, d.Session = rec.Status, rec.Session
	case last != nil:
		d.State, d.Session = runs.StatusFailed, last.Session
	case d.Branch != "" || d.Worktree != "":
		d.State = "left"
	default:
		return nil
	}
	return d
}

// workerFields are the branch and PR the story's files name (the worker
// writes them into its worktree copy's story.json): the one place they are
// read from a story's files, so that moving them into the run record is a
// change here only.
func workerFields(ws *store.Workspace, id string) (branch, pr string) {
	if s := ws.Copies(id).Live(); s != nil {
		return s.Branch, s.PR
	}
	return "", ""
}

// Text is the dry run as every face words it: "dry run completed · 3/3
// tasks (simulated, not the story's)".
func (d *DryState) Text() string {
	state := d.State
	if state == EpicRunning {
		state = "running"
	}
	return runs.DryRunText(state, d.Done, d.Total)
}
