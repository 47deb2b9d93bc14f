package filesafe

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// TempFilePattern matches the temp files of atomic writes, as a gitignore
// pattern: a story worktree never commits them.
const TempFilePattern = ".*.tmp-*"

// WriteFileAtomic writes data to path via a temp file in the same directory
// (named ".<base>.tmp-<pid>-<random>", see writeTemp), fsync, rename over
// path, fsync the directory. Readers therefore see either the old or the
// new content, never a partial file, and a crash at any point leaves path
// intact. Temp files that killed writers left in the directory are removed
// afterwards (removeStaleTemps).
//
// perm (before umask) applies to a new file; an existing file keeps its
// permission bits. A symlink at path is replaced, not written through. On any
// error before the rename the temp file is removed and path is untouched. An error from the final directory fsync is reported
// although the new content is already in place.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	keep := false
	var mode os.FileMode
	if fi, err := os.Stat(path); err == nil {
		keep, mode = true, fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, tmp, err := writeTemp(path, data, perm, keep, mode)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// Closed (and its lock dropped) only once the temp name is gone.
	defer f.Close()
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", path, err)
	}
	removeStaleTemps(filepath.Dir(path))
	return nil
}

// CreateFileAtomic is WriteFileAtomic that refuses to replace an existing
// file: it fails with an error wrapping fs.ErrExist. The complete temp file
// is hard-linked to path (link fails with EEXIST atomically, unlike a
// stat-then-rename), so of two concurrent creators exactly one wins and
// nobody ever sees a partial file. The filesystem must support hard links.
func CreateFileAtomic(path string, data []byte, perm os.FileMode) error {
	f, tmp, err := writeTemp(path, data, perm, false, 0)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer f.Close()
	linkErr := os.Link(tmp, path)
	// The temp name is only a second link to the same inode (or an orphan if
	// the link failed); dropping it leaves path as the sole name.
	rmErr := os.Remove(tmp)
	if linkErr != nil {
		return fmt.Errorf("create %s: %w", path, linkErr)
	}
	if rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
		return fmt.Errorf("create %s: remove temp: %w", path, rmErr)
	}
	if err := SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("create %s: sync directory: %w", path, err)
	}
	removeStaleTemps(filepath.Dir(path))
	return nil
}

// UpdateFile does a read-modify-write of path: it reads path (a missing file
// is passed to fn as old == nil; an existing empty file as a non-nil empty
// slice) and calls fn(old) for the new bytes. If fn returns an error nothing
// is written and that error is returned as is (fn's own error already says
// what failed). If the new bytes equal the old ones nothing is written (for a
// missing file: if fn returns nil). Otherwise the result is written with
// WriteFileAtomic (mode 0o644 for a new file).
//
// UpdateFile does not lock: the caller holds the lock covering path, or
// concurrent updates may be lost.
func UpdateFile(path string, fn func(old []byte) ([]byte, error)) error {
	old, err := readRegular(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("update %s: %w", path, err)
	}
	if !exists {
		old = nil
	}
	data, err := fn(old)
	if err != nil {
		return err
	}
	if (exists && bytes.Equal(data, old)) || (!exists && data == nil) {
		return nil
	}
	return WriteFileAtomic(path, data, 0o644)
}

// maxTempBase keeps ".<base>.tmp-<pid>-<random>" within the usual
// 255-byte name limit when base itself is near it.
const maxTempBase = 200

// tempMark separates a temp file's target name from its writer's pid and
// random suffix. Temp names start with "." and do not end in ".json", so the
// loader never mistakes one for a task.
const tempMark = ".tmp-"

// writeTemp writes data to a new temp file next to path and fsyncs it. It
// returns the file still open and holding an exclusive flock, which the
// caller closes once the temp name is renamed or removed: while the writer
// lives, the lock and the pid in the name both say so (RemoveStaleTemp). If
// keep, the temp file gets mode exactly; otherwise it is created with perm,
// subject to umask like os.WriteFile. On error nothing is left behind.
func writeTemp(path string, data []byte, perm os.FileMode, keep bool, mode os.FileMode) (*os.File, string, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	if len(base) > maxTempBase {
		base = base[:maxTempBase]
	}
	prefix := filepath.Join(dir, "."+base+tempMark+strconv.Itoa(os.Getpid())+"-")
	var (
		f    *os.File
		name string
		err  error
	)
	// O_EXCL with a random suffix: concurrent writers of the same path each
	// get their own temp file. A collision just means picking again.
	for range 100 {
		name = prefix + strconv.FormatUint(rand.Uint64(), 16)
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil {
			if lerr := lockTemp(f); lerr != nil {
				// Only a cleaner that took this pid for dead can hold it
				// (another pid namespace): leave it the name, pick another.
				_ = f.Close()
				err = fmt.Errorf("lock temp file: %w", lerr)
				continue
			}
		}
		break
	}
	if err != nil {
		return nil, "", err
	}
	fail := func(err error) (*os.File, string, error) {
		_ = f.Close()
		_ = os.Remove(name)
		return nil, "", err
	}
	if keep {
		if err := f.Chmod(mode); err != nil {
			return fail(err)
		}
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	// Without this fsync a crash after the rename could leave path naming an
	// empty or partial file (delayed allocation on ext4/xfs).
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	return f, name, nil
}

// removeStaleTemps removes the temp files in dir whose writers are gone
// (RemoveStaleTemp). It is best effort: a directory that cannot be listed
// is left as it is.
func removeStaleTemps(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	_ = d.Close()
	for _, name := range names {
		RemoveStaleTemp(dir, name)
	}
}

// SyncDir fsyncs a directory so a rename or link in it survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	// Some filesystems cannot fsync a directory at all; the rename itself has
	// happened, so that is not this write's failure.
	if syncUnsupported(err) {
		return nil
	}
	return err
}
