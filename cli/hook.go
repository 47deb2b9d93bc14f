package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/saga-ai/saga-lsp/hook"
	"github.com/saga-ai/saga-lsp/hook/gate"
	"github.com/saga-ai/saga-lsp/runs"
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
	return hook.Run(in, env.Getenv, env.Stdout, env.Stderr, gate.Check)
}

// runHookProgram prints the program a hook command should run for this
// saga-lsp: the saga-lsp-hook of the same build beside it, else itself
// (runs.HookProgram). The Claude Code plugin's bin/saga-lsp-run asks it
// once and remembers the answer (docs/hooks.md#the-hook-program).
func runHookProgram(env *Env, args []string) int {
	if len(args) != 0 {
		return mainUsageError(env, "__hook-program takes no arguments")
	}
	self, err := runs.SelfPath(env.Getenv)
	if err != nil {
		fmt.Fprintf(env.Stderr, "saga-lsp __hook-program: %v\n", err)
		return exitUsage
	}
	fmt.Fprintln(env.Stdout, runs.HookProgram(self))
	return exitOK
}
