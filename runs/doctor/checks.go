package doctor

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/store"
)

// gitAndRepo: git, the repository holding the workspace at its top and,
// when full (doctor, not a run's preflight), git's version and origin.
func (c checker) gitAndRepo(ctx context.Context, full bool) []Check {
	p, err := runs.LookProgram(c.o.Env, runs.ProgramGit)
	if err != nil {
		return []Check{{Name: "git", Level: Error, Detail: "git is not installed", Fix: installHint("git", "git") + " — a run works on a git worktree and branch"}}
	}
	var out []Check
	if full {
		text, err := c.output(ctx, func(ctx context.Context) *exec.Cmd { return exec.CommandContext(ctx, p, "--version") })
		v, ok := parseVersion(text)
		switch {
		case err != nil || !ok:
			out = append(out, Check{Name: "git", Level: Warning, Detail: fmt.Sprintf("%s: `git --version` did not tell its version (%v)", p, err),
				Fix: fmt.Sprintf("use git %s or later", MinGit)})
		case v.less(MinGit):
			out = append(out, Check{Name: "git", Level: Warning, Detail: fmt.Sprintf("git %s (%s) has no `git merge-tree --write-tree`: a story's conflicts with its blockers show only once its worker merges them, and those with its siblings' branches (foreseen by the epic runner and land: docs/landing.md#conflicts-foreseen) only at landing", v, p),
				Fix: fmt.Sprintf("update git to %s or later", MinGit)})
		default:
			out = append(out, Check{Name: "git", Level: OK, Detail: fmt.Sprintf("git %s (%s)", v, p)})
		}
	} else {
		out = append(out, Check{Name: "git", Level: OK, Detail: p})
	}
	top, err := c.root(ctx)
	if err != nil {
		return append(out, Check{Name: "repository", Level: Error, Detail: fmt.Sprintf("%s is not inside a git repository", c.o.Dir),
			Fix: "run saga-lsp in your project's repository, or `git init` there and commit .saga/"})
	}
	if !full {
		// The preflight's Dir is the workspace's root.
		if !sameDir(top, c.o.Dir) {
			out = append(out, Check{Name: "repository", Level: Error, Detail: fmt.Sprintf(".saga/ must be at the repository's top (%s), not in %s", top, c.o.Dir),
				Fix: "move it there"})
		}
		return out
	}
	switch ws, err := store.FindRoot(c.o.Dir); {
	case err != nil:
		out = append(out, Check{Name: "repository", Level: Warning, Detail: fmt.Sprintf("%s has no .saga/ yet: nothing to run", top),
			Fix: "create a story at the repository's top: saga-lsp new story <name> --title … (see saga-lsp new --help)"})
	case !sameDir(ws, top):
		out = append(out, Check{Name: "repository", Level: Error, Detail: fmt.Sprintf(".saga/ must be at the repository's top (%s), not in %s", top, ws),
			Fix: "move it there"})
	default:
		out = append(out, Check{Name: "repository", Level: OK, Detail: top})
	}
	return append(out, c.origin(ctx, top))
}

// root is the top of the repository holding Options.Dir.
func (c checker) root(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.timeout())
	defer cancel()
	return git.Repo{Dir: c.o.Dir}.Run(ctx, "rev-parse", "--show-toplevel")
}

// origin: the remote a run pushes its branches to and opens PRs on. Read
// from the local configuration only: whether it can be reached is not
// checked (that needs the network).
func (c checker) origin(ctx context.Context, top string) Check {
	ctx, cancel := context.WithTimeout(ctx, c.o.timeout())
	defer cancel()
	u, err := git.Repo{Dir: top}.Run(ctx, "remote", "get-url", "origin")
	if err != nil {
		ch := Check{Name: "origin", Level: Warning, Detail: "the repository has no origin remote: a run's branches stay here and no PR is opened",
			Fix: "git remote add origin <your repository's URL>, and push your default branch"}
		if c.o.github() {
			ch.Level, ch.Detail = Error, "the repository has no origin remote: GitHub Actions runs what is pushed to it"
		}
		return ch
	}
	return Check{Name: "origin", Level: OK, Detail: termtext.Escape(redact(u)) + " (not contacted)"}
}

// redact drops a password or token from a remote's URL.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	if _, ok := p.User.Password(); ok {
		p.User = url.UserPassword(p.User.Username(), "xxxxx")
	}
	return p.String()
}

// gh: GitHub's CLI and (when login) its login. Without them a local run
// works but opens no PR; a run on GitHub Actions cannot be dispatched.
func (c checker) gh(ctx context.Context, login bool) []Check {
	bad := Warning
	without := ": workers open no PR for their stories"
	if c.o.github() {
		bad, without = Error, ": it dispatches the stories to GitHub Actions"
	}
	name := runs.Program(c.o.Env, runs.ProgramGH)
	p, err := runs.LookProgram(c.o.Env, runs.ProgramGH)
	if err != nil {
		where := "on PATH"
		if name != runs.ProgramGH {
			where = "($" + runs.EnvGH + ")"
		}
		return []Check{{Name: "gh", Level: bad, Detail: fmt.Sprintf("%s (GitHub's CLI) is not installed %s%s", name, where, without),
			Fix: installHint("gh", "gh") + ", then gh auth login (or set " + runs.EnvGH + ")"}}
	}
	out := []Check{{Name: "gh", Level: OK, Detail: p}}
	if !login {
		return out
	}
	text, err := c.output(ctx, func(ctx context.Context) *exec.Cmd { return runs.GHCommand(ctx, p, c.o.Dir, "auth", "status") })
	return append(out, ghLogin(text, err, bad, without))
}

