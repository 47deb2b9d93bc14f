package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/gocache"
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
	dir, err := runs.ChecksCachePath(root, story, nil)
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
	// clean removes the story's caches, never the warm one: the next
	// check is warm again.
	if r := testkit.Run(t, root, withGoCache(user), "", testkit.Binary(t), "clean", "--yes"); r.Code != 0 {
		t.Fatalf("clean: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
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
	// A user's cache warmed by another module: the standard library only.
	other := t.TempDir()
	testkit.WriteFiles(t, other, map[string]string{"go.mod": "module other\n", "o_test.go": "package o\n\nimport \"testing\"\n\nfunc TestO(t *testing.T) {}\n"})
	goTest(t, other, lower)
	entries, _ := os.ReadDir(filepath.Join(lower, "00"))
	before := len(entries)
	out, code := verifyJSON(t, root, withGoCache(lower), "a")
	if code != 0 || strings.Contains(out, "PLANTED") || strings.Contains(out, "(cached)") {
		t.Errorf("story a's check (exit %d):\n%s", code, out)
	}
	if _, err := os.Lstat(filepath.Join(lower, "planted")); err == nil {
		t.Error("a check wrote into the user's Go cache")
	}
	if entries, _ := os.ReadDir(filepath.Join(lower, "00")); len(entries) != before || before == 0 {
		t.Errorf("go clean -cache in a check changed the user's Go cache: %d entries in 00/, %d before", len(entries), before)
	}
	if s := checksStats(t, root, "a"); s.LowerHits == 0 || s.Puts == 0 {
		t.Errorf("story a's counters %+v: want the standard library from the lower, its packages put", s)
	}
	// Story b never sees what a's checks cached.
	if out, code := verifyJSON(t, root, withGoCache(lower), "b"); code != 0 || strings.Contains(out, "(cached)") {
		t.Errorf("story b's check saw story a's results (exit %d):\n%s", code, out)
	}
}
