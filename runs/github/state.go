package github

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// State from GitHub (docs/github-actions.md#state-from-github): Runs is
// readmodel.Actions over gh — the stories' Actions runs as `gh run list`
// lists them (found by their run-name, so a fresh clone with no local
// trace of a dispatch finds them too), what a completed one left (`gh run
// view` for the step it stopped at, `gh run download` for the run record
// its job uploaded, origin's story branch fetched), and `gh run cancel`.

// Runs asks GitHub about the stories' Actions runs. One value serves a
// runner's whole life: the listing is asked for at most every Poll, what
// a completed run left once.
type Runs struct {
	Root       string
	SessionDir string // where the uploaded run records are kept (actions/<run id>/)
	Env        func(string) string
	Poll       time.Duration // default DefaultPoll

	mu     sync.Mutex
	listed time.Time
	list   []RunInfo
	err    error
	ended  map[int64]endedRun
}

type endedRun struct {
	rec      runs.Record
	ok       bool
	why      string
	refused  string // why its record is not believed
	timedOut bool
}

var _ readmodel.Actions = (*Runs)(nil)

// NewRuns asks GitHub about the stories of the repository at root, its
// records kept in sessionDir. NewSetup is its one caller.
func NewRuns(root, sessionDir string, env func(string) string) *Runs {
	return &Runs{Root: root, SessionDir: sessionDir, Env: env}
}

// NewSetup is the root's run configuration with its GitHub Actions
// backend: the one place the faces' backends are built (the CLI's command,
// the epic runner, the language server, the dashboard each call it once
// per root; test/architecture TestOneConstructionSite). One Runs serves
// the setup's life: its listing is asked for at most every Poll.
func NewSetup(root string, env func(string) string) control.Setup {
	s := control.NewSetup(root, env)
	s.Actions = NewRuns(root, s.SessionDir, s.Env)
	return s
}

// ParseRunName is RunName's inverse: the story and saga-lsp's run id a
// run's name holds.
func ParseRunName(name string) (story, runID string, ok bool) {
	rest, ok := strings.CutPrefix(name, "saga story ")
	if !ok {
		return "", "", false
	}
	story, runID, ok = strings.Cut(rest, " run ")
	return story, runID, ok && story != "" && runID != ""
}

// Find is the run the story's dispatch d created (match.go), and the
// runs named as the story's that are not it.
func (g *Runs) Find(ctx context.Context, story string, d *runs.Run) (readmodel.ActionsRun, []readmodel.IgnoredRun, bool, error) {
	list, err := g.runs(ctx)
	if err != nil {
		return readmodel.ActionsRun{}, nil, false, err
	}
	w := ExpectOf(d)
	best, ignored := pick(list, story, w)
	if best == nil && w != nil && w.ID != 0 {
		// Followed by its id, though no longer among the newest listed.
		r, err := ViewRun(ctx, runs.Program(g.Env, runs.ProgramGH), g.Root, w.ID)
		if err != nil {
			return readmodel.ActionsRun{}, ignored, false, err
		}
		if w.mismatch(r) == "" {
			best = &r
		}
	}
	if best == nil {
		return readmodel.ActionsRun{}, ignored, false, nil
	}
	return readmodel.ActionsRun{ID: best.ID, URL: best.URL, Status: best.Status, Conclusion: best.Conclusion, Created: best.CreatedAt,
		Updated: best.UpdatedAt, Name: best.DisplayTitle}, ignored, true, nil
}

// runs lists the workflow's runs, at most once every Poll.
func (g *Runs) runs(ctx context.Context) ([]RunInfo, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.listed.IsZero() && time.Since(g.listed) < cmp.Or(g.Poll, DefaultPoll) {
		return g.list, g.err
	}
	g.list, g.err = listRuns(ctx, runs.Program(g.Env, runs.ProgramGH), g.Root)
	g.listed = time.Now()
	return g.list, g.err
}

// Refresh drops the listing: the next Find lists the runs again.
func (g *Runs) Refresh() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.listed = time.Time{}
}

