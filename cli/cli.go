// Package cli is saga-lsp's command-line face: it parses subcommands and
// flags, explains a mistaken command line (what was wrong, then the
// synopsis, with a did-you-mean), calls store, scaffold and the runs
// packages (runs/control, runs/epic, runs/worker, runs/verify), and prints
// results for terminals (colour, paths from the working directory) and CI.
// Exit codes: 0 ok, 1 findings or failure, 2 usage or I/O error.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/runs/buildcache/gocache"
	"github.com/saga-ai/saga-lsp/store"
)

const (
	exitOK       = 0
	exitFindings = 1
	exitUsage    = 2
)

// Env is what a command reads from and writes to; tests pass their own.
type Env struct {
	Stdout, Stderr io.Writer
	Stdin          io.Reader
	Dir            string              // working directory, for root discovery and relative paths
	Getenv         func(string) string // the environment (default os.Getenv)

	// describe, when set, receives a command's command line instead of its
	// --help text: how completion and the man page read the flags from
	// the same definitions as --help (describe.go).
	describe func(*cmdLine)
}

type command struct {
	name     string
	synopsis string // after "saga-lsp "; one line per form
	summary  string
	run      func(env *Env, args []string) int
}

// commandTable lists the commands in the order help shows them: what a
// newcomer types first, first.
func commandTable() []command {
	return []command{
		{"check", checkSynopsis, "lint the .saga workspace (or the given files and folders)", runCheck},
		{"plan", planSynopsis, "show the execution plan of a story's tasks or an epic's stories", runPlan},
		{"new", newSynopsis, "create a story, task or epic", runNew},
		{"schema", schemaSynopsis, "print the JSON Schema of story, epic or task files", runSchema},
		{"status", statusSynopsis, "show stories and tasks, TaskList-style, with worker state and PR", runStatus},
		{"verify", verifySynopsis, "run the checks that count for a story's tasks now (exit 1 when one fails)", runVerify},
		{"doctor", doctorSynopsis, "check everything a run needs — claude and its login, tmux, git, origin, gh and its login, the sandbox — and say what to do (exit 1 on an error)", runDoctor},
		{"run", runSynopsis, "start a story's worker, or an epic's runner, in a tmux session", runRun},
		{"follow", followSynopsis, "show a story's or an epic's run until it ends (exit: the run's)", runFollow},
		{"restack", restackSynopsis, "rebuild a stacked story whose blocker's branch moved on its new tip and run its checks again (or an epic's such stories)", runRestack},
		{"land", landSynopsis, "merge the ready stories' pull requests in dependency order, their dependents following the default branch (--watch: as they become ready)", runLand},
		{"stats", statsSynopsis, "count an epic's outcome from the run records: stories landed, cost per landed story, first-pass rate, review rounds, first start to land, the checks that failed most", runStats},
		{"stop", stopSynopsis, "stop a story's worker, or an epic's runner and its workers", runStop},
		{"dashboard", dashboardSynopsis, "serve the backlog and its runs, live, as web pages (epics' dependency graphs, stories, output, problems)", runDashboard},
		{"clean", cleanSynopsis, "remove what finished or abandoned runs left: worktrees, merged branches, task lists, session files", runClean},
		{"reset", resetSynopsis, "discard a story's unfinished, failed or dry-run attempt: worktree, branch, run records, check results", runReset},
		{"worker", workerSynopsis, "execute a story end to end (normally inside tmux; see run)", runWorker},
		{"epic-runner", epicRunnerSynopsis, "run an epic's stories in dependency order (normally inside tmux; see run)", runEpicRunner},
		{"install", installSynopsis, "register saga-lsp's hooks in .claude/settings.json and print editor setup", runInstall},
		{"hook", hookSynopsis, "the Claude Code hook (SessionStart, PreToolUse, PostToolUse, TaskCompleted): the event payload on stdin; exits 2 only to refuse a completion whose check fails", runHook},
		{"serve", serveSynopsis, "run the language server on stdin/stdout (the default without a command)", runServe},
		{"completion", completionSynopsis, "print the shell completion script for bash, zsh or fish", runCompletion},
		{"man", manSynopsis, "print the manual page saga-lsp(1), in roff (saga-lsp man | man -l -)", runMan},
		{"version", versionSynopsis, "print the version (also: saga-lsp --version, -v)", runVersion},
	}
}

func lookupCommand(name string) command {
	for _, c := range commandTable() {
		if c.name == name {
			return c
		}
	}
	return command{name: name}
}

