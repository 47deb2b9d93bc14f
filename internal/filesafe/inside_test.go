//go:build unix

package filesafe_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
)

// A tree someone else writes: nothing below its root is followed, nothing
// but a regular file is read or appended, nothing blocks, reads are
// bounded.
func TestInside(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "rc")
	insideMust(t, os.WriteFile(target, []byte("original\n"), 0o644))
	insideMust(t, os.MkdirAll(filepath.Join(root, "d", "s"), 0o755))
	insideMust(t, os.WriteFile(filepath.Join(root, "d", "s", "ok.md"), []byte("hello\n"), 0o644))
	insideMust(t, os.Symlink(target, filepath.Join(root, "d", "s", "link.md")))
	insideMust(t, os.Symlink(filepath.Join(outside, "new"), filepath.Join(root, "d", "s", "dangling.md")))
	insideMust(t, os.Symlink("/dev/zero", filepath.Join(root, "d", "s", "zero.md")))
	insideMust(t, syscall.Mkfifo(filepath.Join(root, "d", "s", "fifo.md"), 0o644))
	insideMust(t, os.Symlink(outside, filepath.Join(root, "d", "out")))
	insideMust(t, os.WriteFile(filepath.Join(outside, "rc2"), []byte("x"), 0o644))
	insideMust(t, os.WriteFile(filepath.Join(root, "big.md"), make([]byte, filesafe.MaxFileSize+1), 0o644))

	if got, err := filesafe.ReadInside(root, "d/s/ok.md"); err != nil || string(got) != "hello\n" {
		t.Errorf("read ok.md: %q %v", got, err)
	}
	insideMust(t, filesafe.AppendInside(root, "d/s/ok.md", []byte("more\n")))
	insideMust(t, filesafe.AppendInside(root, "d/s/new.md", []byte("new\n")))
	if got, _ := os.ReadFile(filepath.Join(root, "d", "s", "ok.md")); string(got) != "hello\nmore\n" {
		t.Errorf("after append: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "d", "s", "new.md")); string(got) != "new\n" {
		t.Errorf("created: %q", got)
	}
	if _, err := filesafe.ReadInside(root, "d/s/missing.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	for rel, want := range map[string]string{
		"d/s/link.md":     "is a symbolic link",
		"d/s/dangling.md": "is a symbolic link",
		"d/s/zero.md":     "is a symbolic link",
		"d/s/fifo.md":     "not a regular file (a FIFO)",
		"d/out/rc2":       "d/out is a symbolic link",
		"d/s":             "not a regular file (a folder)",
		"big.md":          "over the 4 MB limit",
		"../x":            "not a plain relative path",
		"/etc/passwd":     "not a plain relative path",
	} {
		if _, err := filesafe.ReadInside(root, rel); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("read %s: %v, want %q", rel, err, want)
		}
		if rel == "big.md" {
			continue
		}
		if err := filesafe.AppendInside(root, rel, []byte("pwned\n")); err == nil {
			t.Errorf("append %s: no error", rel)
		}
	}
	// A FIFO with a reader opens, but is still refused before any write.
	r, err := os.OpenFile(filepath.Join(root, "d", "s", "fifo.md"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	insideMust(t, err)
	defer r.Close()
	if err := filesafe.AppendInside(root, "d/s/fifo.md", []byte("x")); err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("append to a read FIFO: %v", err)
	}
	// Removing takes the link, never what it points to, and never a folder.
	for _, rel := range []string{"d/s/link.md", "d/s/fifo.md", "d/out/rc2", "d/s/gone.md"} {
		err := filesafe.RemoveInside(root, rel)
		if wantErr := rel == "d/out/rc2"; (err != nil) != wantErr {
			t.Errorf("remove %s: %v", rel, err)
		}
	}
	if err := filesafe.RemoveInside(root, "d/s"); err == nil {
		t.Error("a folder was removed")
	}
	for _, rel := range []string{"d/s/link.md", "d/s/fifo.md"} {
		if _, err := os.Lstat(filepath.Join(root, rel)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s not removed: %v", rel, err)
		}
	}
	if got, _ := os.ReadFile(target); string(got) != "original\n" {
		t.Errorf("written through a link: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(outside, "new")); err == nil {
		t.Error("a dangling link's target was created")
	}
	if got, err := os.ReadFile(filepath.Join(outside, "rc2")); string(got) != "x" {
		t.Errorf("written or removed through a linked folder: %q %v", got, err)
	}
}

func insideMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