// runJSON are the fields of a run saga-lsp reads (RunInfo's but jobs).
const runJSON = "databaseId,displayTitle,event,headBranch,workflowDatabaseId,status,conclusion,url,createdAt,updatedAt"

// listRuns is `gh run list` of the workflow's newest runs; a repository
// whose workflow GitHub does not know has none.
func listRuns(ctx context.Context, gh, dir string) ([]RunInfo, error) {
	out, err := ghRun(ctx, gh, dir, "run", "list", "--workflow", WorkflowFile, "--limit", "200", "--json", runJSON)
	if err != nil {
		if strings.Contains(err.Error(), "could not find any workflows named") {
			return nil, nil
		}
		return nil, fmt.Errorf("gh run list: %w", err)
	}
	var list []RunInfo
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("gh run list printed what is not its JSON: %v", err)
	}
	return list, nil
}

// Ended reads what the completed run left, once per run: a runner asks
// about its completed stories at every step.
func (g *Runs) Ended(ctx context.Context, story string, run *readmodel.ActionsRun) (runs.Record, bool, error) {
	g.mu.Lock()
	e, seen := g.ended[run.ID]
	g.mu.Unlock()
	if !seen {
		repo := git.Repo{Dir: g.Root}
		b := runs.StoryBranch(story)
		// Its statuses are read from origin's branch (none: the job pushed
		// nothing); origin out of reach is no answer.
		heads, err := repo.Run(ctx, "ls-remote", "--heads", "origin", "refs/heads/"+b)
		if err != nil {
			return runs.Record{}, false, fmt.Errorf("git ls-remote origin: %w", err)
		}
		if heads != "" {
			if _, err := repo.Retry(ctx, "fetch", "-q", "origin", "+refs/heads/"+b+":refs/remotes/origin/"+b); err != nil {
				return runs.Record{}, false, fmt.Errorf("git fetch origin %s: %w", b, err)
			}
		}
		gh := runs.Program(g.Env, runs.ProgramGH)
		if run.Conclusion != readmodel.ActionsSuccess {
			r, err := ViewRun(ctx, gh, g.Root, run.ID)
			if err != nil {
				return runs.Record{}, false, err
			}
			if e.why = stepWhy(r, run.Conclusion); run.Conclusion == readmodel.ActionsCancelled && timedOut(r) {
				e.timedOut = true
				e.why = fmt.Sprintf("its Actions job ran into its timeout-minutes (%d)%s: split the story, or run it locally", TimeoutMinutes, ifAt(CurrentStep(r)))
			}
		}
		if e.rec, e.ok, e.refused, err = g.record(ctx, gh, story, run); err != nil {
			return runs.Record{}, false, err
		}
	}
	g.mu.Lock()
	if g.ended == nil {
		g.ended = map[int64]endedRun{}
	}
	g.ended[run.ID] = e
	g.mu.Unlock()
	run.Why, run.Refused = e.why, e.refused
	if e.timedOut {
		run.Conclusion = readmodel.ActionsTimedOut
	}
	return e.rec, e.ok, nil
}

