package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/saga-ai/saga-lsp/commands"
	"github.com/saga-ai/saga-lsp/hook"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/claudetasks"
	"github.com/saga-ai/saga-lsp/store/runs"
)

const (
	runSynopsis     = "run <story> [--root DIR] [--format text|json] [--dry-run] [--max-cycles N] [--max-time MIN] [--model M] [--permission-mode MODE] [--base BRANCH] [--keep-tasks]"
	stopSynopsis    = "stop <story> [--root DIR] [--format text|json]"
	statusSynopsis  = "status [<story>] [--root DIR] [--format text|json] [--tasks]"
	installSynopsis = "install [--root DIR] [--claude-settings project|user] [--dry-run]"
)

// runRun starts the story's worker in a detached tmux session.
func runRun(env *Env, args []string) int {
	fs := newFlagSet(env, "run", runSynopsis)
	root := fs.String("root", "", "workspace root (default: nearest folder above the working directory with .saga/)")
	format := fs.String("format", "text", "output format: text or json ({\"session\",\"outputFile\",\"eventsFile\",\"story\",\"pid\"})")
	var wf runs.WorkerFlags
	wf.Register(fs, "worker: ")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 || (*format != "text" && *format != "json") {
		fs.Usage()
		return exitUsage
	}
	r, err := resolveRoot(env, *root, false)
	if err != nil {
		return fail(env, err)
	}
	st, err := commands.StartStory(context.Background(), commands.RunOptions{Root: r, Story: pos[0], Worker: wf})
	if err != nil {
		var se *commands.StartError
		var re *commands.RunningError
		switch {
		case errors.As(err, &se):
			if out := se.Output; strings.TrimSpace(out) != "" {
				fmt.Fprint(env.Stderr, out)
				if !strings.HasSuffix(out, "\n") {
					fmt.Fprintln(env.Stderr)
				}
			}
			fmt.Fprintf(env.Stderr, "saga-lsp run: %v\n", err)
			return exitFindings
		case errors.As(err, &re):
			fmt.Fprintf(env.Stderr, "saga-lsp run: %v\n", err)
			return exitFindings
		}
		fmt.Fprintf(env.Stderr, "saga-lsp run: %v\n", err)
		return exitUsage
	}
	if *format == "json" {
		return printJSON(env, st)
	}
	fmt.Fprintf(env.Stdout, "session %s\noutput %s\nfollow: %s  |  tail -f %s\n", st.Session, st.OutputFile, st.Attach, st.OutputFile)
	if st.Finished {
		fmt.Fprintf(env.Stdout, "the worker already finished: see the output file, or `saga-lsp status %s`\n", st.Story)
	}
	return exitOK
}

// runStop sends SIGINT to the story's worker and ends its tmux session.
func runStop(env *Env, args []string) int {
	fs := newFlagSet(env, "stop", stopSynopsis)
	root := fs.String("root", "", "workspace root (default: nearest folder above the working directory with .saga/)")
	format := fs.String("format", "text", "output format: text or json")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 || (*format != "text" && *format != "json") {
		fs.Usage()
		return exitUsage
	}
	r, err := resolveRoot(env, *root, false)
	if err != nil {
		return fail(env, err)
	}
	res, err := commands.StopStory(context.Background(), commands.StopOptions{Root: r, Story: pos[0]})
	if err != nil {
		code := exitUsage
		if errors.Is(err, commands.ErrNotRunning) || (res != nil && res.Forced) {
			code = exitFindings
		}
		if *format == "json" && res != nil {
			printJSON(env, res)
		}
		fmt.Fprintf(env.Stderr, "saga-lsp stop: %v\n", err)
		return code
	}
	if *format == "json" {
		return printJSON(env, res)
	}
	switch {
	case res.PID > 0:
		fmt.Fprintf(env.Stdout, "stopped story %s: worker pid %d", res.Story, res.PID)
		if res.State != "" {
			fmt.Fprintf(env.Stdout, " ended %s", res.State)
			if res.ExitCode != nil {
				fmt.Fprintf(env.Stdout, " (exit %d)", *res.ExitCode)
			}
		}
		if res.Forced {
			fmt.Fprintf(env.Stdout, " — it did not end in time after SIGINT, so its session was killed")
		}
		fmt.Fprintln(env.Stdout)
	default:
		fmt.Fprintf(env.Stdout, "stopped story %s: no worker process was left\n", res.Story)
	}
	for _, s := range res.Sessions {
		fmt.Fprintf(env.Stdout, "killed tmux session %s\n", s)
	}
	if res.OutputFile != "" {
		fmt.Fprintf(env.Stdout, "output %s\n", res.OutputFile)
	}
	return exitOK
}

