package buildcache

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/runs"
)

// npm has no layered cache, so a story's npm cache is seeded instead
// (docs/security.md#warm-build-caches): before its runs and checks, what the
// user's npm cache holds for the packages its lockfile names (their
// registry documents and tarballs) is copied into the story's — copied,
// never linked, so that nothing the story does to its cache reaches the
// user's — and `npm ci --offline` (or --prefer-offline) finds it there. The
// layout is cacache's, npm's cache since npm 5: <cache>/_cacache/index-v5/…
// holds index buckets, lines "<sha1>\t<JSON entry>" whose key is
// "make-fetch-happen:request-cache:<URL>" and whose integrity names the
// content, <cache>/_cacache/content-v2/<algorithm>/<hex digest, split
// 2/2/rest>.

// Seeding limits: a lockfile is the agent's to write, a cache can be big.
const (
	maxLockfile     = 64 << 20
	maxSeedPackages = 20000
	maxSeedBytes    = 1 << 30 // copied into one story's cache in total
	maxIndexBucket  = 1 << 20
	maxIndexFiles   = 200000 // buckets of the user's cache looked at
)

const npmKeyPrefix = "make-fetch-happen:request-cache:"

// userNpmCache is the npm cache of the user as env says: $npm_config_cache
// (either case), else ~/.npm ("" when unknown). A cache set in an .npmrc
// is not looked for.
func userNpmCache(env func(string) string) string {
	dir := runs.Getenv(env, "npm_config_cache")
	if dir == "" {
		dir = runs.Getenv(env, "NPM_CONFIG_CACHE")
	}
	if dir == "" {
		if home := runs.Getenv(env, "HOME"); home != "" {
			dir = filepath.Join(home, ".npm")
		}
	}
	if !filepath.IsAbs(dir) {
		return ""
	}
	return dir
}

