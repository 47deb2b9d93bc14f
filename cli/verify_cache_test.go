package cli_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/runs/buildcache/gocache"
)

// Issue 24, point 6: warm, safe build caches. A story's checks start warm
// from the user's Go build cache, read only through saga-lsp's
// GOCACHEPROG, and write only the story's own cache
// (docs/security.md#warm-build-caches).

// goStoryRepo is a repository holding a Go module (two packages with
// tests) and stories whose one task each runs check.
func goStoryRepo(t *testing.T, check string, stories ...string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.mod":        "module calc\n\ngo 1.24\n",
		"add/add.go":    "package add\n\nfunc Add(a, b int) int { return a + b }\n",
		"add/a_test.go": "package add\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(Add(2, 2))\n\t}\n}\n",
		"mul/mul.go":    "package mul\n\nimport \"calc/add\"\n\nfunc Mul(a, b int) int {\n\tr := 0\n\tfor range b {\n\t\tr = add.Add(r, a)\n\t}\n\treturn r\n}\n",
		"mul/m_test.go": "package mul\n\nimport \"testing\"\n\nfunc TestMul(t *testing.T) {\n\tif Mul(3, 4) != 12 {\n\t\tt.Fatal(Mul(3, 4))\n\t}\n}\n",
	}
	c, _ := json.Marshal(check)
	for _, s := range stories {
		files[".saga/stories/"+s+"/story.json"] = `{"id": "` + s + `", "title": "S", "description": ""}` + "\n"
		files[".saga/stories/"+s+"/t.json"] = `{"id": "t", "subject": "T", "description": "", "status": "pending", "blockedBy": [], "checks": [` + string(c) + `]}` + "\n"
	}
	testkit.WriteFiles(t, root, files)
	testkit.InitRepo(t, root)
	return root
}

