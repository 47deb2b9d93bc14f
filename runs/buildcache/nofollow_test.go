package buildcache

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// warmNpmEntry puts pkg's tarball (body) into the npm cache warm, as npm
// does: its content under content-v2, its index bucket under index-v5.
func warmNpmEntry(t *testing.T, warm, pkg, body string) {
	t.Helper()
	sum := sha512.Sum512([]byte(body))
	integrity := "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
	h := hex.EncodeToString(sum[:])
	content := filepath.Join(warm, "_cacache", "content-v2", "sha512", h[:2], h[2:4], h[4:])
	key := npmKeyPrefix + "https://registry.example/" + pkg + "/-/" + pkg + "-1.0.0.tgz"
	k := sha256.Sum256([]byte(key))
	kh := hex.EncodeToString(k[:])
	bucket := filepath.Join(warm, "_cacache", "index-v5", kh[:2], kh[2:4], kh[4:])
	for _, d := range []string{filepath.Dir(content), filepath.Dir(bucket)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	line := fmt.Sprintf("\nx\t{\"key\":%q,\"integrity\":%q,\"size\":%d}", key, integrity, len(body))
	if err := os.WriteFile(content, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bucket, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
}

// treeOf lists a tree: every entry, its type and a regular file's bytes.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		r, _ := filepath.Rel(dir, p)
		if err != nil {
			fmt.Fprintf(&b, "%s %v\n", r, err)
			return nil
		}
		fmt.Fprintf(&b, "%s %s", r, d.Type())
		if d.Type().IsRegular() {
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %q", data)
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}

// Issue 32, attack 1: a story's agent (or a check) makes folders of its
// own npm cache links to a folder outside; the next seeding, done as the
// user outside any sandbox, writes nothing there and says why — for a
// link absolute or relative, a link to a link, at any depth.
func TestSeedNpmNeverWritesThroughAPlantedLink(t *testing.T) {
	warm, repo := t.TempDir(), t.TempDir()
	warmNpmEntry(t, warm, "left-pad", "the user's tarball")
	lock := `{"lockfileVersion": 3, "packages": {"": {}, "node_modules/left-pad": {}}}`
	os.WriteFile(filepath.Join(repo, "package-lock.json"), []byte(lock), 0o644)
	// The content's folder of the first level: content-v2/sha512/<2 hex>.
	sum := sha512.Sum512([]byte("the user's tarball"))
	first := hex.EncodeToString(sum[:])[:2]

	rel := func(from, to string) string { r, _ := filepath.Rel(from, to); return r }
	cases := []struct {
		name string
		at   string // below the story's cache dir
		link func(at, outside string) string
	}{
		{"content-v2, absolute", "npm/_cacache/content-v2", func(at, o string) string { return o }},
		{"content-v2, relative", "npm/_cacache/content-v2", func(at, o string) string { return rel(filepath.Dir(at), o) }},
		{"content-v2, link to a link", "npm/_cacache/content-v2", func(at, o string) string {
			hop := filepath.Join(filepath.Dir(at), "hop")
			os.Symlink(o, hop)
			return "hop"
		}},
		{"index-v5, absolute", "npm/_cacache/index-v5", func(at, o string) string { return o }},
		{"_cacache, relative", "npm/_cacache", func(at, o string) string { return rel(filepath.Dir(at), o) }},
		{"npm, absolute", "npm", func(at, o string) string { return o }},
		{"deep in content-v2, relative", "npm/_cacache/content-v2/sha512/" + first, func(at, o string) string { return rel(filepath.Dir(at), o) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			story, outside := t.TempDir(), t.TempDir()
			os.WriteFile(filepath.Join(outside, "keep"), []byte("the story chose this folder"), 0o644)
			at := filepath.Join(story, filepath.FromSlash(c.at))
			os.MkdirAll(filepath.Dir(at), 0o700)
			if err := os.Symlink(c.link(at, outside), at); err != nil {
				t.Fatal(err)
			}
			before, warmBefore := treeOf(t, outside), treeOf(t, warm)
			_, err := SeedNpm(story, repo, Warm{Npm: warm})
			if after := treeOf(t, outside); after != before {
				t.Fatalf("seeding wrote outside the story's cache (err %v):\n%s", err, after)
			}
			if treeOf(t, warm) != warmBefore {
				t.Fatal("the user's npm cache changed")
			}
			if err == nil || !strings.Contains(err.Error(), "remove the folder") {
				t.Fatalf("SeedNpm = %v; want it to say it stopped, and what to do", err)
			}
		})
	}
	// Without a link the same seed copies it (the cases above are refusals,
	// not a seed that copies nothing).
	story := t.TempDir()
	if n, err := SeedNpm(story, repo, Warm{Npm: warm}); n != 1 || err != nil {
		t.Fatalf("a plain seed copied %d bucket(s): %v", n, err)
	}
}

// A link inside the story's cache that stays inside it is followed: the
// story's cache is its own business.
func TestSeedNpmFollowsALinkInsideTheCache(t *testing.T) {
	warm, repo, story := t.TempDir(), t.TempDir(), t.TempDir()
	warmNpmEntry(t, warm, "left-pad", "the user's tarball")
	os.WriteFile(filepath.Join(repo, "package-lock.json"), []byte(`{"lockfileVersion": 3, "packages": {"node_modules/left-pad": {}}}`), 0o644)
	os.MkdirAll(filepath.Join(story, "npm", "_cacache", "elsewhere"), 0o700)
	os.Symlink("elsewhere", filepath.Join(story, "npm", "_cacache", "content-v2"))
	if n, err := SeedNpm(story, repo, Warm{Npm: warm}); n != 1 || err != nil {
		t.Fatalf("seeded %d, %v", n, err)
	}
	if !strings.Contains(treeOf(t, filepath.Join(story, "npm", "_cacache", "elsewhere")), "the user's tarball") {
		t.Fatal("the content is not in the folder the link inside names")
	}
}

// The story's temp dir in its cache made a link out of it: creating the
// cache dirs (every worker start, the gate, verify) refuses it, names what
// to do, and makes nothing outside.
func TestCacheDirRefusesAPlantedLink(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	xdg := t.TempDir()
	env := func(k string) string { return map[string]string{"XDG_CACHE_HOME": xdg, "HOME": "/nonexistent"}[k] }
	dir, err := CacheDir(root, "s", env)
	if err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"absolute", "relative", "link to a link"} {
		t.Run(how, func(t *testing.T) {
			outside := t.TempDir()
			tmp := filepath.Join(dir, "tmp")
			os.RemoveAll(tmp)
			os.Remove(filepath.Join(dir, "hop"))
			target := filepath.Join(outside, "made")
			switch how {
			case "relative":
				target, _ = filepath.Rel(dir, target)
			case "link to a link":
				os.Symlink(target, filepath.Join(dir, "hop"))
				target = "hop"
			}
			os.Symlink(target, tmp)
			if _, err := CacheDir(root, "s", env); err == nil || !strings.Contains(err.Error(), "remove the folder") {
				t.Fatalf("CacheDir through a link out: %v", err)
			}
			if s := treeOf(t, outside); s != ". d---------\n" {
				t.Fatalf("made outside:\n%s", s)
			}
		})
	}
}
