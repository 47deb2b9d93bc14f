package buildcache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// A story's build caches (Go, npm, pip, XDG, and a temp dir): writable for
// the agent's sandboxed Bash and for the checks, where /tmp and
// $HOME/.cache are read-only, and kept out of the worktree so they are
// never committed. They live outside the repository's git dir, which no
// story's sandbox may write (docs/security.md), under the user's cache
// dir: ${XDG_CACHE_HOME:-~/.cache}/saga-lsp/<repo>/ (created 0700, used
// only when the user owns it and no one else may write it), one folder per
// story, so that a story's agent writes its own caches only:
//
//	agent/<story>   the agent's Bash and the TaskCompleted gate
//	checks/<story>  the final re-run and `saga-lsp verify`: a cache the
//	                agent's Bash never writes, so a result it planted (a
//	                go test result, say) cannot pass for the checks'.
//
// CachePath and ChecksCachePath only say where; CacheDir and ChecksCacheDir
// create them.

// CachePath is the story's agent caches.
func CachePath(root, story string, env func(string) string) (string, error) {
	return storyCache(root, story, "agent", env)
}

// ChecksCachePath is the caches of the story's checks outside the agent's
// runs.
func ChecksCachePath(root, story string, env func(string) string) (string, error) {
	return storyCache(root, story, "checks", env)
}

// CacheDir is CachePath, created (with its temp dir) when missing.
func CacheDir(root, story string, env func(string) string) (string, error) {
	return makeCache(CachePath(root, story, env))
}

// ChecksCacheDir is ChecksCachePath, created (with its temp dir) when
// missing.
func ChecksCacheDir(root, story string, env func(string) string) (string, error) {
	return makeCache(ChecksCachePath(root, story, env))
}

// LegacyCachePath is where saga-lsp before issue 22 kept a story's caches,
// inside the git dir (<git common dir>/saga-lsp/cache/<story>); clean
// removes what is left there.
func LegacyCachePath(root, story string) (string, error) {
	if !store.ValidCanonical(story) {
		return "", fmt.Errorf("invalid story name %q", story)
	}
	state, err := filesafe.StateDir(root)
	if err != nil {
		return "", err
	}
	return filepath.Join(state, "cache", story), nil
}

// CacheEnv points the common toolchains' caches into a CacheDir, warm
// from w (docs/security.md#warm-build-caches): Go's through GOCACHEPROG,
// which reads w.Go and writes GOCACHE only; without a warm cache
// GOCACHEPROG is emptied, so that a program of the user's (a remote cache)
// is never handed a story's writes.
func CacheEnv(dir string, w Warm) []string {
	gocache := filepath.Join(dir, "go-build")
	return []string{
		"GOCACHE=" + gocache,
		"GOCACHEPROG=" + w.goCacheProg(gocache),
		"npm_config_cache=" + filepath.Join(dir, "npm"),
		"PIP_CACHE_DIR=" + filepath.Join(dir, "pip"),
		"XDG_CACHE_HOME=" + dir,
	}
}

func storyCache(root, story, kind string, env func(string) string) (string, error) {
	if !store.ValidCanonical(story) {
		return "", fmt.Errorf("invalid story name %q", story)
	}
	top, err := CacheRoot(env)
	if err != nil {
		return "", err
	}
	repo, err := repoID(root)
	if err != nil {
		return "", err
	}
	return filepath.Join(top, repo, kind, story), nil
}

// CacheRoot is saga-lsp's folder in the user's cache dir.
func CacheRoot(env func(string) string) (string, error) {
	base := runs.Getenv(env, "XDG_CACHE_HOME")
	if !filepath.IsAbs(base) { // relative values are invalid (XDG base directory spec)
		home := runs.Getenv(env, "HOME")
		if home == "" || !filepath.IsAbs(home) {
			return "", fmt.Errorf("no cache dir for the build caches: set HOME or XDG_CACHE_HOME")
		}
		base = filepath.Join(home, ".cache")
		if runtime.GOOS == "darwin" {
			base = filepath.Join(home, "Library", "Caches")
		}
	}
	return filepath.Join(base, "saga-lsp"), nil
}

// repoID names a repository's folder: the checkout's name (when its git
// dir is <checkout>/.git) and a hash of its git common dir, the same from
// the checkout and from each of its worktrees.
func repoID(root string) (string, error) {
	locks, err := filesafe.LockDir(root)
	if err != nil {
		return "", err
	}
	common := filepath.Dir(filepath.Dir(locks))
	sum := sha256.Sum256([]byte(locks))
	id := hex.EncodeToString(sum[:8])
	if filepath.Base(common) == ".git" {
		id = filepath.Base(filepath.Dir(common)) + "-" + id
	}
	return id, nil
}

// makeCache creates a story's cache folder (and its temp dir), after
// checking that saga-lsp's cache root is the user's alone: a folder another
// user could write would let them swap a story's caches.
func makeCache(dir string, err error) (string, error) {
	if err != nil {
		return "", err
	}
	top := filepath.Dir(filepath.Dir(filepath.Dir(dir))) // <root>/<repo>/<kind>/<story>
	if err := os.MkdirAll(top, 0o700); err != nil {
		return "", fmt.Errorf("create the build caches' folder %s: %w", top, err)
	}
	if err := filesafe.OwnedPrivate(top); err != nil {
		return "", err
	}
	// <kind>/<story> is saga-lsp's, what is below it the story's: its tmp
	// made a link out of it is refused, never followed (filesafe.Beneath).
	b, err := filesafe.OpenBeneath(top)
	if err != nil {
		return "", fmt.Errorf("create the build cache %s: %w", dir, err)
	}
	defer b.Close()
	rel, _ := filepath.Rel(top, dir)
	if err := b.MkdirAll(filepath.ToSlash(filepath.Join(rel, "tmp")), 0o700); err != nil {
		return "", fmt.Errorf("create the build cache %s: %w; a link there leads out of the story's caches: remove the folder %s (the story's own build caches, which start again warm) and run again", dir, err, dir)
	}
	return dir, nil
}
