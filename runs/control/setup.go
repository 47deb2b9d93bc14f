package control

import (
	"context"
	"os"
	"sync"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// Setup is one workspace root's run configuration, resolved once per
// process — per command in the CLI and the epic runner, per server in the
// language server, per root in the dashboard — and handed down to every
// start, stop and status (docs/architecture.md#one-setup-per-root), so
// that no operation reads the environment, finds tmux or builds a backend
// again. runs/github.NewSetup builds it with its GitHub Actions backend: the
// one construction site of the backends (test/architecture
// TestOneConstructionSite). A literal Setup works too (tests): what it
// leaves unset is found at each use, as before.
type Setup struct {
	Root string // the workspace root (holds .saga/)
	// Env is the process's environment (os.Getenv; a test's own): where
	// the programs a run drives are found (runs.Program) and what a worker
	// is handed.
	Env        func(string) string
	SessionDir string // runs.SessionDir(Env); each use checks it is the user's alone
	// Actions is the GitHub Actions backend's state from GitHub
	// (runs/github.Runs); nil: GitHub is not asked.
	Actions readmodel.Actions

	tmux *foundTmux // shared by copies: tmux is found once
}

// foundTmux keeps the tmux a Setup found. A missing tmux is not kept: it
// may be installed while a language server lives.
type foundTmux struct {
	mu sync.Mutex
	t  *Tmux
}

// NewSetup is the root's Setup without a GitHub backend; the faces take
// runs/github.NewSetup's, which adds it.
func NewSetup(root string, env func(string) string) Setup {
	if env == nil {
		env = os.Getenv
	}
	return Setup{Root: root, Env: env, SessionDir: runs.SessionDir(env), tmux: &foundTmux{}}
}

// FindTmux is the setup's tmux, found on its first use (FindTmux) and
// then kept; the error wraps ErrNoTmux when tmux is missing.
func (s Setup) FindTmux(ctx context.Context) (*Tmux, error) {
	if s.tmux == nil {
		return FindTmux(ctx, s.Env)
	}
	s.tmux.mu.Lock()
	defer s.tmux.mu.Unlock()
	if s.tmux.t != nil {
		return s.tmux.t, nil
	}
	t, err := FindTmux(ctx, s.Env)
	if err == nil {
		s.tmux.t = t
	}
	return t, err
}
