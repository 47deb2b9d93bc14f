package filesafe_test

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// Links planted in a folder saga-lsp writes (file and folder, absolute and
// relative, a link to a link) never lead a write out of it: each write is
// refused or lands below the folder, and nothing outside changes. Shared by
// the callers' tests through PlantLinks-like cases of their own.
func TestBeneathNeverWritesThroughALinkOut(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need a privilege on Windows")
	}
	type plant struct {
		name string
		// link makes the links in dir, given outside (a folder with a
		// file "f" in it); rel is then written.
		link func(dir, outside string)
		rel  string
	}
	rel := func(dir, outside string) string { r, _ := filepath.Rel(dir, outside); return r }
	plants := []plant{
		{"folder, absolute", func(d, o string) { os.Symlink(o, filepath.Join(d, "a")) }, "a/f"},
		{"folder, relative", func(d, o string) { os.Symlink(rel(d, o), filepath.Join(d, "a")) }, "a/f"},
		{"folder, link to a link", func(d, o string) {
			os.Symlink(o, filepath.Join(d, "b"))
			os.Symlink("b", filepath.Join(d, "a"))
		}, "a/f"},
		{"folder deeper, relative climbing", func(d, o string) {
			os.MkdirAll(filepath.Join(d, "x", "y"), 0o755)
			os.Symlink(filepath.Join("..", "..", rel(d, o)), filepath.Join(d, "x", "y", "a"))
		}, "x/y/a/f"},
		{"file, absolute", func(d, o string) { os.Symlink(filepath.Join(o, "f"), filepath.Join(d, "f")) }, "f"},
		{"file, relative", func(d, o string) { os.Symlink(filepath.Join(rel(d, o), "f"), filepath.Join(d, "f")) }, "f"},
		{"file, link to a link", func(d, o string) {
			os.Symlink(filepath.Join(o, "f"), filepath.Join(d, "g"))
			os.Symlink("g", filepath.Join(d, "f"))
		}, "f"},
	}
	writes := map[string]func(dir, rel string) error{
		"WriteFileBeneath": func(dir, rel string) error { return filesafe.WriteFileBeneath(dir, rel, []byte("planted"), 0o644) },
		"UpdateFileBeneath": func(dir, rel string) error {
			return filesafe.UpdateFileBeneath(dir, rel, func(old []byte) ([]byte, error) { return append(old, "planted"...), nil })
		},
		// Without fsync (the hook's status sync): on Linux an existing
		// regular file is replaced by a swap, a link still by a rename.
		"WriteFileAtomic NoSync": func(dir, rel string) error {
			b, err := filesafe.OpenBeneath(dir)
			if err != nil {
				return err
			}
			defer b.Close()
			b.NoSync = true
			return b.WriteFileAtomic(rel, []byte("planted"), 0o644)
		},
		"MkdirAll": func(dir, rel string) error {
			b, err := filesafe.OpenBeneath(dir)
			if err != nil {
				return err
			}
			defer b.Close()
			return b.MkdirAll(rel+"/sub", 0o755)
		},
	}
	for _, p := range plants {
		for wname, write := range writes {
			t.Run(p.name+"/"+wname, func(t *testing.T) {
				dir, outside := t.TempDir(), t.TempDir()
				os.WriteFile(filepath.Join(outside, "f"), []byte("outside"), 0o644)
				p.link(dir, outside)
				before := testkit.TreeSnapshot(t, outside)
				err := write(dir, p.rel)
				if after := testkit.TreeSnapshot(t, outside); after != before {
					t.Fatalf("the folder outside changed (err %v):\n%s\nwas\n%s", err, after, before)
				}
				if err == nil {
					// Allowed only when it replaced the link at its end, inside.
					fi, lerr := os.Lstat(filepath.Join(dir, filepath.FromSlash(p.rel)))
					if lerr != nil || fi.Mode()&fs.ModeSymlink != 0 {
						t.Fatalf("%s said nothing, and %s is %v %v", wname, p.rel, fi, lerr)
					}
				}
			})
		}
	}
}

// A link that stays inside the folder is followed as before.
func TestBeneathFollowsALinkInside(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need a privilege on Windows")
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "real"), 0o755)
	os.Symlink("real", filepath.Join(dir, "a"))
	if err := filesafe.WriteFileBeneath(dir, "a/f", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "real", "f")); err != nil || string(b) != "x" {
		t.Fatalf("through the link inside: %q %v", b, err)
	}
	// An existing file keeps its mode; no temp file is left.
	os.Chmod(filepath.Join(dir, "real", "f"), 0o600)
	if err := filesafe.UpdateFileBeneath(dir, "a/f", func(old []byte) ([]byte, error) { return append(old, 'y'), nil }); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(dir, "real", "f"))
	if b, _ := os.ReadFile(filepath.Join(dir, "real", "f")); string(b) != "xy" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("updated: %q %v", b, fi.Mode())
	}
	if s := testkit.TreeSnapshot(t, dir); strings.Contains(s, ".tmp-") {
		t.Fatalf("a temp file was left:\n%s", s)
	}
	if err := filesafe.WriteFileBeneath(dir, "../x", nil, 0o644); err == nil {
		t.Fatal("a path climbing out was written")
	}
}

// A write without fsync replaces an existing file as a whole (on Linux by
// swapping the names, docs/hooks.md#the-hook-program): a reader that opened
// the old file keeps reading it, the name shows the new one, the mode is
// kept and no temp file is left. A folder at the name is never replaced.
func TestBeneathNoSyncReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "s", "t.json")
	os.MkdirAll(filepath.Dir(name), 0o755)
	os.WriteFile(name, []byte("old"), 0o600)
	reader, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	b, err := filesafe.OpenBeneath(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.NoSync = true
	for _, content := range []string{"new", "newer"} {
		if err := b.WriteFileAtomic("s/t.json", []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(name)
		if got, _ := os.ReadFile(name); string(got) != content || fi.Mode().Perm() != 0o600 {
			t.Fatalf("after writing %q: %q, mode %v", content, got, fi.Mode())
		}
	}
	if old, _ := io.ReadAll(reader); string(old) != "old" {
		t.Fatalf("the old file, open before the writes, reads %q", old)
	}
	if s := testkit.TreeSnapshot(t, dir); strings.Contains(s, ".tmp-") {
		t.Fatalf("a temp file was left:\n%s", s)
	}
	os.MkdirAll(filepath.Join(dir, "s", "d", "sub"), 0o755)
	if err := b.WriteFileAtomic("s/d", []byte("x"), 0o644); err == nil {
		t.Fatal("a folder was replaced by a file")
	}
	if fi, err := os.Stat(filepath.Join(dir, "s", "d", "sub")); err != nil || !fi.IsDir() {
		t.Fatalf("the folder is gone: %v", err)
	}
}
