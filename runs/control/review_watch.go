package control

// Watching a story's or an epic's pull requests for review
// (docs/review.md#watching): `saga-lsp run <story|epic> --review --watch`
// polls them, all in one GraphQL query a poll, records what each read
// counted for the faces, and starts a review round on its own only for a
// writer's review in state "changes requested" newer than the last one a
// round was started for. Plain comments wait for an explicit `--review`.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/review"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/store"
)

const (
	// DefaultWatchEvery is the pause between two polls: a review waits
	// for a person anyway, and GitHub's secondary rate limits punish a
	// client that asks often (docs/review.md#watching).
	DefaultWatchEvery = 60 * time.Second
	// MinWatchEvery is the shortest pause --watch-every takes.
	MinWatchEvery = 30 * time.Second
)

// WatchOptions configure WatchReview.
type WatchOptions struct {
	Setup
	// Stories are the stories whose pull requests are watched (a story's
	// own, or an epic's children); one without a PR yet is looked at again
	// each poll, one whose PR merged or closed is left alone.
	Stories []string
	// Worker are the flags of the rounds started (Review is set).
	Worker         runs.WorkerFlags
	FlagsValidated bool
	Workspace      *store.Workspace
	Parser         *store.Parser
	GH             string // gh; default runs.LookProgram
	// Every is the pause between polls; default DefaultWatchEvery.
	Every time.Duration
	// Tick, when set, paces the polls instead of a ticker of Every: one
	// poll at the start, then one per value received (tests drive polls
	// with it).
	Tick <-chan time.Time
	// Start starts a story's round: default StartStory (the GitHub Actions
	// backend's, with --on github). A *RunningError (its worker runs) or an
	// *UnreachableError is "later": the next poll tries again.
	Start func(context.Context, RunOptions) (*readmodel.Started, error)
	// Polled, when set, hears of each poll as it ends.
	Polled func(WatchPoll)
	Now    func() time.Time // default time.Now
}

// WatchPoll is what one poll did.
type WatchPoll struct {
	N       int      // the poll's number, from 1
	PRs     int      // pull requests asked about (in one query)
	Started []string // stories whose review round it started
	// Restacked are stacked stories whose base moved (a blocker's round
	// pushed) that it rebuilt on it (Restack; a conflict included).
	Restacked []string
	// Later are stories with a new "changes requested" review whose round
	// could not start now (their worker runs): asked again next poll.
	Later []string
	Errs  []error
}

