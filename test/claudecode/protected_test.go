package claudecode

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Issue 23 end to end with the real Claude Code CLI: a Go project whose
// test, committed on main, fails until the story fixes Add. A scripted
// agent weakens the test instead (or besides); the gate and the worker's
// end hold the line, the PR (the gh stand-in) stays a draft and its
// description names the files.

const (
	protCalc     = "package calc\n\nfunc Add(a, b int) int { return a - b }\n"
	protCalcTest = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n"
)

// protectedRun runs the worker on story calc whose agent runs commands
// (FAKEAPI bash) and then completes task fix; it returns the output, the
// tool results the model read and the PRs of the gh stand-in.
func protectedRun(t *testing.T, want int, commands ...string) (root, out, results string, prs []map[string]any) {
	claude := claudeOffline(t)
	testkit.NeedsTool(t, "go", "")
	base := t.TempDir()
	root = filepath.Join(base, "repo")
	desc := "Fix Add."
	for _, c := range commands {
		desc += "\nFAKEAPI bash " + c
	}
	desc += "\nFAKEAPI task fix completed"
	testkit.WriteFiles(t, root, map[string]string{
		"go.mod":                        "module example.com/calc\n\ngo 1.22\n",
		"calc/calc.go":                  protCalc,
		"calc/calc_test.go":             protCalcTest,
		".saga/stories/calc/story.json": `{"id": "calc", "title": "Fix Add", "description": ` + jsonc.Quote(desc) + "}\n",
		".saga/stories/calc/fix.json":   `{"id": "fix", "subject": "Fix Add", "description": "Make Add add.", "status": "pending", "blockedBy": [], "checks": ["go test -count=1 ./calc/"]}` + "\n",
	})
	testkit.InitRepo(t, root)
	testkit.BareOrigin(t, root)
	log := filepath.Join(base, "api.jsonl")
	ghState := filepath.Join(base, "gh.json")
	env := append(testkit.CleanEnv(), "SAGA_CLAUDE="+claude, "CLAUDE_OFFLINE_LOG="+log,
		"CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"), "SAGA_SESSION_DIR="+filepath.Join(base, "sessions"),
		"SAGA_GH="+testkit.Build(t, "./testdata/standin/gh"), "GH_STANDIN_STATE="+ghState, "GH_STANDIN_REPO=acme/calc",
		"GOFLAGS=", "GOTOOLCHAIN=local")
	// The gate's and the final re-run's Go build caches start from the
	// user's (links: Go never writes an entry in place), so that the
	// standard library is not built again under the test's clock.
	getenv := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	for _, dir := range []func(string, string, func(string) string) (string, error){buildcache.CacheDir, buildcache.ChecksCacheDir} {
		if d, err := dir(root, "calc", getenv); err == nil {
			linkGoCache(t, filepath.Join(d, "go-build"))
		}
	}
	r := testkit.Run(t, root, env, "", testkit.Binary(t), "worker", "calc", "--max-cycles", "1")
	out = r.Stdout + r.Stderr
	if r.Code != want {
		t.Fatalf("worker: exit %d, want %d\n%s", r.Code, want, out)
	}
	var st struct {
		PRs []map[string]any `json:"prs"`
	}
	data, _ := os.ReadFile(ghState)
	json.Unmarshal(data, &st)
	return root, out, strings.Join(toolResults(t, log), "\n---\n"), st.PRs
}

// linkGoCache links the user's Go build cache into dst.
func linkGoCache(t *testing.T, dst string) {
	t.Helper()
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return
	}
	src := strings.TrimSpace(string(gocache))
	filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if d.Type().IsRegular() && os.Link(p, filepath.Join(dst, rel)) != nil {
			return filepath.SkipAll
		}
		return nil
	})
}

// The agent turns the test's t.Fatalf into t.Logf and completes the task
// with Add still wrong: the gate runs the test as committed on main and
// refuses — the model reads that the fork point's version counts — the
// task stays pending and the PR a draft.
func TestTestEditedToPassWithRealClaudeCode(t *testing.T) {
	t.Parallel()
	root, out, results, prs := protectedRun(t, runs.ExitLimit, `"sed -i s/t.Fatalf/t.Logf/ calc/calc_test.go"`)
	for _, want := range []string{"task fix cannot be completed yet", "with the protected files as they are at the fork point", "Add(2, 3) = -1, want 5",
		"You changed protected files: calc/calc_test.go (modified)", "are what count"} {
		if !strings.Contains(results, want) {
			t.Errorf("the refusal the model read lacks %q:\n%s\n%s", want, results, out)
		}
	}
	if len(prs) != 1 || prs[0]["isDraft"] != true {
		t.Errorf("PR %v", prs)
	}
	if st := testkit.Git(t, root, "show", "story/calc:.saga/stories/calc/fix.json"); !strings.Contains(st, `"status": "pending"`) {
		t.Errorf("the task on the branch:\n%s", st)
	}
}

// The agent fixes Add and also edits the test (both runs pass): the story
// ends blocked, the PR stays a draft and its description names the test.
func TestTestChangedBesidesTheFixWithRealClaudeCode(t *testing.T) {
	t.Parallel()
	_, out, _, prs := protectedRun(t, runs.ExitBlocked, `"sed -i 's/a - b/a + b/' calc/calc.go"`, `"sed -i 's/want 5/want five/' calc/calc_test.go"`)
	if !strings.Contains(out, "protected files changed: calc/calc_test.go (modified)") {
		t.Errorf("the log:\n%s", out)
	}
	if len(prs) != 1 || prs[0]["isDraft"] != true {
		t.Fatalf("PR %v\n%s", prs, out)
	}
	if body, _ := prs[0]["body"].(string); !strings.Contains(body, "- `calc/calc_test.go` modified — protected") {
		t.Errorf("the PR's description:\n%s", body)
	}
}
