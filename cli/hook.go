package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/saga-ai/saga-lsp/hook"
)

// runHook is `saga-lsp hook`, the Claude Code command hook: the event
// payload comes on stdin. It always exits 0 (exit 2 would block Claude
// Code's action); problems are warnings on stderr.
func runHook(env *Env, args []string) int {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help":
			fmt.Fprintln(env.Stderr, "usage: saga-lsp hook < payload.json")
			fmt.Fprintln(env.Stderr, "Claude Code command hook for SessionStart, PreToolUse (Write|Edit|MultiEdit|NotebookEdit) and PostToolUse (TaskUpdate); reads the event payload on stdin and always exits 0.")
			return exitOK
		}
	}
	if len(args) > 0 {
		fmt.Fprintf(env.Stderr, "saga-lsp hook: arguments %q ignored; the event comes on stdin\n", args)
	}
	in := env.Stdin
	if in == nil {
		in = os.Stdin
	}
	return hook.Hook(context.Background(), in, os.Getenv, env.Stdout, env.Stderr)
}
