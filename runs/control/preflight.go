package control

// A run that cannot work does not start (docs/commands.md#run--stop): before any tmux
// session, worktree, branch or commit, `run` checks the programs it needs,
// the repository, the story's own files and its epic blockers.

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/doctor"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/store"
)

// RefusedError is a run refused by its preflight: nothing was created.
type RefusedError struct {
	What    string   // "story x" or "epic y"
	Reasons []string // each a sentence saying what is wrong and what to do
}

func (e *RefusedError) Error() string {
	if len(e.Reasons) == 1 {
		return fmt.Sprintf("not starting %s: %s", e.What, e.Reasons[0])
	}
	return fmt.Sprintf("not starting %s:\n  - %s", e.What, strings.Join(e.Reasons, "\n  - "))
}

// Preflight is what a run needs checked.
type Preflight struct {
	Root   string
	DryRun bool // the simulated agent stands in for claude
	Force  bool // start although epic blockers are unfinished
	Env    func(string) string
	// SessionDir is the caller's Setup's; "": runs.SessionDir(Env).
	SessionDir string
	Parser     *store.Parser
	// AllowUnconfinedChecks: --allow-unconfined-checks.
	AllowUnconfinedChecks bool
	// Actions asks GitHub about blockers dispatched to GitHub Actions.
	Actions readmodel.Actions
	// Elsewhere: the stories' workers run on other machines (GitHub
	// Actions), which install claude and confine the checks themselves;
	// here gh dispatches them.
	Elsewhere bool
}

// load parses the workspace at p.Root with a new parser, which p keeps.
func (p *Preflight) load() (*store.Workspace, error) {
	parser, err := store.NewParser()
	if err != nil {
		return nil, err
	}
	p.Parser = parser
	return parser.Load(p.Root)
}

// Programs reports the programs and repository a run needs that are
// missing: git and a git repository holding the workspace at its top,
// tmux, claude new enough (unless dry), gh when the stories run elsewhere —
// the errors of doctor.Programs, the checks `saga-lsp doctor` runs too.
func (p Preflight) Programs(ctx context.Context) []string {
	o := doctor.Options{Dir: p.Root, Env: p.Env, DryRun: p.DryRun}
	if p.Elsewhere {
		o.On = doctor.OnGitHub
	}
	return doctor.Problems(doctor.Programs(ctx, o), doctor.Error)
}

// Checks reports that the stories' checks cannot be confined here, when a
// task of theirs has checks and unconfined checks are not allowed: the run
// would refuse every completion of such a task.
func (p Preflight) Checks(ctx context.Context, stories ...*store.Story) []string {
	if p.AllowUnconfinedChecks || p.Elsewhere {
		return nil
	}
	for _, s := range stories {
		for _, t := range s.Tasks {
			if len(t.Checks) == 0 {
				continue
			}
			if why := verify.Unconfinable(ctx); why != "" {
				return []string{fmt.Sprintf("task %s/%s has checks, which cannot run here: %s", s.ID, t.ID, why)}
			}
			return nil
		}
	}
	return nil
}

// Story reports why story cannot run: error-level diagnostics in its own
// files, and (unless Force) epic blockers that are not completed.
func (p Preflight) Story(ctx context.Context, ws *store.Workspace, story string) []string {
	s := ws.Story(story)
	if s == nil {
		return []string{fmt.Sprintf("no story %q in %s", story, p.Root)}
	}
	var out []string
	for _, f := range s.StoryFiles() {
		for _, d := range ws.FileDiagnostics(f.Rel) {
			if d.Severity == store.SeverityError {
				out = append(out, fmt.Sprintf("%s:%d:%d: %s [%s] — fix it (`saga-lsp check` lists them)", esc(d.File), d.Range.Start.Line+1, d.Range.Start.Character+1, esc(d.Message), d.Code))
			}
		}
	}
	if len(s.Tasks) == 0 {
		out = append(out, fmt.Sprintf("story %s has no tasks: add one with `saga-lsp new task %s <id> --subject …`", story, story))
	}
	out = append(out, p.Checks(ctx, s)...)
	if p.Force {
		return out
	}
	dir := p.SessionDir
	if dir == "" {
		dir = runs.SessionDir(p.Env)
	}
	if unfinished := UnfinishedBlockers(ctx, p.Root, ws, story, dir, p.Parser, p.DryRun, p.Actions); len(unfinished) > 0 {
		out = append(out, fmt.Sprintf("its epic blockers are not completed: %s — run them first, or pass --force", strings.Join(unfinished, ", ")))
	}
	return out
}

// UnfinishedBlockers lists the story's epic blockers (its epic child's
// blockedBy) whose state (readmodel.Evidence.Story, asking actions about those run on
// GitHub Actions) is not completed; for a dry run (dry), whose dry attempt
// did not complete either.
func UnfinishedBlockers(ctx context.Context, root string, ws *store.Workspace, story, sessionDir string, p *store.Parser, dry bool, actions readmodel.Actions) []string {
	var out []string
	ev := readmodel.NewEvidence(ctx, root, sessionDir, p)
	ev.Actions = actions // blockers run on GitHub Actions
	for _, b := range ws.EpicBlockers(story) {
		st := ev.Story(ctx, ws, b)
		if st.State != runs.StatusCompleted && !(dry && st.Dry != nil && st.Dry.State == runs.StatusCompleted) {
			out = append(out, b)
		}
	}
	slices.Sort(out)
	return out
}

func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}
