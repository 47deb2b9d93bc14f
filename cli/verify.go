package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/store"
)

const verifySynopsis = "verify <story> [<task>…] [--root DIR] [--format text|json] [--allow-unconfined-checks]"

// runVerify is `saga-lsp verify`: run the checks that would count for the
// story's tasks (or the given ones) now, where its worker would — its
// worktree, else the checkout — and print each result. Exit 1 when one
// fails.
func runVerify(env *Env, args []string) int {
	c := newCmdLine("verify")
	root := c.String("root", "", rootUsage)
	format := c.String("format", "text", "output `FORMAT`: text or json")
	unconfined := c.Bool("allow-unconfined-checks", false, "run the checks unconfined where bubblewrap cannot confine them")
	pos, err := c.parse(args)
	if err == nil && len(pos) == 0 {
		err = usagef("missing the story to verify")
	}
	if err := cmp.Or(err, oneOf("format", *format, "text", "json")); err != nil {
		return c.fail(env, err)
	}
	story, only := pos[0], pos[1:]
	if !store.ValidCanonical(story) {
		return c.fail(env, usagef("invalid story name %q", story))
	}
	for _, id := range only {
		if !store.ValidID(id) {
			return c.fail(env, usagef("invalid task id %q", id))
		}
	}
	r, _, ws, err := loadWorkspace(env, *root)
	if err != nil {
		return c.fail(env, err)
	}
	s := ws.Story(story)
	if s == nil {
		return c.fail(env, usagef("no story %q in %s%s", story, r, store.DidYouMean(story, ws.SortedStoryIDs())))
	}
	ctx, stop := signal.NotifyContext(context.Background(), supervise.StopSignals()...)
	defer stop()
	where, err := verify.Locate(ctx, r, story)
	if err != nil {
		return c.fail(env, fmt.Errorf("%w: verify needs the story's repository with its base branch", err))
	}
	m, err := verify.Resolve(ctx, git.Repo{Dir: where.Dir}, story, where.ForkPoint, nil)
	if err != nil {
		return c.fail(env, err)
	}
	var ids []string
	for _, t := range s.Tasks {
		ids = append(ids, t.ID)
	}
	for _, id := range only {
		if s.Task(id) == nil {
			return c.fail(env, usagef("no task %q in story %s (its tasks: %s)", id, story, strings.Join(ids, ", ")))
		}
	}
	if len(only) > 0 {
		ids = only
	}
	// Not the agent's caches: a result its Bash planted there (a cached
	// go test result) must not pass for a check's.
	cache, err := buildcache.ChecksCacheDir(r, story, env.Getenv)
	if err != nil {
		fmt.Fprintf(env.Stderr, "saga-lsp verify: %v; the checks run without a build cache\n", err)
	}
	// The tests that count are the fork point's (docs/worker.md#protected-files).
	checks, err := verify.Prepare(ctx, verify.Setup{Dir: where.Dir, Reference: where.ForkPoint, Manifest: m, Cache: cache,
		Warm: buildcache.FindWarm(r, env.Getenv), Policy: verify.Policy{AllowUnconfined: *unconfined},
		SeedNpm: true, Seeded: func(_ int, err error) {
			if err != nil {
				fmt.Fprintf(env.Stderr, "saga-lsp verify: npm cache: %v\n", err)
			}
		}})
	if err != nil {
		return c.fail(env, err)
	}
	runner, prot := checks.Runner, checks.Protected
	if runner.Mode == verify.Refused {
		return c.fail(env, fmt.Errorf("not running the checks of %s: %s", story, runner.Why))
	}
	rep := verifyReport{Story: story, Dir: where.Dir, Base: where.Base, ForkPoint: where.ForkPoint, Recorded: where.Recorded, Mode: runner.Mode, Note: runner.Why,
		Passed: len(verify.Blocking(prot.Changes)) == 0, Protected: verify.ProtectedEvent(prot.Changes).Protected}
	text := *format == "text"
	if text {
		rep.header(env.Stdout, r)
		rep.protectedText(env.Stdout)
	}
	for _, id := range ids {
		tc, ok := m.Tasks[id]
		if !ok {
			tc, ok = verify.WorkingCopy(where.Dir, story, id)
		}
		tr := verifyTask{Task: id, From: tc.From, Results: []verifyResult{}}
		if !ok || len(tc.Commands) == 0 {
			if text {
				fmt.Fprintf(env.Stdout, "  %s: no checks\n", id)
			}
			rep.Tasks = append(rep.Tasks, tr)
			continue
		}
		res := checks.Run(ctx, id, tc, time.Time{}, func(r verify.Result) {
			vr := verifyResult{Command: r.Command, ExitCode: r.ExitCode, DurationMs: r.Duration.Milliseconds(), Passed: r.Passed,
				TimedOut: r.TimedOut, Outcome: r.Outcome(), Output: r.Output, Protected: r.Protected}
			tr.Results = append(tr.Results, vr)
			if text {
				vr.writeText(env.Stdout, id)
			}
		})
		tr.Passed = res.Passed()
		if ran := ranCommands(res); ran < len(tc.Commands) && text {
			fmt.Fprintf(env.Stdout, "    (%s of %s not run after the failure)\n", termtext.Count(len(tc.Commands)-ran, "more check", "more checks"), id)
		}
		rep.Passed = rep.Passed && tr.Passed
		rep.Tasks = append(rep.Tasks, tr)
		if ctx.Err() != nil {
			break
		}
	}
	if text {
		rep.footer(env.Stdout)
	} else if err := printJSON(env.Stdout, rep); err != nil {
		return c.fail(env, fmt.Errorf("write output: %w", err))
	}
	if !rep.Passed || ctx.Err() != nil {
		return exitFindings
	}
	return exitOK
}