// verifyJSON runs verify with env and returns its report.
func verifyJSON(t *testing.T, root string, env []string, story string) (out string, code int) {
	t.Helper()
	r := testkit.Run(t, root, env, "", testkit.Binary(t), "verify", story, "--format", "json")
	var rep struct {
		Tasks []struct {
			Results []struct{ Output string }
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || len(rep.Tasks) != 1 || len(rep.Tasks[0].Results) == 0 {
		t.Fatalf("verify %s: exit %d\n%s%s", story, r.Code, r.Stdout, r.Stderr)
	}
	return rep.Tasks[0].Results[0].Output, r.Code
}

// withGoCache is the test's environment with GOCACHE set to dir: the
// user's Go build cache as saga-lsp finds it.
func withGoCache(dir string) []string {
	return append(testkit.CleanEnv(), "GOCACHE="+dir, "GOFLAGS=", "GOTOOLCHAIN=local")
}

// goTest runs go test ./... in dir with the user's cache dir.
func goTest(t *testing.T, dir, gocache string) string {
	t.Helper()
	cmd := exec.Command("go", "test", "./...")
	cmd.Dir, cmd.Env = dir, withGoCache(gocache)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test in %s: %v\n%s", dir, err, out)
	}
	return string(out)
}

// checksStats is the counters of the story's checks' GOCACHEPROG.
func checksStats(t *testing.T, root, story string) gocache.Stats {
	t.Helper()
	dir, err := buildcache.ChecksCachePath(root, story, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "go-build", gocache.StatsFile))
	if err != nil {
		t.Fatalf("no counters of the checks' Go cache: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var s gocache.Stats
	json.Unmarshal([]byte(lines[len(lines)-1]), &s)
	return s
}

// verify before the story's first run (no worktree, no caches yet) runs
// a go test check confined, and warm: the user's cache already holds the
// test results, so the story's first check reports them cached.
func TestVerifyBeforeTheFirstRunIsWarm(t *testing.T) {
	testkit.Bwrap(t)
	root := goStoryRepo(t, "go test ./...", "s")
	// The user's cache: the process's own (testkit pins it), which the
	// user's go test of the checkout warms.
	user := os.Getenv("GOCACHE")
	goTest(t, root, user)
	out, code := verifyJSON(t, root, withGoCache(user), "s")
	if code != 0 || strings.Count(out, "(cached)") != 2 {
		t.Errorf("the story's first check was not warm (exit %d):\n%s", code, out)
	}
	if s := checksStats(t, root, "s"); s.LowerHits == 0 {
		t.Errorf("the checks' Go cache read nothing from the user's: %+v", s)
	}
	// clean removes the story's caches with its worktree (merged: its
	// branch has nothing main lacks), never the warm one: the next check
	// is warm again.
	testkit.Worktree(t, root, ".saga/worktrees/s", "story/s")
	if r := testkit.Run(t, root, withGoCache(user), "", testkit.Binary(t), "clean", "--yes"); r.Code != 0 {
		t.Fatalf("clean: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if checks, _ := buildcache.ChecksCachePath(root, "s", nil); dirExists(checks) {
		t.Fatalf("clean left the story's checks cache %s", checks)
	}
	if out, code := verifyJSON(t, root, withGoCache(user), "s"); code != 0 || strings.Count(out, "(cached)") != 2 {
		t.Errorf("after clean, the story's check was not warm (exit %d):\n%s", code, out)
	}
}

// A check cannot write the user's cache: a file written into it, or `go
// clean -cache`, leaves it as it was. Two stories do not see each other's
// writes: a result one story cached is not the other's.
func TestChecksCannotWriteTheWarmCache(t *testing.T) {
	testkit.Bwrap(t)
	lower := filepath.Join(t.TempDir(), "go-build")
	check := `touch '` + lower + `/planted' && echo PLANTED; go clean -cache; go test ./...`
	root := goStoryRepo(t, check, "a", "b")
	// A user's cache warmed by another module: the standard library only
	// (copies of the entries of the test process's cache that go test of a
	// module reads, not compiled again: docs/architecture.md#test-time).
	before := testkit.GoTestCache(t, lower, false)
	out, code := verifyJSON(t, root, withGoCache(lower), "a")
	if code != 0 || strings.Contains(out, "PLANTED") || strings.Contains(out, "(cached)") {
		t.Errorf("story a's check (exit %d):\n%s", code, out)
	}
	if _, err := os.Lstat(filepath.Join(lower, "planted")); err == nil {
		t.Error("a check wrote into the user's Go cache")
	}
	if n := countFiles(t, lower); n != before || before == 0 {
		t.Errorf("go clean -cache in a check changed the user's Go cache: %d files, %d before", n, before)
	}
	if s := checksStats(t, root, "a"); s.LowerHits == 0 || s.Puts == 0 {
		t.Errorf("story a's counters %+v: want the standard library from the lower, its packages put", s)
	}
	t.Logf("a done %+v", checksStats(t, root, "a"))
	// Story b never sees what a's checks cached.
	if out, code := verifyJSON(t, root, withGoCache(lower), "b"); code != 0 || strings.Contains(out, "(cached)") {
		t.Errorf("story b's check saw story a's results (exit %d):\n%s", code, out)
	}
}

// npmRegistry serves one package, left-x 1.0.0, the way a registry does
// (its packument and its tarball), on the loopback address.
func npmRegistry(t *testing.T) string {
	t.Helper()
	var tgz bytes.Buffer
	gz := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{
		"package/package.json": `{"name": "left-x", "version": "1.0.0", "main": "index.js"}`,
		"package/index.js":     "module.exports = s => '<' + s;\n",
	} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	sum512, sum1 := sha512.Sum512(tgz.Bytes()), sha1.Sum(tgz.Bytes())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := "http://" + r.Host
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		switch r.URL.Path {
		case "/left-x":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"name": "left-x", "dist-tags": map[string]string{"latest": "1.0.0"},
				"versions": map[string]any{"1.0.0": map[string]any{"name": "left-x", "version": "1.0.0", "dist": map[string]string{
					"tarball": base + "/left-x/-/left-x-1.0.0.tgz", "integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum512[:]), "shasum": hex.EncodeToString(sum1[:])}}}})
		case "/left-x/-/left-x-1.0.0.tgz":
			w.Write(tgz.Bytes())
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A story's npm cache starts warm from the user's: `npm ci --offline` in a
// check (no network in it) installs what the user's cache holds, copied
// into the story's cache, and the user's cache stays as it was.
func TestVerifyNpmWarm(t *testing.T) {
	testkit.Bwrap(t)
	testkit.NeedsTool(t, "npm", "")
	root := goStoryRepo(t, `npm ci --offline --no-audit --no-fund && node -e "console.log(require('left-x')('warm'))"`, "s")
	user := filepath.Join(t.TempDir(), "npm")
	env := append(withGoCache(os.Getenv("GOCACHE")), "npm_config_cache="+user, "npm_config_update_notifier=false")
	testkit.WriteFiles(t, root, map[string]string{"package.json": `{"name": "app", "version": "1.0.0", "dependencies": {"left-x": "1.0.0"}}` + "\n", ".gitignore": "node_modules/\n"})
	// The user installed it once, from the registry: the lockfile and the
	// user's npm cache.
	testkit.WriteFiles(t, root, map[string]string{".npmrc": "registry=" + npmRegistry(t) + "/\n"})
	install := exec.Command("npm", "install", "--no-audit", "--no-fund")
	// With the tarballs' URLs in the lockfile, as npm writes it by default
	// (without them, npm ci asks for the registry's document in a form
	// npm install did not cache, and fails offline for the user too).
	install.Dir, install.Env = root, append(env, "npm_config_omit_lockfile_registry_resolved=false")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install: %v\n%s", err, out)
	}
	os.RemoveAll(filepath.Join(root, "node_modules"))
	testkit.Git(t, root, "add", "-A")
	testkit.Git(t, root, "commit", "-qm", "left-x")
	before := dirState(t, user)
	r := testkit.Run(t, root, env, "", testkit.Binary(t), "verify", "s")
	if r.Code != 0 || !strings.Contains(r.Stdout, "✓ t: npm ci") {
		t.Errorf("npm ci --offline in the story's first check (exit %d):\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if after := dirState(t, user); after != before {
		t.Errorf("the user's npm cache changed:\n%s\nnow:\n%s", before, after)
	}
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// dirState lists a tree's files with their sizes and modification times.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	return b.String()
}

// countFiles is how many files the tree dir holds.
func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
