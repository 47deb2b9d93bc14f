package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/runs/github"
)

// ghaFlags are install's flags of the GitHub Actions workflow.
type ghaFlags struct {
	on, fromSource, force, remove *bool
}

func githubActionsFlags(c *cmdLine) ghaFlags {
	return ghaFlags{
		on:         c.Bool("github-actions", false, "write (or update) the workflow .github/workflows/"+github.WorkflowFile+" that `run --on github` dispatches, and nothing else"),
		fromSource: c.Bool("from-source", false, "with --github-actions: the job builds saga-lsp from the checked-out commit (saga-lsp's own repository) instead of installing this release"),
		force:      c.Bool("force", false, "with --github-actions: replace (or remove) the workflow even though it was edited"),
		remove:     c.Bool("remove", false, "with --github-actions: remove the workflow (only when unedited, or with --force)"),
	}
}

// used tells whether a flag that needs --github-actions was given.
func (g ghaFlags) used(c *cmdLine) bool {
	return c.isSet("from-source") || c.isSet("force") || c.isSet("remove")
}

// installGitHubActions is `install --github-actions`: the workflow file at
// the repository's top, never over a person's edits unless forced.
func installGitHubActions(env *Env, c *cmdLine, g ghaFlags, root string, dryRun bool) int {
	switch {
	case !*g.on:
		return c.fail(env, usagef("--from-source, --force and --remove go with --github-actions"))
	case c.isSet("claude-settings"):
		return c.fail(env, usagef("--github-actions writes only the workflow: leave out --claude-settings"))
	case *g.remove && (*g.fromSource || dryRun):
		return c.fail(env, usagef("--remove takes no --from-source or --dry-run"))
	}
	dir, err := installRoot(env, root)
	if err != nil {
		return c.fail(env, err)
	}
	top, err := git.Repo{Dir: dir}.Run(context.Background(), "rev-parse", "--show-toplevel")
	if err != nil {
		return c.fail(env, fmt.Errorf("%s is not in a git repository: a GitHub Actions workflow lives in a repository's .github/workflows (%v)", dir, err))
	}
	shown := shownPath(env, top, filepath.Join(top, filepath.FromSlash(github.WorkflowPath)))
	src := github.Source{FromSource: *g.fromSource}
	if !src.FromSource {
		if src, err = workflowSource(); err != nil && !*g.remove {
			return c.fail(env, err)
		}
	}
	if dryRun && !*g.remove {
		if src.FromSource {
			if err := github.CheckFromSource(top); err != nil {
				return c.fail(env, err)
			}
		}
		content, err := github.Render(src)
		if err != nil {
			return c.fail(env, err)
		}
		env.Stdout.Write(content)
		fmt.Fprintf(env.Stderr, "dry run: %s was not written\n", shown)
		return exitOK
	}
	var res github.Installed
	if *g.remove {
		res, err = github.Remove(top, src, *g.force)
	} else {
		res, err = github.Install(top, src, *g.force)
	}
	var edited *github.EditedError
	if errors.As(err, &edited) {
		fmt.Fprintf(env.Stderr, "saga-lsp install: %v\n", err)
		env.Stderr.Write(edited.Diff)
		return exitFindings
	} else if err != nil {
		return c.fail(env, err)
	}
	switch {
	case *g.remove && res.Removed:
		fmt.Fprintf(env.Stdout, "removed %s\n", shown)
	case *g.remove:
		fmt.Fprintf(env.Stdout, "%s does not exist: nothing to remove\n", shown)
	case res.Created:
		fmt.Fprintf(env.Stdout, "created %s\n", shown)
	case res.Written:
		fmt.Fprintf(env.Stdout, "updated %s\n", shown)
	default:
		fmt.Fprintf(env.Stdout, "%s already up to date\n", shown)
	}
	if res.Written && github.IsPseudoVersion(src.Version) {
		fmt.Fprintf(env.Stdout, "pinned to saga-lsp %s, this build's commit: the runner installs it through Go's module proxy, which serves it once the commit is pushed to saga-lsp's repository\n", src.Version)
	}
	if res.Written {
		fmt.Fprintf(env.Stdout, "next: commit and push it to the default branch, add the secret %s (or %s), and allow GitHub Actions to create pull requests (docs/github-actions.md)\n",
			"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")
	}
	return exitOK
}

// workflowSource is how the workflow this build writes installs saga-lsp:
// pinned at its release, or at its commit's pseudo-version (github.Pin).
func workflowSource() (github.Source, error) {
	info, _ := debug.ReadBuildInfo()
	v, err := github.Pin(Version, info)
	if err != nil {
		return github.Source{}, err
	}
	return github.ReleaseSource(v, runtime.Version())
}

// releaseWorkflow is the workflow this saga-lsp writes, nil when it can
// pin none (a dirty build, or one that recorded no commit, cannot tell
// which workflow is current).
func releaseWorkflow() []byte {
	src, err := workflowSource()
	if err != nil {
		return nil
	}
	content, err := github.Render(src)
	if err != nil {
		return nil
	}
	return content
}
