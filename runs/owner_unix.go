//go:build unix

package runs

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
)

// ownedPrivate is filesafe.OwnedPrivate: the one check of a user's private
// folder in a shared place.
func ownedPrivate(dir string) error { return filesafe.OwnedPrivate(dir) }

// DefaultSessionDir is the session dir when $SAGA_SESSION_DIR is not set:
// /tmp/saga-sessions-<uid>.
func DefaultSessionDir() string {
	return filepath.Join(sessionTempDir, sessionDirPrefix+strconv.Itoa(os.Geteuid()))
}
