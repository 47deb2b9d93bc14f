package github

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/store"
)

// Dispatching: `saga-lsp run <story> --on github` asks GitHub for a
// workflow_dispatch of saga-story.yml with a random id of its own as an
// input, finds the run it created by its run-name, which holds that id
// (GitHub's dispatch answers with no run id, and neither gh nor GitHub's
// API shows a run's inputs; a run is never guessed from its timing), and
// records both in a local events file, as tmux runs are recorded
// (match.go: which run is the story's).

const (
	// DefaultAppearWait bounds how long a dispatched run may take to show
	// up in `gh run list`.
	DefaultAppearWait = readmodel.ActionsAppearWait
	// DefaultPoll is the pause between two questions to GitHub.
	DefaultPoll = 2 * time.Second
)

// Backend is the GitHub Actions backend of control: a story's worker as
// a job of saga-story.yml.
type Backend struct {
	Wait     time.Duration // for the run to appear; default DefaultAppearWait
	Poll     time.Duration // default DefaultPoll
	Workflow []byte        // DispatchOptions.Workflow
}

var _ control.Backend = Backend{}

func (Backend) Name() string { return readmodel.BackendGitHub }

// StartStory dispatches the story; of the worker's flags only the base
// and --review reach the job (the workflow runs the worker with its
// defaults), and --max-review-rounds is kept here.
func (b Backend) StartStory(ctx context.Context, o control.RunOptions) (*readmodel.Started, error) {
	d, err := Dispatch(ctx, DispatchOptions{Root: o.Root, Story: o.Story, Base: o.Worker.Base, Review: o.Worker.Review, MaxReviewRounds: o.Worker.MaxReviewRounds,
		Workspace: o.Workspace, Workflow: b.Workflow, Env: o.Env,
		SessionDir: o.SessionDir, Now: o.Now, Wait: b.Wait, Poll: b.Poll})
	if d == nil {
		return nil, err
	}
	return &readmodel.Started{Story: d.Story, Session: d.Session, OutputFile: d.OutputFile, EventsFile: d.EventsFile,
		Base: d.Base, Backend: readmodel.BackendGitHub, URL: d.URL}, err
}

// DispatchOptions configure Dispatch.
type DispatchOptions struct {
	Root  string // the workspace (a clone whose origin is on GitHub)
	Story string
	Base  string // the pushed branch the story starts from; default from Workspace (control.PushedBase), else the current branch
	// Review dispatches a review round (the input review: the job's
	// worker runs with --review); a workflow without the input is refused.
	Review bool
	// MaxReviewRounds bounds the story's review rounds, as counted in its
	// record here (default runs.DefaultMaxReviewRounds): the job's worker
	// starts in a fresh clone without it, so the bound is kept here.
	MaxReviewRounds int
	// Workspace, when set, places the story on its blockers' pushed work
	// when Base is empty: the story's branch is stacked on theirs.
	Workspace *store.Workspace
	// Workflow is the workflow this saga-lsp writes (nil: not a release):
	// one on origin that another release wrote is outdated (a warning).
	Workflow   []byte
	Env        func(string) string
	SessionDir string           // default runs.SessionDir(Env)
	Now        func() time.Time // default time.Now
	Wait       time.Duration    // default DefaultAppearWait
	Poll       time.Duration    // default DefaultPoll
}

// Dispatched is a story dispatched to GitHub Actions.
type Dispatched struct {
	Story      string   `json:"story"`
	Base       string   `json:"base"`
	RunID      string   `json:"runId"`   // saga-lsp's id of the dispatch
	RunName    string   `json:"runName"` // the Actions run's name
	ActionsRun int64    `json:"actionsRun,omitempty"`
	URL        string   `json:"url,omitempty"`
	Status     string   `json:"status,omitempty"` // GitHub's: queued, in_progress, completed, …
	Session    string   `json:"session"`
	OutputFile string   `json:"outputFile"`
	EventsFile string   `json:"eventsFile"`
	Warnings   []string `json:"warnings,omitempty"`
}

// DispatchError refuses a dispatch before anything was asked of GitHub,
// saying what to do.
type DispatchError struct{ Reason string }

func (e *DispatchError) Error() string { return e.Reason }

// NotFoundError: GitHub accepted the dispatch, but no run by its name
// showed up in time. Nothing was dispatched twice; the run may still
// appear.
type NotFoundError struct {
	RunName string
	Wait    time.Duration
}