// runStatus prints stories, tasks and worker state.
func runStatus(env *Env, args []string) int {
	fs := newFlagSet(env, "status", statusSynopsis)
	root := fs.String("root", "", "workspace root (default: nearest folder above the working directory with .saga/)")
	format := fs.String("format", "text", "output format: text or json")
	tasks := fs.Bool("tasks", false, "list every story's tasks (always on with a story)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) > 1 || (*format != "text" && *format != "json") {
		fs.Usage()
		return exitUsage
	}
	r, err := resolveRoot(env, *root, false)
	if err != nil {
		return fail(env, err)
	}
	o := commands.StatusOptions{Root: r, Tasks: *tasks}
	if len(pos) == 1 {
		o.Story = pos[0]
	}
	st, err := commands.GetStatus(context.Background(), o)
	if err != nil {
		fmt.Fprintf(env.Stderr, "saga-lsp status: %v\n", err)
		return exitUsage
	}
	if *format == "json" {
		return printJSON(env, st)
	}
	if err := st.WriteText(env.Stdout); err != nil {
		return fail(env, fmt.Errorf("write output: %w", err))
	}
	return exitOK
}

// runInstall registers the Claude Code hooks and prints editor setup.
func runInstall(env *Env, args []string) int {
	fs := newFlagSet(env, "install", installSynopsis)
	root := fs.String("root", "", "project root (default: nearest folder above the working directory with .saga/, else with .git, else the working directory)")
	scope := fs.String("claude-settings", hook.ScopeProject, "which settings.json: project (<root>/.claude/settings.json) or user (~/.claude/settings.json)")
	dryRun := fs.Bool("dry-run", false, "print the resulting settings.json instead of writing it")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 0 || (*scope != hook.ScopeProject && *scope != hook.ScopeUser) {
		fs.Usage()
		return exitUsage
	}
	r := ""
	if *scope == hook.ScopeProject {
		if r, err = installRoot(env, *root); err != nil {
			return fail(env, err)
		}
	}
	self, err := runs.SelfPath(nil)
	if err != nil {
		return fail(env, err)
	}
	res, err := hook.Install(hook.InstallOptions{Root: r, Scope: *scope, DryRun: *dryRun, Self: self})
	if err != nil {
		fmt.Fprintf(env.Stderr, "saga-lsp install: %v\n", err)
		return exitUsage
	}
	shown := res.Path
	if rel, err := filepath.Rel(env.Dir, res.Path); err == nil && !strings.HasPrefix(rel, "..") {
		shown = rel
	}
	if *dryRun {
		env.Stdout.Write(res.Content)
		if !strings.HasSuffix(string(res.Content), "\n") {
			fmt.Fprintln(env.Stdout)
		}
		fmt.Fprintf(env.Stderr, "dry run: %s was not written\n", shown)
		return exitOK
	}
	var hooks []string
	for _, h := range claudetasks.Hooks {
		if h.Matcher != "" {
			hooks = append(hooks, h.Event+" ("+h.Matcher+")")
		} else {
			hooks = append(hooks, h.Event)
		}
	}
	switch {
	case res.Created:
		fmt.Fprintf(env.Stdout, "created %s", shown)
	case res.Written:
		fmt.Fprintf(env.Stdout, "updated %s", shown)
	default:
		fmt.Fprintf(env.Stdout, "%s already up to date", shown)
	}
	fmt.Fprintf(env.Stdout, ": hooks %s run `%s`\n\n", strings.Join(hooks, ", "), res.Command)
	fmt.Fprint(env.Stdout, hook.EditorSetup(hook.EditorCommand(self)))
	return exitOK
}

// installRoot is --root, else the workspace, else the enclosing git
// checkout, else the working directory: the project whose .claude/ gets
// the hooks.
func installRoot(env *Env, root string) (string, error) {
	if root != "" {
		return resolveRoot(env, root, true)
	}
	if r, err := store.FindRoot(env.Dir); err == nil {
		return r, nil
	}
	abs, err := filepath.Abs(env.Dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return abs, nil
		}
	}
}

func printJSON(env *Env, v any) int {
	data, err := store.MarshalIndent(v)
	if err != nil {
		return fail(env, err)
	}
	env.Stdout.Write(data)
	return exitOK
}
