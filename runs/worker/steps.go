package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/store"
)

// worktree makes sure the story's worktree (store.WorktreeDir) is a git worktree on branch
// story/<story>: reused when it exists, re-added from the branch when only
// the branch exists, else created from the base (fetched first when there is
// a remote).
func (r *run) worktree(ctx context.Context) (err error) {
	r.repo = git.Repo{Bin: r.o.Git, Dir: r.root}
	top, err := r.repo.Run(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("%s is not inside a git repository: the worker needs git (run `git init` and commit .saga/)", r.root)
	}
	if filepath.Clean(top) != filepath.Clean(r.root) {
		if rt, e1 := filepath.EvalSymlinks(top); e1 == nil {
			if rr, e2 := filepath.EvalSymlinks(r.root); e2 == nil && rt != rr {
				return fmt.Errorf(".saga/ must be at the repository's top (%s), not in %s", top, r.root)
			}
		}
	}
	common, err := r.repo.CommonDir(ctx)
	if err != nil {
		return err
	}
	// Its canonical path: the sandbox denies writes to it.
	r.gitCommon = filesafe.CanonicalPath(common)
	if err := git.ExcludeWorktreesIn(common); err != nil {
		r.j.Warn(runs.StepWorktree, "could not add %s/ to .git/info/exclude: %v", store.WorktreesRel, err)
	}
	// A dry run lives apart (docs/worker.md#dry-runs): no real run reads it.
	r.branch = runs.RunBranch(r.o.Story, r.o.DryRun)
	r.wt = store.RunWorktreeDir(r.root, r.o.Story, r.o.DryRun)
	r.wtGit = r.repo.In(r.wt)
	r.base = r.o.Base
	if r.base == "" {
		if b, err := r.repo.Run(ctx, "symbolic-ref", "--short", "HEAD"); err == nil {
			r.base = b
		} else {
			r.base = "main"
		}
	}
	r.remote = r.repo.HasRemote(ctx)
	refBase := verify.EpicBase(ctx, r.repo, r.root, r.base)
	r.refBase = refBase
	if r.reference, r.referenceFrom, err = r.referenceCommit(ctx, refBase, r.remote); err != nil {
		return err
	}
	if removed, err := r.repo.RemoveDeadWorktree(ctx, r.wt); err != nil {
		r.j.Warn(runs.StepWorktree, "could not remove the half-made %s: %v", rel(r.root, r.wt), err)
	} else if removed {
		r.j.Step(runs.StepWorktree, "removed %s: an earlier add of it was interrupted before its checkout was done", rel(r.root, r.wt))
	}
	if r.remote {
		r.fromOrigin(ctx)
	}
	// A worktree just checked out holds what its commit holds, and its
	// HEAD is the story branch: no agent has been in it.
	checkedOut := true
	switch {
	case isWorktree(ctx, r.repo, r.wt):
		checkedOut = false
		r.j.Step(runs.StepWorktree, "reusing %s on %s", rel(r.root, r.wt), r.branch)
	case r.repo.OK(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+r.branch):
		if _, err := r.repo.AddWorktree(ctx, r.wt, r.branch); err != nil {
			return err
		}
		r.j.Step(runs.StepWorktree, "re-added %s from the existing branch %s", rel(r.root, r.wt), r.branch)
	default:
		// From R itself, unless the base is a blocker's branch, whose work
		// the story builds on (R is brought in below).
		start, from := r.reference, fmt.Sprintf("%s at %s", r.referenceFrom, verify.Short(r.reference))
		if refBase != r.base {
			start, from = r.base, r.base
		}
		if _, err := r.repo.AddWorktree(ctx, "--no-track", "-b", r.branch, r.wt, start); err != nil {
			return err
		}
		r.fresh = true
		r.j.Step(runs.StepWorktree, "created %s on new branch %s from %s", rel(r.root, r.wt), r.branch, from)
	}
	if err := r.excludeAgentFiles(ctx); err != nil {
		r.j.Warn(runs.StepWorktree, "could not set the worktree's exclude file: %v", err)
	}
	// A reused worktree is as an earlier run's agent left it: HEAD on the
	// story branch, and its .saga/ guarded, before anything reads it. One
	// just checked out has no agent's change to revert (a status of .saga
	// at 100,000 files: 0.1 s of the start), but the story folder as
	// committed is still checked for links and special files: the
	// repository's content is not trusted either (docs/security.md).
	if !checkedOut {
		if err := r.ensureHead(ctx, runs.StepWorktree); err != nil {
			return err
		}
	}
	restack := r.readRestack(ctx)
	guard := r.guardSaga
	if checkedOut {
		guard = r.guardStoryFolder
	}
	if err := guard(ctx); err != nil {
		return err
	}
	// A story not yet committed on the base is copied in and committed on
	// the story branch at once, so that what the agent does to it later is
	// told apart from the story itself.
	if _, err := os.Stat(r.storyDir()); err != nil {
		if err := copyStory(filepath.Join(r.root, filepath.FromSlash(store.StoryDirRel(r.o.Story))), r.wt, store.StoryDirRel(r.o.Story)); err != nil {
			return fmt.Errorf("copy the story into the worktree: %w", err)
		}
		rel := store.StoryDirRel(r.o.Story)
		if _, err := r.wtGit.Run(ctx, "add", "--", rel); err != nil {
			return err
		}
		if _, err := r.commitIndex(ctx, fmt.Sprintf("saga(%s): add the story", r.o.Story)); err != nil {
			return err
		}
		r.j.Warn(runs.StepWorktree, "story %s is not committed on %s; copied it into the worktree and committed it on %s", r.o.Story, r.base, r.branch)
	}
	// A restack that conflicted: its task and the new base's merge
	// (restack.go) — before the reference commit's when that conflict was
	// with the reference commit itself (land's follow of the default
	// branch: docs/landing.md#a-conflict), which is then taken in with it.
	first := restack.holds(ctx, r, r.reference)
	if first {
		if err := r.takeRestack(ctx, restack); err != nil {
			return err
		}
	}
	if err := r.bringIn(ctx); err != nil {
		return err
	}
	if !first {
		if err := r.takeRestack(ctx, restack); err != nil {
			return err
		}
	}
	r.j.Emit(runs.Event{Event: runs.KindStep, Step: runs.StepWorktree, Branch: r.branch, Base: r.base, Worktree: r.wt}, "")
	return nil
}

