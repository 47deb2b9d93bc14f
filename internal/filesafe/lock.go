package filesafe

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// TempLockRoot holds the lock dirs of workspaces outside git: the user's
// own (saga-lsp-locks-<uid>, mode 0700, checked at each lock), never one
// folder every user of the machine shares.
func TempLockRoot() string {
	if tag := userTag(); tag != "" {
		return filepath.Join(os.TempDir(), "saga-lsp-locks-"+tag)
	}
	return filepath.Join(os.TempDir(), "saga-lsp-locks")
}

// LockDir returns the directory holding saga-lsp's lock files for the
// repository containing root: "<git common dir>/saga-lsp/locks".
//
// The git common dir is found without running git (hooks are short-lived
// processes; forking git for every write would dominate their cost): walk up
// from root to the first ".git". A directory is the common dir itself; a file
// ("gitdir: <path>", as in worktrees and submodules) names the gitdir,
// relative to the file's directory, whose "commondir" file, relative to the
// gitdir, names the common dir if present. Every worktree of a repository
// therefore maps to the same directory, and it is never inside the tracked
// tree.
//
// Outside a git repository the result is
// filepath.Join(TempLockRoot(), <first 16 hex digits of the
// sha256 of the absolute root>).
//
// root is resolved through symlinks first, as git does with its working
// directory, so different spellings of one checkout share one lock dir.
// LockDir does not create the directory.
func LockDir(root string) (string, error) {
	dir, inGit, err := repoDir(root)
	if err != nil {
		return "", fmt.Errorf("lock dir %s: %w", root, err)
	}
	if !inGit {
		return dir, nil
	}
	return filepath.Join(dir, "locks"), nil
}

// StateDir is saga-lsp's folder of the repository containing root, which
// holds its locks and what it keeps of the repository's runs (records,
// caches, views): "<git common dir>/saga-lsp". Outside a git repository it
// is "<LockDir>.state", one per root: the lock dir's parent there is the
// user's, shared by every such workspace, and a run record kept there was
// every workspace's. StateDir does not create the directory; outside git it
// makes the user's folder above it (privateTempRoot), as a lock does, so
// that what is kept there is never in a folder someone else made.
func StateDir(root string) (string, error) {
	dir, inGit, err := repoDir(root)
	if err != nil {
		return "", fmt.Errorf("saga-lsp's folder for %s: %w", root, err)
	}
	if !inGit {
		if err := privateTempRoot(); err != nil {
			return "", fmt.Errorf("saga-lsp's folder for %s: %w", root, err)
		}
		return dir + ".state", nil
	}
	return dir, nil
}

