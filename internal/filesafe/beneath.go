package filesafe

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// Writes into a folder someone else can shape — a story's caches, which its
// agent and checks write; a story's worktree; a workspace a repository
// brought — never follow a link out of that folder (docs/security.md#writes-that-never-follow-a-link-out).
// Every name is resolved by os.Root: one component at a time, relative to
// an open descriptor (a handle on Windows) of the folder, a link followed
// only while it stays below the folder (an absolute link never), so a link
// planted before the write, or swapped in during it, cannot lead the write
// outside. Every write saga-lsp makes as the user into such a folder goes
// through Beneath; this file is its one home.

// Beneath is an open folder whose writes stay below it.
type Beneath struct {
	r *os.Root
	// NoSync leaves out the atomic writes' fsyncs, and on Linux the
	// write-back a rename over a file starts (replaceNoFlush): for a cache
	// whose readers check what they read (npm its integrities), where 2
	// fsyncs a file would triple a seed's time, and for a copy whose source
	// is elsewhere (the hook's status sync). Readers still see the old file
	// or the new one; a crash may lose the write or leave the file empty.
	NoSync bool
}

// OpenBeneath opens the folder dir (its own path is trusted, links in it
// included: it is saga-lsp's to choose).
func OpenBeneath(dir string) (*Beneath, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	return &Beneath{r: r}, nil
}

// Close releases the folder's descriptor.
func (b *Beneath) Close() error { return b.r.Close() }

// Dir is the folder's path as opened.
func (b *Beneath) Dir() string { return b.r.Name() }

// local is rel (slash-separated) as os.Root takes it; an absolute path or
// one climbing out is refused before anything is opened.
func (b *Beneath) local(rel string) (string, error) {
	if rel == "" || path.IsAbs(rel) || filepath.IsAbs(rel) || !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", fmt.Errorf("%q is not a path inside %s", rel, b.Dir())
	}
	return filepath.FromSlash(rel), nil
}

// MkdirAll creates the folder rel and its parents below the folder.
func (b *Beneath) MkdirAll(rel string, perm fs.FileMode) error {
	p, err := b.local(rel)
	if err != nil {
		return err
	}
	if err := b.r.MkdirAll(p, perm); err != nil {
		return fmt.Errorf("create %s in %s: %w", rel, b.Dir(), err)
	}
	return nil
}

// Lstat is the entry rel itself (a link at its end not followed).
func (b *Beneath) Lstat(rel string) (fs.FileInfo, error) {
	p, err := b.local(rel)
	if err != nil {
		return nil, err
	}
	return b.r.Lstat(p)
}

// Exists: something (a link included) is at rel; an error when rel cannot
// be looked at (a link on the way leads out of the folder).
func (b *Beneath) Exists(rel string) (bool, error) {
	_, err := b.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// ReadFile reads the regular file rel of at most max bytes; anything but a
// regular file is refused (ErrNotRegular).
func (b *Beneath) ReadFile(rel string, max int64) ([]byte, error) {
	p, err := b.local(rel)
	if err != nil {
		return nil, err
	}
	// O_NONBLOCK: a FIFO fails the open or is refused below, never waited on.
	f, err := b.r.OpenFile(p, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: ErrNotRegular}
	}
	if fi.Size() > max {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: &sizeError{size: fi.Size()}}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = &fs.PathError{Op: "read", Path: rel, Err: &sizeError{size: int64(len(data))}}
	}
	return data, err
}

// WriteFileAtomic is the function WriteFileAtomic below the folder: data written
// to a temp file next to rel, fsynced and renamed over rel (a link at rel is
// replaced, never written through; an existing file keeps its mode).
func (b *Beneath) WriteFileAtomic(rel string, data []byte, perm fs.FileMode) error {
	_, err := b.WriteFrom(rel, perm, func(w io.Writer) (int64, error) {
		n, err := w.Write(data)
		return int64(n), err
	})
	return err
}

