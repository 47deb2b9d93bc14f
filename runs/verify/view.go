package verify

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/git"
)

// The protected run's tree, at the worktree's own path: Go's build cache
// (and others) key on paths, so a copy elsewhere would build everything
// cold. Only the folders holding a file that differs are replaced — each
// by a mirror folder whose files are hard links of the worktree's (copies
// across file systems), R's version of the files restored, without the
// added test files — bound over the folder in the check's sandbox, its
// subfolders bound back from the worktree. Building one costs a link per
// file of those folders. The mirrors live in saga-lsp's folder of the
// repository's git dir, which no agent's sandbox writes.

// View is how the protected run's tree differs from the worktree's.
type View struct {
	Dir     string              // the worktree
	Restore map[string]git.Blob // R's version of the protected files the story modified or deleted
	Hide    []string            // the test files the story added
}

// Empty tells whether the protected run would see the worktree itself: it
// is then skipped (its result would be the full run's).
func (v View) Empty() bool { return len(v.Restore) == 0 && len(v.Hide) == 0 }

// Restored lists the files the protected run has R's version of, and those
// it leaves out, sorted.
func (v View) Restored() (restored, hidden []string) {
	for p := range v.Restore {
		restored = append(restored, p)
	}
	slices.Sort(restored)
	hidden = slices.Sorted(slices.Values(v.Hide))
	return restored, hidden
}

// mounted is a view made on disk: the bubblewrap arguments that put it in
// place over the worktree (after the worktree's own bind), and the folder
// to remove afterwards.
type mounted struct {
	args []string
	base string
	// dir is where an unconfined check runs: a full mirror of the
	// worktree ("" under bubblewrap).
	dir string
}

func (m *mounted) remove() {
	if m != nil && m.base != "" {
		os.RemoveAll(m.base)
	}
}

// viewsDir is where mirrors are made: saga-lsp's folder in the git dir of
// the repository holding dir.
func viewsDir(dir string) (string, error) {
	state, err := filesafe.StateDir(dir)
	if err != nil {
		return "", err
	}
	d := filepath.Join(state, "views")
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", err
	}
	return d, nil
}

// mount makes the view's mirror folders and the binds that put them in
// place. whole mirrors the whole worktree instead (for an unconfined
// check, which runs in the mirror at its own path).
func (v View) mount(whole bool) (*mounted, error) {
	parent, err := viewsDir(v.Dir)
	if err != nil {
		return nil, fmt.Errorf("make the protected view: %w", err)
	}
	base, err := os.MkdirTemp(parent, "view-")
	if err != nil {
		return nil, fmt.Errorf("make the protected view: %w", err)
	}
	m := &mounted{base: base}
	if err := v.build(m, whole); err != nil {
		m.remove()
		return nil, fmt.Errorf("make the protected view: %w", err)
	}
	return m, nil
}

func (v View) build(m *mounted, whole bool) error {
	hide := map[string]bool{}
	for _, p := range v.Hide {
		hide[p] = true
	}
	// The folders that differ: each changed file's deepest folder that
	// exists in the worktree (a folder the story deleted is made inside
	// it), the top for a whole mirror.
	differ := map[string]bool{}
	if whole {
		differ["."] = true
	}
	for _, p := range append(slices.Collect(maps.Keys(v.Restore)), v.Hide...) {
		d := path.Dir(p)
		for d != "." && !isRealDir(filepath.Join(v.Dir, filepath.FromSlash(d))) {
			d = path.Dir(d)
		}
		differ[d] = true
	}
	folders := slices.Sorted(maps.Keys(differ))
	slices.SortStableFunc(folders, func(a, b string) int { return depth(a) - depth(b) })
	for i, d := range folders {
		mirror := filepath.Join(m.base, fmt.Sprint(i))
		real := filepath.Join(v.Dir, filepath.FromSlash(d))
		var back []string
		if whole {
			mirror = filepath.Join(m.base, "tree")
			if err := mirrorTree(real, mirror, d, hide); err != nil {
				return err
			}
			m.dir = mirror
		} else {
			var err error
			if back, err = mirrorFolder(real, mirror, d, hide); err != nil {
				return err
			}
			m.args = append(m.args, "--bind", mirror, real)
			for _, s := range back {
				p := filepath.Join(real, s)
				m.args = append(m.args, "--bind", p, p)
			}
		}
		for rel, b := range v.Restore {
			if !whole && nearest(rel, folders) != d {
				continue
			}
			inner := rel
			if d != "." {
				inner = strings.TrimPrefix(rel, d+"/")
			}
			// The mirror holds the story's links as links: a restore is
			// written below it, never through one out of it.
			if err := restoreBeneath(mirror, inner, b); err != nil {
				return err
			}
		}
		if whole {
			break
		}
	}
	return nil
}

