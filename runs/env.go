package runs

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Environment variables of the run protocol. The worker sets the story ones
// for each headless run (so Claude Code's hooks inherit them); run, stop,
// status and the language server read the others.
const (
	// EnvSessionDir is where output and events files go (default
	// DefaultSessionDir; see SessionDir).
	EnvSessionDir = "SAGA_SESSION_DIR"
	// EnvSession is the tmux session of the worker or runner being started.
	EnvSession = "SAGA_SESSION"
	// EnvBin names the saga-lsp binary that run starts in tmux and install
	// registers as the hook (default: the running executable).
	EnvBin = "SAGA_LSP_BIN"
	// EnvTmuxSocket is a tmux socket name (tmux -L NAME); default: the
	// user's default tmux server.
	EnvTmuxSocket = "SAGA_TMUX_SOCKET"
	// EnvClaude and EnvGH override the claude and gh executables.
	EnvClaude = "SAGA_CLAUDE"
	EnvGH     = "SAGA_GH"
	// EnvWorkerNice is the nice value, 0 to 19, a worker in a session of
	// its own runs at (default: 10; docs/worker.md#priority).
	EnvWorkerNice = "SAGA_WORKER_NICE"

	// The story context of a headless run (docs/worker.md#the-loop, docs/hooks.md#sessionstart-story-context).
	EnvStoryID         = "SAGA_STORY_ID"
	EnvStoryPath       = "SAGA_STORY_PATH"
	EnvStoryTaskListID = "SAGA_STORY_TASK_LIST_ID"
	EnvProjectDir      = "SAGA_PROJECT_DIR"
	EnvTaskContext     = "SAGA_TASK_CONTEXT"
	// EnvEventsFile is the events file of the run, for hooks that report
	// into it.
	EnvEventsFile = "SAGA_EVENTS_FILE"
	// EnvEpicEvents is, for a worker an epic runner started, the runner's
	// events file: the worker starts no headless run once it records that
	// the epic's spend reached its cap.
	EnvEpicEvents = "SAGA_EPIC_EVENTS"

	// Verified completion (docs/worker.md#verified-completion): what the TaskCompleted hook of a
	// worker's run needs. EnvForkPoint is the commit the story branch
	// forked at from its (epic's) base: the task files as committed there
	// hold the checks that count. EnvChecksFile is the worker's reading of
	// them (ChecksFile), so that the hook needs no git. The worker makes the
	// run's reference commit R (the base's tip at its start) the fork
	// point, so EnvForkPoint is R. EnvBash is how the
	// run's Bash runs (Bash* values): the checks run confined like it.
	// EnvChecksTimeout is the timeout, in seconds, the worker registered
	// for the TaskCompleted hook: the checks must end before it.
	EnvForkPoint  = "SAGA_FORK_POINT"
	EnvChecksFile = "SAGA_CHECKS_FILE"
	// EnvCacheDir is the story's build caches (buildcache.CacheDir) the worker gave
	// its runs: the hook's checks use it, since the run's own
	// XDG_CACHE_HOME points into it.
	EnvCacheDir      = "SAGA_CACHE_DIR"
	EnvBash          = "SAGA_BASH"
	EnvChecksTimeout = "SAGA_CHECKS_TIMEOUT"
	// EnvAllowUnconfinedChecks is "1" when the checks may run unconfined
	// where bubblewrap cannot confine them (--allow-unconfined-checks; a
	// user may set it for a Claude Code session started by hand). The
	// worker always sets it, so that a value in the user's shell does not
	// override the flag.
	EnvAllowUnconfinedChecks = "SAGA_ALLOW_UNCONFINED_CHECKS"
)

// EnvWarmGoCache is the warm Go cache (buildcache.Warm.Go) a worker gave its runs, or
// "none": the TaskCompleted hook's checks use the same, since in a run
// GOCACHE and XDG_CACHE_HOME point into the story's caches.
const EnvWarmGoCache = "SAGA_WARM_GOCACHE"

