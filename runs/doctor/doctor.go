// Package doctor checks everything a run needs, in one place
// (docs/commands.md#doctor): the programs (claude and its version, tmux,
// git, gh), their logins, the repository and its origin, the sandboxes
// (bubblewrap and socat, Seatbelt), the hook program, how `land` merges
// (asked of runs/land) and, for runs on GitHub Actions, the workflow. `saga-lsp doctor` prints its Report;
// `run`'s preflight refuses a run on the errors of Programs; the editors
// (`:checkhealth saga`, VS Code's "SAGA: Doctor") render the Report that
// `saga-lsp doctor --format json` prints.
//
// Every probe of another program runs under Options.Timeout, and the
// probes run side by side, so the whole check is bounded by about one
// timeout; what needs the network (gh's login) is reported as not checked
// when it cannot be reached, never waited for.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs"
)

// Level is how a check came out.
type Level string

const (
	OK      Level = "ok"
	Warning Level = "warning" // a run works, with less (no PRs, a slower hook…)
	Error   Level = "error"   // a run refuses to start, or cannot do its work
	// Unchecked: it could not be checked here (offline, timed out); it
	// says why.
	Unchecked Level = "unchecked"
)

// Check is one thing a run needs.
type Check struct {
	Name   string `json:"name"`          // "claude", "claude login", "tmux", …
	Level  Level  `json:"level"`         //
	Detail string `json:"detail"`        // what was found, or what is wrong
	Fix    string `json:"fix,omitempty"` // what to do, when not OK
}

// Report is every check, in a fixed order.
type Report struct {
	On       string  `json:"on"` // where stories run: "tmux" (this machine) or "github" (GitHub Actions)
	Checks   []Check `json:"checks"`
	Errors   int     `json:"errors"`
	Warnings int     `json:"warnings"`
}

// Where stories run.
const (
	OnTmux   = "tmux"
	OnGitHub = "github"
)

// DefaultTimeout bounds each probe of another program.
const DefaultTimeout = 5 * time.Second

// MinGit is the oldest git with `git merge-tree --write-tree`, which tells
// a story's base conflicts before its worker starts.
var MinGit = version{2, 38, 0}

// Options are what the checks look at.
type Options struct {
	Dir string              // where the repository is looked for
	Env func(string) string // the environment (nil: this process's)
	// Self is saga-lsp's executable: the hook program is found beside it.
	Self string
	// On is where stories run: OnTmux (or "") or OnGitHub.
	On string
	// DryRun: the simulated agent stands in for claude (Programs only).
	DryRun  bool
	Timeout time.Duration // each probe's (0: DefaultTimeout)
	// Workflow checks GitHub Actions' workflow in the repository at root
	// (runs/github owns it); asked only when On is OnGitHub.
	Workflow func(ctx context.Context, root string) Check
	// Landing says how `saga-lsp land` merges in the repository at root
	// (runs/land owns it): its merge queue, or the merge method it
	// chooses. Asked when set.
	Landing func(ctx context.Context, root string) Check
}

func (o Options) github() bool { return o.On == OnGitHub }

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

// Run checks everything a run needs.
func Run(ctx context.Context, o Options) Report {
	c := checker{o: o}
	probes := []func(context.Context) []Check{
		func(ctx context.Context) []Check { return c.claude(ctx) },
		func(context.Context) []Check { return []Check{c.tmux()} },
		func(ctx context.Context) []Check { return c.gitAndRepo(ctx, true) },
		func(ctx context.Context) []Check { return c.gh(ctx, true) },
		func(ctx context.Context) []Check { return c.sandbox(ctx) },
		func(context.Context) []Check { return []Check{c.hook()} },
	}
	if o.github() && o.Workflow != nil {
		probes = append(probes, c.atRoot("workflow", o.Workflow))
	}
	if o.Landing != nil {
		probes = append(probes, c.atRoot("land method", o.Landing))
	}
	return report(o, all(ctx, probes))
}

// atRoot is the probe of a check another package hands doctor, asked of
// the repository's top under the timeout.
func (c checker) atRoot(name string, check func(ctx context.Context, root string) Check) func(context.Context) []Check {
	return func(ctx context.Context) []Check {
		root, err := c.root(ctx)
		if err != nil {
			return []Check{{Name: name, Level: Unchecked, Detail: "not checked: not in a git repository"}}
		}
		ctx, cancel := context.WithTimeout(ctx, c.o.timeout())
		defer cancel()
		return []Check{check(ctx, root)}
	}
}