// SeedNpm copies into the story's cache dir (a CacheDir) what the warm npm
// cache holds for the packages the lockfile of the checkout at dir names,
// when both exist, and returns how many index buckets it copied. An entry
// missing or corrupt in the warm cache is skipped (npm reports it if it
// needs it); what the story's cache has already is kept.
func SeedNpm(cacheDir, dir string, w Warm) (int, error) {
	if w.Npm == "" || cacheDir == "" {
		return 0, nil
	}
	names, err := lockedNames(dir)
	if err != nil || len(names) == 0 {
		return 0, err
	}
	// The story's cache is its agent's and its checks' to shape: every write
	// stays below it, whatever links they planted (filesafe.Beneath).
	to, err := filesafe.OpenBeneath(cacheDir)
	if err != nil {
		return 0, err
	}
	defer to.Close()
	to.NoSync = true // npm checks every content's integrity, every index line's hash
	from := filepath.Join(w.Npm, "_cacache")
	const into = "npm/_cacache/"
	copied, seen, budget := 0, 0, int64(maxSeedBytes)
	var refused error
	made := map[string]bool{} // folders made below the cache in this seed
	filepath.WalkDir(filepath.Join(from, "index-v5"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if seen++; seen > maxIndexFiles || budget <= 0 {
			return filepath.SkipAll
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(from, p)
		rel = into + filepath.ToSlash(rel)
		if there, err := to.Exists(rel); err != nil {
			refused = err
			return filepath.SkipAll
		} else if there {
			return nil
		}
		data, err := readRegularFile(p, maxIndexBucket)
		if err != nil {
			return nil
		}
		integrities := wantedEntries(data, names)
		if len(integrities) == 0 {
			return nil
		}
		for _, in := range integrities {
			c, ok := contentPath(in)
			if !ok {
				continue
			}
			if there, err := to.Exists(into + c.path); err != nil {
				refused = err
				return filepath.SkipAll
			} else if there {
				continue
			}
			n, err := copyChecked(filepath.Join(from, filepath.FromSlash(c.path)), to, made, into+c.path, budget, &c)
			if refused = asRefused(err); refused != nil {
				return filepath.SkipAll
			}
			if err != nil {
				return nil // the bucket without its content would be a miss anyway
			}
			budget -= n
		}
		_, err = copyChecked(p, to, made, rel, maxIndexBucket, nil)
		if refused = asRefused(err); refused != nil {
			return filepath.SkipAll
		}
		if err == nil {
			copied++
		}
		return nil
	})
	if refused != nil {
		return copied, fmt.Errorf("not seeding the story's npm cache any further: %w; a link there leads out of the story's caches: remove the folder %s (the story's own build caches, which start again warm) before its next run", refused, cacheDir)
	}
	return copied, nil
}

// errRefused is a write into the story's cache that did not happen: the
// place it would go (a link the story planted, leading out of its cache) is
// not the story's.
type errRefused struct{ err error }

func (e errRefused) Error() string { return e.err.Error() }
func (e errRefused) Unwrap() error { return e.err }

func asRefused(err error) error {
	var r errRefused
	if errors.As(err, &r) {
		return r
	}
	return nil
}

// wantedEntries are the integrities of a bucket's entries whose URL is a
// registry document or tarball of one of names.
func wantedEntries(bucket []byte, names map[string]bool) []string {
	var out []string
	for _, line := range strings.Split(string(bucket), "\n") {
		_, js, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		var e struct{ Key, Integrity string }
		if json.Unmarshal([]byte(js), &e) != nil || e.Integrity == "" {
			continue
		}
		u, ok := strings.CutPrefix(e.Key, npmKeyPrefix)
		if ok && npmURLOf(u, names) {
			out = append(out, e.Integrity)
		}
	}
	return out
}

// npmURLOf tells whether u is a registry's document of one of names
// (<registry>/<name>, a scope's slash written %2f) or one of its tarballs
// (<registry>/<name>/-/<file>.tgz).
func npmURLOf(u string, names map[string]bool) bool {
	u, _, _ = strings.Cut(u, "?")
	if before, _, ok := strings.Cut(u, "/-/"); ok {
		return names[lastName(before)]
	}
	i := strings.LastIndex(u, "/")
	if i < 0 {
		return false
	}
	name := strings.Replace(u[i+1:], "%2f", "/", 1)
	name = strings.Replace(name, "%2F", "/", 1)
	return names[name]
}

// lastName is the package name a URL path ends with ("…/@scope/name" or
// "…/name").
func lastName(p string) string {
	parts := strings.Split(p, "/")
	n := parts[len(parts)-1]
	if len(parts) > 1 && strings.HasPrefix(parts[len(parts)-2], "@") {
		n = parts[len(parts)-2] + "/" + n
	}
	return n
}

// lockedNames are the packages dir's package-lock.json (or
// npm-shrinkwrap.json) installs: lockfile versions 2 and 3 ("packages":
// node_modules/<name> paths), and 1 ("dependencies", nested).
func lockedNames(dir string) (map[string]bool, error) {
	var data []byte
	for _, name := range []string{"npm-shrinkwrap.json", "package-lock.json"} {
		p := filepath.Join(dir, name)
		b, err := readRegularFile(p, maxLockfile)
		if errors.Is(err, errTooBig) {
			return nil, fmt.Errorf("%s: over %d MiB, not read to seed the npm cache", p, maxLockfile>>20)
		}
		if err == nil {
			data = b
			break
		}
	}
	if data == nil {
		return nil, nil
	}
	type dep struct {
		Dependencies map[string]json.RawMessage `json:"dependencies"`
	}
	var lock struct {
		Packages     map[string]json.RawMessage `json:"packages"`
		Dependencies map[string]json.RawMessage `json:"dependencies"`
	}
	if err := json.Unmarshal(data, &lock); err != nil {
		return nil, nil // npm will say what is wrong with it
	}
	names := map[string]bool{}
	for p := range lock.Packages {
		if i := strings.LastIndex(p, "node_modules/"); i >= 0 && len(names) < maxSeedPackages {
			names[p[i+len("node_modules/"):]] = true
		}
	}
	var walk func(map[string]json.RawMessage)
	walk = func(m map[string]json.RawMessage) {
		for name, raw := range m {
			if len(names) >= maxSeedPackages {
				return
			}
			names[name] = true
			var d dep
			if json.Unmarshal(raw, &d) == nil {
				walk(d.Dependencies)
			}
		}
	}
	walk(lock.Dependencies)
	return names, nil
}

var errTooBig = errors.New("too big")

// readRegularFile reads a regular file of at most max bytes.
func readRegularFile(p string, max int64) ([]byte, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", p)
	}
	if fi.Size() > max {
		return nil, errTooBig
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

type contentFile struct {
	path string
	sum  func() hash.Hash
	want []byte
}

// contentPath is where cacache keeps the content of an integrity string
// (its sha512 digest, else its first), relative to _cacache.
func contentPath(integrity string) (contentFile, bool) {
	var best contentFile
	for _, f := range strings.Fields(integrity) {
		algo, b64, ok := strings.Cut(f, "-")
		digest, err := base64.StdEncoding.DecodeString(strings.SplitN(b64, "?", 2)[0])
		if !ok || err != nil {
			continue
		}
		var sum func() hash.Hash
		switch algo {
		case "sha512":
			sum = sha512.New
		case "sha256":
			sum = sha256.New
		default:
			continue
		}
		if len(digest) != sum().Size() {
			continue
		}
		h := hex.EncodeToString(digest)
		c := contentFile{path.Join("content-v2", algo, h[:2], h[2:4], h[4:]), sum, digest}
		if best.path == "" || algo == "sha512" {
			best = c
		}
	}
	return best, best.path != ""
}

// copyChecked copies the regular file from to the new file rel below to
// (a temp file renamed into place), at most max bytes, and when c is set
// only if its content matches. It returns the bytes copied; a write below
// to that fails is an errRefused. made lists the folders already made.
func copyChecked(from string, to *filesafe.Beneath, made map[string]bool, rel string, max int64, c *contentFile) (int64, error) {
	fi, err := os.Lstat(from)
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > max {
		return 0, fmt.Errorf("%s: not a regular file of at most %d bytes", from, max)
	}
	src, err := os.Open(from)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	if d := path.Dir(rel); !made[d] {
		if err := to.MkdirAll(d, 0o700); err != nil {
			return 0, errRefused{err}
		}
		made[d] = true
	}
	var mismatch error
	n, err := to.WriteFrom(rel, 0o600, func(dst io.Writer) (int64, error) {
		var h hash.Hash
		if c != nil {
			h = c.sum()
			dst = io.MultiWriter(dst, h)
		}
		n, err := io.Copy(dst, io.LimitReader(src, max))
		if err == nil && h != nil && string(h.Sum(nil)) != string(c.want) {
			mismatch = errors.New(from + " does not match its integrity")
			err = mismatch
		}
		return n, err
	})
	switch {
	case mismatch != nil:
		return 0, mismatch
	case err != nil:
		return 0, errRefused{err}
	}
	return n, nil
}
