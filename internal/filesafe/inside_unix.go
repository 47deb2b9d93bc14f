//go:build unix && !portable

package filesafe

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// Files of a tree someone else writes — a story's worktree, which its agent
// changes — read and appended without trusting what is there: no symbolic
// link is followed below the tree's root (at the file or at any folder on
// the way: each is opened relative to the one before with O_NOFOLLOW, so a
// link swapped in cannot redirect the open outside), a FIFO never blocks the
// open, and only a regular file is read or written, reads bounded.

// ReadInside reads the regular file rel (slash-separated, relative) under
// the folder root, refusing a symbolic link anywhere below root, anything
// but a regular file, and a file over MaxFileSize, without reading it. A
// missing file gives an error wrapping fs.ErrNotExist.
func ReadInside(root, rel string) ([]byte, error) {
	fd, err := openInside(root, rel, unix.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if err := regular(fd, rel); err != nil {
		return nil, err
	}
	src, isDir, err := readOpened(fd, rel, MaxFileSize, func(n int) []byte { return make([]byte, 0, n) })
	if err != nil {
		return nil, errors.New(boundedProblem(rel, isDir, err))
	}
	return src, nil
}

// AppendInside appends data to the regular file rel under root with one
// write, creating it (mode 0644 before umask) when it is missing; what
// ReadInside refuses is refused here too, before anything is written.
func AppendInside(root, rel string, data []byte) error {
	fd, err := openInside(root, rel, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT, 0o644)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := regular(fd, rel); err != nil {
		return err
	}
	// O_NONBLOCK stays set; it changes nothing for a regular file.
	for len(data) > 0 {
		n, err := IgnoringEINTR(func() (int, error) { return unix.Write(fd, data) })
		if err != nil {
			return &fs.PathError{Op: "write", Path: rel, Err: err}
		}
		data = data[n:]
	}
	return nil
}

// RemoveInside removes the entry rel under root — a file, a link (never
// what it points to), a FIFO, a socket; never a folder — its folder reached
// as ReadInside reaches it. A missing entry is not an error.
func RemoveInside(root, rel string) error {
	dirRel, name := path.Split(rel)
	if name == "" || name == "." || name == ".." {
		return fmt.Errorf("%q is not a plain relative path", rel)
	}
	var dir int
	var err error
	if dirRel == "" {
		dir, err = IgnoringEINTR(func() (int, error) {
			return unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		})
	} else {
		dir, err = openInside(root, strings.TrimSuffix(dirRel, "/"), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	}
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if err := unix.Unlinkat(dir, name, 0); err != nil && err != unix.ENOENT {
		return &fs.PathError{Op: "remove", Path: rel, Err: err}
	}
	return nil
}

// regular refuses the open file fd unless it is a regular file.
func regular(fd int, rel string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: rel, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("%s is not a regular file (%s)", rel, fileType(uint32(st.Mode)))
	}
	return nil
}

// openInside opens rel under root with flags (plus O_NOFOLLOW, O_NONBLOCK
// and O_CLOEXEC), each folder on the way opened with O_NOFOLLOW relative to
// the one before. root itself is trusted, links in its own path included.
func openInside(root, rel string, flags int, perm uint32) (int, error) {
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return -1, fmt.Errorf("%q is not a plain relative path", rel)
		}
	}
	dir, err := IgnoringEINTR(func() (int, error) {
		return unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	for i, p := range parts {
		last := i == len(parts)-1
		how := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if last {
			how = flags | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
		}
		next, err := IgnoringEINTR(func() (int, error) { return unix.Openat(dir, p, how, perm) })
		if err != nil {
			err = insideProblem(dir, p, strings.Join(parts[:i+1], "/"), last, err)
		}
		unix.Close(dir)
		if err != nil {
			return -1, err
		}
		dir = next
	}
	return dir, nil
}

// insideProblem says why name (at rel) could not be opened in dir: a
// symbolic link or a FIFO without a reader is named as such.
func insideProblem(dir int, name, rel string, last bool, err error) error {
	var st unix.Stat_t
	if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		switch t := st.Mode & unix.S_IFMT; {
		case t == unix.S_IFLNK:
			return fmt.Errorf("%s is a symbolic link; links are not followed here", rel)
		case !last && t != unix.S_IFDIR:
			return fmt.Errorf("%s is not a folder (%s)", rel, fileType(uint32(st.Mode)))
		case last && t != unix.S_IFREG && t != unix.S_IFDIR:
			return fmt.Errorf("%s is not a regular file (%s)", rel, fileType(uint32(st.Mode)))
		}
	}
	return &fs.PathError{Op: "open", Path: rel, Err: err}
}

// fileType names a file type of a stat mode for an error message.
func fileType(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return "a symbolic link"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFDIR:
		return "a folder"
	case unix.S_IFREG:
		return "a regular file"
	}
	return "of an unknown kind"
}