// WatchReview polls until ctx ends (Ctrl-C), then returns nil; it fails
// only when it cannot start (no gh).
func WatchReview(ctx context.Context, o WatchOptions) error {
	if o.GH == "" {
		gh, err := runs.LookProgram(o.Env, runs.ProgramGH)
		if err != nil {
			return fmt.Errorf("--watch asks GitHub through gh, which is not installed: %w", err)
		}
		o.GH = gh
	}
	if o.Start == nil {
		o.Start = StartStory
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Worker.Review = true
	tick := o.Tick
	if tick == nil {
		t := time.NewTicker(cmp.Or(o.Every, DefaultWatchEvery))
		defer t.Stop()
		tick = t.C
	}
	w := &watcher{o: o, started: map[string]time.Time{}}
	for n := 1; ; n++ {
		p := w.poll(ctx)
		p.N = n
		if ctx.Err() != nil {
			return nil
		}
		if o.Polled != nil {
			o.Polled(p)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
		}
	}
}

type watcher struct {
	o WatchOptions
	// started: per story, the newest "changes requested" review this
	// watcher started a round for — beside the record's Addressed, which a
	// record that cannot be written would lose.
	started map[string]time.Time
}

// watched is a story with an open pull request, as its record says.
type watched struct {
	story string
	repo  review.Repo
	rec   runs.Record
}

func (w *watcher) poll(ctx context.Context) WatchPoll {
	var p WatchPoll
	w.takeInActions(ctx, &p)
	var list []watched
	var repos []review.Repo
	for _, s := range w.o.Stories {
		rec, ok := runs.ReadRecord(w.o.Root, s)
		if !ok || rec.PR == "" || rec.PRState == runs.PRMerged || rec.PRState == runs.PRClosed {
			continue
		}
		repo, err := review.RepoOfURL(rec.PR)
		if err != nil {
			p.Errs = append(p.Errs, fmt.Errorf("story %s: %w", s, err))
			continue
		}
		list = append(list, watched{story: s, repo: repo, rec: rec})
		repos = append(repos, repo)
	}
	w.restack(ctx, &p)
	if len(list) == 0 {
		return p
	}
	p.PRs = len(repos)
	prs, err := review.Poll(ctx, w.o.GH, w.o.Root, repos)
	if err != nil {
		p.Errs = append(p.Errs, err)
	}
	// Who may write is asked once per poll and repository.
	writers := map[[2]string]*review.Writers{}
	for _, x := range list {
		pr := prs[x.repo]
		if pr == nil {
			continue
		}
		if pr.State != runs.PROpen {
			runs.RecordPRState(w.o.Root, x.story, pr.State, w.o.Now())
			continue
		}
		key := [2]string{x.repo.Owner, x.repo.Name}
		if writers[key] == nil {
			writers[key] = review.NewWriters(w.o.GH, w.o.Root, x.repo)
		}
		if err := w.story(ctx, x, pr, writers[key], &p); err != nil {
			p.Errs = append(p.Errs, fmt.Errorf("story %s: %w", x.story, err))
		}
	}
	return p
}

// restack rebuilds each watched story whose base moved — a blocker's
// round pushed to the branch it is stacked on — on the new tip, its checks
// run again (Restack). One whose restack conflicted waits for its next run
// (its task), one whose worker runs for the next poll.
func (w *watcher) restack(ctx context.Context, p *WatchPoll) {
	if w.o.Workspace == nil || w.o.Parser == nil {
		return
	}
	ev := readmodel.NewEvidence(ctx, w.o.Root, w.o.SessionDir, w.o.Parser)
	for _, s := range w.o.Stories {
		st := ev.Story(ctx, w.o.Workspace, s)
		if st.BaseMoved == nil || len(st.BaseMoved.Conflicts) > 0 || st.State == readmodel.EpicRunning {
			continue
		}
		res, err := Restack(ctx, RestackOptions{Setup: w.o.Setup, Story: s, Workspace: w.o.Workspace, Parser: w.o.Parser,
			Policy: verify.Policy{AllowUnconfined: w.o.Worker.AllowUnconfinedChecks}, Now: w.o.Now})
		var running *RunningError
		switch {
		case errors.As(err, &running):
		case err != nil:
			p.Errs = append(p.Errs, fmt.Errorf("restack %s: %w", s, err))
		case res.Restacked:
			p.Restacked = append(p.Restacked, s)
		}
	}
}

// story records what the poll read of x's review, and starts a round
// when a writer asked for changes since the last round started.
func (w *watcher) story(ctx context.Context, x watched, pr *review.PR, wr *review.Writers, p *WatchPoll) error {
	rd, err := review.Count(ctx, pr, wr)
	if err != nil {
		return err // GitHub cannot say who may write: never guessed
	}
	prev := x.rec.Review
	if prev == nil {
		prev = &runs.ReviewRecord{}
	}
	asks, err := changesRequested(ctx, pr, wr, prev, w.started[x.story])
	if err != nil {
		return err
	}
	open := 0
	for _, r := range rd.Requests {
		if !replied(prev, r.Key, r.UpdatedAt) {
			open++
		}
	}
	// A live worker writes the record at its end: the read is not
	// written under it (the round's own read is newer anyway).
	if _, live, _ := runs.WorkerLock(w.o.Root, x.story, false); !live {
		if err := runs.UpdateReview(w.o.Root, x.story, func(r *runs.ReviewRecord) {
			r.Requests, r.ChangesRequested, r.Ignored, r.ReadAt = max(open, len(asks)), len(asks), rd.Ignored, w.o.Now().UTC()
		}); err != nil {
			return fmt.Errorf("record the review read: %w", err)
		}
	}
	if len(asks) == 0 {
		return nil
	}
	newest := asks[len(asks)-1].UpdatedAt
	// Marked before the round starts, so that the round carries it from
	// the record it reads; taken back when the round could not start.
	mark := func(t time.Time) error {
		return runs.UpdateReview(w.o.Root, x.story, func(r *runs.ReviewRecord) { r.Addressed = t })
	}
	if err := mark(newest); err != nil {
		return fmt.Errorf("record the review a round is started for: %w", err)
	}
	_, err = w.o.Start(ctx, RunOptions{Setup: w.o.Setup, Story: x.story, Worker: w.o.Worker, FlagsValidated: w.o.FlagsValidated,
		Workspace: w.o.Workspace, Parser: w.o.Parser})
	var running *RunningError
	var unreachable *UnreachableError
	switch {
	case errors.As(err, &running), errors.As(err, &unreachable), ctx.Err() != nil:
		p.Later = append(p.Later, x.story)
		return mark(prev.Addressed)
	case err != nil:
		// Started and failed, or refused: not started again for the same
		// review (a person runs `saga-lsp run <story> --review`).
		w.started[x.story] = newest
		return fmt.Errorf("start its review round: %w", err)
	}
	w.started[x.story] = newest
	p.Started = append(p.Started, x.story)
	return nil
}

// changesRequested are the writers' reviews in state "changes requested"
// that still stand (their author's latest deciding review) and are newer
// than any a round was started for, oldest first.
func changesRequested(ctx context.Context, pr *review.PR, wr *review.Writers, rec *runs.ReviewRecord, started time.Time) ([]review.Review, error) {
	latest := map[string]review.Review{}
	for _, r := range pr.Reviews {
		if r.State != "CHANGES_REQUESTED" && r.State != "APPROVED" && r.State != "DISMISSED" {
			continue // a comment leaves its author's decision as it was
		}
		if l, ok := latest[r.Author.Login]; !ok || r.UpdatedAt.After(l.UpdatedAt) {
			latest[r.Author.Login] = r
		}
	}
	var out []review.Review
	for _, r := range latest {
		if r.State != "CHANGES_REQUESTED" || r.Author.Bot || r.Author.Login == "" ||
			!r.UpdatedAt.After(rec.Addressed) || !r.UpdatedAt.After(started) || replied(rec, r.ID, r.UpdatedAt) {
			continue
		}
		ok, err := wr.Can(ctx, r.Author.Login)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b review.Review) int { return a.UpdatedAt.Compare(b.UpdatedAt) })
	return out, nil
}

// replied tells whether a round answered the request key at its revision
// updatedAt (ReviewRecord.Replied: "<task>@<updatedAt>").
func replied(rec *runs.ReviewRecord, key string, updatedAt time.Time) bool {
	return slices.Contains(rec.Replied, review.TaskID(key)+"@"+updatedAt.UTC().Format(time.RFC3339))
}