// privateTempRoot makes TempLockRoot (mode 0700) unless it is there, and
// refuses it unless it is the user's own and no one else may write it: it
// is in the shared temp folder, where another user could have made it.
func privateTempRoot() error {
	top := TempLockRoot()
	if err := os.Mkdir(top, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return OwnedPrivate(top)
}

// repoDir is "<git common dir>/saga-lsp" for the repository containing
// root, or outside git filepath.Join(TempLockRoot(), <first 16 hex digits
// of the sha256 of the absolute root>).
func repoDir(root string) (dir string, inGit bool, err error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", false, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	common, found, err := gitCommonDir(abs)
	if err != nil {
		return "", false, err
	}
	if !found {
		sum := sha256.Sum256([]byte(abs))
		return filepath.Join(TempLockRoot(), hex.EncodeToString(sum[:8])), false, nil
	}
	return filepath.Join(common, "saga-lsp"), true, nil
}

// GitCommonDir is the common git dir of the repository holding dir (found
// as LockDir finds it, without running git); found is false outside git.
func GitCommonDir(dir string) (common string, found bool, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return gitCommonDir(abs)
}

// gitCommonDir walks up from dir (absolute, clean) to the first ".git" and
// returns the repository's common dir; found is false at the filesystem root.
func gitCommonDir(dir string) (common string, found bool, err error) {
	for {
		dotgit := filepath.Join(dir, ".git")
		fi, err := os.Stat(dotgit)
		switch {
		case err == nil && fi.IsDir():
			return CanonicalPath(dotgit), true, nil
		case err == nil:
			common, err := commonDirFromGitFile(dotgit)
			if err != nil {
				return "", false, err
			}
			return common, true, nil
		case !errors.Is(err, fs.ErrNotExist) && !IsNotDir(err):
			return "", false, err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false, nil
		}
		dir = parent
	}
}

// commonDirFromGitFile resolves a ".git" file ("gitdir: <path>") to the
// common dir, parsing it the way git does (only trailing CR/LF trimmed).
func commonDirFromGitFile(dotgit string) (string, error) {
	b, err := readRegular(dotgit)
	if err != nil {
		return "", err
	}
	gitdir, ok := strings.CutPrefix(strings.TrimRight(string(b), "\r\n"), "gitdir: ")
	if !ok || gitdir == "" {
		return "", fmt.Errorf("%s: not a gitdir file", dotgit)
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(filepath.Dir(dotgit), gitdir)
	}
	// A dangling gitdir (worktree moved or pruned) must not make us create
	// lock directories at a stale path.
	if fi, err := os.Stat(gitdir); err != nil {
		return "", fmt.Errorf("%s: gitdir: %w", dotgit, err)
	} else if !fi.IsDir() {
		return "", fmt.Errorf("%s: gitdir %s is not a directory", dotgit, gitdir)
	}
	common := gitdir
	c, err := readRegular(filepath.Join(gitdir, "commondir"))
	switch {
	case err == nil:
		if cd := strings.TrimRight(string(c), "\r\n"); cd != "" {
			if !filepath.IsAbs(cd) {
				cd = filepath.Join(gitdir, cd)
			}
			common = cd
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	return CanonicalPath(common), nil
}

// CanonicalPath resolves symlinks so the main checkout and a worktree (whose
// gitdir file may spell the path differently) agree on the string too.
func CanonicalPath(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}

// maxLockName keeps "<name>.lock" within the usual 255-byte name limit.
const maxLockName = 200

func validLockName(name string) error {
	if name == "" || len(name) > maxLockName {
		return fmt.Errorf("invalid lock name %q: want 1-%d characters", name, maxLockName)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("invalid lock name %q: only [a-zA-Z0-9._-] allowed", name)
		}
	}
	return nil
}

// lockFileSuffix ends a lock's file name in LockDir; it also keeps "." and
// ".." harmless as names.
const lockFileSuffix = ".lock"

// LockNameOf is the name of the lock whose file in LockDir is called
// file; ok is false for a file that is no lock's.
func LockNameOf(file string) (name string, ok bool) {
	name, ok = strings.CutSuffix(file, lockFileSuffix)
	return name, ok && validLockName(name) == nil
}

// lockPath validates name and returns the lock file's directory and path.
func lockPath(root, name string) (dir, path string, err error) {
	if err := validLockName(name); err != nil {
		return "", "", err
	}
	dir, err = LockDir(root)
	if err != nil {
		return "", "", err
	}
	return dir, filepath.Join(dir, name+lockFileSuffix), nil
}

// RecordedLocks lists the names of the repository's locks whose file
// records a holder — a released lock is emptied (Unlock), one never taken
// has no file — with one directory listing: the candidates for LockHolder.
func RecordedLocks(root string) ([]string, error) {
	dir, err := LockDir(root)
	if err != nil {
		return nil, err
	}
	return RecordedLocksIn(dir, nil)
}

// RecordedLocksIn is RecordedLocks in a lock folder already found
// (LockDir), of the names keep accepts (every name when nil): only those
// are stat'ed — a long-lived reader lists a folder of hundreds of locks
// at every tick.
func RecordedLocksIn(dir string, keep func(name string) bool) ([]string, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list locks %s: %w", dir, err)
	}
	var out []string
	for _, de := range des {
		name, ok := LockNameOf(de.Name())
		if !ok || !de.Type().IsRegular() || keep != nil && !keep(name) {
			continue
		}
		if fi, err := de.Info(); err == nil && fi.Size() > 0 {
			out = append(out, name)
		}
	}
	return out, nil
}

// AcquireLock blocks until the named lock of the repository containing root
// is held. Names match [a-zA-Z0-9._-]+ (e.g. "story-<id>", "worker-<id>").
// When ctx ends first it returns ctx.Err() and holds nothing.
func AcquireLock(ctx context.Context, root, name string) (*Lock, error) {
	path, err := makeLockPath(root, name)
	if err != nil {
		return nil, err
	}
	return AcquireLockFile(ctx, path)
}

// TryLock takes the named lock without waiting; ok is false (with a nil
// error) when another holder has it.
func TryLock(root, name string) (l *Lock, ok bool, err error) {
	path, err := makeLockPath(root, name)
	if err != nil {
		return nil, false, err
	}
	return TryLockFile(path)
}

// AcquireLockFile blocks until the lock of the file at path is held (see
// TryLockFile); when ctx ends first it returns ctx.Err() and holds nothing.
//
// Waiting polls with a 1ms→20ms backoff rather than blocking in the
// system: a blocked flock cannot be cancelled, and one that completes after
// the caller gave up would leave the lock held.
func AcquireLockFile(ctx context.Context, path string) (*Lock, error) {
	delay := time.Millisecond
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		l, ok, err := TryLockFile(path)
		if err != nil || ok {
			return l, err
		}
		// Jitter keeps many waiting hook processes from polling in lockstep.
		t := time.NewTimer(delay/2 + rand.N(delay/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, 20*time.Millisecond)
	}
}

// makeLockPath is the named lock's file, its folder created.
func makeLockPath(root, name string) (string, error) {
	dir, path, err := lockPath(root, name)
	if err != nil {
		return "", err
	}
	if filepath.Dir(dir) == TempLockRoot() {
		// In the shared temp folder: the user's own, or no lock at all.
		if err := privateTempRoot(); err != nil {
			return "", fmt.Errorf("lock %s: %w", path, err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("lock %s: %w", path, err)
	}
	return path, nil
}

// LockHolder returns the pid of the process holding the named lock, or 0
// when unknown (never locked, released, or its holder has died). It reads
// the informational "pid <pid>" line the holder wrote; it never touches the
// lock itself, so it cannot make a concurrent TryLock fail.
func LockHolder(root, name string) (pid int, err error) {
	_, path, err := lockPath(root, name)
	if err != nil {
		return 0, err
	}
	return holderAt(path)
}

// LockHolderIn is LockHolder in a lock folder already found (LockDir): a
// long-lived reader probing locks at every tick finds the folder once.
func LockHolderIn(dir, name string) (pid int, err error) {
	if err := validLockName(name); err != nil {
		return 0, err
	}
	return holderAt(filepath.Join(dir, name+lockFileSuffix))
}

// holderAt is LockHolder of the lock file at path.
func holderAt(path string) (pid int, err error) {
	b, err := readRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("lock holder %s: %w", path, err)
	}
	s, ok := strings.CutPrefix(string(bytes.TrimSpace(b)), "pid ")
	if !ok {
		return 0, nil
	}
	pid, err = strconv.Atoi(s)
	if err != nil || pid <= 0 {
		return 0, nil
	}
	// A SIGKILLed holder leaves its pid behind; the kernel released its lock.
	if !ProcessAlive(pid) {
		return 0, nil
	}
	return pid, nil
}
