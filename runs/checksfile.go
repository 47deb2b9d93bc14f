package runs

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/store"
)

// ChecksManifest is what counts for a story's tasks: their checks read with
// git at the fork point (or the earliest story-branch commit adding the
// task), by runs/verify. The worker writes it once per session (ChecksFile),
// before any agent ran, where the agent's sandbox cannot write; the hook
// reads it instead of running git. Its format is the run protocol's: the
// hook program settles a completion without checks from it alone
// (docs/hooks.md#the-hook-program).
type ChecksManifest struct {
	Story     string                `json:"story"`
	ForkPoint string                `json:"forkPoint"`
	Tasks     map[string]TaskChecks `json:"tasks"`
}

// TaskChecks are one task's checks as they count.
type TaskChecks struct {
	Commands []string `json:"commands,omitempty"`
	// TimeoutSeconds is per check.
	TimeoutSeconds float64 `json:"timeoutSeconds"`
	// From is the commit the task file was read at.
	From string `json:"from"`
	// Limits bound each check (zero ones: the defaults).
	Limits store.CheckLimits `json:"limits,omitzero"`
	// Protection adjusts the story's protected files (runs/verify's protect.go).
	Protection store.Protection `json:"protection,omitzero"`
}

// Timeout is the per-check timeout.
func (t TaskChecks) Timeout() time.Duration {
	if t.TimeoutSeconds <= 0 {
		return store.DefaultCheckTimeout
	}
	return time.Duration(t.TimeoutSeconds * float64(time.Second))
}

// Budget is what the task's checks may take in all: the sum of their
// timeouts.
func (t TaskChecks) Budget() time.Duration {
	return time.Duration(len(t.Commands)) * t.Timeout()
}

// WriteChecksManifest stores m at path, atomically.
func WriteChecksManifest(path string, m *ChecksManifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return filesafe.WriteFileAtomic(path, append(data, '\n'), 0o644)
}

// ReadChecksManifest reads a manifest WriteChecksManifest stored.
func ReadChecksManifest(path string) (*ChecksManifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m ChecksManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}