// WriteFrom is WriteFileAtomic of what fill writes; fill's error leaves rel
// as it was. It returns fill's count.
func (b *Beneath) WriteFrom(rel string, perm fs.FileMode, fill func(io.Writer) (int64, error)) (int64, error) {
	p, err := b.local(rel)
	if err != nil {
		return 0, err
	}
	// The file's folder opened once (below the folder, as every name is):
	// the temp file, the rename, the fsync and the sweep are then one name
	// away from it.
	dir, base := filepath.Split(p)
	in := b.r
	if dir != "" {
		if in, err = b.r.OpenRoot(dirOrDot(dir)); err != nil {
			return 0, fmt.Errorf("write %s in %s: %w", rel, b.Dir(), err)
		}
		defer in.Close()
	}
	mode, keep := perm, false
	if fi, err := in.Lstat(base); err == nil && fi.Mode().IsRegular() {
		mode, keep = fi.Mode().Perm(), true
	}
	short := base
	if len(short) > maxTempBase {
		short = short[:maxTempBase]
	}
	prefix := "." + short + tempMark + strconv.Itoa(os.Getpid()) + "-"
	var f *os.File
	var tmp string
	for range 100 {
		tmp = prefix + strconv.FormatUint(rand.Uint64(), 16)
		f, err = in.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil && lockTemp(f) != nil {
			_ = f.Close() // only a cleaner holds a new temp's lock: pick another
			continue
		}
		break
	}
	if err != nil {
		return 0, fmt.Errorf("write %s in %s: %w", rel, b.Dir(), err)
	}
	defer f.Close() // its lock kept until the temp name is gone
	fail := func(err error) (int64, error) {
		_ = in.Remove(tmp)
		return 0, fmt.Errorf("write %s in %s: %w", rel, b.Dir(), err)
	}
	if keep {
		if err := f.Chmod(mode); err != nil {
			return fail(err)
		}
	}
	n, err := fill(f)
	if err == nil && !b.NoSync {
		err = f.Sync()
	}
	if err != nil {
		return fail(err)
	}
	// The folder, opened once: for the swap, its fsync and the sweep.
	d, derr := in.Open(".")
	if derr == nil {
		defer d.Close()
	}
	replaced := false
	if b.NoSync && keep && derr == nil {
		if replaced, err = replaceNoFlush(d, tmp, base); err != nil {
			return fail(err)
		}
	}
	if !replaced {
		if err := in.Rename(tmp, base); err != nil {
			return fail(err)
		}
	}
	if !b.NoSync && derr == nil {
		if err := d.Sync(); err != nil && !syncUnsupported(err) {
			return n, fmt.Errorf("write %s in %s: sync directory: %w", rel, b.Dir(), err)
		}
	}
	if derr == nil {
		removeStaleTempsOf(in, d)
	}
	return n, nil
}

// CreateFileAtomic is the function CreateFileAtomic below the folder: the
// complete temp file hard-linked at rel, so an existing entry (a link
// included) is never replaced and fails with an error wrapping fs.ErrExist.
func (b *Beneath) CreateFileAtomic(rel string, data []byte, perm fs.FileMode) error {
	p, err := b.local(rel)
	if err != nil {
		return err
	}
	dir, base := filepath.Split(p)
	in := b.r
	if dir != "" {
		if in, err = b.r.OpenRoot(dirOrDot(dir)); err != nil {
			return fmt.Errorf("create %s in %s: %w", rel, b.Dir(), err)
		}
		defer in.Close()
	}
	short := base
	if len(short) > maxTempBase {
		short = short[:maxTempBase]
	}
	// Locked while it exists, as every temp file of an atomic write: a
	// sweeper removes only a dead writer's (removeStaleTempsIn).
	tmp := "." + short + tempMark + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(rand.Uint64(), 16)
	f, err := in.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err == nil && lockTemp(f) != nil {
		f.Close()
		_ = in.Remove(tmp)
		err = errors.New("its temp file is locked by another process")
	}
	if err != nil {
		return fmt.Errorf("create %s in %s: %w", rel, b.Dir(), err)
	}
	defer f.Close()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = in.Link(tmp, base)
	}
	_ = in.Remove(tmp)
	if err != nil {
		return fmt.Errorf("create %s in %s: %w", rel, b.Dir(), err)
	}
	if d, err := in.Open("."); err == nil {
		_ = d.Sync()
		d.Close()
	}
	removeStaleTempsIn(in) // what killed writers left here
	return nil
}

