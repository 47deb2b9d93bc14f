//go:build unix

package control

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// TestStartWaitCancelledKeepsSession: a start whose wait is cancelled (the
// epic runner being stopped while it starts a story) returns the
// cancellation and leaves the session alone. The wait once took tmux's
// refusal of a cancelled command for the session's death and killed it:
// the worker died mid-step, without its end, and the story read failed
// rather than stopped.
func TestStartWaitCancelledKeepsSession(t *testing.T) {
	sock := testkit.TmuxServer(t)
	tm, err := FindTmux(t.Context(), func(k string) string {
		if k == runs.EnvTmuxSocket {
			return sock
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	const session = "saga-story-x-1"
	if err := tm.NewSession(t.Context(), session, t.TempDir(), nil, []string{"sh", "-c", "read line"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	st := &readmodel.Started{Story: "x", Session: session, EventsFile: filepath.Join(t.TempDir(), "none.events.jsonl")}
	if err := waitStarted(ctx, tm, st, DefaultStartWait); !errors.Is(err, context.Canceled) {
		t.Fatalf("waitStarted with its context cancelled: %v, want context.Canceled", err)
	}
	if alive, _ := tm.Panes(t.Context(), session); !alive {
		t.Fatal("the session was killed by a cancelled wait")
	}
}
