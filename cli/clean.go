package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/github"
)

const cleanSynopsis = "clean [<story>…] [--root DIR] [--yes] [--format text|json]"

// runClean lists (and with --yes removes) what finished or abandoned runs
// left behind. Exit 1 when something was kept because removing it was
// unsafe.
func runClean(env *Env, args []string) int {
	c := newCmdLine("clean")
	root := c.String("root", "", rootUsage)
	yes := c.Bool("yes", false, "remove what is listed (without it clean only lists)")
	format := c.String("format", "text", "output `FORMAT`: text or json ({\"dryRun\",\"items\":[…],\"left\":[…],\"warnings\":[…]})")
	pos, err := c.parse(args)
	if err := cmp.Or(err, oneOf("format", *format, "text", "json")); err != nil {
		return c.fail(env, err)
	}
	r, err := resolveRoot(env, *root, false)
	if err != nil {
		return c.fail(env, err)
	}
	res, err := control.Clean(context.Background(), control.CleanOptions{Setup: github.NewSetup(r, env.Getenv), Stories: pos, Yes: *yes})
	if err != nil {
		return c.fail(env, err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(env.Stderr, "saga-lsp clean: warning: %s\n", w)
	}
	if *format == "json" {
		err = printJSON(env.Stdout, res)
	} else {
		err = writeClean(env.Stdout, res, func(p string) string { return shownPath(env, r, p) }, false)
	}
	if err != nil {
		return c.fail(env, fmt.Errorf("write output: %w", err))
	}
	if res.Kept() > 0 {
		return exitFindings
	}
	return exitOK
}

// shownPath shows a path inside the workspace from the working directory,
// any other as it is.
func shownPath(env *Env, root, p string) string {
	if rel, err := filepath.Rel(root, p); err == nil && filepath.IsAbs(p) && !strings.HasPrefix(rel, "..") {
		return displayPath(env, root, filepath.ToSlash(rel))
	}
	return p
}

// cleanNouns name the item kinds in text.
var cleanNouns = map[string][2]string{ // singular, plural
	control.CleanWorktree:     {"worktree", "worktrees"},
	control.CleanBranch:       {"branch", "branches"},
	control.CleanTaskList:     {"task list", "task lists"},
	control.CleanRunFiles:     {"run's files", "runs' files"},
	control.CleanTmux:         {"tmux session", "tmux sessions"},
	control.CleanCache:        {"build cache", "build caches"},
	control.CleanShares:       {"shared check results", "shared check results"},
	control.CleanRecord:       {"run record", "run records"},
	control.ResetRemoteBranch: {"remote branch", "remote branches"},
	control.ResetPR:           {"pull request", "pull requests"},
}

// writeClean prints what clean or reset found or did; asking says the
// caller asks next whether to remove what is listed (reset at a terminal),
// so the listing does not also say to run again with --yes.
func writeClean(w io.Writer, res *control.CleanResult, show func(string) string, asking bool) error {
	// Paths and reasons name what is on disk: escaped for the terminal.
	what := func(kind, path, story string) string {
		switch kind {
		case control.CleanShares: // one folder for every story's: say whose
			if story != "" {
				return cleanNouns[kind][0] + " of " + termtext.Escape(story) + " in " + termtext.Escape(show(path))
			}
		case control.CleanBranch, control.CleanTmux, control.ResetRemoteBranch, control.ResetPR:
			return cleanNouns[kind][0] + " " + termtext.Escape(path)
		case control.CleanRunFiles:
			return "run files " + termtext.Escape(show(path)) + " and its " + runs.EventsSuffix
		}
		return cleanNouns[kind][0] + " " + termtext.Escape(show(path))
	}
	var b strings.Builder
	counts := map[string]int{}
	done := 0
	item := func(it control.CleanItem) {
		switch {
		case it.Kept:
			fmt.Fprintf(&b, "kept %s: %s\n", what(it.Kind, it.Path, it.Story), termtext.Escape(it.Reason))
			return
		case it.Removed && it.Kind == control.CleanTmux:
			fmt.Fprintf(&b, "killed %s (%s)\n", what(it.Kind, it.Path, it.Story), termtext.Escape(it.Reason))
		case it.Removed:
			fmt.Fprintf(&b, "removed %s (%s)\n", what(it.Kind, it.Path, it.Story), termtext.Escape(it.Reason))
		case it.Kind == control.CleanTmux:
			fmt.Fprintf(&b, "would kill %s (%s)\n", what(it.Kind, it.Path, it.Story), termtext.Escape(it.Reason))
		default:
			fmt.Fprintf(&b, "would remove %s (%s)\n", what(it.Kind, it.Path, it.Story), termtext.Escape(it.Reason))
		}
		counts[it.Kind]++
		done++
	}
	if len(res.Named) == 0 {
		// By story (the epic runners' last), each in the order of removal.
		items := slices.Clone(res.Items)
		slices.SortStableFunc(items, func(a, b control.CleanItem) int {
			last := func(it control.CleanItem) int {
				if it.Story == "" {
					return 1
				}
				return 0
			}
			return cmp.Or(cmp.Compare(last(a), last(b)), strings.Compare(a.Story, b.Story))
		})
		for _, it := range items {
			item(it)
		}
	}
	// A named story's lines, then what stays of it because it is not
	// finished with.
	for _, s := range res.Named {
		n := 0
		for _, it := range res.Items {
			if it.Story == s {
				item(it)
				n++
			}
		}
		if n == 0 {
			fmt.Fprintf(&b, "story %s: nothing to clean\n", s)
		}
		for _, l := range res.Left {
			if l.Story == s {
				fmt.Fprintf(&b, "left %s: %s\n", what(l.Kind, l.Path, l.Story), termtext.Escape(l.Reason))
			}
		}
	}
	kept := res.Kept()
	var parts []string
	for _, kind := range []string{control.CleanWorktree, control.CleanCache, control.CleanBranch, control.CleanTaskList, control.CleanRunFiles, control.CleanTmux, control.CleanShares,
		control.CleanRecord, control.ResetRemoteBranch, control.ResetPR} {
		if n := counts[kind]; n > 0 {
			parts = append(parts, termtext.Count(n, cleanNouns[kind][0], cleanNouns[kind][1]))
		}
	}
	summary := ""
	switch {
	case done == 0 && kept == 0 && len(res.Named) == 0:
		summary = "nothing to clean"
	case done == 0 && kept == 0:
	case res.DryRun && done > 0:
		summary = fmt.Sprintf("would remove %s", strings.Join(parts, ", "))
	case done > 0:
		summary = fmt.Sprintf("removed %s", strings.Join(parts, ", "))
	}
	if kept > 0 {
		summary += fmt.Sprintf("; kept %d that cannot safely go now (see above)", kept)
	}
	if res.DryRun && done > 0 && !asking {
		summary += " — run again with --yes to remove them"
	}
	if summary != "" {
		b.WriteString(strings.TrimPrefix(summary, "; ") + "\n")
	}
	if len(res.Named) == 0 {
		// What stays of the stories not finished with, each with why: a
		// story whose worktree goes may leave its branch.
		left := slices.Clone(res.Left)
		slices.SortStableFunc(left, func(a, b control.CleanLeft) int { return strings.Compare(a.Story, b.Story) })
		for _, l := range left {
			if l.Story != "" {
				fmt.Fprintf(&b, "left %s: %s\n", what(l.Kind, l.Path, l.Story), termtext.Escape(l.Reason))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
