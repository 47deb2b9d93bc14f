package control

// Restack (docs/restack.md): a stacked story whose blocker's branch moved
// after it was done (a review round pushed to it) is rebuilt on the new
// tip — its own commits replayed on it, in its worktree when that is clean,
// else in a temporary worktree under the git dir, never in the user's
// checkout — then its final checks run again at the rebuilt branch's
// reference commit, the record keeps the new reference, and the branch is
// pushed over its PR's with a lease. A conflict leaves the branch exactly
// as it was and writes a task for the story's next run. The story's worker
// lock is held throughout: no worker runs meanwhile.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/store"
)

// RestackOptions configure Restack and RestackEpic.
type RestackOptions struct {
	Setup     Setup
	Story     string // the story (Restack) or the epic (RestackEpic)
	Workspace *store.Workspace
	Parser    *store.Parser
	// Policy is how the checks run (--allow-unconfined-checks).
	Policy verify.Policy
	Now    func() time.Time // default time.Now
	// Landed are the story's blockers whose PR merged into the default
	// branch (`saga-lsp land`, docs/landing.md): their branches are not
	// built on, and their commits are not the story's own. Target, with
	// every blocker landed, is the commit the story is rebuilt on — the
	// default branch as origin has it, fetched — and TargetBranch its
	// name, which the record keeps as the story's base: the story follows
	// main.
	Landed       []string
	Target       string
	TargetBranch string
}

// RestackResult is what Restack did to one story.
type RestackResult struct {
	Story string `json:"story"`
	// Restacked: the branch was rebuilt (or its rebuild conflicted);
	// false with Why: nothing to do.
	Restacked bool           `json:"restacked"`
	Why       string         `json:"why,omitempty"`
	Onto      []string       `json:"onto,omitempty"` // the branches it was rebuilt on
	Tips      []string       `json:"tips,omitempty"` // their tips
	Old       string         `json:"old,omitempty"`  // the branch's tip before
	New       string         `json:"new,omitempty"`  // after ("" after a conflict)
	Reference string         `json:"reference,omitempty"`
	Replayed  int            `json:"replayed"` // its own commits replayed
	Where     string         `json:"where,omitempty"`
	Checks    []RestackCheck `json:"checks"`
	// Passed: every check passed and no protected file blocks.
	Passed    bool                 `json:"passed"`
	Reset     []string             `json:"reset,omitempty"` // tasks back to pending: their checks fail
	Protected []runs.ProtectedFile `json:"protected,omitempty"`
	Conflicts []string             `json:"conflicts,omitempty"`
	Task      string               `json:"task,omitempty"` // the conflict task's file, from the root
	Pushed    bool                 `json:"pushed,omitempty"`
	Draft     bool                 `json:"draft,omitempty"` // its PR made a draft again
	// Notes are what went wrong on the side (a push refused, gh failed).
	Notes []string `json:"notes,omitempty"`
	Next  string   `json:"next,omitempty"`
}

// RestackCheck is one check's result on the rebuilt branch.
type RestackCheck struct {
	Task      string `json:"task"`
	Command   string `json:"command"`
	Passed    bool   `json:"passed"`
	Outcome   string `json:"outcome"`
	Protected bool   `json:"protected,omitempty"` // the run with the reference commit's protected files
}