// Programs are the checks a run refuses to start on (its preflight): tmux,
// claude and its version (unless dry, or run on GitHub Actions, whose
// workflow installs it), gh when on GitHub Actions, git and a repository
// whose top holds the workspace.
func Programs(ctx context.Context, o Options) []Check {
	c := checker{o: o}
	probes := []func(context.Context) []Check{
		func(context.Context) []Check { return []Check{c.tmux()} },
		func(ctx context.Context) []Check { return c.gitAndRepo(ctx, false) },
	}
	if o.github() {
		probes = append(probes, func(ctx context.Context) []Check { return c.gh(ctx, false) })
	} else if !o.DryRun {
		probes = append(probes, func(ctx context.Context) []Check { return c.claudeProgram(ctx) })
	}
	return all(ctx, probes)
}

// Problems are the checks at level in a sentence each: what is wrong and
// what to do.
func Problems(checks []Check, level Level) []string {
	var out []string
	for _, c := range checks {
		if c.Level == level {
			out = append(out, c.Sentence())
		}
	}
	return out
}

// Sentence is the check as one sentence: its detail and its fix.
func (c Check) Sentence() string {
	if c.Fix == "" {
		return c.Detail
	}
	return c.Detail + ": " + c.Fix
}

// all runs the probes side by side and keeps their checks in the probes'
// order.
func all(ctx context.Context, probes []func(context.Context) []Check) []Check {
	res := make([][]Check, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Go(func() { res[i] = p(ctx) })
	}
	wg.Wait()
	var out []Check
	for _, r := range res {
		out = append(out, r...)
	}
	return out
}

func report(o Options, checks []Check) Report {
	r := Report{On: OnTmux, Checks: checks}
	if o.github() {
		r.On = OnGitHub
	}
	for _, c := range checks {
		switch c.Level {
		case Error:
			r.Errors++
		case Warning:
			r.Warnings++
		}
	}
	return r
}

// checker runs the checks of one Options.
type checker struct{ o Options }

func (c checker) env(name string) string { return runs.Getenv(c.o.Env, name) }

// errTimeout: a probe did not answer within the timeout.
var errTimeout = errors.New("timed out")

// output runs cmd under the timeout and returns its combined output,
// errTimeout when it did not end in time. A program that leaves a child
// holding its output is not waited for either (WaitDelay).
func (c checker) output(ctx context.Context, cmd func(context.Context) *exec.Cmd) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.timeout())
	defer cancel()
	x := cmd(ctx)
	x.WaitDelay = 500 * time.Millisecond
	out, err := x.CombinedOutput()
	if ctx.Err() == context.DeadlineExceeded {
		return string(out), fmt.Errorf("%w after %s", errTimeout, c.o.timeout())
	}
	return string(out), err
}

// firstLine is the first non-empty line of out, escaped for a terminal.
func firstLine(out string) string {
	for l := range strings.Lines(out) {
		if l = strings.TrimSpace(l); l != "" {
			return termtext.Escape(l)
		}
	}
	return ""
}

// installHint says how to install a package on this system.
func installHint(debian, brew string) string {
	switch runtime.GOOS {
	case "darwin":
		return "brew install " + brew
	case "windows":
		return "run saga-lsp in WSL and apt-get install " + debian + " there"
	}
	return "apt-get install " + debian + " (dnf install " + debian + ")"
}

func (c checker) tmux() Check {
	p, err := runs.LookProgram(c.o.Env, runs.ProgramTmux)
	if err != nil {
		return Check{Name: "tmux", Level: Error, Detail: "tmux is not installed",
			Fix: installHint("tmux", "tmux") + " — runs start their workers in tmux sessions (or run `saga-lsp worker <story>` in a terminal)"}
	}
	return Check{Name: "tmux", Level: OK, Detail: p}
}

// version is a program's major.minor.patch.
type version [3]int

func (v version) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

func (v version) less(w version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

// parseVersion reads the first dotted number in s ("git version
// 2.39.5.windows.1"); Claude Code's is claudecode's.
func parseVersion(s string) (version, bool) {
	for f := range strings.FieldsSeq(s) {
		parts := strings.Split(f, ".")
		if len(parts) < 2 {
			continue
		}
		var v version
		ok := true
		for i := 0; i < len(parts) && i < 3; i++ {
			n, err := strconv.Atoi(parts[i])
			if err != nil || n < 0 || strings.HasPrefix(parts[i], "+") {
				ok = false
				break
			}
			v[i] = n
		}
		if ok {
			return v, true
		}
	}
	return version{}, false
}