// ghLogin reads `gh auth status`: its exit code (gh ≥ 2.50 fails on a bad
// token too) and what it says. gh asks GitHub about its token: offline that
// fails or hangs. A gh with no login at all says so without the network;
// one whose token was refused may as well be offline, and the detail says
// both.
func ghLogin(text string, err error, bad Level, without string) Check {
	const name = "gh login"
	lower := strings.ToLower(text)
	switch {
	case errors.Is(err, errTimeout):
		return Check{Name: name, Level: Unchecked, Detail: "not checked: `gh auth status` did not answer (" + err.Error() + "; offline?)",
			Fix: "run `gh auth status` when online"}
	case strings.Contains(lower, "not logged in"):
		return Check{Name: name, Level: bad, Detail: "gh is not logged in to GitHub" + without + " (" + firstLine(text) + ")", Fix: "gh auth login"}
	case err != nil && (strings.Contains(lower, "connect") || strings.Contains(lower, "dial ") || strings.Contains(lower, "no such host") ||
		strings.Contains(lower, "timeout") || strings.Contains(lower, "network")):
		return Check{Name: name, Level: Unchecked, Detail: "not checked: gh cannot reach GitHub (" + firstLine(text) + ")",
			Fix: "run `gh auth status` when online"}
	case err != nil || strings.Contains(lower, "authentication failed") || strings.Contains(lower, "failed to log in"):
		return Check{Name: name, Level: bad, Detail: "gh's login was refused, or GitHub could not be reached (offline?)" + without + " (" + lastLine(cmpOr(text, fmt.Sprint(err))) + ")",
			Fix: "gh auth login (online, `gh auth status` tells which)"}
	}
	detail := "logged in"
	for l := range strings.Lines(text) {
		if _, acct, ok := strings.Cut(l, "Logged in to "); ok {
			detail = "logged in to " + termtext.Escape(strings.TrimSpace(acct))
			break
		}
	}
	return Check{Name: name, Level: OK, Detail: detail}
}

// lastLine is the last non-empty line of out, escaped for a terminal.
func lastLine(out string) string {
	last := ""
	for l := range strings.Lines(out) {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "- To ") {
			last = l
		}
	}
	return termtext.Escape(strings.TrimPrefix(last, "- "))
}

func cmpOr(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}

// sandbox: what confines a run here — the task's checks (runs/verify's
// probe: bubblewrap and user namespaces on Linux, Seatbelt on macOS) and
// Claude Code's Bash sandbox (bubblewrap and socat on Linux).
func (c checker) sandbox(ctx context.Context) []Check {
	if c.o.github() {
		return []Check{{Name: "sandbox", Level: OK, Detail: "not needed here: the runner confines the stories"}}
	}
	pctx, cancel := context.WithTimeout(ctx, c.o.timeout())
	defer cancel()
	p, problem, fix := verify.Probe(pctx)
	var out []Check
	if problem != "" {
		if pctx.Err() != nil {
			problem += " (timed out after " + c.o.timeout().String() + ")"
		}
		out = append(out, Check{Name: "sandbox", Level: Error, Detail: problem + ": tasks with checks are refused, and Claude Code's Bash is off",
			Fix: fix + " (or run unconfined: --allow-unconfined-checks, --allow-unsandboxed-bash)"})
	} else {
		out = append(out, Check{Name: "sandbox", Level: OK, Detail: p + " confines commands here"})
	}
	if runtime.GOOS == "linux" {
		if s, err := exec.LookPath("socat"); err != nil {
			out = append(out, Check{Name: "socat", Level: Error, Detail: "socat is not installed: Claude Code's Bash sandbox cannot start, so Bash is off in runs",
				Fix: installHint("socat", "socat") + " (or run Bash unconfined: --allow-unsandboxed-bash)"})
		} else {
			out = append(out, Check{Name: "socat", Level: OK, Detail: s})
		}
	}
	return out
}

// hook: the hook's own program beside saga-lsp, from the same build
// (runs.HookProgram), which hooks start in half the time; without it they
// run `saga-lsp hook`.
func (c checker) hook() Check {
	self := c.o.Self
	if self == "" {
		self, _ = os.Executable()
	}
	if self != "" {
		if h := runs.HookProgram(self); h != self {
			return Check{Name: "hook", Level: OK, Detail: h}
		}
	}
	fix := "install both from one build (make install, or a release archive) so that it lies beside saga-lsp"
	if p, err := exec.LookPath(runs.HookBinary); err == nil {
		return Check{Name: "hook", Level: Warning, Detail: fmt.Sprintf("%s (on PATH) is not beside %s or is from another build: hooks run `saga-lsp hook`, which starts slower", p, self), Fix: fix}
	}
	return Check{Name: "hook", Level: Warning, Detail: runs.HookBinary + " is not installed: hooks run `saga-lsp hook`, which starts slower", Fix: fix}
}

func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}
