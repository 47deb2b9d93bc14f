//go:build unix && !portable

package filesafe

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The Unix side of the store's file access: descriptors and *at calls, so
// that what is checked is what is read (a link or FIFO swapped in between
// cannot redirect or block a read). fs_portable.go is the same by path.

// folder is an open folder's descriptor, or cwd: a name relative to it is
// a path.
type Folder = int

// cwd stands for "no folder": names are paths.
const CWD Folder = unix.AT_FDCWD

// OpenFolder opens the folder at abs; linked says abs itself is a symbolic
// link (then followed). Not following first: a folder that is no link (the
// common case) needs no more checking.
func OpenFolder(abs string) (dir Folder, linked bool, err error) {
	dir, err = openat(CWD, abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW)
	linked = err == unix.ELOOP || (err == unix.ENOTDIR && isLink(abs))
	if linked {
		dir, err = openat(CWD, abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	}
	return dir, linked, err
}

func CloseFolder(dir Folder) { unix.Close(dir) }

// isLoop: err is a symbolic link loop.
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }

// IsNotDir: err says a path's parent is not a folder.
func IsNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// syncUnsupported: a folder's fsync failed because the filesystem cannot
// fsync folders at all.
func syncUnsupported(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, errors.ErrUnsupported)
}

// lockTemp takes the flock a temp file's writer holds while it lives
// (RemoveStaleTemp).
func lockTemp(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) }

// readRegularAt is the one bounded reader of a regular file: name relative
// to the folder dir (or a path with unix.AT_FDCWD), at most limit bytes,
// read into space(n) (see ReadBoundedAt), confined by c when set (rel is
// then name's path from the root). isDir says name is a folder.
func readRegularAt(dir int, name, rel string, limit int64, space func(n int) []byte, c *Confiner) (src []byte, isDir bool, err error) {
	// O_NONBLOCK: a FIFO must not block the open; fstat then refuses it.
	fd, err := openConfined(dir, name, rel, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, c)
	var st unix.Stat_t
	if err != nil {
		if _, ok := IsOutside(err); ok {
			return nil, false, err
		}
		// A folder that cannot be opened is still a folder.
		isDir = unix.Fstatat(dir, name, &st, 0) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
		return nil, isDir, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	return readOpened(fd, name, limit, space)
}

// readOpened is readRegularAt's read of the file open as fd (named name in
// errors): refused when not a regular file or over limit, else read whole.
func readOpened(fd int, name string, limit int64, space func(n int) []byte) (src []byte, isDir bool, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, false, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, st.Mode&unix.S_IFMT == unix.S_IFDIR,
			&fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w (%s)", ErrNotRegular, fileType(uint32(st.Mode)))}
	}
	if st.Size > limit {
		return nil, false, &fs.PathError{Op: "open", Path: name, Err: &sizeError{size: st.Size}}
	}
	// The size fstat gave, plus one byte to notice a file that grew
	// meanwhile; a short read of a regular file is its end.
	src = space(int(st.Size) + 1)
	for {
		if len(src) == cap(src) {
			if int64(len(src)) > limit {
				return nil, false, &fs.PathError{Op: "read", Path: name, Err: &sizeError{size: int64(len(src))}}
			}
			src = append(src, make([]byte, 4096)...)[:len(src)]
		}
		n, err := IgnoringEINTR(func() (int, error) { return unix.Read(fd, src[len(src):cap(src)]) })
		if err != nil {
			return nil, false, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return src, false, nil
		}
		src = src[:len(src)+n]
		if len(src) < cap(src) {
			return src, false, nil
		}
	}
}

// isLink: path's last component is a symbolic link.
func isLink(path string) bool {
	var st unix.Stat_t
	return unix.Lstat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

func IgnoringEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}

// CheckFd returns the real path of the open file fd (whose path is abs)
// and an *errOutside when it lies outside the workspace. The kernel's own
// name for the descriptor is used, so a link swapped between a check and
// the open cannot slip through; where /proc is not mounted, abs resolved
// and checked to be the same file as fd stands in for it.
func (c Confiner) CheckFd(fd int, abs string) (string, error) {
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		if real, err = realPath(abs); err != nil {
			return "", err
		}
		var a, b unix.Stat_t
		if unix.Fstat(fd, &a) != nil || unix.Stat(real, &b) != nil || a.Dev != b.Dev || a.Ino != b.Ino {
			return "", fmt.Errorf("%s changed while being opened", abs)
		}
	}
	if !c.inside(real) {
		return real, &errOutside{target: real}
	}
	return real, nil
}

