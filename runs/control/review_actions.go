package control

// A watched story run on GitHub Actions (docs/review.md#on-github-actions):
// its job's record and pushed branch live on GitHub, and a watcher reads
// local evidence — the run records and the branches here. So once per
// Actions run, when a poll first sees it ended, the watcher takes in what
// the job left: the record it uploaded becomes the story's record here
// (its review part added to what this side knew), and its pushed branch
// this repository's story branch, fast-forward only. The base-moved
// dependents of a blocker whose round pushed are then seen, and restacked,
// here as after a local round.

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// takeInActions takes in, for each watched story whose last run here is a
// dispatch to GitHub Actions that ended and was not taken in yet, the
// record its job uploaded and its pushed branch. A run still queued or in
// progress is looked at again next poll; GitHub is asked only then (one
// `gh run list` a poll, shared), and what a run left is read once.
func (w *watcher) takeInActions(ctx context.Context, p *WatchPoll) {
	if w.o.Actions == nil || w.o.Workspace == nil || w.o.Parser == nil {
		return
	}
	w.o.Actions.Refresh()
	var ev *readmodel.Evidence
	for _, s := range w.o.Stories {
		if ev == nil {
			ev = readmodel.NewEvidence(ctx, w.o.Root, w.o.SessionDir, w.o.Parser)
			ev.Actions = w.o.Actions
		}
		last, _ := ev.LastRuns(s)
		if last == nil || last.Backend != readmodel.BackendGitHub {
			continue
		}
		local, have := runs.ReadRecord(w.o.Root, s)
		if have && local.Session == last.Session {
			continue // taken in already
		}
		st := ev.Story(ctx, w.o.Workspace, s)
		if st.State == readmodel.EpicRunning || st.Actions == nil || st.Actions.ID == 0 {
			continue
		}
		ar := *st.Actions
		if ar.Name == "" { // its end as recorded here names no run
			ar.Name = last.RunName
		}
		job, ok, err := w.o.Actions.Ended(ctx, s, &ar)
		if err != nil {
			p.Errs = append(p.Errs, fmt.Errorf("story %s: what its Actions run %s left: %w", s, ar.URL, err))
			continue
		}
		if !ok {
			continue // no record believed (status says why): nothing to take in
		}
		rec := takeIn(local, have, job, last.Session)
		if err := runs.WriteRecord(w.o.Root, rec); err != nil {
			p.Errs = append(p.Errs, fmt.Errorf("story %s: record its Actions run: %w", s, err))
			continue
		}
		if err := pullBranch(ctx, git.Repo{Dir: w.o.Root}, runs.StoryBranch(s)); err != nil {
			p.Errs = append(p.Errs, fmt.Errorf("story %s: %w", s, err))
		}
		ev = nil // the branches moved: the next story is judged afresh
	}
}

// takeIn is the story's record here once its Actions run ended: the
// record the job uploaded, under the local dispatch's session (which says
// it was taken in). The job's worker started in a fresh clone with no
// record, so its spend and review rounds are that job's alone: they are
// added to what this side counted; the replies and tasks are the union.
func takeIn(local runs.Record, have bool, job runs.Record, session string) runs.Record {
	rec := job
	rec.Session, rec.Worktree = session, "" // the job's worktree was the runner's
	if !have {
		return rec
	}
	rec.Spent = max(runs.Cost(local.Spent), runs.Cost(local.Cost)) + runs.Cost(job.Cost)
	rec.PR, rec.PRState = cmp.Or(job.PR, local.PR), cmp.Or(job.PRState, local.PRState)
	rec.Review = addReview(local.Review, job.Review)
	// The job's checkout had no record before its run: its history is
	// that run alone, after this side's.
	rec.History, rec.HistoryDropped = local.History, local.HistoryDropped
	for _, l := range job.History {
		runs.AddRun(&rec, l)
	}
	return rec
}

// addReview adds a job's review record (counted from none) to the one
// this side kept.
func addReview(local, job *runs.ReviewRecord) *runs.ReviewRecord {
	switch {
	case job == nil:
		return local
	case local == nil:
		return job
	}
	r := *job
	r.Rounds = local.Rounds + job.Rounds
	r.Tasks = union(local.Tasks, job.Tasks)
	r.Replied = union(local.Replied, job.Replied)
	r.Commit = cmp.Or(job.Commit, local.Commit)
	if local.Addressed.After(r.Addressed) {
		r.Addressed = local.Addressed
	}
	if local.ReadAt.After(job.ReadAt) { // the watcher read it since
		r.Requests, r.ChangesRequested, r.Ignored, r.ReadAt = local.Requests, local.ChangesRequested, local.Ignored, local.ReadAt
	}
	return &r
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// pullBranch makes the local branch origin's as last fetched (Ended
// fetched it): created when it is not here, fast-forwarded when behind.
// git refuses a branch that has commits origin's lacks, or one checked
// out in a worktree — said, never forced.
func pullBranch(ctx context.Context, g git.Repo, branch string) error {
	remote := "refs/remotes/origin/" + branch
	if !g.OK(ctx, "rev-parse", "--verify", "--quiet", remote) {
		return nil // the job pushed nothing
	}
	if _, err := g.Run(ctx, "fetch", "-q", ".", remote+":refs/heads/"+branch); err != nil {
		return fmt.Errorf("take origin's %s into the branch here: %w — bring it up to date yourself (`git fetch origin %s`)", branch, err, branch)
	}
	return nil
}
