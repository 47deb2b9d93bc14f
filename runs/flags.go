package runs

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Worker defaults (docs/commands.md#worker).
const (
	DefaultMaxCycles      = 10
	DefaultMaxTime        = 60 // minutes
	DefaultModel          = "opus"
	DefaultPermissionMode = "acceptEdits"
	// DefaultMaxCheckFailures is how many runs in a row may refuse a task's
	// completion (its check failed) before the story ends failed.
	DefaultMaxCheckFailures = 3
	// DefaultMaxReviewRounds bounds a story's review rounds (docs/review.md#rounds).
	DefaultMaxReviewRounds = 3
)

// WorkerFlags are the worker's options as `saga-lsp worker` takes them on
// its command line, `run` and the language server's runStory pass them
// (their JSON names are runStory's arguments), and the epic runner hands
// them to each story. Zero values mean the defaults.
type WorkerFlags struct {
	MaxCycles      int     `json:"maxCycles,omitempty"`      // --max-cycles
	MaxTime        float64 `json:"maxTime,omitempty"`        // --max-time, minutes
	Model          string  `json:"model,omitempty"`          // --model
	PermissionMode string  `json:"permissionMode,omitempty"` // --permission-mode
	Base           string  `json:"base,omitempty"`           // --base
	KeepTasks      bool    `json:"keepTasks,omitempty"`      // --keep-tasks
	DryRun         bool    `json:"dryRun,omitempty"`         // --dry-run
	// AllowUnsandboxedBash lets Bash run without Claude Code's sandbox where
	// it cannot be confined.
	AllowUnsandboxedBash bool `json:"allowUnsandboxedBash,omitempty"` // --allow-unsandboxed-bash
	// AllowUnconfinedChecks lets the tasks' checks run unconfined where
	// bubblewrap cannot confine them (verify.NewRunner).
	AllowUnconfinedChecks bool `json:"allowUnconfinedChecks,omitempty"` // --allow-unconfined-checks
	// MaxCost stops starting headless runs once the story's spend (USD)
	// reaches it; 0 is no cap.
	MaxCost float64 `json:"maxCost,omitempty"` // --max-cost
	// MaxCheckFailures ends the story failed once a task's completion was
	// refused by its checks in that many headless runs in a row.
	MaxCheckFailures int `json:"maxCheckFailures,omitempty"` // --max-check-failures
	// Review runs a review round (docs/review.md): the PR's review becomes
	// review tasks and the story resumes on its branch and PR.
	Review bool `json:"review,omitempty"` // --review
	// MaxReviewRounds: past it the story needs its person.
	MaxReviewRounds int `json:"maxReviewRounds,omitempty"` // --max-review-rounds
}

// Register defines the flags on fs. prefix starts each usage text (e.g.
// "worker: " where run shows them beside its own).
func (f *WorkerFlags) Register(fs *flag.FlagSet, prefix string) {
	fs.IntVar(&f.MaxCycles, "max-cycles", 0, prefix+"stop after `N` headless runs (default "+strconv.Itoa(DefaultMaxCycles)+")")
	fs.Float64Var(&f.MaxTime, "max-time", 0, prefix+"stop after `MIN` minutes (default "+strconv.Itoa(DefaultMaxTime)+")")
	fs.StringVar(&f.Model, "model", "", prefix+"`model` for the headless runs (default "+DefaultModel+")")
	fs.StringVar(&f.PermissionMode, "permission-mode", "", prefix+"permission `mode` for the headless runs (default "+DefaultPermissionMode+")")
	fs.StringVar(&f.Base, "base", "", prefix+"base `branch` of story/<story> (default: the current branch)")
	fs.BoolVar(&f.KeepTasks, "keep-tasks", false, prefix+"keep the hydrated task list after the end")
	fs.BoolVar(&f.DryRun, "dry-run", false, prefix+"use the built-in simulated agent instead of claude, apart from the story's own attempt: it leaves branch saga-dry/<story> and worktree .saga/worktrees/<story>.dry, never pushed and never read by a real run (`saga-lsp reset <story>` or `clean` removes them); gh is not called")
	fs.BoolVar(&f.AllowUnsandboxedBash, "allow-unsandboxed-bash", false, prefix+"let Bash run unconfined where Claude Code's sandbox (bubblewrap, socat) is missing")
	fs.BoolVar(&f.AllowUnconfinedChecks, "allow-unconfined-checks", false, prefix+"run the tasks' checks unconfined where bubblewrap cannot confine them")
	fs.Float64Var(&f.MaxCost, "max-cost", 0, prefix+"stop starting headless runs once they cost `USD` in all")
	fs.IntVar(&f.MaxCheckFailures, "max-check-failures", 0, prefix+"end the story failed once a task's checks refused its completion in `N` runs in a row (default "+strconv.Itoa(DefaultMaxCheckFailures)+")")
	fs.BoolVar(&f.Review, "review", false, prefix+"address the review of the story's PR: its threads become review tasks and the story resumes on its branch and PR (docs/review.md)")
	fs.IntVar(&f.MaxReviewRounds, "max-review-rounds", 0, prefix+"past `N` review rounds the story needs you (default "+strconv.Itoa(DefaultMaxReviewRounds)+")")
}

// Validate reports the first flag out of range, as a usage message.
func (f WorkerFlags) Validate() error {
	switch {
	case f.MaxCycles < 0:
		return fmt.Errorf("--max-cycles must be ≥ 1, got %d", f.MaxCycles)
	case f.MaxTime < 0:
		return fmt.Errorf("--max-time must be > 0 minutes, got %g", f.MaxTime)
	case f.MaxCost < 0:
		return fmt.Errorf("--max-cost must be ≥ 0, got %g", f.MaxCost)
	case f.MaxCheckFailures < 0:
		return fmt.Errorf("--max-check-failures must be ≥ 1, got %d", f.MaxCheckFailures)
	case f.MaxReviewRounds < 0:
		return fmt.Errorf("--max-review-rounds must be ≥ 1, got %d", f.MaxReviewRounds)
	case f.Review && f.DryRun:
		return fmt.Errorf("--review addresses a PR's review and a dry run has no PR: leave out --dry-run")
	}
	for _, kv := range [][2]string{{"model", f.Model}, {"permission-mode", f.PermissionMode}, {"base", f.Base}} {
		if strings.HasPrefix(kv[1], "-") || strings.ContainsFunc(kv[1], func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' }) {
			return fmt.Errorf("invalid --%s %q: no leading dash, spaces or control characters", kv[0], kv[1])
		}
	}
	return nil
}

// Args returns the flags as worker arguments (defaults left out). They
// were validated once, where the process took them (Validate): Args does
// not again.
func (f WorkerFlags) Args() []string {
	var args []string
	if f.MaxCycles > 0 {
		args = append(args, "--max-cycles", strconv.Itoa(f.MaxCycles))
	}
	if f.MaxTime > 0 {
		args = append(args, "--max-time", strconv.FormatFloat(f.MaxTime, 'f', -1, 64))
	}
	for _, kv := range [][2]string{{"model", f.Model}, {"permission-mode", f.PermissionMode}, {"base", f.Base}} {
		if kv[1] != "" {
			args = append(args, "--"+kv[0], kv[1])
		}
	}
	if f.MaxCost > 0 {
		args = append(args, "--max-cost", strconv.FormatFloat(f.MaxCost, 'f', -1, 64))
	}
	if f.MaxCheckFailures > 0 {
		args = append(args, "--max-check-failures", strconv.Itoa(f.MaxCheckFailures))
	}
	if f.MaxReviewRounds > 0 {
		args = append(args, "--max-review-rounds", strconv.Itoa(f.MaxReviewRounds))
	}
	for _, b := range []struct {
		on   bool
		name string
	}{{f.KeepTasks, "keep-tasks"}, {f.DryRun, "dry-run"}, {f.AllowUnsandboxedBash, "allow-unsandboxed-bash"}, {f.AllowUnconfinedChecks, "allow-unconfined-checks"}, {f.Review, "review"}} {
		if b.on {
			args = append(args, "--"+b.name)
		}
	}
	return args
}

// WithDefaults fills the zero values with the defaults.
func (f WorkerFlags) WithDefaults() WorkerFlags {
	if f.MaxCycles <= 0 {
		f.MaxCycles = DefaultMaxCycles
	}
	if f.MaxTime <= 0 {
		f.MaxTime = DefaultMaxTime
	}
	if f.Model == "" {
		f.Model = DefaultModel
	}
	if f.PermissionMode == "" {
		f.PermissionMode = DefaultPermissionMode
	}
	if f.MaxCheckFailures <= 0 {
		f.MaxCheckFailures = DefaultMaxCheckFailures
	}
	if f.MaxReviewRounds <= 0 {
		f.MaxReviewRounds = DefaultMaxReviewRounds
	}
	return f
}

// MaxDuration is MaxTime as a duration.
func (f WorkerFlags) MaxDuration() time.Duration {
	return time.Duration(f.MaxTime * float64(time.Minute))
}
