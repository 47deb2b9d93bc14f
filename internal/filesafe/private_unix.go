//go:build unix

package filesafe

import (
	"fmt"
	"os"
	"syscall"
)

// OwnedPrivate checks that dir is a folder (not a link) of the current
// user that no one else may write, naming the fix when it is not: a folder
// in a place every user shares (/tmp) that saga-lsp keeps its own files in.
func OwnedPrivate(dir string) error {
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

// userTag names a per-user folder in a shared place: the uid.
func userTag() string { return fmt.Sprint(os.Geteuid()) }