// Main runs saga-lsp with args (without the program name) and returns the
// exit code.
func Main(args []string, env *Env) int {
	if env.Dir == "" {
		env.Dir, _ = os.Getwd()
	}
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	if len(args) == 0 {
		// Editors start the server as plain `saga-lsp` with pipes; a
		// person at a terminal would otherwise face a silent wait for LSP
		// frames.
		if isTerminal(env.Stdin) {
			fmt.Fprint(env.Stdout, "saga-lsp is SAGA's language server and command line. Editors start it with\n"+
				"pipes on stdin and stdout and talk LSP; `saga-lsp serve` does that from a terminal.\n\n")
			usage(env.Stdout)
			return exitOK
		}
		return runServe(env, args)
	}
	name := args[0]
	switch name {
	case "--worker": // the seeds' spelling: saga-lsp --worker <story>
		return runWorker(env, args[1:])
	case "__agent": // hidden: worker --dry-run's simulated claude
		return runAgent(env, args[1:])
	case "__hook-program": // hidden: which program runs the hook (the Claude Code plugin's saga-lsp-run)
		return runHookProgram(env, args[1:])
	case "__complete": // hidden: the ids the shell completions offer
		return runCompleteIDs(env, args[1:])
	case buildcache.GoCacheProgCommand: // hidden: the go command's GOCACHEPROG in a story's runs and checks
		return gocache.Main(args[1:], env.Stdin, env.Stdout, env.Stderr)
	case "help", "-h", "-help", "--help":
		return runHelp(env, args[1:])
	case "-v", "-version", "--version":
		return runVersion(env, args[1:])
	}
	if flagName, ok := strings.CutPrefix(name, "-"); ok {
		// Editors may start the server with its flags and no command
		// (`saga-lsp --stdio`).
		flagName, _, _ = strings.Cut(strings.TrimPrefix(flagName, "-"), "=")
		serve, _, _ := serveCmdLine()
		if serve.Lookup(flagName) != nil {
			return runServe(env, args)
		}
		return mainUsageError(env, serve.unknownFlag(flagName, "version").Error())
	}
	for _, c := range commandTable() {
		if c.name == name {
			return c.run(env, args[1:])
		}
	}
	return mainUsageError(env, unknownCommand(name))
}

func commandNames() []string {
	var names []string
	for _, c := range commandTable() {
		names = append(names, c.name)
	}
	return names
}

func unknownCommand(name string) string {
	if near := nearest(name, commandNames()); near != "" {
		return fmt.Sprintf("unknown command %q; did you mean %q?", name, near)
	}
	return fmt.Sprintf("unknown command %q", name)
}

// mainUsageError reports a mistake before any command was chosen: the
// message, then the synopsis and the commands; exit 2.
func mainUsageError(env *Env, msg string) int {
	fmt.Fprintf(env.Stderr, "saga-lsp: %s\n", msg)
	fmt.Fprintln(env.Stderr, "usage: saga-lsp <command> [flags] [args]")
	fmt.Fprintf(env.Stderr, "commands: %s\n", strings.Join(commandNames(), ", "))
	fmt.Fprintln(env.Stderr, "Run `saga-lsp --help` for what each does.")
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: saga-lsp <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range commandTable() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run `saga-lsp <command> --help` for a command's flags. Exit codes: 0 ok, 1 findings, 2 usage or I/O error.")
}

// runHelp is `saga-lsp help [<command>]`.
func runHelp(env *Env, args []string) int {
	switch {
	case len(args) == 0:
		usage(env.Stdout)
		return exitOK
	case len(args) > 1:
		return mainUsageError(env, fmt.Sprintf("help: unexpected argument %q", args[1]))
	}
	for _, c := range commandTable() {
		if c.name == args[0] {
			return c.run(env, []string{"--help"})
		}
	}
	return mainUsageError(env, unknownCommand(args[0]))
}

// rootUsage is the --root flag of the commands that need a workspace.
const rootUsage = "workspace root `DIR` (default: nearest folder above the working directory with .saga/)"

// resolveRoot applies --root or discovers the workspace from the working dir.
// With create, a missing .saga/ is fine: the root is --root or the working
// directory, and the first file written creates .saga/.
func resolveRoot(env *Env, root string, create bool) (string, error) {
	if root != "" {
		if !filepath.IsAbs(root) {
			root = filepath.Join(env.Dir, root)
		}
		if fi, err := os.Stat(filepath.Join(root, ".saga")); create || (err == nil && fi.IsDir()) {
			return root, nil
		}
		return "", fmt.Errorf("%w in %s (--root): point --root at the folder that contains .saga/", store.ErrNoWorkspace, root)
	}
	r, err := store.FindRoot(env.Dir)
	if err != nil && create && errors.Is(err, store.ErrNoWorkspace) {
		return env.Dir, nil
	}
	return r, err
}

// loadWorkspace parses the workspace of --root (or the working directory's).
func loadWorkspace(env *Env, rootFlag string) (root string, p *store.Parser, ws *store.Workspace, err error) {
	if root, err = resolveRoot(env, rootFlag, false); err != nil {
		return "", nil, nil, err
	}
	p, ws, err = workspaceAt(root)
	return root, p, ws, err
}

// workspaceAt parses the workspace at root.
func workspaceAt(root string) (*store.Parser, *store.Workspace, error) {
	p, err := store.NewParser()
	if err != nil {
		return nil, nil, err
	}
	ws, err := p.Load(root)
	return p, ws, err
}

// displayPath shows a root-relative path relative to the working directory.
func displayPath(env *Env, root, rel string) string {
	abs := filepath.Join(root, filepath.FromSlash(rel))
	if r, err := filepath.Rel(env.Dir, abs); err == nil {
		return r
	}
	return abs
}

func splitList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// printJSON writes v as indented JSON, the form of every --format json.
func printJSON(w io.Writer, v any) error {
	data, err := store.MarshalIndent(v)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
