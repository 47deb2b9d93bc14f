//go:build !unix || portable

package filesafe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Files of a tree someone else writes — a story's worktree, which its agent
// changes — read and appended without trusting what is there: no symbolic
// link is followed below the tree's root, and only a regular file is read
// or written, reads bounded. Portable: each entry on the way is checked
// with lstat before the open, and what was opened is checked to be what
// was seen (fs_portable.go says what that cannot catch).

// ReadInside reads the regular file rel (slash-separated, relative) under
// the folder root, refusing a symbolic link anywhere below root, anything
// but a regular file, and a file over MaxFileSize, without reading it. A
// missing file gives an error wrapping fs.ErrNotExist.
func ReadInside(root, rel string) ([]byte, error) {
	p, fi, err := walkInside(root, rel)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", rel, FileTypeName(fi.Mode()))
	}
	f, err := openChecked(p, fi, os.O_RDONLY)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: err}
	}
	defer f.Close()
	src, isDir, err := readOpened(f, fi, rel, MaxFileSize, func(n int) []byte { return make([]byte, 0, n) })
	if err != nil {
		return nil, errors.New(boundedProblem(rel, isDir, err))
	}
	return src, nil
}

// AppendInside appends data to the regular file rel under root with one
// write, creating it (mode 0644 before umask) when it is missing; what
// ReadInside refuses is refused here too, before anything is written.
func AppendInside(root, rel string, data []byte) error {
	p, fi, err := walkInside(root, rel)
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		return err
	}
	var f *os.File
	if missing {
		f, err = os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			// Created, or opened through what appeared meanwhile: only a
			// regular file that is what the name now holds is written.
			now, serr := os.Lstat(p)
			if got, ferr := f.Stat(); serr != nil || ferr != nil || !now.Mode().IsRegular() || !os.SameFile(now, got) {
				f.Close()
				return fmt.Errorf("%s changed while being opened", rel)
			}
		}
	} else {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file (%s)", rel, FileTypeName(fi.Mode()))
		}
		f, err = openChecked(p, fi, os.O_WRONLY|os.O_APPEND)
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: rel, Err: PathErr(err)}
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return &fs.PathError{Op: "write", Path: rel, Err: PathErr(err)}
	}
	return nil
}

// RemoveInside removes the entry rel under root — a file, a link (never
// what it points to), a FIFO, a socket; never a folder — its folder reached
// as ReadInside reaches it. A missing entry is not an error.
func RemoveInside(root, rel string) error {
	p, fi, err := walkInside(root, rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil && fi == nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s is a folder; only files are removed here", rel)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &fs.PathError{Op: "remove", Path: rel, Err: PathErr(err)}
	}
	return nil
}

// walkInside checks every entry of rel under root with lstat: each folder
// on the way a folder and no link, the last entry no link, a regular file
// or a folder. When only the last entry is refused its fi comes with the
// error, so that RemoveInside can still remove it. A missing last entry gives its path
// and an error wrapping fs.ErrNotExist.
func walkInside(root, rel string) (string, fs.FileInfo, error) {
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return "", nil, fmt.Errorf("%q is not a plain relative path", rel)
		}
	}
	p := root
	var fi fs.FileInfo
	for i, part := range parts {
		last, sofar := i == len(parts)-1, strings.Join(parts[:i+1], "/")
		p = filepath.Join(p, part)
		var err error
		if fi, err = os.Lstat(p); err != nil {
			return p, nil, &fs.PathError{Op: "open", Path: sofar, Err: PathErr(err)}
		}
		switch t := fi.Mode(); {
		case t&fs.ModeSymlink != 0 && !last:
			return p, nil, fmt.Errorf("%s is a symbolic link; links are not followed here", sofar)
		case t&fs.ModeSymlink != 0:
			return p, fi, fmt.Errorf("%s is a symbolic link; links are not followed here", sofar)
		case !last && !t.IsDir():
			return p, nil, fmt.Errorf("%s is not a folder (%s)", sofar, FileTypeName(t))
		case last && !t.IsRegular() && !t.IsDir():
			return p, fi, fmt.Errorf("%s is not a regular file (%s)", sofar, FileTypeName(t))
		}
	}
	return p, fi, nil
}