func (e *NotFoundError) Error() string {
	where := "`gh run list --workflow " + WorkflowFile + "`"
	return fmt.Sprintf("GitHub accepted the dispatch, but no run named %q showed up within %s: it may still start (see %s); "+
		"dispatching again would queue a second run behind it", e.RunName, e.Wait, where)
}

// Dispatch checks that the story can run on GitHub Actions — gh found and
// logged in, the workflow on origin's default branch (CheckReady), no run
// of the story queued or in progress (*control.RunningError), the base
// (its blockers' pushed work: control.PushedBase) and the story pushed —
// records the dispatch in a new session's events file, dispatches, and
// finds the run. The *Dispatched is returned with a *NotFoundError too;
// GitHub out of reach is a *control.UnreachableError.
func Dispatch(ctx context.Context, o DispatchOptions) (*Dispatched, error) {
	if err := store.CheckName("story name", o.Story, true, true); err != nil {
		return nil, err
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	if o.SessionDir == "" {
		o.SessionDir = runs.SessionDir(o.Env)
	}
	if err := runs.MakeSessionDir(o.SessionDir); err != nil { // the user's alone
		return nil, err
	}
	o.Wait, o.Poll = cmp.Or(o.Wait, DefaultAppearWait), cmp.Or(o.Poll, DefaultPoll)
	rd, err := CheckReady(ctx, o.Root, o.Env, o.Workflow)
	if err != nil {
		return nil, err
	}
	if o.Review {
		if err := rd.CheckReview(); err != nil {
			return nil, err
		}
		// As run does here: a round needs the story's PR.
		ro := control.RunOptions{Setup: NewSetup(o.Root, o.Env), Story: o.Story, Workspace: o.Workspace}
		if err := ro.Reviewable(ctx); err != nil {
			return nil, err
		}
		if err := roundsLeft(o); err != nil {
			return nil, err
		}
	}
	gh := rd.GH
	g := git.Repo{Dir: o.Root}
	d := &Dispatched{Story: o.Story, Base: o.Base, Warnings: rd.Warnings}
	if live, ok, err := liveRun(ctx, gh, o.Root, o.Story, rd); err != nil {
		return nil, &control.UnreachableError{Err: fmt.Errorf("cannot ask GitHub whether story %s runs already: %w", o.Story, err)}
	} else if ok {
		return nil, &control.RunningError{Story: o.Story, URL: live.URL} // a story never runs twice
	}
	if d.Base == "" && o.Workspace != nil {
		if d.Base, err = control.PushedBase(ctx, o.Root, o.Workspace, o.Story, ""); err != nil {
			var ce *control.ConflictError
			if errors.As(err, &ce) {
				return nil, err
			}
			return nil, &DispatchError{err.Error()}
		}
	}
	if d.Base == "" {
		if d.Base, err = g.Run(ctx, "symbolic-ref", "--short", "HEAD"); err != nil {
			return nil, &DispatchError{"no --base, and HEAD is on no branch: pass --base with a pushed branch"}
		}
	}
	if err := checkBase(ctx, g, rd.Default, d); err != nil {
		return nil, err
	}
	root := o.Root
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	start := now()
	d.RunID = NewRunID(start)
	d.RunName = RunName(o.Story, d.RunID)
	d.Session = runs.KindSessionName(runs.KindStory, o.Story, start)
	d.OutputFile = runs.OutputFile(o.SessionDir, d.Session)
	d.EventsFile = runs.EventsFile(d.OutputFile)
	log, err := runs.OpenLog(d.OutputFile, o.Story, "", d.Session, io.Discard, now)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	log.Emit(runs.Event{Event: runs.KindDispatch, Backend: readmodel.BackendGitHub, Base: d.Base, RunName: d.RunName, Root: root,
		Workflow: rd.Workflow, Ref: rd.Default},
		fmt.Sprintf("dispatching story %s to GitHub Actions (%s, base %s)", o.Story, WorkflowFile, d.Base))
	for _, w := range d.Warnings {
		log.Warn(runs.StepStart, "%s", w)
	}
	inputs := []string{"-f", InputStory + "=" + o.Story, "-f", InputBase + "=" + d.Base, "-f", InputRunID + "=" + d.RunID}
	if o.Review {
		inputs = append(inputs, "-f", InputReview+"=true") // left out otherwise: an older workflow still takes the dispatch
	}
	if _, err := ghRun(ctx, gh, o.Root, append([]string{"workflow", "run", WorkflowFile}, inputs...)...); err != nil {
		err = fmt.Errorf("gh workflow run %s: %w", WorkflowFile, err)
		// Its end, so that no reader waits for a run: failed when GitHub
		// refused it (its refusals carry their HTTP status); pending when
		// GitHub gave no answer — it may have got the dispatch all the
		// same, which a retry finds (liveRun, the run-name) instead of
		// dispatching again.
		status := runs.StatusFailed
		if !strings.Contains(err.Error(), "HTTP ") {
			status, err = readmodel.StoryPending, &control.UnreachableError{Err: err}
		}
		log.Emit(runs.Event{Event: runs.KindWorkerEnd, Status: status, Message: err.Error()}, "not dispatched: "+err.Error())
		return nil, err
	}
	found, err := FindRun(ctx, gh, o.Root, Expect{Name: d.RunName, Workflow: rd.Workflow, Ref: rd.Default}, o.Wait, o.Poll)
	if err != nil {
		log.Error(runs.StepStart, "%v", err)
		return d, err
	}
	d.ActionsRun, d.URL, d.Status = found.ID, found.URL, found.Status
	log.Emit(runs.Event{Event: runs.KindDispatch, Backend: readmodel.BackendGitHub, Base: d.Base, RunName: d.RunName, Root: root,
		Workflow: rd.Workflow, Ref: rd.Default, ActionsRun: found.ID, URL: found.URL, Status: found.Status},
		fmt.Sprintf("GitHub Actions run %d (%s): %s", found.ID, found.Status, found.URL))
	return d, nil
}

// roundsLeft refuses a review round past --max-review-rounds, as the
// rounds are counted in the story's record here (the watcher takes in each
// job's: control.WatchReview); the story then needs you, said in the record.
func roundsLeft(o DispatchOptions) error {
	rec, ok := runs.ReadRecord(o.Root, o.Story)
	bound := cmp.Or(o.MaxReviewRounds, runs.DefaultMaxReviewRounds)
	if !ok || rec.Review == nil || rec.Review.Rounds < bound {
		return nil
	}
	why := fmt.Sprintf("%d review round(s) ran, --max-review-rounds %d: the review of %s needs you — read it, then `saga-lsp run %s --review --on github --max-review-rounds %d` if the agent should go on",
		rec.Review.Rounds, bound, rec.PR, o.Story, rec.Review.Rounds+1)
	if err := runs.UpdateReview(o.Root, o.Story, func(r *runs.ReviewRecord) { r.NeedsYou = why }); err != nil {
		return fmt.Errorf("%s (not recorded: %w)", why, err)
	}
	return &DispatchError{why}
}

// checkBase checks, against origin, the base branch the job starts from
// and the story on it.
func checkBase(ctx context.Context, g git.Repo, def string, d *Dispatched) error {
	if d.Base != def {
		if _, err := g.Retry(ctx, "fetch", "-q", "origin", "+refs/heads/"+d.Base+":refs/remotes/origin/"+d.Base); err != nil {
			if !g.OK(ctx, "ls-remote", "--exit-code", "origin", "refs/heads/"+d.Base) {
				return &DispatchError{fmt.Sprintf("the base branch %s is not on origin: push it (`git push origin %s`), or pass --base with a pushed branch", d.Base, d.Base)}
			}
			return &DispatchError{fmt.Sprintf("git fetch origin: %v", err)}
		}
	}
	if !g.OK(ctx, "cat-file", "-e", "refs/remotes/origin/"+d.Base+":"+path.Join(store.StoryDirRel(d.Story), "story.json")) {
		return &DispatchError{fmt.Sprintf("story %s is not on origin's %s: commit and push it (the job sees only what is pushed)", d.Story, d.Base)}
	}
	return nil
}

// NewRunID is a new dispatch's id: its time (ms) and 128 random bits,
// which no one can guess before GitHub lists the run.
func NewRunID(t time.Time) string {
	var b [16]byte
	rand.Read(b[:])
	return strconv.FormatInt(t.UnixMilli(), 10) + "-" + hex.EncodeToString(b[:])
}

// liveRun is a dispatched run of the story's name that has not completed,
// if any: a second dispatch would queue behind it (the workflow's
// concurrency group). Only dispatches of the workflow on the default
// branch hold a story back, so no pull request can keep it from running.
func liveRun(ctx context.Context, gh, dir, story string, rd *Ready) (RunInfo, bool, error) {
	list, err := listRuns(ctx, gh, dir)
	if err != nil {
		return RunInfo{}, false, err
	}
	for _, r := range list {
		if s, _, ok := ParseRunName(r.DisplayTitle); ok && s == story && r.Status != readmodel.ActionsCompleted &&
			r.Event == EventDispatch && r.WorkflowID == rd.Workflow && r.HeadBranch == rd.Default {
			return r, true, nil
		}
	}
	return RunInfo{}, false, nil
}

// RunInfo is a workflow run as `gh run list` and `gh run view` print it.
type RunInfo struct {
	ID           int64     `json:"databaseId"`
	DisplayTitle string    `json:"displayTitle"`
	Event        string    `json:"event"`
	HeadBranch   string    `json:"headBranch"`
	WorkflowID   int64     `json:"workflowDatabaseId"`
	Status       string    `json:"status"`
	Conclusion   string    `json:"conclusion"`
	URL          string    `json:"url"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
	Jobs         []struct {
		Name        string     `json:"name"`
		Status      string     `json:"status"`
		Conclusion  string     `json:"conclusion"`
		StartedAt   time.Time  `json:"startedAt"`
		CompletedAt *time.Time `json:"completedAt"`
		Steps       []struct {
			Name       string `json:"name"`
			Status     string `json:"status"`
			Conclusion string `json:"conclusion"`
			Number     int    `json:"number"`
		} `json:"steps"`
	} `json:"jobs"`
}

// FindRun waits until the run of saga-story.yml that w expects is listed,
// asking every poll, at most wait.
func FindRun(ctx context.Context, gh, dir string, w Expect, wait, poll time.Duration) (RunInfo, error) {
	deadline := time.Now().Add(wait)
	story, _, _ := ParseRunName(w.Name)
	for {
		list, err := listRuns(ctx, gh, dir)
		if err != nil {
			return RunInfo{}, err
		}
		if r, _ := pick(list, story, &w); r != nil {
			return *r, nil
		}
		if !time.Now().Before(deadline) {
			return RunInfo{}, &NotFoundError{RunName: w.Name, Wait: wait}
		}
		select {
		case <-ctx.Done():
			return RunInfo{}, ctx.Err()
		case <-time.After(min(poll, time.Until(deadline))):
		}
	}
}

// ViewRun is `gh run view <id>` with its status, conclusion, URL and jobs.
func ViewRun(ctx context.Context, gh, dir string, id int64) (RunInfo, error) {
	out, err := ghRun(ctx, gh, dir, "run", "view", strconv.FormatInt(id, 10), "--json", runJSON+",jobs")
	if err != nil {
		return RunInfo{}, fmt.Errorf("gh run view: %w", err)
	}
	var r RunInfo
	if err := json.Unmarshal(out, &r); err != nil {
		return RunInfo{}, fmt.Errorf("gh run view printed what is not its JSON: %v", err)
	}
	return r, nil
}

// Follow reports the run each time its state or current step changes,
// until it completes; it returns the completed run.
func Follow(ctx context.Context, gh, dir string, id int64, poll time.Duration, report func(r RunInfo, step string)) (RunInfo, error) {
	last := ""
	for {
		r, err := ViewRun(ctx, gh, dir, id)
		if err != nil {
			return r, err
		}
		step := CurrentStep(r)
		if now := r.Status + "\x00" + r.Conclusion + "\x00" + step; now != last {
			last = now
			report(r, step)
		}
		if r.Status == "completed" {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(cmp.Or(poll, DefaultPoll)):
		}
	}
}

// CurrentStep is the step in progress, else the first that failed or was
// cancelled ("").
func CurrentStep(r RunInfo) string {
	failed := ""
	for _, j := range r.Jobs {
		for _, s := range j.Steps {
			if s.Status == "in_progress" {
				return s.Name
			}
			if (s.Conclusion == "failure" || s.Conclusion == "cancelled") && failed == "" {
				failed = s.Name
			}
		}
	}
	return failed
}

// ghRun runs gh in dir and returns its stdout; an error carries its
// stderr.
func ghRun(ctx context.Context, gh, dir string, args ...string) ([]byte, error) {
	cmd := runs.GHCommand(ctx, gh, dir, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if msg := strings.TrimSpace(errb.String()); msg != "" && errors.As(err, &ee) {
			return out.Bytes(), errors.New(msg)
		}
		return out.Bytes(), err
	}
	return out.Bytes(), nil
}
