package readmodel

import (
	"cmp"

	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs"
)

// Where a story's worker runs. The CLI chooses per run (`run --on`); the
// epic runner is to take one the same way, so that its scheduling, holds,
// caps and resume stay the same whichever runs its stories.
const (
	BackendTmux   = "tmux"   // a detached tmux session on this machine (StartStory)
	BackendGitHub = "github" // a GitHub Actions job (runs/github)
)

// SessionDirOf is dir, else the environment's session dir, refused when
// it is not the user's alone (runs.CheckSessionDir): its files decide what
// is signalled, shown and checked.
func SessionDirOf(dir string, env func(string) string) (string, error) {
	if dir == "" {
		dir = runs.SessionDir(env)
	}
	return dir, runs.CheckSessionDir(dir)
}

// esc and first are control's own (status_text.go, status.go), spelled
// again here so that the moved derivations read as before.
func esc(s string) string { return termtext.Escape(s) }

func first(vals ...string) string { return cmp.Or(vals...) }