// How a worker's headless runs use Bash (worker.start's bash, EnvBash):
// confined by Claude Code's sandbox, unconfined because the user opted in,
// or not at all.
const (
	BashSandboxed   = "sandboxed"
	BashUnsandboxed = "unsandboxed"
	BashOff         = "off"
)

// Values of EnvTaskContext.
const (
	TaskContextMain          = "main"
	TaskContextStoryWorktree = "story-worktree"
)

// Getenv looks a variable up with env (os.Getenv when nil), trimmed.
func Getenv(env func(string) string, key string) string {
	if env == nil {
		env = os.Getenv
	}
	return strings.TrimSpace(env(key))
}

// StoryEnv is the story context a worker gives each headless run, as
// KEY=value pairs.
type StoryEnv struct {
	Story      string
	TaskList   string // the hydrated list's id
	ProjectDir string // the story's worktree
	SessionDir string
	Session    string
	EventsFile string

	ForkPoint     string // the run's reference commit R
	ChecksFile    string
	CacheDir      string
	WarmGoCache   string // buildcache.Warm.Go ("" none)
	Bash          string
	ChecksTimeout int // seconds
	// AllowUnconfinedChecks: --allow-unconfined-checks.
	AllowUnconfinedChecks bool
}

// Vars returns the SAGA_* variables of the context.
func (e StoryEnv) Vars() []string {
	vars := []string{
		EnvStoryID + "=" + e.Story,
		EnvStoryPath + "=" + e.Story,
		EnvStoryTaskListID + "=" + e.TaskList,
		EnvProjectDir + "=" + e.ProjectDir,
		EnvTaskContext + "=" + TaskContextStoryWorktree,
		EnvSessionDir + "=" + e.SessionDir,
		EnvSession + "=" + e.Session,
	}
	for _, kv := range [][2]string{{EnvEventsFile, e.EventsFile}, {EnvForkPoint, e.ForkPoint}, {EnvChecksFile, e.ChecksFile}, {EnvCacheDir, e.CacheDir}, {EnvBash, e.Bash}} {
		if kv[1] != "" {
			vars = append(vars, kv[0]+"="+kv[1])
		}
	}
	if e.CacheDir != "" {
		vars = append(vars, EnvWarmGoCache+"="+cmp.Or(e.WarmGoCache, "none"))
	}
	if e.ChecksTimeout > 0 {
		vars = append(vars, EnvChecksTimeout+"="+strconv.Itoa(e.ChecksTimeout))
	}
	allow := "0"
	if e.AllowUnconfinedChecks {
		allow = "1"
	}
	return append(vars, EnvAllowUnconfinedChecks+"="+allow)
}

// SelfPath is the saga-lsp binary to run as worker, runner and hook:
// $SAGA_LSP_BIN (a path, or a name looked up on PATH) or the running
// executable. The result is absolute.
func SelfPath(env func(string) string) (string, error) {
	if p := Getenv(env, EnvBin); p != "" {
		if !strings.ContainsRune(p, '/') {
			lp, err := exec.LookPath(p)
			if err != nil {
				return "", fmt.Errorf("%s=%s: not found on PATH: set it to the saga-lsp binary's path", EnvBin, p)
			}
			p = lp
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvBin, p, err)
		}
		if fi, err := os.Stat(abs); err != nil || fi.IsDir() {
			return "", fmt.Errorf("%s=%s: no such executable file: set it to the saga-lsp binary's path", EnvBin, p)
		}
		return abs, nil
	}
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find the saga-lsp binary (%v): set %s to its path", err, EnvBin)
	}
	return SagaLSPOf(p), nil
}

// SagaLSPOf is the saga-lsp binary of the running executable exe: exe
// itself, or, when exe is saga-lsp-hook, the saga-lsp beside it whose
// companion it is (HookProgram) — a hook's checks run saga-lsp's hidden
// subcommands, which saga-lsp-hook does not have.
func SagaLSPOf(exe string) string {
	dir, base := filepath.Split(exe)
	if strings.TrimSuffix(base, ".exe") != HookBinary {
		return exe
	}
	main := filepath.Join(dir, "saga-lsp"+strings.TrimPrefix(base, HookBinary))
	if HookProgram(main) == exe {
		return main
	}
	return exe
}
