package verify_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/verify"
)

// Issue 23: the tests that count are the reference commit's. A Go project
// and a Python (unittest) one, committed at R with tests that fail until
// the story fixes the code; each weakening attempt an agent could make is
// applied to the worktree, and the gate — both runs, confined — must
// refuse it, while the honest fix passes.

const (
	calcGo     = "package calc\n\nfunc Add(a, b int) int { return a - b }\n"
	calcGoFix  = "package calc\n\nfunc Add(a, b int) int { return a + b }\n"
	calcTestGo = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n"
	calcPy     = "def add(a, b):\n    return a - b\n"
	calcPyFix  = "def add(a, b):\n    return a + b\n"
	testCalcPy = "import unittest\n\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
	makefile   = "test:\n\tgo test -count=1 ./calc/\n"
)

// Checks of the two ecosystems.
const (
	goCheck   = "go test -count=1 ./calc/"
	makeCheck = "make test"
	pyCheck   = "cd py && python3 -m unittest discover -s tests -t ."
)

// weakRepo is a repository at R with both projects (the code wrong, the
// tests right); the box's worktree is a worktree of it on story/s.
func weakRepo(t *testing.T) (b *box, fork string) {
	t.Helper()
	b = newBox(t)
	testkit.WriteFiles(t, b.wt, map[string]string{
		"go.mod":                 "module example.com/calc\n\ngo 1.22\n",
		"calc/calc.go":           calcGo,
		"calc/calc_test.go":      calcTestGo,
		"calc/testdata/case.txt": "2 3 5\n",
		"Makefile":               makefile,
		"py/calc.py":             calcPy,
		"py/tests/__init__.py":   "",
		"py/tests/test_calc.py":  testCalcPy,
	})
	testkit.Git(t, b.wt, "add", "-A")
	testkit.Git(t, b.wt, "commit", "-q", "-m", "R")
	fork = testkit.Git(t, b.wt, "rev-parse", "HEAD")
	gocache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		testkit.Needs(t, fmt.Sprintf("go: %v", err))
	}
	b.env = append(b.env, "GOMODCACHE="+strings.TrimSpace(string(gocache)), "GOFLAGS=", "GOTOOLCHAIN=local")
	// The standard library built, as in the user's cache (links of its
	// entries: docs/architecture.md#test-time).
	testkit.GoTestCache(t, filepath.Join(b.cache, "go-build"), true)
	return b, fork
}

// gate runs check as the gate does: the story's protected files compared
// with R, then both runs.
func gate(t *testing.T, b *box, fork, check string) (verify.TaskResult, *verify.Protected) {
	t.Helper()
	m := &verify.Manifest{Story: "s", ForkPoint: fork, Tasks: map[string]verify.TaskChecks{"a": {Commands: []string{check}, TimeoutSeconds: 300, From: fork}}}
	p, err := verify.Protect(context.Background(), git.Repo{Dir: b.wt}, b.wt, fork, verify.RulesOf(m))
	if err != nil {
		t.Fatal(err)
	}
	res := verify.RunTask(context.Background(), b.runner(t), "a", m.Tasks["a"], p, time.Time{}, nil)
	for _, r := range res.Results {
		t.Logf("%s (protected run: %v) → %s\n%s", r.Command, r.Protected, r.Outcome(), r.Output)
	}
	return res, p
}

