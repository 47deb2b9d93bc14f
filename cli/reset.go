package cli

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/github"
)

const resetSynopsis = "reset <story> [--root DIR] [--yes] [--remote] [--format text|json]"

// runReset discards a story's attempt (docs/commands.md#reset): it lists
// what goes, asks at a terminal (--yes in scripts), then removes it. The
// pushed branch and the pull request go only with --remote, confirmed
// separately at a terminal.
func runReset(env *Env, args []string) int {
	c := newCmdLine("reset")
	root := c.String("root", "", rootUsage)
	yes := c.Bool("yes", false, "remove what is listed without asking (without it, reset lists and asks at a terminal)")
	remote := c.Bool("remote", false, "also delete the pushed branch story/<story> and close its pull request (gh)")
	format := c.String("format", "text", "output `FORMAT`: text or json ({\"dryRun\",\"items\":[…],\"left\":[…],\"warnings\":[…]}, as clean's)")
	pos, err := c.parse(args)
	if err := cmp.Or(err, wantArgs(pos, "<story>"), oneOf("format", *format, "text", "json")); err != nil {
		return c.fail(env, err)
	}
	r, err := resolveRoot(env, *root, false)
	if err != nil {
		return c.fail(env, err)
	}
	ctx := context.Background()
	o := control.ResetOptions{Setup: github.NewSetup(r, env.Getenv), Story: pos[0], Remote: *remote}
	terminal := *format == "text" && isTerminal(env.Stdin)
	if !*yes || (*remote && terminal) {
		// List first; at a terminal, ask (the remote side on its own).
		res, err := control.Reset(ctx, o)
		if err != nil {
			return resetFailed(c, env, err)
		}
		if !terminal {
			return writeReset(c, env, r, res, *format, false) // its last line: run again with --yes
		}
		if code := writeReset(c, env, r, res, *format, true); code != exitOK || len(res.Items) == 0 {
			return code
		}
		in := bufio.NewReader(env.Stdin)
		if !*yes && !confirm(env, in, fmt.Sprintf("reset story %s: remove what is listed above? [y/N] ", pos[0]), "y") {
			fmt.Fprintln(env.Stdout, "nothing removed")
			return exitOK
		}
		if *remote && !confirm(env, in, fmt.Sprintf("also delete origin's story/%s and close its pull request? type the story's name to confirm: ", pos[0]), pos[0]) {
			o.Remote = false
			fmt.Fprintln(env.Stdout, "the pushed branch and the pull request stay")
		}
	}
	o.Yes = true
	res, err := control.Reset(ctx, o)
	if err != nil {
		return resetFailed(c, env, err)
	}
	return writeReset(c, env, r, res, *format, false)
}

// confirm asks a question at the terminal; the answer must be want.
func confirm(env *Env, in *bufio.Reader, question, want string) bool {
	fmt.Fprint(env.Stdout, question)
	line, _ := in.ReadString('\n')
	return strings.EqualFold(strings.TrimSpace(line), want)
}

func writeReset(c *cmdLine, env *Env, root string, res *control.ResetResult, format string, asking bool) int {
	for _, w := range res.Warnings {
		fmt.Fprintf(env.Stderr, "saga-lsp reset: warning: %s\n", w)
	}
	var err error
	if format == "json" {
		err = printJSON(env.Stdout, res)
	} else {
		err = writeClean(env.Stdout, res, func(p string) string { return shownPath(env, root, p) }, asking)
	}
	if err != nil {
		return c.fail(env, fmt.Errorf("write output: %w", err))
	}
	if res.Kept() > 0 {
		return exitFindings
	}
	return exitOK
}

// resetFailed: a refused reset (a live worker, a dependent built on the
// branch) exits 1, naming why; a usage or I/O problem 2.
func resetFailed(c *cmdLine, env *Env, err error) int {
	var re *control.ResetRefusedError
	if errors.As(err, &re) {
		fmt.Fprintf(env.Stderr, "saga-lsp reset: %v\n", err)
		return exitFindings
	}
	return c.fail(env, err)
}
