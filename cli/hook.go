package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/saga-ai/saga-lsp/hook"
)

const hookSynopsis = "hook < payload.json"

// runHook is `saga-lsp hook`, the Claude Code command hook: the event
// payload comes on stdin. Exit 2 blocks Claude Code's action, so the hook
// uses it only to refuse a TaskCompleted whose check failed; a usage
// mistake is a warning on stderr, not exit 2.
func runHook(env *Env, args []string) int {
	c := newCmdLine("hook")
	pos, err := c.parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return c.fail(env, err)
	}
	if err == nil {
		err = wantArgs(pos)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "saga-lsp hook: %v (ignored: the event comes on stdin)\n", err)
	}
	in := env.Stdin
	if in == nil {
		in = os.Stdin
	}
	return hook.Run(in, env.Getenv, env.Stdout, env.Stderr)
}
