//go:build linux && !portable

package filesafe

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// replaceNoFlush puts the complete temp file tmp in place of the regular
// file base, both in the folder dir, without the data write-back ext4 (and
// btrfs) start when a rename replaces a file (auto_da_alloc): the two
// names are swapped with one renameat2(RENAME_EXCHANGE) — readers see the
// old file or the new one, as with a rename — and the old file, now at tmp,
// is removed. That write-back is an implicit, partial fsync: for a write
// made without fsync on purpose (Beneath.NoSync) it cost more than the
// whole write (≈ 2 ms on a busy disk; docs/hooks.md#the-hook-program).
// done is false when the file system cannot swap (or base is gone): the
// caller renames then.
func replaceNoFlush(dir *os.File, tmp, base string) (done bool, err error) {
	fd := int(dir.Fd())
	if err := unix.Renameat2(fd, tmp, fd, base, unix.RENAME_EXCHANGE); err != nil {
		return false, nil
	}
	if err := unix.Unlinkat(fd, tmp, 0); err != nil {
		// base became a folder after it was checked (unlink refuses one):
		// swap back, so the folder keeps its name, and fail.
		if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
			if unix.Renameat2(fd, tmp, fd, base, unix.RENAME_EXCHANGE) == nil {
				return false, &os.PathError{Op: "replace", Path: base, Err: unix.EISDIR}
			}
		}
		return true, &os.PathError{Op: "remove", Path: tmp, Err: err}
	}
	return true, nil
}
