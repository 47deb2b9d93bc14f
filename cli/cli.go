// Package cli is saga-lsp's command-line face: it parses subcommands and
// flags, calls store and commands, and prints results for terminals and CI.
// Exit codes: 0 ok, 1 findings or failure, 2 usage or I/O error.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/saga-ai/saga-lsp/store"
)

// Version is stamped by the build (-ldflags "-X …/cli.Version=…").
var Version = "dev"

const (
	exitOK       = 0
	exitFindings = 1
	exitUsage    = 2
)

// Env is what a command reads from and writes to; tests pass their own.
type Env struct {
	Stdout, Stderr io.Writer
	Stdin          io.Reader
	Dir            string // working directory, for root discovery and relative paths
}

type command struct {
	name    string
	summary string
	run     func(env *Env, args []string) int
}

func commandTable() []command {
	return []command{
		{"serve", "run the language server on stdin/stdout (the default without a command)", runServe},
		{"worker", "execute a story end to end (normally inside tmux; see run)", runWorker},
		{"run", "start a story's worker in a tmux session", runRun},
		{"stop", "stop a story's worker (it cleans up and exits)", runStop},
		{"status", "show stories and tasks, TaskList-style, with worker state and PR", runStatus},
		{"install", "register saga-lsp's hooks in .claude/settings.json and print editor setup", runInstall},
		{"hook", "Claude Code hook: reads the event payload on stdin", runHook},
		{"check", "lint the .saga workspace (or the given files and folders)", runCheck},
		{"plan", "show the execution plan of a story's tasks or an epic's stories", runPlan},
		{"new", "create a story, task or epic (new story|task|epic …)", runNew},
		{"schema", "print the JSON Schema of story, epic or task files", runSchema},
		{"version", "print the version", runVersion},
	}
}

// Main runs saga-lsp with args (without the program name) and returns the
// exit code.
func Main(args []string, env *Env) int {
	if env.Dir == "" {
		env.Dir, _ = os.Getwd()
	}
	// Editors start the server as plain `saga-lsp` (or `saga-lsp --stdio`).
	if len(args) == 0 || args[0] == "--stdio" || args[0] == "-stdio" {
		return runServe(env, args)
	}
	name := args[0]
	switch name {
	case "--worker": // the seeds' spelling: saga-lsp --worker <story>
		return runWorker(env, args[1:])
	case "__agent": // hidden: worker --dry-run's simulated claude
		return runAgent(env, args[1:])
	}
	if name == "help" || name == "-h" || name == "--help" {
		usage(env.Stdout)
		return exitOK
	}
	for _, c := range commandTable() {
		if c.name == name {
			return c.run(env, args[1:])
		}
	}
	fmt.Fprintf(env.Stderr, "saga-lsp: unknown command %q\n", name)
	usage(env.Stderr)
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
	fmt.Fprintln(w, "Run `saga-lsp <command> -h` for a command's flags. Exit codes: 0 ok, 1 findings, 2 usage or I/O error.")
}

// parseInterspersed parses flags wherever they stand among the positional
// arguments (`plan my-story --format json` works), stopping at "--".
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// flag.Parse consumed a "--" terminator if it stopped there.
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// newFlagSet builds a flag set whose errors and help go to stderr.
func newFlagSet(env *Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "usage: saga-lsp %s\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// flagError turns a parse error into an exit code; -h is not an error.
func flagError(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

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

// fail prints an error and returns its exit code: usage and I/O errors are 2.
func fail(env *Env, err error) int {
	fmt.Fprintf(env.Stderr, "saga-lsp: %v\n", err)
	return exitUsage
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

func runVersion(env *Env, args []string) int {
	fmt.Fprintf(env.Stdout, "saga-lsp %s\n", Version)
	return exitOK
}

func printJSON(env *Env, v any) int {
	data, err := store.MarshalIndent(v)
	if err != nil {
		return fail(env, err)
	}
	env.Stdout.Write(data)
	return exitOK
}
