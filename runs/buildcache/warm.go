package buildcache

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/saga-ai/saga-lsp/runs"
)

// Warm is what a story's build caches start warm from, read only
// (docs/security.md#warm-build-caches): the user's own Go build cache,
// served to the go command by saga-lsp's GOCACHEPROG under the story's,
// and the user's npm cache, which seeds the story's (SeedNpm). Nothing a
// story runs can write them: they are neither the story's caches, nor in
// the repository, nor in saga-lsp's cache root.
type Warm struct {
	Go   string // the user's GOCACHE ("" none)
	Prog string // the saga-lsp binary serving GOCACHEPROG
	Npm  string // the user's npm cache ("" none)
}

// GoCacheProgCommand is saga-lsp's hidden subcommand serving GOCACHEPROG
// (package runs/buildcache/gocache).
const GoCacheProgCommand = "__gocacheprog"

// FindWarm is the warm caches of a story of the repository at root: the
// Go cache a worker handed down (runs.EnvWarmGoCache), else the user's as env
// says. In a worker's run env names the story's own caches, which are never
// warm ones (usableWarm).
func FindWarm(root string, env func(string) string) Warm {
	var w Warm
	if npm := userNpmCache(env); usableWarm(npm, root, env) {
		w.Npm = npm
	}
	dir := runs.Getenv(env, runs.EnvWarmGoCache)
	if dir == "" {
		dir = userGoCache(env)
	}
	prog, err := runs.SelfPath(env)
	if dir != "none" && err == nil && usableWarm(dir, root, env) {
		w.Go, w.Prog = dir, prog
	}
	return w
}

// usableWarm tells whether dir may be read as a warm cache: an existing
// directory outside what a story's agent or checks write — the repository
// (its worktrees are in it) and saga-lsp's cache root.
func usableWarm(dir, root string, env func(string) string) bool {
	if dir == "" || !filepath.IsAbs(dir) {
		return false
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return false
	}
	for _, p := range []string{root, cacheRootOf(env)} {
		if p == "" {
			continue
		}
		if rp, err := filepath.EvalSymlinks(p); err == nil {
			p = rp
		}
		if real == p || strings.HasPrefix(real, strings.TrimSuffix(p, "/")+"/") || strings.HasPrefix(p, strings.TrimSuffix(real, "/")+"/") {
			return false
		}
	}
	return true
}

func cacheRootOf(env func(string) string) string {
	r, _ := CacheRoot(env)
	return r
}

// userGoCache is the GOCACHE the go command uses in env, found as cmd/go
// finds it (without running go): $GOCACHE, else the go env file's
// (`go env -w`), else go-build in the user's cache dir. "" when off or
// unknown.
func userGoCache(env func(string) string) string {
	dir := runs.Getenv(env, "GOCACHE")
	if dir == "" {
		dir = goEnvFile(env)["GOCACHE"]
	}
	if dir == "" {
		if base := userCacheDir(env); base != "" {
			dir = filepath.Join(base, "go-build")
		}
	}
	if dir == "off" || !filepath.IsAbs(dir) {
		return ""
	}
	return dir
}

// goEnvFile is the settings `go env -w` wrote ($GOENV, else go/env in the
// user's config dir).
func goEnvFile(env func(string) string) map[string]string {
	p := runs.Getenv(env, "GOENV")
	if p == "off" {
		return nil
	}
	if p == "" {
		base := runs.Getenv(env, "XDG_CONFIG_HOME")
		home := runs.Getenv(env, "HOME")
		switch {
		case runtime.GOOS == "darwin" && home != "":
			base = filepath.Join(home, "Library", "Application Support")
		case !filepath.IsAbs(base) && home != "":
			base = filepath.Join(home, ".config")
		}
		if !filepath.IsAbs(base) {
			return nil
		}
		p = filepath.Join(base, "go", "env")
	}
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

// userCacheDir is os.UserCacheDir as env says.
func userCacheDir(env func(string) string) string {
	home := runs.Getenv(env, "HOME")
	if runtime.GOOS == "darwin" {
		if home == "" {
			return ""
		}
		return filepath.Join(home, "Library", "Caches")
	}
	if base := runs.Getenv(env, "XDG_CACHE_HOME"); filepath.IsAbs(base) {
		return base
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".cache")
}

// goCacheProg is GOCACHEPROG for the GOCACHE dir upper: saga-lsp's
// program reading w.Go under it ("" without a warm Go cache, or when a path
// cannot be quoted for the go command).
func (w Warm) goCacheProg(upper string) string {
	if w.Go == "" || w.Prog == "" {
		return ""
	}
	words := []string{w.Prog, GoCacheProgCommand, "--upper", upper, "--lower", w.Go}
	for i, a := range words {
		q, ok := quoteArg(a)
		if !ok {
			return ""
		}
		words[i] = q
	}
	return strings.Join(words, " ")
}

// quoteArg quotes a word the way cmd/go splits GOCACHEPROG (its
// cmd/internal/quoted: fields split at white space, a field may be wrapped
// in ' or ", with no escapes inside).
func quoteArg(a string) (string, bool) {
	if !strings.ContainsAny(a, " \t\n\r'\"") {
		return a, a != ""
	}
	if strings.ContainsAny(a, "\n\r") {
		return "", false
	}
	for _, q := range []string{"'", `"`} {
		if !strings.Contains(a, q) {
			return q + a + q, true
		}
	}
	return "", false
}