// restoreBeneath writes R's version b of the file inner (slash-separated)
// into the mirror, in place of the hard link of the story's version.
func restoreBeneath(mirror, inner string, b git.Blob) error {
	m, err := filesafe.OpenBeneath(mirror)
	if err != nil {
		return err
	}
	defer m.Close()
	if d := path.Dir(inner); d != "." {
		if err := m.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := m.Remove(inner); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	mode := os.FileMode(0o644)
	if b.Exec {
		mode = 0o755
	}
	return m.WriteNew(inner, b.Data, mode)
}

// nearest is the deepest of folders that holds rel.
func nearest(rel string, folders []string) string {
	best := ""
	for _, f := range folders {
		if within(rel, f) && (best == "" || depth(f) > depth(best)) {
			best = f
		}
	}
	return best
}

// within tells whether rel lies in folder d ("." is the top).
func within(rel, d string) bool {
	return d == "." || strings.HasPrefix(rel, d+"/")
}

func depth(d string) int {
	if d == "." {
		return 0
	}
	return strings.Count(d, "/") + 1
}

// mirrorFolder makes mirror a copy of the folder real (rel from the
// worktree's top): its files as hard links, its links as links, its
// subfolders empty (the caller binds them back); the files in hide left
// out. It returns the subfolders' names.
func mirrorFolder(real, mirror, rel string, hide map[string]bool) (subs []string, err error) {
	if err := os.MkdirAll(mirror, 0o755); err != nil {
		return nil, err
	}
	des, err := os.ReadDir(real)
	if err != nil {
		return nil, err
	}
	for _, de := range des {
		name := de.Name()
		if hide[path.Join(rel, name)] {
			continue
		}
		src, dst := filepath.Join(real, name), filepath.Join(mirror, name)
		switch t := de.Type(); {
		case t.IsDir():
			if err := os.Mkdir(dst, 0o755); err != nil {
				return nil, err
			}
			subs = append(subs, name)
		case t&fs.ModeSymlink != 0:
			if target, err := os.Readlink(src); err == nil {
				os.Symlink(target, dst)
			}
		case t.IsRegular():
			if err := linkOrCopy(src, dst); err != nil {
				return nil, err
			}
		}
	}
	return subs, nil
}

// mirrorTree mirrors the whole tree below real into mirror (hard links),
// leaving out hide. A .git (the repository's, where the mirrors live) is
// a link to the real one, never mirrored.
func mirrorTree(real, mirror, rel string, hide map[string]bool) error {
	subs, err := mirrorFolder(real, mirror, rel, hide)
	if err != nil {
		return err
	}
	for _, s := range subs {
		if s == ".git" {
			dst := filepath.Join(mirror, s)
			if err := os.Remove(dst); err != nil {
				return err
			}
			if err := os.Symlink(filepath.Join(real, s), dst); err != nil {
				return err
			}
			continue
		}
		r := path.Join(rel, s)
		if rel == "." {
			r = s
		}
		if err := mirrorTree(filepath.Join(real, s), filepath.Join(mirror, s), r, hide); err != nil {
			return err
		}
	}
	return nil
}

// linkOrCopy hard-links src at dst, or copies it where a link is refused
// (the two on different file systems, fs.protected_hardlinks, a file
// system without links).
func linkOrCopy(src, dst string) error {
	err := os.Link(src, dst)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func isRealDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}
