package buildcache

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A hostile or corrupt warm npm cache seeds nothing wrong: content that
// does not match its integrity, a symlinked bucket or content, and a
// lockfile that is a symlink are skipped; what the story's cache has is
// kept; the warm cache is only read.
func TestSeedNpmSkipsWhatIsWrong(t *testing.T) {
	warm, story, repo := t.TempDir(), t.TempDir(), t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("secret"), 0o600)
	// entry writes a bucket for pkg's tarball holding body; how says what
	// is wrong with it.
	entry := func(pkg, body, how string) (bucket, content string) {
		sum := sha512.Sum512([]byte(body))
		integrity := "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
		h := hex.EncodeToString(sum[:])
		content = filepath.Join(warm, "_cacache", "content-v2", "sha512", h[:2], h[2:4], h[4:])
		key := npmKeyPrefix + "https://registry.example/" + pkg + "/-/" + pkg + "-1.0.0.tgz"
		k := sha256.Sum256([]byte(key))
		kh := hex.EncodeToString(k[:])
		bucket = filepath.Join(warm, "_cacache", "index-v5", kh[:2], kh[2:4], kh[4:])
		os.MkdirAll(filepath.Dir(content), 0o755)
		os.MkdirAll(filepath.Dir(bucket), 0o755)
		switch how {
		case "corrupt":
			os.WriteFile(content, []byte(body+"!"), 0o644)
		case "symlinked content":
			os.Symlink(secret, content)
		default:
			os.WriteFile(content, []byte(body), 0o644)
		}
		line := fmt.Sprintf("\nx\t{\"key\":%q,\"integrity\":%q,\"size\":%d}", key, integrity, len(body))
		if how == "symlinked bucket" {
			os.WriteFile(secret+"-bucket", []byte(line), 0o644)
			os.Symlink(secret+"-bucket", bucket)
		} else {
			os.WriteFile(bucket, []byte(line), 0o644)
		}
		return bucket, content
	}
	good, goodContent := entry("good", "good tarball", "")
	bad, _ := entry("bad", "bad tarball", "corrupt")
	link, _ := entry("link", "link tarball", "symlinked content")
	blink, _ := entry("blink", "blink tarball", "symlinked bucket")
	entry("other", "not locked", "")
	lock := `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/good": {}, "node_modules/bad": {}, "node_modules/link": {}, "node_modules/blink": {}}}`
	os.WriteFile(filepath.Join(repo, "package-lock.json"), []byte(lock), 0o644)
	w := Warm{Npm: warm}
	n, err := SeedNpm(story, repo, w)
	if err != nil || n != 1 {
		t.Fatalf("seeded %d bucket(s), %v: want only the good one", n, err)
	}
	at := func(p string) string {
		rel, _ := filepath.Rel(warm, p)
		return filepath.Join(story, "npm", rel)
	}
	if data, err := os.ReadFile(at(goodContent)); err != nil || string(data) != "good tarball" {
		t.Errorf("the good content: %q %v", data, err)
	}
	if fi, err := os.Lstat(at(good)); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the good bucket is not a copy: %v", err)
	}
	for _, p := range []string{bad, link, blink} {
		if _, err := os.Lstat(at(p)); err == nil {
			t.Errorf("%s was seeded", p)
		}
	}
	// A symlinked lockfile is not read; the story's own bucket is kept.
	os.Remove(filepath.Join(repo, "package-lock.json"))
	elsewhere := filepath.Join(t.TempDir(), "elsewhere.json")
	os.WriteFile(elsewhere, []byte(lock), 0o644)
	os.Symlink(elsewhere, filepath.Join(repo, "package-lock.json"))
	os.RemoveAll(filepath.Join(story, "npm"))
	if n, _ := SeedNpm(story, repo, w); n != 0 {
		t.Errorf("a symlinked lockfile seeded %d bucket(s)", n)
	}
	os.Remove(filepath.Join(repo, "package-lock.json"))
	os.WriteFile(filepath.Join(repo, "package-lock.json"), []byte(lock), 0o644)
	SeedNpm(story, repo, w)
	os.WriteFile(at(good), []byte("the story's"), 0o644)
	SeedNpm(story, repo, w)
	if data, _ := os.ReadFile(at(good)); string(data) != "the story's" {
		t.Errorf("the story's bucket was replaced: %q", data)
	}
}
