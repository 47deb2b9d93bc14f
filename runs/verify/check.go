package verify

import (
	"context"
	"fmt"
	"time"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
)

// The one way a story's task checks run (docs/worker.md#verified-completion):
// the TaskCompleted gate (hook), the worker's final run, `saga-lsp
// verify` and `saga-lsp restack` (a rebuilt branch's final checks) each resolve the checks that count from where they stand (the
// worker's manifest, git at the reference commit), then call Prepare —
// the build cache seeded, the runner chosen, the protected files compared
// with the reference commit — and Checks.Run for each task: its checks on
// the protected view and on the full tree, each result reported as it
// comes. Nothing else in the module builds a Runner or a Protected
// (test/architecture).

// Setup is what Prepare needs.
type Setup struct {
	Dir       string          // the tree the checks run in (a worktree or the checkout)
	Reference string          // the commit whose protected files count; "" compares with nothing
	Manifest  *Manifest       // the checks that count (their rules of protection)
	Cache     string          // the build cache the checks write; "" none
	Warm      buildcache.Warm // the user's caches, only read
	Policy    Policy
	// SeedNpm copies what the tree's npm lockfile needs from the user's
	// npm cache into Cache first (buildcache.SeedNpm); Seeded hears how it went.
	SeedNpm bool
	Seeded  func(n int, err error)
	// Protected, when set, is the comparison the caller already made (the
	// worker's, after its end's commit); Prepare compares otherwise.
	Protected *Protected
}

// Checks is a story's tree ready to have its tasks' checks run.
type Checks struct {
	Runner    *Runner
	Protected *Protected // nil: no reference commit to compare with
}

// Prepare seeds the cache, decides how checks run here and compares the
// tree with the reference commit. Its error is a comparison that failed:
// the checks that count cannot be told apart from the story's edits.
func Prepare(ctx context.Context, s Setup) (*Checks, error) {
	r := newRunner(ctx, s.Dir, s.Cache, s.Policy)
	r.Warm = s.Warm
	if s.SeedNpm && s.Cache != "" {
		n, err := buildcache.SeedNpm(s.Cache, s.Dir, s.Warm)
		if s.Seeded != nil {
			s.Seeded(n, err)
		}
	}
	c := &Checks{Runner: r, Protected: s.Protected}
	if c.Protected == nil && s.Reference != "" {
		p, err := protect(ctx, git.Repo{Dir: s.Dir}, s.Dir, s.Reference, RulesOf(s.Manifest))
		if err != nil {
			return c, fmt.Errorf("the checks cannot be run against the protected files of %s: %w", Short(s.Reference), err)
		}
		c.Protected = p
	}
	return c, nil
}

// Compare is Prepare's comparison alone: what the tree in dir changed of
// its protected files against the reference commit, for a caller that
// decides on it before any check runs (the worker's end: a blocking change
// keeps the pull request a draft).
func Compare(ctx context.Context, dir, reference string, m *Manifest) (*Protected, error) {
	return protect(ctx, git.Repo{Dir: dir}, dir, reference, RulesOf(m))
}

// Run runs one task's checks in order, up to the first failure (RunTask's
// rules: a non-zero deadline bounds them all), reporting each result.
func (c *Checks) Run(ctx context.Context, task string, tc TaskChecks, deadline time.Time, report func(Result)) TaskResult {
	return runTask(ctx, c.Runner, task, tc, c.Protected, deadline, report)
}
