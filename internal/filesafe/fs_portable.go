//go:build !unix || portable

package filesafe

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// The portable side of the store's file access (Windows; Linux and macOS
// built with -tags portable, which is how CI tests it): the same checks as
// fs_unix.go, made by path. What it cannot promise is listed in
// docs/platforms.md#what-the-portable-build-does-not-catch: a link or a FIFO
// swapped in between the check and the open is not caught (the open then
// follows it, or waits for a FIFO's writer); Windows has no FIFOs in its
// file system.

// folder is a folder's path, or cwd: a name relative to it is a path.
type Folder = string

// cwd stands for "no folder": names are paths.
const CWD Folder = ""

// at is name relative to dir.
func at(dir Folder, name string) string {
	if dir == CWD {
		return name
	}
	return filepath.Join(dir, name)
}

// OpenFolder checks that abs is a folder; linked says abs itself is a
// symbolic link (then followed).
func OpenFolder(abs string) (dir Folder, linked bool, err error) {
	fi, err := os.Lstat(abs)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		linked = true
		fi, err = os.Stat(abs)
	}
	if err != nil {
		return CWD, linked, PathErr(err)
	}
	if !fi.IsDir() {
		return CWD, linked, fmt.Errorf("%s (%s)", errNotFolder, FileTypeName(fi.Mode()))
	}
	return abs, linked, nil
}

var errNotFolder = errors.New("not a folder")

func CloseFolder(Folder) {}

// PathErr is the system's error inside a *fs.PathError, which callers
// wrap again with the name they know.
func PathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// isLoop: err is a symbolic link loop. Without the errno (syscall is not
// used here) the system's own words tell it: Linux's ELOOP and
// filepath.EvalSymlinks's.
func isLoop(err error) bool {
	s := err.Error()
	return strings.Contains(s, "too many levels of symbolic links") || strings.Contains(s, "too many links")
}

// IsNotDir: err says a path's parent is not a folder (ENOTDIR on Unix;
// Windows reports a missing path instead).
func IsNotDir(err error) bool {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return false
	}
	fi, serr := os.Stat(filepath.Dir(pe.Path))
	return serr == nil && !fi.IsDir()
}

// syncUnsupported: a folder's fsync failed because it cannot be done:
// Windows does not flush folders (its file systems journal the rename).
func syncUnsupported(err error) bool {
	return runtime.GOOS == "windows" || errors.Is(err, errors.ErrUnsupported)
}

// lockTemp: a temp file is judged by its writer's pid alone here
// (RemoveStaleTemp).
func lockTemp(*os.File) error { return nil }

// CheckFd returns the real path of the folder dir (whose path is abs) and
// an *errOutside when it lies outside the workspace.
func (c Confiner) CheckFd(dir Folder, abs string) (string, error) {
	real, err := realPath(abs)
	if err != nil {
		return "", err
	}
	if !c.inside(real) {
		return real, &errOutside{target: real}
	}
	return real, nil
}

// readRegularAt is the one bounded reader of a regular file: name relative
// to the folder dir (or a path with cwd), at most limit bytes, read into
// space(n) (see ReadBoundedAt), confined by c when set (rel is then name's
// path from the root). isDir says name is a folder. What is not a regular
// file is refused before it is opened (a FIFO would block the open).
func readRegularAt(dir Folder, name, rel string, limit int64, space func(n int) []byte, c *Confiner) (src []byte, isDir bool, err error) {
	path := at(dir, name)
	if c != nil {
		// In a folder already checked only a link needs checking; a path
		// from the working directory may cross one anywhere.
		fi, lerr := os.Lstat(path)
		if dir == CWD || (lerr == nil && fi.Mode()&fs.ModeSymlink != 0) {
			if real, err := realPath(path); err == nil && !c.inside(real) {
				return nil, false, &errOutside{target: real}
			}
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, false, &fs.PathError{Op: "open", Path: name, Err: PathErr(err)}
	}
	f, err := openChecked(path, fi, os.O_RDONLY)
	if err != nil {
		return nil, fi.IsDir(), &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer f.Close()
	return readOpened(f, fi, name, limit, space)
}

// openChecked opens path, which stat said is fi, with flag: anything but a
// regular file is refused before the open, and a file that is not fi once
// open (swapped meanwhile) after it.
func openChecked(path string, fi fs.FileInfo, flag int) (*os.File, error) {
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w (%s)", ErrNotRegular, FileTypeName(fi.Mode()))
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, PathErr(err)
	}
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) || !now.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s changed while being opened", path)
	}
	return f, nil
}