// RestackEpic restacks the epic's base-moved stories in dependency order
// (plan's), each judged again after those before it: a restacked blocker
// moves its own dependents' base.
func RestackEpic(ctx context.Context, o RestackOptions) ([]*RestackResult, error) {
	q := readmodel.ViewQuery(o.Setup.Root, o.Story, o.Setup.Env, o.Parser)
	q.SessionDir = o.Setup.SessionDir
	st, err := readmodel.EpicState(ctx, o.Workspace, q)
	if err != nil {
		return nil, err
	}
	var out []*RestackResult
	for _, s := range st.Stories {
		so := o
		so.Story = s.ID
		ev := readmodel.NewEvidence(ctx, o.Setup.Root, o.Setup.SessionDir, o.Parser)
		if ev.Story(ctx, o.Workspace, s.ID).BaseMoved == nil {
			continue
		}
		r, err := Restack(ctx, so)
		if err != nil {
			return out, fmt.Errorf("restack %s: %w", s.ID, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Restack rebuilds a stacked story on its blockers' new tips
// (docs/restack.md). A story whose base did not move is left alone
// (Restacked false, Why says so).
func Restack(ctx context.Context, o RestackOptions) (*RestackResult, error) {
	if !store.ValidCanonical(o.Story) {
		return nil, store.Usagef("invalid story name %q", o.Story)
	}
	if o.Workspace.Story(o.Story) == nil {
		return nil, store.Usagef("no story %q in %s", o.Story, o.Setup.Root)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	root := o.Setup.Root
	lock, ok, err := filesafe.TryLock(root, runs.WorkerLockName(o.Story))
	if err != nil {
		return nil, fmt.Errorf("restack %s: %w", o.Story, err)
	}
	if !ok {
		return nil, store.Usagef("a worker of story %s runs: restack it once it ended (`saga-lsp follow %s`), or stop it (`saga-lsp stop %s`)", o.Story, o.Story, o.Story)
	}
	defer func() { _ = lock.Unlock() }()
	x := &restack{o: o, g: git.Repo{Dir: root}, branch: runs.StoryBranch(o.Story), res: &RestackResult{Story: o.Story, Checks: []RestackCheck{}}}
	return x.res, x.run(ctx)
}

// restack is one story's restack under way.
type restack struct {
	o       RestackOptions
	g       git.Repo
	branch  string
	res     *RestackResult
	rec     runs.Record
	haveRec bool
	target  string // the epic's base, as a full hash
	wt      string // where the rebuild happens
	w       git.Repo
	temp    bool   // wt is a temporary worktree
	why     string // the checks that fail on the rebuilt branch, in words
}

func (x *restack) run(ctx context.Context) error {
	g, story, res := x.g, x.o.Story, x.res
	old, err := g.Commit(ctx, "refs/heads/"+x.branch)
	if err != nil {
		res.Why = fmt.Sprintf("it has no branch %s: nothing to restack", x.branch)
		return nil
	}
	res.Old = old
	x.rec, x.haveRec = runs.ReadRecord(x.o.Setup.Root, story)
	base := x.rec.Base
	if base == "" {
		base = verify.DefaultBranch(ctx, g)
	}
	epicBase := verify.EpicBase(ctx, g, x.o.Setup.Root, base)
	if x.target, err = g.Commit(ctx, "refs/heads/"+epicBase); err != nil {
		if x.target, err = g.Commit(ctx, epicBase); err != nil {
			return fmt.Errorf("restack %s: its epic's base %s is not a branch here", story, epicBase)
		}
	}
	refs, err := g.ListRefs(ctx, "refs/heads/")
	if err != nil {
		return fmt.Errorf("restack %s: %w", story, err)
	}
	onTop := slices.DeleteFunc(blockersOnTop(ctx, g, x.o.Workspace, refs, story, x.target, false, false), func(b string) bool {
		return slices.ContainsFunc(x.o.Landed, func(l string) bool { return runs.StoryBranch(l) == b })
	})
	moved := false
	switch {
	case len(onTop) == 0 && x.o.Target != "":
		// Every blocker landed: the story follows the default branch.
		if x.target, err = g.Commit(ctx, x.o.Target); err != nil {
			return fmt.Errorf("restack %s: %s is not a commit here", story, x.o.Target)
		}
		res.Onto, res.Tips = []string{x.o.TargetBranch}, []string{x.target}
		moved = !g.OK(ctx, "merge-base", "--is-ancestor", x.target, old)
	case len(onTop) == 0:
		res.Why = fmt.Sprintf("no blocker's branch is left to build on (merged into %s, or never run): nothing to restack", epicBase)
		return nil
	}
	for _, b := range onTop {
		tip, err := g.Commit(ctx, "refs/heads/"+b)
		if err != nil {
			return err
		}
		res.Onto, res.Tips = append(res.Onto, b), append(res.Tips, tip)
		moved = moved || !g.OK(ctx, "merge-base", "--is-ancestor", tip, old)
	}
	if !moved {
		res.Why = fmt.Sprintf("its base did not move: the tip of %s is on %s already", strings.Join(onTop, " and "), x.branch)
		return nil
	}
	res.Restacked = true
	commits, err := x.ownCommits(ctx)
	if err != nil {
		return err
	}
	if err := x.tree(ctx); err != nil {
		return err
	}
	defer x.cleanup(context.WithoutCancel(ctx))
	if files, err := x.rebuild(ctx, commits); err != nil {
		return err
	} else if len(files) > 0 {
		return x.conflict(ctx, files)
	}
	res.Replayed = len(commits)
	if err := x.verify(ctx); err != nil {
		return err
	}
	if res.New, err = x.w.Commit(ctx, "HEAD"); err != nil {
		return err
	}
	// With the old tip as the lease: a branch someone moved meanwhile is
	// refused, not overwritten.
	if _, err := g.Run(ctx, "update-ref", "-m", "saga-lsp restack", "refs/heads/"+x.branch, res.New, old); err != nil {
		return fmt.Errorf("move %s to the rebuilt %s: %w", x.branch, verify.Short(res.New), err)
	}
	if !x.temp {
		if _, err := x.w.Run(ctx, "checkout", "-q", "-f", x.branch); err != nil {
			return fmt.Errorf("put %s back on %s: %w", x.wt, x.branch, err)
		}
	}
	return x.finish(ctx)
}

// ownCommits are the story's own commits on its branch, oldest first: not
// its blockers' (their new tips hold their old ones after a push on top;
// where a blocker was rewritten, its reflog's fork point says which were
// its), not the epic's base's as the run took it in, no merges (its
// "build on" and "take in" merges are made again by the new base and the
// next run).
func (x *restack) ownCommits(ctx context.Context) ([]string, error) {
	args := []string{"rev-list", "--reverse", "--topo-order", "--no-merges", x.res.Old, "--not"}
	args = append(args, x.res.Tips...)
	for _, b := range x.res.Onto {
		if fp, err := x.g.Run(ctx, "merge-base", "--fork-point", "refs/heads/"+b, x.res.Old); err == nil && fp != "" {
			args = append(args, fp)
		}
	}
	// A landed blocker's commits are on the default branch (squashed,
	// perhaps): its branch, and where the story forked from it, are not
	// the story's own.
	for _, l := range x.o.Landed {
		b := "refs/heads/" + runs.StoryBranch(l)
		if !x.g.OK(ctx, "rev-parse", "--verify", "--quiet", b) {
			continue
		}
		args = append(args, b)
		if fp, err := x.g.Run(ctx, "merge-base", "--fork-point", b, x.res.Old); err == nil && fp != "" {
			args = append(args, fp)
		}
	}
	if r := x.rec.Reference; r != "" && x.g.OK(ctx, "cat-file", "-e", r+"^{commit}") {
		args = append(args, r)
	}
	out, err := x.g.Run(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s's own commits: %w", x.branch, err)
	}
	return strings.Fields(out), nil
}

// tree chooses where the rebuild happens: the story's worktree when it is
// on its branch and clean, else — when it has none — a temporary worktree
// under the git dir. A branch checked out anywhere else (the user's
// checkout) is refused: moving it would change that checkout under them.
func (x *restack) tree(ctx context.Context) error {
	wts, err := x.g.Worktrees(ctx)
	if err != nil {
		return err
	}
	own := store.WorktreeDir(x.o.Setup.Root, x.o.Story)
	for _, w := range wts {
		if w.Branch != x.branch {
			continue
		}
		if filesafe.CanonicalPath(w.Path) != filesafe.CanonicalPath(own) {
			return store.Usagef("%s is checked out in %s: switch that checkout to another branch, then restack %s", x.branch, w.Path, x.o.Story)
		}
		x.wt, x.w = own, x.g.In(own)
		st, err := x.w.Run(ctx, "status", "--porcelain", "--untracked-files=all")
		// The task an earlier restack's conflict wrote, as written: this
		// restack supersedes it (its conflict writes it again).
		if rel, ok := strings.CutPrefix(st, "?? "); err == nil && ok && isRestackTask(x.o.Setup.Root, own, x.o.Story, rel) {
			if err := os.Remove(filepath.Join(own, filepath.FromSlash(rel))); err != nil {
				return fmt.Errorf("remove the earlier restack task %s: %w", rel, err)
			}
			st = ""
		}
		if err != nil || st != "" {
			return store.Usagef("the worktree of %s (%s) has uncommitted changes: commit or discard them (`git -C %s status`), then restack it", x.o.Story, own, own)
		}
		x.res.Where = store.WorktreeDirRel(x.o.Story)
		_, err = x.w.Run(ctx, "checkout", "-q", "--detach", x.res.Tips[0])
		return err
	}
	if _, err := os.Lstat(own); err == nil {
		return store.Usagef("%s is not a worktree on %s: move it away, then restack %s", own, x.branch, x.o.Story)
	}
	state, err := filesafe.StateDir(x.o.Setup.Root)
	if err != nil {
		return err
	}
	parent := filepath.Join(state, "restack")
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return err
	}
	// Never through a link: the folder must be a folder of the user's.
	if fi, err := os.Lstat(parent); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", parent)
	}
	if err := filesafe.OwnedPrivate(parent); err != nil {
		return fmt.Errorf("the restack folder: %w", err)
	}
	dir, err := os.MkdirTemp(parent, x.o.Story+"-")
	if err != nil {
		return err
	}
	if _, err := x.g.AddWorktree(ctx, "-q", "--detach", dir, x.res.Tips[0]); err != nil {
		os.RemoveAll(dir)
		return err
	}
	x.wt, x.w, x.temp, x.res.Where = dir, x.g.In(dir), true, "a temporary worktree"
	return nil
}

// cleanup removes the temporary worktree, or puts the story's worktree
// back on its branch (a rebuild abandoned, or the restack interrupted).
func (x *restack) cleanup(ctx context.Context) {
	if x.wt == "" {
		return
	}
	x.w.Run(ctx, "cherry-pick", "--abort")
	x.w.Run(ctx, "merge", "--abort")
	if x.temp {
		x.g.Worktree(ctx, "remove", "--force", x.wt)
		os.RemoveAll(x.wt)
		return
	}
	if head, _ := x.w.Run(ctx, "symbolic-ref", "--quiet", "--short", "HEAD"); head != x.branch {
		x.w.Run(ctx, "checkout", "-q", "-f", x.branch)
	}
}

// rebuild makes the new base in the tree (a blocker's tip; for several,
// their merge on the epic's base, as a new story's branch is made) and
// replays the story's commits on it. It returns the files of a conflict.
func (x *restack) rebuild(ctx context.Context, commits []string) ([]string, error) {
	w, id := x.w, x.w.Identity(ctx)
	if len(x.res.Onto) > 1 {
		if _, err := w.Run(ctx, "checkout", "-q", "--detach", x.target); err != nil {
			return nil, err
		}
		for _, b := range x.res.Onto {
			args := append(slices.Clone(id), "merge", "-q", "--no-ff", "--no-edit", "-m", fmt.Sprintf("saga(%s): build on %s", x.o.Story, b), "refs/heads/"+b)
			if _, err := w.Run(ctx, args...); err != nil {
				return x.conflicted(ctx, err)
			}
		}
	}
	if len(commits) == 0 {
		return nil, nil
	}
	args := append(slices.Clone(id), append([]string{"cherry-pick", "--keep-redundant-commits"}, commits...)...)
	if _, err := w.Run(ctx, args...); err != nil {
		return x.conflicted(ctx, err)
	}
	return nil, nil
}

// conflicted lists the files a failed merge or cherry-pick left unmerged;
// a failure without any is an error.
func (x *restack) conflicted(ctx context.Context, err error) ([]string, error) {
	out, _ := x.w.Run(ctx, "diff", "--name-only", "--diff-filter=U")
	if files := strings.Fields(out); len(files) > 0 {
		return files, nil
	}
	return nil, fmt.Errorf("rebuild %s on %s: %w", x.branch, strings.Join(x.res.Onto, " and "), err)
}

// conflict abandons the rebuild — the branch stays exactly as it was — and
// writes the task that asks the story's next run to resolve it, in the
// story's worktree (added from its branch when it has none), and records
// it.
func (x *restack) conflict(ctx context.Context, files []string) error {
	res, story := x.res, x.o.Story
	res.Conflicts = files
	x.cleanup(context.WithoutCancel(ctx))
	x.wt = ""
	own := store.WorktreeDir(x.o.Setup.Root, story)
	if x.temp {
		if err := x.g.ExcludeWorktrees(ctx); err != nil {
			return err
		}
		if _, err := x.g.AddWorktree(ctx, "-q", own, x.branch); err != nil {
			return fmt.Errorf("add the worktree of %s for its restack task: %w", story, err)
		}
	}
	rel, digest, err := writeRestackTask(ctx, x.o.Parser, own, restackConflict{Story: story, Head: res.Old, Onto: res.Onto, Tips: res.Tips, Files: files})
	if err != nil {
		return err
	}
	res.Task = filepath.ToSlash(filepath.Join(store.WorktreeDirRel(story), rel))
	taskID := strings.TrimSuffix(filepath.Base(rel), ".json")
	res.Next = fmt.Sprintf("`saga-lsp run %s`: its agent resolves the conflict (task %s)", story, taskID)
	if x.o.TargetBranch != "" { // land's follow of the default branch (docs/landing.md#a-conflict)
		res.Next = fmt.Sprintf("`saga-lsp land --resolve %s`: its agent resolves the conflict (task %s)", story, taskID)
	}
	why := fmt.Sprintf("restacking on the new tip of %s conflicts in %s; %s", strings.Join(res.Onto, " and "), strings.Join(files, ", "), res.Next)
	if err := x.record(ctx, &runs.RestackRecord{At: x.o.Now().UTC(), Onto: res.Onto, Tips: res.Tips, Head: res.Old,
		Conflicts: files, Task: taskID, Digest: digest, Why: why}); err != nil {
		return err
	}
	x.draft(ctx, "its restack conflicts")
	return nil
}

// verify runs the story's final checks on the rebuilt tree at its
// reference commit — the epic's base's latest commit it holds — as the
// worker's end does: each task's checks with the protected files as they
// are there and on the full tree. A task whose check fails goes back to
// pending, committed on the rebuilt branch.
func (x *restack) verify(ctx context.Context) error {
	res, story, root, env := x.res, x.o.Story, x.o.Setup.Root, x.o.Setup.Env
	ref, err := verify.ForkPoint(ctx, x.w, "HEAD", x.target)
	if err != nil {
		return err
	}
	res.Reference = ref
	m, err := verify.Resolve(ctx, x.w, story, ref, nil)
	if err != nil {
		return err
	}
	cache, err := buildcache.ChecksCacheDir(root, story, env)
	if err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("the checks run without a build cache: %v", err))
	}
	checks, err := verify.Prepare(ctx, verify.Setup{Dir: x.wt, Reference: ref, Manifest: m, Cache: cache,
		Warm: buildcache.FindWarm(root, env), Policy: x.o.Policy, SeedNpm: true})
	if err != nil {
		return err
	}
	if checks.Runner.Mode == verify.Refused {
		return fmt.Errorf("not running the checks of %s: %s", story, checks.Runner.Why)
	}
	res.Passed = true
	if p := checks.Protected; p != nil {
		blocking := verify.Blocking(p.Changes)
		res.Protected = verify.ProtectedEvent(blocking).Protected
		res.Passed = len(blocking) == 0
	}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range m.Tasks {
			if !yield(id) {
				return
			}
		}
	})
	var failed []string
	for _, id := range ids {
		tc := m.Tasks[id]
		if len(tc.Commands) == 0 {
			continue
		}
		tr := checks.Run(ctx, id, tc, time.Time{}, func(r verify.Result) {
			res.Checks = append(res.Checks, RestackCheck{Task: id, Command: r.Command, Passed: r.Passed, Outcome: r.Outcome(), Protected: r.Protected})
		})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if f := tr.Failed(); f != nil {
			res.Passed = false
			failed = append(failed, fmt.Sprintf("task %s: `%s` %s", id, f.Command, f.Outcome()))
			if changed, err := store.SetTaskStatus(ctx, x.wt, story, id, store.StatusPending); err != nil {
				return fmt.Errorf("put %s back to pending: %w", id, err)
			} else if changed {
				res.Reset = append(res.Reset, id)
			}
		}
	}
	if len(res.Reset) > 0 {
		var rels []string
		for _, id := range res.Reset {
			rels = append(rels, store.TaskFileRel(story, id))
		}
		if _, err := x.w.Run(ctx, append([]string{"add", "--"}, rels...)...); err != nil {
			return err
		}
		msg := fmt.Sprintf("saga(%s): back to pending after the restack on %s: %s", story, strings.Join(res.Onto, " and "), strings.Join(failed, "; "))
		if _, err := x.w.Run(ctx, append(x.w.Identity(ctx), "commit", "-q", "--no-verify", "-m", msg)...); err != nil {
			return fmt.Errorf("commit the tasks back to pending: %w", err)
		}
	}
	if !res.Passed {
		what := strings.Join(failed, "; ")
		if len(res.Protected) > 0 {
			what = strings.TrimPrefix(what+"; protected files changed: "+protectedPaths(res.Protected), "; ")
		}
		res.Next = fmt.Sprintf("fix what failed, then `saga-lsp run %s`", story)
		x.why = fmt.Sprintf("after the restack on the new tip of %s, the final checks fail: %s; %s", strings.Join(res.Onto, " and "), what, res.Next)
	}
	return nil
}