// openConfined opens name relative to the folder dir (or a path with
// unix.AT_FDCWD) with flags; with c set, a symbolic link is followed only
// when the file it leads to lies inside the workspace (an *errOutside
// otherwise). rel is the file's path from the root. Relative to a folder
// already checked, the common case — no link — costs one open: without
// following first; a path from the working directory may cross a link
// anywhere, so what it opens is always checked.
func openConfined(dir int, name, rel string, flags int, c *Confiner) (int, error) {
	if c == nil {
		return openat(dir, name, flags)
	}
	if dir != unix.AT_FDCWD {
		fd, err := openat(dir, name, flags|unix.O_NOFOLLOW)
		if err != unix.ELOOP {
			return fd, err
		}
	}
	// A link (or a loop, which this open reports as such).
	fd, err := openat(dir, name, flags)
	if err != nil {
		return fd, err
	}
	if _, err := c.CheckFd(fd, filepath.Join(c.lex, filepath.FromSlash(rel))); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// openat is unix.Openat retried on EINTR (no closure: it runs once per
// file of a load).
func openat(dir int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// readRegular reads a whole regular file. Anything else — a FIFO, a
// device, a folder — is refused without blocking: the open does not wait
// for a FIFO's writer, so a hostile file cannot hang a hook or a writer.
func readRegular(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	return io.ReadAll(f)
}

// RemoveStaleTemp removes dir/name when it is the temp file of an atomic
// write whose writer is gone, and reports whether it did. Gone means both:
// the pid in the name is not a live process, and the flock the writer held
// while writing is free (the kernel drops it when its holder dies). A pid
// alone could be another namespace's; a free lock alone could be a writer
// between creating and locking. Never by age: a slow writer is still a
// writer. Anything else — another name, not a regular file, any error — is
// left alone.
func RemoveStaleTemp(dir, name string) bool {
	i := strings.LastIndex(name, tempMark)
	if !strings.HasPrefix(name, ".") || i < 0 {
		return false
	}
	pidText, _, ok := strings.Cut(name[i+len(tempMark):], "-")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil || pid <= 0 {
		return false // not a name writeTemp makes (or made by an older version)
	}
	if ProcessAlive(pid) {
		return false // the writer lives
	}
	path := filepath.Join(dir, name)
	// O_NONBLOCK: a FIFO given such a name must not block the opener.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st, now unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return false // its lock is held: a writer lives
	}
	// Still the same file under that name (held locked while removed).
	if unix.Lstat(path, &now) != nil || now.Dev != st.Dev || now.Ino != st.Ino {
		return false
	}
	return os.Remove(path) == nil
}

// OpenRegular opens path with flag (and perm, when it creates the file)
// without waiting for a FIFO's writer and, unless follow, without
// following a link at its end; anything but a regular file is refused
// (ErrNotRegular). For files others may have put in the way: events,
// outputs, an env file named by Claude Code.
func OpenRegular(path string, flag int, perm fs.FileMode, follow bool) (*os.File, error) {
	how := flag | unix.O_NONBLOCK
	if !follow {
		how |= unix.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, how, perm)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return f, nil
}

// Stamp is a regular file as one lstat saw it (fs_portable.go: by path):
// its identity, size and modification time, as git's index and make judge
// a file. A rewrite of the same size that sets the old time back (cp -p,
// touch -r) is not seen until the file changes again.
type Stamp struct {
	dev, ino uint64
	size     int64
	mtime    unix.Timespec
}

// Same reports whether two stamps are of the same file, unchanged.
func (s Stamp) Same(o Stamp) bool { return s == o }

// StampAt is the stamp of the file name in dir (not followed), and whether
// it can be trusted at now: false when it is not a regular file, cannot
// be stat'ed, or changed too lately (Settled).
func StampAt(dir Folder, name string, now time.Time) (Stamp, bool) {
	var st unix.Stat_t
	_, err := IgnoringEINTR(func() (int, error) { return 0, unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) })
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return Stamp{}, false
	}
	return Stamp{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, mtime: st.Mtim}, Settled(now, time.Unix(st.Mtim.Unix()))
}
