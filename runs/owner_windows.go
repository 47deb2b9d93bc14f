package runs

import (
	"os"
	"path/filepath"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
)

// ownedPrivate is filesafe.OwnedPrivate (docs/platforms.md#windows).
func ownedPrivate(dir string) error { return filesafe.OwnedPrivate(dir) }

// DefaultSessionDir is the session dir when $SAGA_SESSION_DIR is not set:
// saga-sessions in the user's own temp folder (%TEMP%, under the profile).
func DefaultSessionDir() string {
	return filepath.Join(os.TempDir(), sessionDirPrefix[:len(sessionDirPrefix)-1])
}
