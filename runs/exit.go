package runs

// Exit codes of a worker and of an epic runner (docs/commands.md): the
// same four, so a runner reads its workers' codes as its own.
const (
	ExitCompleted = 0 // the story (every story) completed
	ExitFailed    = 1 // a story failed, or the run could not run
	ExitLimit     = 2 // a limit stopped it: max cycles or time, no progress, the cost cap
	ExitBlocked   = 3 // a story is blocked, or held
)
