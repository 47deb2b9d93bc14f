package cli

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/hook"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

const installSynopsis = "install [--root DIR] [--claude-settings project|user] [--dry-run]\n" +
	"install --github-actions [--root DIR] [--from-source] [--force] [--remove] [--dry-run]"

// runInstall registers the Claude Code hooks and prints editor setup.
func runInstall(env *Env, args []string) int {
	c := newCmdLine("install")
	root := c.String("root", "", "project root `DIR` (default: nearest folder above the working directory with .saga/, else with .git, else the working directory)")
	scope := c.String("claude-settings", hook.ScopeProject, "which settings.json (`SCOPE`): project (<root>/.claude/settings.json) or user (~/.claude/settings.json)")
	dryRun := c.Bool("dry-run", false, "print the resulting settings.json (or workflow) instead of writing it")
	gha := githubActionsFlags(c)
	pos, err := c.parse(args)
	if err := cmp.Or(err, wantArgs(pos), oneOf("--claude-settings scope", *scope, hook.ScopeProject, hook.ScopeUser)); err != nil {
		return c.fail(env, err)
	}
	if *gha.on || gha.used(c) {
		return installGitHubActions(env, c, gha, *root, *dryRun)
	}
	r := ""
	if *scope == hook.ScopeProject {
		if r, err = installRoot(env, *root); err != nil {
			return c.fail(env, err)
		}
	}
	self, err := runs.SelfPath(nil)
	if err != nil {
		return c.fail(env, err)
	}
	res, err := hook.Install(hook.InstallOptions{Root: r, Scope: *scope, DryRun: *dryRun, Self: self})
	if err != nil {
		return c.fail(env, err)
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
	for _, h := range claudecode.Hooks {
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
	fmt.Fprintf(env.Stdout, ": hooks %s run `%s`\n", strings.Join(hooks, ", "), res.Command)
	if res.Note != "" {
		fmt.Fprintf(env.Stdout, "note: %s\n", res.Note)
	}
	fmt.Fprintln(env.Stdout)
	fmt.Fprint(env.Stdout, editorSetup(hook.EditorCommand(self)))
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
