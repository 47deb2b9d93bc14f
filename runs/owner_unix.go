//go:build unix

package runs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// ownedPrivate checks that dir is a folder (not a link) of the current
// user that no one else may write, naming the fix when it is not.
func ownedPrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a folder (a link?): remove it and run again", dir)
	case ok && int(st.Uid) != os.Getuid():
		return fmt.Errorf("%s belongs to another user (uid %d): remove it and run again", dir, st.Uid)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s may be written by other users (mode %04o): `chmod 700 %s`, then run again", dir, fi.Mode().Perm(), dir)
	}
	return nil
}

// DefaultSessionDir is the session dir when $SAGA_SESSION_DIR is not set:
// /tmp/saga-sessions-<uid>.
func DefaultSessionDir() string {
	return filepath.Join(sessionTempDir, sessionDirPrefix+strconv.Itoa(os.Geteuid()))
}
