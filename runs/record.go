package runs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/saga-ai/saga-lsp/store"
)

// Record is the durable end of a story's last run, kept under the
// repository's git dir (<git common dir>/saga-lsp/runs/<story>.json): the
// session dir may be a tmpfs that a reboot empties, and the epic runner must
// still know that a story completed (its statuses are committed on its
// branch too).
type Record struct {
	Version  int       `json:"version,omitempty"` // FormatVersion; 0 in the records of earlier releases
	Story    string    `json:"story"`
	Session  string    `json:"session"`
	Status   string    `json:"status"` // the worker.end status
	ExitCode int       `json:"exitCode"`
	Ended    time.Time `json:"ended"`
	// Branch, Worktree (relative to the checkout) and PR are the run's:
	// story.json kept them before issue 23 (readers still take them from
	// there for such runs).
	Branch   string `json:"branch,omitempty"`
	Worktree string `json:"worktree,omitempty"`
	Base     string `json:"base,omitempty"`
	// Reference is the run's reference commit R (a full hash): the tip of
	// the base (for a stacked story, of the epic's base) when the run
	// started, which the worker made the story branch's fork point. The
	// definitions and checks that count are read at it, never at a ref an
	// agent could have moved. Empty in records of saga-lsp before issue 22.
	Reference string `json:"reference,omitempty"`
	PR        string `json:"pr,omitempty"`
	// Protected are the protected files the run's end found changed that
	// keep the PR a draft (docs/worker.md#protected-files).
	Protected []ProtectedFile `json:"protected,omitempty"`
	Cost      float64         `json:"cost,omitempty"`
	DryRun    bool            `json:"dryRun,omitempty"`
}

// recordDir holds the run records of the repository holding root: inside
// its git dir, which no story's sandbox may write (docs/security.md).
func recordDir(root string) (string, error) {
	locks, err := store.LockDir(root)
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(locks), "runs"), nil
}

// trustedRecordDir is recordDir when it is the user's folder that no one
// else may write (a record there decides which stories an epic runs).
func trustedRecordDir(root string) (string, error) {
	dir, err := recordDir(root)
	if err != nil {
		return "", err
	}
	if err := ownedPrivate(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("run records: %w", err)
	}
	return dir, nil
}

// WriteRecord stores a story's record (atomically, replacing the last one).
func WriteRecord(root string, r Record) error {
	if !store.ValidCanonical(r.Story) {
		return fmt.Errorf("invalid story name %q", r.Story)
	}
	dir, err := trustedRecordDir(root)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("run record: %w", err)
	}
	r.Version = FormatVersion
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return store.WriteFileAtomic(filepath.Join(dir, r.Story+".json"), append(data, '\n'), 0o644)
}

// ReadRecord returns a story's record; ok is false when there is none (or it
// does not parse: a record is a cache of what the branch also says).
func ReadRecord(root, story string) (r Record, ok bool) {
	if !store.ValidCanonical(story) {
		return r, false
	}
	dir, err := trustedRecordDir(root)
	if err != nil {
		return r, false
	}
	data, err := os.ReadFile(filepath.Join(dir, story+".json"))
	if errors.Is(err, fs.ErrNotExist) || err != nil {
		return r, false
	}
	if json.Unmarshal(data, &r) != nil || r.Story != story {
		return Record{}, false
	}
	return r, true
}
