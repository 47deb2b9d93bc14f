package runs

import (
	"fmt"
	"os"
	"path/filepath"
)

// ownedPrivate checks that dir is a folder, not a link. Windows keeps a
// user's temp and cache folders private by their ACLs, which Go's mode
// bits do not show; owner and mode are not checked here
// (docs/platforms.md#windows).
func ownedPrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder (a link?): remove it and run again", dir)
	}
	return nil
}

// DefaultSessionDir is the session dir when $SAGA_SESSION_DIR is not set:
// saga-sessions in the user's own temp folder (%TEMP%, under the profile).
func DefaultSessionDir() string {
	return filepath.Join(os.TempDir(), sessionDirPrefix[:len(sessionDirPrefix)-1])
}
