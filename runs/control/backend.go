package control

import "context"

// Where a story's worker runs. The CLI chooses per run (`run --on`); the
// epic runner is to take one the same way, so that its scheduling, holds,
// caps and resume stay the same whichever runs its stories.
const (
	BackendTmux   = "tmux"   // a detached tmux session on this machine (StartStory)
	BackendGitHub = "github" // a GitHub Actions job (runs/github)
)

// Backend starts a story's worker. StartStory's contract holds for every
// implementation: the options are checked before anything starts, and
// the Started names the local events file where the run is recorded (a
// KindDispatch event names a backend other than tmux).
type Backend interface {
	Name() string
	StartStory(ctx context.Context, o RunOptions) (*Started, error)
}

// TmuxBackend runs workers in tmux on this machine: StartStory.
type TmuxBackend struct{}

func (TmuxBackend) Name() string { return BackendTmux }

func (TmuxBackend) StartStory(ctx context.Context, o RunOptions) (*Started, error) {
	st, err := StartStory(ctx, o)
	if st != nil {
		st.Backend = BackendTmux
	}
	return st, err
}

// UnreachableError is a start that failed because a backend's service
// could not be reached (GitHub, the network): nothing is known to have
// started, and the runner tries again later instead of failing the story.
// The backend makes sure a retry never starts a story twice.
type UnreachableError struct{ Err error }

func (e *UnreachableError) Error() string { return e.Err.Error() }
func (e *UnreachableError) Unwrap() error { return e.Err }
