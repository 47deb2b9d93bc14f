package cli

import (
	"github.com/saga-ai/saga-lsp/runs/agentsim"
)

// runAgent is the hidden `__agent` command: the simulated headless Claude
// Code run that `worker --dry-run` starts in place of claude. It takes
// claude's flags and walks the task list through the same hooks.
func runAgent(env *Env, args []string) int {
	return agentsim.Main(args, env.Getenv, env.Stdin, env.Stdout, env.Stderr, agentsim.ScriptAll)
}
