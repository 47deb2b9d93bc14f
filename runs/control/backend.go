package control

import (
	"context"

	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// Backend starts a story's worker. StartStory's contract holds for every
// implementation: the options are checked before anything starts, and
// the Started names the local events file where the run is recorded (a
// KindDispatch event names a backend other than tmux).
type Backend interface {
	Name() string
	StartStory(ctx context.Context, o RunOptions) (*readmodel.Started, error)
}

// TmuxBackend runs workers in tmux on this machine: StartStory.
type TmuxBackend struct{}

func (TmuxBackend) Name() string { return readmodel.BackendTmux }

func (TmuxBackend) StartStory(ctx context.Context, o RunOptions) (*readmodel.Started, error) {
	st, err := StartStory(ctx, o)
	if st != nil {
		st.Backend = readmodel.BackendTmux
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
