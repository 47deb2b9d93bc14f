package cli

import (
	"cmp"
	"fmt"
	"io"
	"strings"
)

const manSynopsis = "man"

// runMan prints saga-lsp(1) in roff (`saga-lsp man | man -l -`), from the
// command table and the commands' flags as --help knows them
// (describe.go); `make install` installs it and `make dist` puts it in
// every release archive (docs/commands.md#man).
func runMan(env *Env, args []string) int {
	c := newCmdLine("man")
	pos, err := c.parse(args)
	if err := cmp.Or(err, wantArgs(pos)); err != nil {
		return c.fail(env, err)
	}
	manpage(env.Stdout, describeCommands(), version())
	return exitOK
}

// roff escapes text for a roff line: backslashes, hyphens of flags,
// characters past ASCII (as \[uXXXX]: troff reads bytes), and a leading
// dot or quote that would read as a request.
func roff(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r > 0x7e:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	s = b.String()
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

func manpage(w io.Writer, cmds []described, version string) {
	fmt.Fprintf(w, ".TH SAGA\\-LSP 1 \"\" \"saga-lsp %s\" \"User Commands\"\n", roff(version))
	fmt.Fprint(w, `.SH NAME
saga\-lsp \- SAGA's language server, story runner for Claude Code, and command line
.SH SYNOPSIS
.B saga\-lsp
.I command
[\fIflags\fR] [\fIargs\fR]
.br
.B saga\-lsp
(on a pipe: the language server)
.SH DESCRIPTION
saga\-lsp makes the epics, stories and tasks that SAGA keeps as JSON under
.I .saga/
first\-class in editors (a language server over stdio), checks them in
terminals and CI, and runs stories end to end with Claude Code: each story in
its own git worktree and branch, headless
.B claude \-p
runs, a completion gate that runs each task's checks confined, and a pull
request at the end; an epic's stories run in dependency order.
Flags may stand anywhere among the arguments.
.SH COMMANDS
`)
	for _, c := range cmds {
		for _, line := range strings.Split(c.synopsis, "\n") {
			fmt.Fprintf(w, ".TP\n.B saga\\-lsp %s\n", roff(line))
		}
		fmt.Fprintf(w, "%s.\n", roff(capitalize(c.summary)))
		if len(c.flags) == 0 {
			continue
		}
		fmt.Fprint(w, ".RS\n")
		for _, f := range c.flags {
			fmt.Fprintf(w, ".TP\n.B \\-\\-%s", roff(f.name))
			if f.value != "" {
				fmt.Fprintf(w, " \\fI%s\\fR", roff(f.value))
			}
			fmt.Fprintf(w, "\n%s\n", roff(f.usage))
		}
		fmt.Fprint(w, ".RE\n")
	}
	fmt.Fprint(w, `.SH EXIT STATUS
0: success. 1: findings (check), a failed check (verify), a failed story or
epic run. 2: a usage or I/O error. A run that was stopped or timed out has its
own status, listed in the documentation of run and follow.
.SH FILES
.TP
.I .saga/
the workspace: stories/<id>/story.json, its tasks as <task>.json and journal.md;
epics/<id>.json or epics/<id>/epic.json. In git: the source of truth.
.TP
.I .saga/worktrees/<story>/
a story's worktree during its run (branch story/<story>).
.TP
.I .claude/settings.json
where saga\-lsp install registers the hook.
.SH SEE ALSO
.BR claude (1),
.BR git (1),
.BR tmux (1),
.BR gh (1).
The repository's docs/ folder: docs/commands.md (every command), docs/format.md
(the files), docs/worker.md (story runs), docs/security.md (what runs are
confined to).
`)
}