// WriteNew creates the file rel (refusing any entry there) with data and
// perm, without the atomic write's fsyncs: for a scratch folder of
// saga-lsp's that a crash may leave half made.
func (b *Beneath) WriteNew(rel string, data []byte, perm fs.FileMode) error {
	p, err := b.local(rel)
	if err != nil {
		return err
	}
	f, err := b.r.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("create %s in %s: %w", rel, b.Dir(), err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s in %s: %w", rel, b.Dir(), err)
	}
	return nil
}

// Remove removes the entry rel (a link itself, never what it names; an
// empty folder).
func (b *Beneath) Remove(rel string) error {
	p, err := b.local(rel)
	if err != nil {
		return err
	}
	return b.r.Remove(p)
}

// Chmod changes the mode of rel (a link on the way followed only inside
// the folder; os.Root's race at the last name applies it to a link swapped
// in, never to what the link names).
func (b *Beneath) Chmod(rel string, mode fs.FileMode) error {
	p, err := b.local(rel)
	if err != nil {
		return err
	}
	return b.r.Chmod(p, mode)
}

// UpdateFile is the function UpdateFile below the folder (a file over MaxFileSize
// is refused).
func (b *Beneath) UpdateFile(rel string, fn func(old []byte) ([]byte, error)) error {
	old, err := b.ReadFile(rel, MaxFileSize)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("update %s in %s: %w", rel, b.Dir(), err)
	}
	if !exists {
		old = nil
	}
	data, err := fn(old)
	if err != nil {
		return err
	}
	if (exists && string(data) == string(old)) || (!exists && data == nil) {
		return nil
	}
	return b.WriteFileAtomic(rel, data, 0o644)
}

// removeStaleTempsIn removes the temp files in the folder in whose writers
// are gone: a dead pid in the name and, where there are flocks, the lock
// free (as RemoveStaleTemp).
func removeStaleTempsIn(in *os.Root) {
	d, err := in.Open(".")
	if err != nil {
		return
	}
	defer d.Close()
	removeStaleTempsOf(in, d)
}

// removeStaleTempsOf is removeStaleTempsIn with the folder's descriptor d
// already open (read from its start).
func removeStaleTempsOf(in *os.Root, d *os.File) {
	names, _ := d.Readdirnames(-1)
	for _, name := range names {
		i := strings.LastIndex(name, tempMark)
		if !strings.HasPrefix(name, ".") || i < 0 {
			continue
		}
		pidText, _, ok := strings.Cut(name[i+len(tempMark):], "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || ProcessAlive(pid) {
			continue
		}
		if fi, err := in.Lstat(name); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		f, err := in.OpenFile(name, os.O_RDONLY|openNonblock, 0)
		if err != nil {
			continue
		}
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && lockTemp(f) == nil {
			_ = in.Remove(name)
		}
		f.Close()
	}
}

func dirOrDot(dir string) string {
	if dir = strings.TrimSuffix(dir, string(filepath.Separator)); dir == "" {
		return "."
	}
	return dir
}

// WriteFileBeneath is WriteFileAtomic of rel below the folder dir, its
// parents created (0755) below it.
func WriteFileBeneath(dir, rel string, data []byte, perm fs.FileMode) error {
	b, err := OpenBeneath(dir)
	if err != nil {
		return err
	}
	defer b.Close()
	if parent := path.Dir(rel); parent != "." {
		if err := b.MkdirAll(parent, 0o755); err != nil {
			return err
		}
	}
	return b.WriteFileAtomic(rel, data, perm)
}

// UpdateFileBeneath is UpdateFile of rel below the folder dir.
func UpdateFileBeneath(dir, rel string, fn func(old []byte) ([]byte, error)) error {
	b, err := OpenBeneath(dir)
	if err != nil {
		return err
	}
	defer b.Close()
	return b.UpdateFile(rel, fn)
}
