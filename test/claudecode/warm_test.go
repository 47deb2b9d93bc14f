package claudecode

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/runs/buildcache/gocache"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Issue 24, point 6, with the real CLI: a new story's Go builds are warm
// from the user's Go cache — in the agent's Bash (Claude Code's own
// sandbox), in the TaskCompleted gate and in the final checks — read
// through saga-lsp's GOCACHEPROG, while each writes only the story's own
// caches (docs/security.md#warm-build-caches).
func TestWarmFirstCheckWithRealClaudeCode(t *testing.T) {
	t.Parallel()
	claude := claudeOffline(t)
	root := filepath.Join(t.TempDir(), "repo")
	// The agent's Bash runs the tests and shows its cache program's
	// counters.
	script := filepath.Join(t.TempDir(), "gotest.sh")
	os.WriteFile(script, []byte("go test ./... && echo STATS && cat \"$GOCACHE/"+gocache.StatsFile+"\"\n"), 0o755)
	testkit.WriteFiles(t, root, map[string]string{
		"go.mod":        "module calc\n\ngo 1.24\n",
		"add/add.go":    "package add\n\nfunc Add(a, b int) int { return a + b }\n",
		"add/a_test.go": "package add\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(Add(2, 2))\n\t}\n}\n",
		"mul/mul.go":    "package mul\n\nfunc Mul(a, b int) int { return a * b }\n",
		"mul/m_test.go": "package mul\n\nimport \"testing\"\n\nfunc TestMul(t *testing.T) {\n\tif Mul(3, 4) != 12 {\n\t\tt.Fatal(Mul(3, 4))\n\t}\n}\n",
		".saga/stories/warm/story.json": `{"id": "warm", "title": "Warm", "description": ` +
			jsonc.Quote("Warm.\nFAKEAPI bash 'bash "+script+" > gotest.txt 2>&1'") + "}\n",
		".saga/stories/warm/t.json": `{"id": "t", "subject": "T", "description": "Do it.", "status": "pending", "blockedBy": [], "checks": ["go test ./..."]}` + "\n",
	})
	testkit.InitRepo(t, root)
	// The user ran the tests once: their Go cache (the test process's,
	// which testkit pins) holds the results.
	user := os.Getenv("GOCACHE")
	cmd := exec.Command("go", "test", "./...")
	cmd.Dir, cmd.Env = root, append(testkit.CleanEnv(), "GOCACHE="+user, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}
	out, _ := realWorker(t, claude, root, "warm", 0, "--max-cycles", "2")

	// The worktree is not the user's checkout, so the story's own
	// packages build again (their paths are in the objects); the standard
	// library and the modules come from the user's cache.
	wt := filepath.Join(root, ".saga", "worktrees", "warm")
	got := testkit.FileText(filepath.Join(wt, "gotest.txt"))
	_, stats, _ := strings.Cut(got, "STATS\n")
	if !strings.Contains(got, "ok  \tcalc/mul") || lowerHits(stats) == 0 {
		t.Errorf("the agent's go test in Claude Code's sandbox did not read the user's Go cache:\n%s\n%s", got, out)
	}
	// The gate's check (the agent's caches) and the final checks (the
	// checks' caches) read the user's cache and wrote their own.
	agent, _ := buildcache.CachePath(root, "warm", nil)
	checks, _ := buildcache.ChecksCachePath(root, "warm", nil)
	for _, dir := range []string{agent, checks} {
		data := testkit.FileText(filepath.Join(dir, "go-build", gocache.StatsFile))
		if lowerHits(data) == 0 {
			t.Errorf("%s: no hits in the user's Go cache (%q)\n%s", dir, data, out)
		}
	}
	if !strings.Contains(out, "checks passed") {
		t.Errorf("the worker's checks did not pass:\n%s", out)
	}
}

// lowerHits is the last line's hits in the lower of a GOCACHEPROG's
// counters (gocache.StatsFile).
func lowerHits(lines string) int64 {
	all := strings.Split(strings.TrimSpace(lines), "\n")
	var s gocache.Stats
	json.Unmarshal([]byte(all[len(all)-1]), &s)
	return s.LowerHits
}
