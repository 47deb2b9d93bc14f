package filesafe

import (
	"errors"
	"fmt"
	"io/fs"
)

// MaxFileSize bounds what is read and parsed: SAGA files are small documents,
// and a stray 50 MB file must not stall a check or the editor.
const MaxFileSize = 4 << 20

// ReadBounded reads a .saga file, refusing what is not a regular file or is
// over MaxFileSize without reading it. why says what is wrong and what to do.
//
// It talks to the kernel directly (open, fstat, read, close): an os.File
// would also register the descriptor with the runtime poller, which costs a
// fcntl per file and a third of the syscall time on a 22,000-file workspace.
func ReadBounded(abs, rel string) (src []byte, why string) {
	src, _, why = ReadBoundedAt(CWD, abs, rel, func(n int) []byte { return make([]byte, 0, n) }, nil)
	return src, why
}

// ErrNotRegular is wrapped by ReadRegularFile's refusal of a FIFO, a device,
// a socket or a folder; ErrTooLarge by its refusal of a file over the limit.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("too large")
)

// ReadRegularFile reads the regular file at path (a symbolic link is
// followed) of at most limit bytes. Anything else is refused without
// blocking or reading it: the open does not wait for a FIFO's writer, and
// a device like /dev/zero is never read. Errors are *fs.PathError, wrapping
// ErrNotRegular, ErrTooLarge or the system's error (fs.ErrNotExist…).
func ReadRegularFile(path string, limit int64) ([]byte, error) {
	src, _, err := readRegularAt(CWD, path, path, limit, func(n int) []byte { return make([]byte, 0, n) }, nil)
	return src, err
}

// ReadBoundedAt is ReadBounded of name relative to the folder dir (or a
// path with cwd), reading into space(n), an empty buffer of at
// least n bytes' capacity, n being the size fstat gave plus one. isDir
// says that name is a folder (why is set too). With c set, a file reached
// through a link out of the workspace is refused (openConfined).
func ReadBoundedAt(dir Folder, name, rel string, space func(n int) []byte, c *Confiner) (src []byte, isDir bool, why string) {
	src, isDir, err := readRegularAt(dir, name, rel, MaxFileSize, space, c)
	if err == nil {
		return src, false, ""
	}
	return nil, isDir, boundedProblem(rel, isDir, err)
}

// boundedProblem says what is wrong with the SAGA file rel that a bounded
// read refused with err, and what to do.
func boundedProblem(rel string, isDir bool, err error) string {
	var pe *fs.PathError
	if target, ok := IsOutside(err); ok {
		return OutsideProblem(rel, target)
	}
	switch {
	case errors.Is(err, ErrNotRegular):
		return fmt.Sprintf("%s is not a regular file; SAGA files are plain JSON files: move it out of .saga/", rel)
	case errors.Is(err, ErrTooLarge) && errors.As(err, &pe) && pe.Op == "read":
		return fmt.Sprintf("%s grew past the %d MB limit while being read", rel, MaxFileSize>>20)
	case errors.Is(err, ErrTooLarge):
		var big *sizeError
		errors.As(err, &big)
		return fmt.Sprintf("%s is %.1f MB, over the %d MB limit for SAGA files; move it out of .saga/ or split it",
			rel, float64(big.size)/(1<<20), MaxFileSize>>20)
	}
	if errors.As(err, &pe) {
		pe.Path = rel
	}
	return ReadProblem(rel, err)
}

// sizeError is ErrTooLarge with the size fstat gave.
type sizeError struct{ size int64 }

func (e *sizeError) Error() string { return fmt.Sprintf("%d bytes: too large", e.size) }
func (e *sizeError) Unwrap() error { return ErrTooLarge }

func ReadProblem(rel string, err error) string {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("cannot read %s: permission denied; fix its permissions (chmod u+r)", rel)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("cannot read %s: it is a broken link or was removed; fix or delete it", rel)
	case isLoop(err):
		return fmt.Sprintf("cannot read %s: symbolic link loop; replace the link with the file", rel)
	}
	return fmt.Sprintf("cannot read %s: %v", rel, errors.Unwrap(err))
}