type verifyReport struct {
	Story     string       `json:"story"`
	Dir       string       `json:"dir"`
	Base      string       `json:"base"`
	ForkPoint string       `json:"forkPoint"`
	Recorded  bool         `json:"recorded"` // ForkPoint is the reference commit the story's last run recorded
	Mode      string       `json:"mode"`     // confined or unconfined
	Note      string       `json:"note,omitempty"`
	Passed    bool         `json:"passed"`
	Tasks     []verifyTask `json:"tasks"`
	// Protected are the protected files the story changed against the
	// fork point; one that blocks fails the verification.
	Protected []runs.ProtectedFile `json:"protected"`
}

type verifyTask struct {
	Task    string         `json:"task"`
	From    string         `json:"from,omitempty"` // the commit the checks were read at
	Passed  bool           `json:"passed"`
	Results []verifyResult `json:"results"`
}

type verifyResult struct {
	Command    string `json:"command"`
	ExitCode   int    `json:"exitCode"`
	DurationMs int64  `json:"durationMs"`
	Passed     bool   `json:"passed"`
	TimedOut   bool   `json:"timedOut"`
	Outcome    string `json:"outcome"`
	Output     string `json:"output"`
	// Protected: the run with the fork point's protected files.
	Protected bool `json:"protected,omitempty"`
}

// ranCommands is how many of a task's checks ran (each once or twice).
func ranCommands(res verify.TaskResult) int {
	n := 0
	for _, r := range res.Results {
		if !r.Protected {
			n++
		}
	}
	if f := res.Failed(); f != nil && f.Protected {
		n++
	}
	return n
}

// protectedText lists the protected files the story changed.
func (rep *verifyReport) protectedText(w io.Writer) {
	for _, p := range rep.Protected {
		mark, what := "·", "listed"
		switch {
		case p.Blocks:
			mark, what = "✗", "protected: the fork point's version counts, the pull request would stay a draft"
		case p.Rule == verify.RuleAllowed:
			what = "allowed by mayChangeTests"
		case p.Rule == verify.RuleAddedTest:
			what = "a test file added: left out of the run with the fork point's protected files"
		}
		fmt.Fprintf(w, "  %s %s %s — %s\n", mark, termtext.Escape(p.Path), p.Change, what)
	}
}

func (rep *verifyReport) header(w io.Writer, root string) {
	dir := rep.Dir
	if rel, err := filepath.Rel(root, dir); err == nil {
		dir = rel
	}
	at := fmt.Sprintf("where it forked from %s", rep.Base)
	if rep.Recorded {
		at = fmt.Sprintf("the reference commit its last run recorded, from %s", rep.Base)
	}
	fmt.Fprintf(w, "story %s: checks as committed at %s (%s), run in %s (%s)\n", rep.Story, verify.Short(rep.ForkPoint), at, dir, rep.Mode)
	if rep.Note != "" {
		fmt.Fprintf(w, "note: %s\n", rep.Note)
	}
}

func (r verifyResult) writeText(w io.Writer, task string) {
	mark := "✓"
	if !r.Passed {
		mark = "✗"
	}
	// The command and its output are the repository's and the agent's.
	run := ""
	if r.Protected {
		run = " (" + verify.ProtectedRun + ")"
	}
	fmt.Fprintf(w, "  %s %s: %s%s — %s (%s)\n", mark, termtext.Escape(task), termtext.Escape(r.Command), run, termtext.Escape(r.Outcome), time.Duration(r.DurationMs)*time.Millisecond)
	if !r.Passed && r.Output != "" { // as lines, tabs kept (a `go test` summary's columns)
		fmt.Fprintf(w, "      %s\n", termtext.Block(r.Output, "      "))
	}
}

func (rep *verifyReport) footer(w io.Writer) {
	passed, failed, none := 0, 0, 0
	for _, t := range rep.Tasks {
		switch {
		case len(t.Results) == 0:
			none++
		case t.Passed:
			passed++
		default:
			failed++
		}
	}
	fmt.Fprintf(w, "%s passed, %d failed, %d without checks\n", termtext.Count(passed, "task", "tasks"), failed, none)
}