func isWorktree(ctx context.Context, g git.Repo, path string) bool {
	if _, err := os.Stat(filepath.Join(path, ".git")); err != nil {
		return false
	}
	top, err := g.In(path).Run(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return false
	}
	a, _ := filepath.EvalSymlinks(top)
	b, _ := filepath.EvalSymlinks(path)
	return a == b
}

// copyStory copies the story's files from the folder from into rel of the
// worktree wt, never through a link out of wt (its tree is the branch's,
// which a repository can fill with links).
func copyStory(from, wt, rel string) error {
	des, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	to, err := filesafe.OpenBeneath(wt)
	if err != nil {
		return err
	}
	defer to.Close()
	if err := to.MkdirAll(rel, 0o755); err != nil {
		return err
	}
	for _, de := range des {
		if !de.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, de.Name()))
		if err != nil {
			return err
		}
		if err := to.WriteFileAtomic(rel+"/"+de.Name(), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

// draftPR pushes the branch and opens a draft PR once; anything missing
// (gh, a remote, auth) is a warning. A dry run has no remote side effects.
func (r *run) draftPR(ctx context.Context) {
	gh := lookPath(r.o.GH)
	switch {
	case r.o.DryRun:
		r.j.Step(runs.StepPR, "dry run: no push and no pull request")
		return
	case gh == "":
		r.noPR(runs.NoPRNoGH, "gh is not installed (or %s is wrong); no pull request", runs.EnvGH)
		return
	case !r.remote:
		r.noPR(runs.NoPRNoOrigin, "the repository has no remote named origin; no pull request")
		return
	}
	if out, err := r.ghRun(ctx, gh, "auth", "status"); err != nil {
		r.noPR(runs.NoPRLoggedOut, "gh is not authenticated (%s); no pull request", firstLine(out, err))
		return
	}
	// GitHub refuses a PR with no commits between origin's base and the
	// branch: counted against origin's base when it has one (the local base
	// can be behind it: the branch then starts on commits it lacks).
	onto := r.base
	if remote := "refs/remotes/origin/" + r.base; r.wtGit.OK(ctx, "rev-parse", "--verify", "--quiet", remote+"^{commit}") {
		onto = remote
	}
	if ahead, err := r.wtGit.Run(ctx, "rev-list", "--count", onto+".."+r.branch); err == nil && ahead == "0" {
		if _, err := r.commitEmpty(ctx, "Start story "+r.o.Story); err != nil {
			r.j.Warn(runs.StepPR, "empty start commit: %v", err)
			return
		}
	}
	if _, err := r.wtGit.Retry(ctx, r.pushArgs(ctx)...); err != nil {
		r.noPR(runs.NoPRPush, "push %s: %v; no pull request", r.branch, err)
		return
	}
	out, err := r.ghRun(ctx, gh, "pr", "list", "--head", r.branch, "--state", "all", "--json", "number,url,state", "--limit", "1")
	if err != nil {
		r.noPR(runs.NoPRGH, "gh pr list: %s", firstLine(out, err))
		return
	}
	var prs []struct {
		URL   string `json:"url"`
		State string `json:"state"`
	}
	json.Unmarshal([]byte(out), &prs)
	if len(prs) > 0 && prs[0].URL != "" {
		r.pr = prs[0].URL
		r.j.Step(runs.StepPR, "pull request exists: %s", r.pr)
		if r.fresh && prs[0].State == "OPEN" {
			// A new attempt: the PR is a draft again until it completes.
			if out, err := r.ghRun(ctx, gh, "pr", "ready", "--undo", r.pr); err != nil {
				r.j.Warn(runs.StepPR, "gh pr ready --undo: %s", firstLine(out, err))
			} else {
				r.j.Step(runs.StepPR, "a new attempt: %s is a draft again", r.pr)
			}
		}
	} else {
		title := "Story: " + r.o.Story
		s, _ := r.story()
		body := r.prBody(ctx, s, readmodel.EpicRunning)
		out, err := r.ghRun(ctx, gh, "pr", "create", "--draft", "--title", title, "--body", body, "--base", r.base, "--head", r.branch)
		if err != nil {
			r.noPR(runs.NoPRGH, "gh pr create: %s", firstLine(out, err))
			return
		}
		r.pr = lastURL(out)
		r.j.Step(runs.StepPR, "opened draft pull request %s", r.pr)
	}
	if r.pr != "" {
		// In the run's events and record, not in story.json: definitions on
		// the branch are the person's (definitions.go).
		r.j.Emit(runs.Event{Event: runs.KindStep, Step: runs.StepPR, PR: r.pr}, "")
	}
}

// noPR warns that the run opens no pull request and records why (a
// runs.NoPR* reason), for `status` and for `run <story>`, which opens it
// once the story completed.
func (r *run) noPR(reason, format string, args ...any) {
	r.j.Warn(runs.StepPR, format, args...)
	r.missing = &runs.NoPR{Reason: reason, Message: fmt.Sprintf(format, args...)}
	r.j.Emit(runs.Event{Event: runs.KindPRMissing, Step: runs.StepPR, Reason: reason, Message: r.missing.Message}, "")
}

// pushArgs push the story branch. A branch this run created replaces one
// origin still has from an earlier attempt (reset, run --again) — with a
// lease on what this clone last saw of it, so nothing pushed since is lost
// unseen; else a push that is not a fast-forward is refused as always.
func (r *run) pushArgs(ctx context.Context) []string {
	args := []string{"push", "-q", "-u", "origin", r.branch}
	if !r.fresh || r.replaced {
		return args
	}
	r.replaced = true // asked once: after this push origin has this attempt
	// What this clone last saw of origin's branch (no fetch: a first
	// attempt pays nothing; origin moved since, the lease refuses the push).
	old, err := r.repo.Commit(ctx, "refs/remotes/origin/"+r.branch)
	if err != nil || r.wtGit.OK(ctx, "merge-base", "--is-ancestor", old, r.branch) {
		return args
	}
	r.j.Step(runs.StepPR, "a new attempt: %s replaces origin's %s (%s, an earlier attempt's)", r.branch, r.branch, verify.Short(old))
	return []string{"push", "-q", "-u", "--force-with-lease=refs/heads/" + r.branch + ":" + old, "origin", r.branch}
}

func (r *run) ghRun(ctx context.Context, gh string, args ...string) (string, error) {
	out, err := runs.GHCommand(ctx, gh, r.wt, args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func firstLine(out string, err error) string {
	if out != "" {
		line, _, _ := strings.Cut(out, "\n")
		return line
	}
	return err.Error()
}

func lastURL(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "http") {
			return l
		}
	}
	return ""
}

// context marks the story in progress only where its story.json has a
// status (upstream SAGA derives a story's status from its tasks, and its
// strict story object rejects a status it did not write). Its branch,
// worktree and PR are the run's: in its events and record
// (definitions.go).
func (r *run) context(ctx context.Context) error {
	if err := r.setStoryField(ctx, "status", store.StatusInProgress, true); err != nil {
		return fmt.Errorf("update story.json: %w", err)
	}
	s, err := r.story()
	if err != nil {
		return err
	}
	_, _, r.blockers = store.JournalBlocker(r.readJournal(runs.StepContext))
	r.committed = r.statuses()
	r.j.Step(runs.StepContext, "%s — %q, %d/%d tasks done", r.o.Story, s.Title, s.Done(), len(s.Tasks))
	return nil
}

// end leaves the story in a clean state whatever happened: tasks stuck in
// progress back to pending, statuses committed and pushed, the PR's
// description brought up to date and the PR marked ready only when
// everything is done, the task list removed. status is how the loop
// ended. It reports whether the story is complete: every task completed
// (the loop ended completed), the checks passed on the final tree, and the
// work on the branch — committed, and pushed where there is a remote. A
// worker that was stopped skips the final checks: the story is not
// complete then.
func (r *run) end(ctx context.Context, status string, stopped bool) bool {
	if r.wt == "" {
		return false
	}
	completed := status == runs.StatusCompleted
	if r.listDir != "" {
		r.reconcile(ctx)
	}
	s, err := r.story()
	if err != nil {
		r.j.Warn(runs.StepEnd, "%v", err)
		return false
	}
	for _, t := range s.Tasks {
		if t.Status == store.StatusInProgress {
			if err := r.setTaskStatus(ctx, t.ID, store.StatusPending); err != nil {
				r.j.Warn(runs.StepEnd, "reset %s: %v", t.ID, err)
				continue
			}
			r.j.Emit(runs.Event{Event: runs.KindTaskStatus, Task: t.ID, From: store.StatusInProgress, To: store.StatusPending, Source: runs.SourceWorktree},
				fmt.Sprintf("end: %s was still in progress; back to pending", t.ID))
		}
	}
	if s, err = r.story(); err != nil {
		r.j.Warn(runs.StepEnd, "%v", err)
		return false
	}
	all := len(s.Tasks) > 0 && s.Done() == len(s.Tasks)
	if err := r.setStoryField(ctx, "status", s.EffectiveStatus(), true); err != nil {
		r.j.Warn(runs.StepEnd, "story status: %v", err)
	}
	r.restoreDefinitions(ctx)
	// The end's statuses are final (in_progress was reset above): no
	// reconciliation from the task list after the guard.
	problem := r.commitWork(ctx, fmt.Sprintf("end, %d/%d tasks done", s.Done(), len(s.Tasks)), false)
	digest := ""
	switch {
	case all && stopped:
		all = false
		r.j.Step(runs.StepEnd, "stopped: the checks are not run on the final tree, so the pull request stays a draft")
	case all:
		// Every task's checks once more on the final tree, before the PR
		// may go ready, with the reference commit's protected files and on
		// the full tree; their outcome goes into the journal, committed.
		var passed bool
		prot := r.protected(ctx)
		passed, digest = r.finalChecks(ctx, s, prot)
		if prot != nil && passed {
			if r.blocked = verify.Blocking(prot.Changes); len(r.blocked) > 0 {
				r.blockedByProtected(r.blocked)
				passed = false
			}
		}
		if !passed {
			all = false
			if s, err := r.story(); err == nil {
				if err := r.setStoryField(ctx, "status", s.EffectiveStatus(), true); err != nil {
					r.j.Warn(runs.StepEnd, "story status: %v", err)
				}
			}
		}
		if digest != "" || len(r.blocked) > 0 {
			what := "checks passed on the final tree"
			switch {
			case len(r.blocked) > 0:
				what = "protected files changed"
			case !passed:
				what = "checks failed on the final tree"
			}
			problem = r.commitWork(ctx, what, false)
		}
	}
	if problem == "" {
		switch {
		case r.o.DryRun:
			r.j.Step(runs.StepEnd, "dry run: the work is committed on %s, not pushed", r.branch)
		case !r.remote:
			r.j.Step(runs.StepEnd, "no remote named origin: the work is committed on %s only, not pushed", r.branch)
		}
	}
	complete := all && completed && problem == ""
	if gh := lookPath(r.o.GH); r.pr != "" && gh != "" {
		// The description says how the story ended, whatever it was.
		final := status
		switch {
		case complete:
			final = runs.StatusCompleted
		case stopped:
			final = runs.StatusStopped
		case final == runs.StatusCompleted:
			final = runs.StatusFailed
		}
		r.refreshPRBody(ctx, gh, final, digest)
		switch {
		case !all:
		case problem != "":
			r.j.Warn(runs.StepEnd, "the pull request stays a draft: the branch is not pushed with a clean worktree (see `git -C %s status`)", r.wt)
		default:
			if out, err := r.ghRun(ctx, gh, "pr", "ready", r.pr); err != nil {
				r.j.Warn(runs.StepEnd, "gh pr ready: %s", firstLine(out, err))
			} else {
				r.j.Step(runs.StepEnd, "pull request marked ready for review: %s", r.pr)
			}
		}
	}
	if r.listDir != "" && !r.o.KeepTasks {
		if err := claudecode.Remove(r.listDir); err != nil {
			r.j.Warn(runs.StepEnd, "remove the task list: %v", err)
		}
	}
	if all && completed && problem != "" {
		// Dependents would start without the work: not completed.
		r.why = fmt.Sprintf("every task is done, but the work is not saved on %s: %s", r.branch, problem)
		r.j.Fail(runs.StepEnd, r.why)
		return false
	}
	return complete
}