// record is the run record the run's job uploaded, downloaded once into
// the session dir (actions/<run id>/, made whole under a temporary name)
// and checked before it is believed (match.go): refused says why it is
// not. Only the artifact of the run's own dispatch id is read, within
// MaxArtifact and MaxRecord.
func (g *Runs) record(ctx context.Context, gh, story string, run *readmodel.ActionsRun) (rec runs.Record, ok bool, refused string, err error) {
	_, runID, named := ParseRunName(run.Name)
	if !named {
		return runs.Record{}, false, "", nil
	}
	name := ArtifactPrefix + runID
	dir := filepath.Join(g.SessionDir, "actions", strconv.FormatInt(run.ID, 10))
	if _, err := os.Stat(dir); err != nil {
		size, has, err := artifactSize(ctx, gh, g.Root, run.ID, name)
		switch {
		case err != nil:
			return runs.Record{}, false, "", err
		case size > MaxArtifact:
			return runs.Record{}, false, fmt.Sprintf("its artifact %s is %d bytes, over saga-lsp's limit of %d", name, size, MaxArtifact), nil
		}
		if err := runs.MakeSessionDir(g.SessionDir); err != nil {
			return runs.Record{}, false, "", err
		}
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return runs.Record{}, false, "", err
		}
		tmp, err := os.MkdirTemp(filepath.Dir(dir), ".download-")
		if err != nil {
			return runs.Record{}, false, "", err
		}
		defer os.RemoveAll(tmp)
		if has {
			// A pattern (no wildcard in a run id) keeps gh's layout <dir>/<name>/.
			if _, err := ghRun(ctx, gh, g.Root, "run", "download", strconv.FormatInt(run.ID, 10), "-p", name, "-D", tmp); err != nil &&
				!strings.Contains(err.Error(), "no valid artifacts") && !strings.Contains(err.Error(), "no artifact matches") {
				return runs.Record{}, false, "", fmt.Errorf("gh run download %d: %w", run.ID, err)
			}
			if n, err := treeSize(tmp, MaxArtifact); errors.Is(err, errTooBig) {
				return runs.Record{}, false, fmt.Sprintf("its artifact %s holds over %d bytes (%d and more)", name, MaxArtifact, n), nil
			} else if err != nil {
				return runs.Record{}, false, "", err
			}
		}
		if err := os.Rename(tmp, dir); err != nil {
			if _, serr := os.Stat(dir); serr != nil { // not another process's download, done first
				return runs.Record{}, false, "", err
			}
		}
	}
	path := filepath.Join(dir, name, "record.json")
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return runs.Record{}, false, "", nil
	}
	if rec, err = readRecord(path); err != nil {
		return runs.Record{}, false, err.Error(), nil
	}
	if why := checkRecord(rec, story, run.URL); why != "" {
		return runs.Record{}, false, why, nil
	}
	return rec, true, "", nil
}

// Cancel is `gh run cancel`; a run that completed meanwhile is no error.
func (g *Runs) Cancel(ctx context.Context, run readmodel.ActionsRun) error {
	_, err := ghRun(ctx, runs.Program(g.Env, runs.ProgramGH), g.Root, "run", "cancel", strconv.FormatInt(run.ID, 10))
	if err != nil && strings.Contains(err.Error(), "Cannot cancel a workflow run that is completed") {
		return nil
	}
	return err
}

// stepReason says what a failed step of the workflow (workflow.go's
// template) means.
func stepReason(step string) string {
	switch step {
	case "Check the inputs":
		return "the dispatch's inputs were refused (see the run's log)"
	case "Check the Claude Code secret":
		return "neither the secret ANTHROPIC_API_KEY nor CLAUDE_CODE_OAUTH_TOKEN is set: add one under the repository's Settings → Secrets and variables → Actions"
	case "Make confinement work":
		return "bubblewrap cannot create a user namespace on the runner, so the story was not run (it never runs unconfined)"
	case "Check out":
		return "the job could not check out the repository"
	}
	return ""
}

// stepWhy says where and why a run that did not succeed stopped.
func stepWhy(r RunInfo, conclusion string) string {
	step := CurrentStep(r)
	switch {
	case conclusion == readmodel.ActionsCancelled && step != "":
		return fmt.Sprintf("its Actions run was cancelled (at step %q)", step)
	case conclusion == readmodel.ActionsCancelled:
		return "its Actions run was cancelled"
	case step == "":
		return "its Actions run ended " + conclusion
	}
	if why := stepReason(step); why != "" {
		return fmt.Sprintf("its Actions job failed at step %q: %s", step, why)
	}
	return fmt.Sprintf("its Actions job failed at step %q", step)
}

// timedOut tells a run cancelled by its job's timeout-minutes, which
// GitHub reports as cancelled like any other cancel, by how long its job
// ran.
func timedOut(r RunInfo) bool {
	for _, j := range r.Jobs {
		if j.CompletedAt != nil && !j.StartedAt.IsZero() && j.CompletedAt.Sub(j.StartedAt) >= TimeoutMinutes*time.Minute {
			return true
		}
	}
	return false
}

func ifAt(step string) string {
	if step == "" {
		return ""
	}
	return fmt.Sprintf(" (at step %q)", step)
}
