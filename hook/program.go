package hook

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// Main is saga-lsp-hook's whole program (cmd/saga-lsp-hook): the hook
// alone, linked without the language server, the dashboard and the CLI so
// that it starts in about half the time `saga-lsp hook` does — Claude Code
// starts it at every tool call (docs/hooks.md#the-hook-program). Its one
// argument is "hook", as in the command lines saga-lsp registers.
func Main(args []string, stdin io.Reader, env func(string) string, stdout, stderr io.Writer) int {
	if len(args) != 1 || args[0] != "hook" {
		fmt.Fprintf(stderr, "saga-lsp-hook: arguments %q ignored: it takes `hook`, and the event on stdin\n", strings.Join(args, " "))
	}
	return Run(stdin, env, stdout, stderr)
}

// Run is the hook as a program runs it, `saga-lsp hook` and saga-lsp-hook
// alike: the event payload on stdin, never typed at a terminal.
func Run(stdin io.Reader, env func(string) string, stdout, stderr io.Writer) int {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintln(stderr, "saga-lsp hook: stdin is a terminal; Claude Code pipes the event payload in (`saga-lsp hook --help`)")
		return 0
	}
	return Hook(context.Background(), stdin, env, stdout, stderr)
}