func protectedPaths(ps []runs.ProtectedFile) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Path)
	}
	return strings.Join(out, ", ")
}

// finish records the rebuilt branch and pushes it over its PR's.
func (x *restack) finish(ctx context.Context) error {
	res := x.res
	var rr *runs.RestackRecord
	if !res.Passed {
		rr = &runs.RestackRecord{At: x.o.Now().UTC(), Onto: res.Onto, Tips: res.Tips, Head: res.Old, New: res.New, Why: x.why}
	}
	if err := x.record(ctx, rr); err != nil {
		return err
	}
	if x.rec.PR != "" && x.g.HasRemote(ctx) {
		lease := fmt.Sprintf("--force-with-lease=refs/heads/%s:%s", x.branch, res.Old)
		if _, err := x.g.Run(ctx, "push", "-q", lease, "origin", res.New+":refs/heads/"+x.branch); err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("push %s to origin: %v — push it yourself (`git push --force-with-lease origin %s`)", x.branch, err, x.branch))
		} else {
			res.Pushed = true
		}
	}
	if !res.Passed {
		x.draft(ctx, "its checks fail after the restack")
	}
	return nil
}

// record keeps the rebuilt branch's reference commit and what the restack
// left (rr: nil when the story is ready) in the story's run record.
func (x *restack) record(ctx context.Context, rr *runs.RestackRecord) error {
	rec := x.rec
	if !x.haveRec {
		st := readmodel.NewEvidence(ctx, x.o.Setup.Root, x.o.Setup.SessionDir, x.o.Parser).Story(ctx, x.o.Workspace, x.o.Story)
		rec = runs.Record{Story: x.o.Story, Session: st.Session, Status: st.State, Ended: x.o.Now().UTC(), Branch: x.branch, PR: st.PR}
		if len(x.res.Onto) == 1 {
			rec.Base = x.res.Onto[0]
		}
	}
	if x.res.Reference != "" {
		rec.Reference = x.res.Reference
	}
	if x.o.TargetBranch != "" && len(x.res.Onto) == 1 && x.res.Onto[0] == x.o.TargetBranch {
		rec.Base = x.o.TargetBranch // it follows main now
	}
	if x.res.New != "" {
		rec.Protected = x.res.Protected
	}
	rec.Restack = rr
	if err := runs.WriteRecord(x.o.Setup.Root, rec); err != nil {
		return fmt.Errorf("the run record of %s: %w", x.o.Story, err)
	}
	x.rec, x.haveRec = rec, true
	return nil
}

// draft makes the story's PR a draft again: it is not ready (why).
func (x *restack) draft(ctx context.Context, why string) {
	if x.rec.PR == "" {
		return
	}
	gh, err := runs.LookProgram(x.o.Setup.Env, runs.ProgramGH)
	if err != nil {
		x.res.Notes = append(x.res.Notes, fmt.Sprintf("%s stays ready for review although %s: gh is not installed", x.rec.PR, why))
		return
	}
	if out, err := runs.GHCommand(ctx, gh, x.o.Setup.Root, "pr", "ready", "--undo", x.branch).CombinedOutput(); err != nil {
		x.res.Notes = append(x.res.Notes, fmt.Sprintf("gh pr ready --undo %s: %s", x.branch, firstLineOf(string(out), err)))
		return
	}
	x.res.Draft = true
}