// readOpened reads the regular file f (fi) of at most limit bytes into
// space(n).
func readOpened(f *os.File, fi fs.FileInfo, name string, limit int64, space func(n int) []byte) (src []byte, isDir bool, err error) {
	if fi.Size() > limit {
		return nil, false, &fs.PathError{Op: "open", Path: name, Err: &sizeError{size: fi.Size()}}
	}
	// The size stat gave, plus one byte to notice a file that grew
	// meanwhile; a short read of a regular file is its end.
	src = space(int(fi.Size()) + 1)
	for {
		if len(src) == cap(src) {
			if int64(len(src)) > limit {
				return nil, false, &fs.PathError{Op: "read", Path: name, Err: &sizeError{size: int64(len(src))}}
			}
			src = append(src, make([]byte, 4096)...)[:len(src)]
		}
		n, err := f.Read(src[len(src):cap(src)])
		src = src[:len(src)+n]
		if err == io.EOF || (err == nil && n == 0) {
			return src, false, nil
		}
		if err != nil {
			return nil, false, &fs.PathError{Op: "read", Path: name, Err: PathErr(err)}
		}
		if len(src) < cap(src) {
			return src, false, nil
		}
	}
}

// readRegular reads a whole regular file (a link is followed); anything
// else is refused without being opened.
func readRegular(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	f, err := openChecked(path, fi, os.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	return io.ReadAll(f)
}

// RemoveStaleTemp removes dir/name when it is the temp file of an atomic
// write whose writer is gone: the pid in its name is not a live process
// (there is no flock here to tell a writer in another pid namespace).
// Anything else — another name, not a regular file, any error — is left
// alone.
func RemoveStaleTemp(dir, name string) bool {
	i := strings.LastIndex(name, tempMark)
	if !strings.HasPrefix(name, ".") || i < 0 {
		return false
	}
	pidText, _, ok := strings.Cut(name[i+len(tempMark):], "-")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil || pid <= 0 || ProcessAlive(pid) {
		return false
	}
	path := filepath.Join(dir, name)
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return os.Remove(path) == nil
}

// OpenRegular opens path with flag (and perm, when it creates the file)
// and, unless follow, not through a link at its end; anything but a
// regular file is refused (ErrNotRegular) before it is opened.
func OpenRegular(path string, flag int, perm fs.FileMode, follow bool) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if !follow {
			return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("is a symbolic link")}
		}
		fi, err = os.Stat(path)
	}
	switch {
	case err == nil:
		f, err := openChecked(path, fi, flag)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return f, nil
	case !errors.Is(err, fs.ErrNotExist) || flag&os.O_CREATE == 0:
		return nil, err
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	// Created, or opened through what appeared meanwhile: only a regular
	// file (not reached through a link, unless follow) is kept.
	got, err := f.Stat()
	now, lerr := os.Lstat(path)
	if err != nil || lerr != nil || !got.Mode().IsRegular() || (!follow && !os.SameFile(got, now)) {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return f, nil
}

// Stamp is a regular file as one lstat saw it, by path: its identity,
// size and modification time (fs_unix.go).
type Stamp struct{ fi fs.FileInfo }

// Same reports whether two stamps are of the same file, unchanged.
func (s Stamp) Same(o Stamp) bool {
	return s.fi != nil && o.fi != nil && os.SameFile(s.fi, o.fi) &&
		s.fi.ModTime().Equal(o.fi.ModTime()) && s.fi.Size() == o.fi.Size()
}

// StampAt is the stamp of the file name in dir (not followed), and whether
// it can be trusted at now: false when it is not a regular file, cannot
// be stat'ed, or changed too lately (Settled).
func StampAt(dir Folder, name string, now time.Time) (Stamp, bool) {
	fi, err := os.Lstat(at(dir, name))
	if err != nil || !fi.Mode().IsRegular() {
		return Stamp{}, false
	}
	return Stamp{fi}, Settled(now, fi.ModTime())
}