func TestWeakeningAttemptsRefused(t *testing.T) {
	for _, c := range []struct {
		name, check string
		tool        string
		files       map[string]string // written; "" removes
		blocks      []string          // the protected changes that keep the PR a draft
	}{
		{"go test edited to pass", goCheck, "go",
			map[string]string{"calc/calc_test.go": strings.Replace(calcTestGo, "t.Fatalf", "t.Logf", 1)}, []string{"calc/calc_test.go"}},
		{"go test deleted", goCheck, "go", map[string]string{"calc/calc_test.go": ""}, []string{"calc/calc_test.go"}},
		{"go test skipped", goCheck, "go",
			map[string]string{"calc/calc_test.go": strings.Replace(calcTestGo, "{\n\tif", "{\n\tt.Skip(\"later\")\n\tif", 1)}, []string{"calc/calc_test.go"}},
		{"go test shadowed by a new test file", goCheck, "go",
			map[string]string{"calc/zz_main_test.go": "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n"}, nil},
		{"go test data deleted", goCheck + " && test -f calc/testdata/case.txt", "go",
			map[string]string{"calc/calc.go": calcGoFix, "calc/testdata/case.txt": ""}, []string{"calc/testdata/case.txt"}},
		{"build-file target emptied", makeCheck, "make", map[string]string{"Makefile": "test:\n\t@true\n"}, []string{"Makefile"}},
		{"python test edited to pass", pyCheck, "python3",
			map[string]string{"py/tests/test_calc.py": strings.Replace(testCalcPy, "self.assertEqual(add(2, 3), 5)", "self.assertTrue(True)", 1)}, []string{"py/tests/test_calc.py"}},
		{"python test deleted", pyCheck, "python3", map[string]string{"py/tests/test_calc.py": ""}, []string{"py/tests/test_calc.py"}},
		{"python test skipped", pyCheck, "python3",
			map[string]string{"py/tests/test_calc.py": strings.Replace(testCalcPy, "    def test_add", "    @unittest.skip('later')\n    def test_add", 1)}, []string{"py/tests/test_calc.py"}},
		{"python test shadowed by a new test file", pyCheck, "python3",
			map[string]string{"py/tests/test_aaa.py": "import os\nos._exit(0)\n"}, nil},
		{"python runner told to select nothing", pyCheck, "python3",
			map[string]string{"py/tests/__init__.py": "import unittest\n\n\ndef load_tests(loader, tests, pattern):\n    return unittest.TestSuite()\n"}, []string{"py/tests/__init__.py"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // a repository and caches of its own
			testkit.NeedsTool(t, c.tool, "")
			b, fork := weakRepo(t)
			for rel, content := range c.files {
				if content == "" {
					if err := os.Remove(filepath.Join(b.wt, rel)); err != nil {
						t.Fatal(err)
					}
					continue
				}
				testkit.WriteFiles(t, b.wt, map[string]string{rel: content})
			}
			res, p := gate(t, b, fork, c.check)
			if res.Passed() {
				t.Errorf("the weakened tree passed the gate:\n%s", verify.Digest([]verify.TaskResult{res}, p.Changes))
			}
			f := res.Failed()
			if f == nil || !f.Protected && !strings.Contains(c.check, "test -f") {
				t.Errorf("the failure is not the protected run's: %+v", f)
			}
			var got []string
			for _, ch := range verify.Blocking(p.Changes) {
				got = append(got, ch.Path)
			}
			if strings.Join(got, ",") != strings.Join(c.blocks, ",") {
				t.Errorf("changes keeping the PR a draft: %v, want %v (all: %v)", got, c.blocks, p.Changes)
			}
			refusal := res.Refusal("")
			if !strings.Contains(refusal, "fork point "+verify.Short(fork)) {
				t.Errorf("the refusal does not say the fork point's files count:\n%s", refusal)
			}
			if len(c.blocks) > 0 && !strings.Contains(refusal, "You changed protected files: "+c.blocks[0]) {
				t.Errorf("the refusal does not name the protected file changed:\n%s", refusal)
			}
		})
	}
}

// The honest fix passes both runs; a test the story adds runs in the full
// run and is left out of the protected one; no change keeps the PR a
// draft.
func TestHonestFixAccepted(t *testing.T) {
	for _, c := range []struct {
		name, check, tool string
		files             map[string]string
		twice             bool
	}{
		{"go", goCheck, "go", map[string]string{"calc/calc.go": calcGoFix}, false},
		{"go with a new test", goCheck, "go", map[string]string{"calc/calc.go": calcGoFix,
			"calc/more_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAddZero(t *testing.T) {\n\tif Add(0, 4) != 4 {\n\t\tt.Fatal(\"Add(0, 4)\")\n\t}\n}\n"}, true},
		{"make", makeCheck, "make", map[string]string{"calc/calc.go": calcGoFix}, false},
		{"python with a new test", pyCheck, "python3", map[string]string{"py/calc.py": calcPyFix,
			"py/tests/test_more.py": "import unittest\n\nfrom calc import add\n\n\nclass TestMore(unittest.TestCase):\n    def test_zero(self):\n        self.assertEqual(add(0, 4), 4)\n"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // a repository and caches of its own
			testkit.NeedsTool(t, c.tool, "")
			b, fork := weakRepo(t)
			testkit.WriteFiles(t, b.wt, c.files)
			res, p := gate(t, b, fork, c.check)
			if !res.Passed() {
				t.Errorf("the honest fix was refused:\n%s", res.Refusal(""))
			}
			if n := len(res.Results); (n == 2) != c.twice {
				t.Errorf("%d runs of the check, want the protected run only when the view differs (%v)", n, c.twice)
			}
			if bl := verify.Blocking(p.Changes); len(bl) > 0 {
				t.Errorf("the honest fix keeps the PR a draft: %v", bl)
			}
			// The worktree is as the story left it: nothing the view put in
			// place leaked into it.
			if out := testkit.Git(t, b.wt, "status", "--porcelain"); strings.Contains(out, " D ") || strings.Contains(out, "testdata") {
				t.Errorf("the worktree changed: %s", out)
			}
		})
	}
}
