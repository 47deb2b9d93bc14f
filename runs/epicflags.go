package runs

import (
	"flag"
	"fmt"
	"strconv"
	"time"
)

// When a story of an epic run counts as done for its dependents.
const (
	AfterReady  = "ready"  // its last run ended completed
	AfterMerged = "merged" // its PR is merged into the base
)

// DefaultMaxParallel is how many stories an epic run runs at once.
const DefaultMaxParallel = 3

// EpicFlags are the epic runner's own options, as `saga-lsp run <epic>`
// takes them and passes them to `saga-lsp epic-runner`; the worker's
// options (WorkerFlags) go along to every story.
type EpicFlags struct {
	MaxParallel int     `json:"maxParallel,omitempty"` // --max-parallel
	After       string  `json:"after,omitempty"`       // --after ready|merged
	MaxCost     float64 `json:"maxCost,omitempty"`     // --max-cost, USD for the whole epic
	Poll        float64 `json:"poll,omitempty"`        // --poll, seconds between looks at the PRs (--after merged)
	// On is where the stories run (--on): "" or "tmux" this machine,
	// "github" GitHub Actions jobs; the runner itself runs here either way.
	On string `json:"on,omitempty"`
}

// DefaultPoll is how often --after merged asks gh about the PRs.
const DefaultPoll = 15 // seconds

// PollInterval is Poll as a duration (DefaultPoll when unset).
func (f EpicFlags) PollInterval() time.Duration {
	if f.Poll <= 0 {
		return DefaultPoll * time.Second
	}
	return time.Duration(f.Poll * float64(time.Second))
}

// Register defines the flags on fs. --max-cost is WorkerFlags': a command
// that takes both moves it here for an epic (TakeMaxCost).
func (f *EpicFlags) Register(fs *flag.FlagSet) {
	fs.IntVar(&f.MaxParallel, "max-parallel", 0, "epic: run at most `K` stories at once (default "+strconv.Itoa(DefaultMaxParallel)+")")
	fs.StringVar(&f.After, "after", "", "epic: when a story's dependents start (`WHEN`): once it is ready (its run completed, default) or merged (its PR merged)")
	fs.Float64Var(&f.Poll, "poll", 0, "epic, --after merged: look at the PRs every `SECONDS` (default "+strconv.Itoa(DefaultPoll)+")")
}

// TakeMaxCost moves --max-cost from the worker's flags to the epic's: in an
// epic run it caps the whole epic's spend, not each story's.
func (f *EpicFlags) TakeMaxCost(w *WorkerFlags) {
	f.MaxCost, w.MaxCost = w.MaxCost, 0
}

// Validate reports the first flag out of range.
func (f EpicFlags) Validate() error {
	switch {
	case f.MaxParallel < 0:
		return fmt.Errorf("--max-parallel must be ≥ 1, got %d", f.MaxParallel)
	case f.MaxCost < 0:
		return fmt.Errorf("--max-cost must be ≥ 0, got %g", f.MaxCost)
	case f.After != "" && f.After != AfterReady && f.After != AfterMerged:
		return fmt.Errorf("unknown --after %q (ready, merged)", f.After)
	case f.Poll < 0:
		return fmt.Errorf("--poll must be > 0 seconds, got %g", f.Poll)
	case f.On != "" && f.On != "tmux" && f.On != "github":
		return fmt.Errorf("unknown --on %q (tmux, github)", f.On)
	}
	return nil
}

// WithDefaults fills the zero values.
func (f EpicFlags) WithDefaults() EpicFlags {
	if f.MaxParallel <= 0 {
		f.MaxParallel = DefaultMaxParallel
	}
	if f.After == "" {
		f.After = AfterReady
	}
	return f
}

// Args returns the flags as epic-runner arguments. They were validated
// once, where the process took them (Validate): Args does not again.
func (f EpicFlags) Args() []string {
	f = f.WithDefaults()
	args := []string{"--max-parallel", strconv.Itoa(f.MaxParallel), "--after", f.After}
	if f.MaxCost > 0 {
		args = append(args, "--max-cost", strconv.FormatFloat(f.MaxCost, 'f', -1, 64))
	}
	if f.Poll > 0 {
		args = append(args, "--poll", strconv.FormatFloat(f.Poll, 'f', -1, 64))
	}
	if f.On == "github" {
		args = append(args, "--on", f.On)
	}
	return args
}
