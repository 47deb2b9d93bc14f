package verify_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/git"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/verify"
)

// Issue 32, point 2 (attacks 2 and 3): the gate covers what the protected
// tests lean on besides the test files. First the two attacks as the red
// team made them, through the gate's two confined runs; then each rule
// on its own, by what the comparison names.

const (
	helperGo     = "package testutil\n\nimport \"testing\"\n\n// Equal fails the test when got is not want.\nfunc Equal(t *testing.T, got, want int) {\n\tt.Helper()\n\tif got != want {\n\t\tt.Fatalf(\"got %d, want %d\", got, want)\n\t}\n}\n"
	helperNoop   = "package testutil\n\nimport \"testing\"\n\nfunc Equal(t *testing.T, got, want int) {}\n"
	helperCalcGo = "package calc\n\nimport (\n\t\"testing\"\n\n\t\"example.com/calc/internal/testutil\"\n)\n\nfunc TestAdd(t *testing.T) { testutil.Equal(t, Add(2, 3), 5) }\n"
	// The red team's unittest.py: the standard runner never runs.
	shadowUnittest = "import sys\nprint('OK')\nsys.exit(0)\n"
)

// helperRepo is weakRepo with calc's test calling an assertion helper of
// an ordinary package, internal/testutil.
func helperRepo(t *testing.T) (*box, string) {
	t.Helper()
	b, _ := weakRepo(t)
	testkit.WriteFiles(t, b.wt, map[string]string{"internal/testutil/assert.go": helperGo, "calc/calc_test.go": helperCalcGo})
	testkit.Git(t, b.wt, "add", "-A")
	testkit.Git(t, b.wt, "commit", "-q", "-m", "R with a helper")
	return b, testkit.Git(t, b.wt, "rev-parse", "HEAD")
}

func blockingPaths(p *verify.Protected) []string {
	var out []string
	for _, c := range verify.Blocking(p.Changes) {
		out = append(out, c.Path)
	}
	return out
}

// Attack 2: the helper made a no-op — wrong code passed the gate. Now the
// protected run has R's helper (and fails), and the change blocks.
func TestGoHelperMadeNoopRefused(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed")
	}
	b, fork := helperRepo(t)
	testkit.WriteFiles(t, b.wt, map[string]string{"internal/testutil/assert.go": helperNoop})
	res, p := gate(t, b, fork, goCheck)
	if res.Passed() {
		t.Errorf("the no-op helper passed the gate:\n%s", verify.Digest([]verify.TaskResult{res}, p.Changes))
	}
	if got := blockingPaths(p); !slices.Equal(got, []string{"internal/testutil/assert.go"}) {
		t.Errorf("blocking changes %v, want the helper (all: %v)", got, p.Changes)
	}
	if f := res.Failed(); f == nil || !f.Protected || !strings.Contains(f.Output, "got -1, want 5") {
		t.Errorf("the protected run did not fail on R's helper: %+v", f)
	}
	if r := res.Refusal(""); !strings.Contains(r, "You changed protected files: internal/testutil/assert.go (modified)") {
		t.Errorf("the refusal does not name the helper:\n%s", r)
	}
}

// The honest fix passes, with a helper file added for a new test (left
// out of the protected run like the test, never blocking).
func TestGoHelperHonestFixAccepted(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed")
	}
	b, fork := helperRepo(t)
	testkit.WriteFiles(t, b.wt, map[string]string{
		"calc/calc.go":              calcGoFix,
		"internal/testutil/more.go": "package testutil\n\nimport \"testing\"\n\nfunc Zero(t *testing.T, got int) { Equal(t, got, 0) }\n",
		"calc/zero_test.go":         "package calc\n\nimport (\n\t\"testing\"\n\n\t\"example.com/calc/internal/testutil\"\n)\n\nfunc TestZero(t *testing.T) { testutil.Zero(t, Add(0, 0)) }\n",
	})
	res, p := gate(t, b, fork, goCheck)
	if !res.Passed() {
		t.Errorf("the honest fix was refused:\n%s", res.Refusal(""))
	}
	if bl := blockingPaths(p); len(bl) > 0 {
		t.Errorf("the honest fix blocks: %v", bl)
	}
}

// Attack 3: unittest.py at the top of the folder the run starts in — its
// module ran instead of the standard runner. Also as an ignored, compiled
// unittest.pyc (Python imports one without its source; git does not list
// it as new).
func TestPythonRunnerShadowRefused(t *testing.T) {
	python3(t)
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, b *box)
		want  string
	}{
		{"unittest.py", func(t *testing.T, b *box) {
			testkit.WriteFiles(t, b.wt, map[string]string{"py/unittest.py": shadowUnittest})
		}, "py/unittest.py"},
		{"ignored unittest.pyc", func(t *testing.T, b *box) {
			testkit.WriteFiles(t, b.wt, map[string]string{"py/shadow.py": shadowUnittest})
			if out, err := exec.Command("python3", "-c", "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)",
				filepath.Join(b.wt, "py/shadow.py"), filepath.Join(b.wt, "py/unittest.pyc")).CombinedOutput(); err != nil {
				t.Fatalf("compile: %v\n%s", err, out)
			}
			os.Remove(filepath.Join(b.wt, "py/shadow.py"))
		}, "py/unittest.pyc"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // a repository and caches of its own
			b, _ := weakRepo(t)
			testkit.WriteFiles(t, b.wt, map[string]string{".gitignore": "*.pyc\n__pycache__/\n"})
			testkit.Git(t, b.wt, "add", "-A")
			testkit.Git(t, b.wt, "commit", "-q", "-m", "R ignores compiled files")
			fork := testkit.Git(t, b.wt, "rev-parse", "HEAD")
			c.plant(t, b)
			// The full run alone passes: the shadow works.
			if r := b.run(t, pyCheck); !r.Passed {
				t.Fatalf("the shadow did not take the runner's place: %s", r.Output)
			}
			res, p := gate(t, b, fork, pyCheck)
			if res.Passed() {
				t.Errorf("the shadowed runner passed the gate")
			}
			if got := blockingPaths(p); !slices.Equal(got, []string{c.want}) {
				t.Errorf("blocking changes %v, want %s (all: %v)", got, c.want, p.Changes)
			}
		})
	}
}

// ruleRepo is a repository at R for the rules alone (no check runs): Go
// with a helper, a library package another package's tests use, a
// vendored module; Python with a package; npm with a lockfile.
func ruleRepo(t *testing.T) (dir, fork string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "repo")
	testkit.WriteFiles(t, dir, map[string]string{
		"go.mod":                            "module example.com/calc\n\ngo 1.22\n\nrequire example.com/dep v1.0.0\n\nreplace example.com/dep => ./dep\n",
		"calc/calc.go":                      calcGo,
		"calc/calc_test.go":                 helperCalcGo,
		"internal/testutil/assert.go":       helperGo,
		"internal/testutil/assert/deep.go":  "package assert\n",
		"internal/testutil/uses.go":         "package testutil\n\nimport _ \"example.com/calc/internal/testutil/assert\"\n",
		"enc/enc.go":                        "package enc\n\nfunc Enc() {}\n",
		"enc/enc_test.go":                   "package enc\n",
		"dec/dec.go":                        "package dec\n",
		"dec/dec_test.go":                   "package dec\n\nimport _ \"example.com/calc/enc\"\n",
		"lib/lib.go":                        "package lib\n",
		"cmd/app/main.go":                   "package main\n\nimport _ \"example.com/calc/lib\"\n\nfunc main() {}\n",
		"lib/lib_test.go":                   "package lib\n",
		"calc/other_test.go":                "package calc\n\nimport _ \"example.com/calc/lib\"\n",
		"vendor/modules.txt":                "# example.com/dep v1.0.0\n",
		"vendor/example.com/dep/dep.go":     "package dep\n",
		"py/app/__init__.py":                "",
		"py/app/core.py":                    "X = 1\n",
		"web/package.json":                  `{"scripts": {"test": "jest"}}`,
		"web/package-lock.json":             "{}\n",
		"web/node_modules/jest/bin/jest.js": "// jest\n",
		".gitignore":                        "node_modules/\n*.pyc\n",
	})
	testkit.InitRepo(t, dir)
	if err := os.MkdirAll(filepath.Join(dir, "web/node_modules/.bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../jest/bin/jest.js", filepath.Join(dir, "web/node_modules/.bin/jest")); err != nil {
		t.Fatal(err)
	}
	return dir, testkit.Git(t, dir, "rev-parse", "HEAD")
}

// Each rule: the change named, blocking or not as it should.
func TestLeanedOnRules(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, dir string)
		blocks []string // the blocking changes, sorted
		added  []string // left out of the protected run without blocking
	}{
		{"helper modified", write("internal/testutil/assert.go", helperNoop), []string{"internal/testutil/assert.go"}, nil},
		{"helper deleted", write("internal/testutil/assert.go", ""), []string{"internal/testutil/assert.go"}, nil},
		{"helper of a helper modified", write("internal/testutil/assert/deep.go", "package assert\n\nfunc init() {}\n"), []string{"internal/testutil/assert/deep.go"}, nil},
		{"helper file added", write("internal/testutil/init.go", "package testutil\n\nfunc init() {}\n"), nil, []string{"internal/testutil/init.go"}},
		{"helper file added, ignored", func(t *testing.T, dir string) {
			write(".gitignore", "node_modules/\n*.pyc\nzz_*.go\n")(t, dir)
			write("internal/testutil/zz_init.go", "package testutil\n\nfunc init() {}\n")(t, dir)
		}, nil, []string{"internal/testutil/zz_init.go"}},
		{"code under test changed", write("calc/calc.go", calcGoFix), nil, nil},
		{"library used by another's tests, with its own tests", write("enc/enc.go", "package enc\n\nfunc Enc() { _ = 1 }\n"), nil, nil},
		{"library used by a program and by tests", write("lib/lib.go", "package lib\n\nvar X = 1\n"), nil, nil},
		{"go.mod replace changed", write("go.mod", "module example.com/calc\n\ngo 1.22\n\nrequire example.com/dep v1.0.0\n\nreplace example.com/dep => ./fake\n"), []string{"go.mod"}, nil},
		{"go.mod toolchain added", write("go.mod", "module example.com/calc\n\ngo 1.22\n\ntoolchain go1.22.1\n\nrequire example.com/dep v1.0.0\n\nreplace example.com/dep => ./dep\n"), []string{"go.mod"}, nil},
		{"go.mod new require", write("go.mod", "module example.com/calc\n\ngo 1.22\n\nrequire (\n\texample.com/dep v1.0.0\n\texample.com/more v1.2.0\n)\n\nreplace example.com/dep => ./dep\n"), nil, nil},
		{"go.work added", write("go.work", "go 1.22\n\nuse ./fake\n"), []string{"go.work"}, nil},
		{"vendored file modified", write("vendor/example.com/dep/dep.go", "package dep\n\nfunc init() {}\n"), []string{"vendor/example.com/dep/dep.go"}, nil},
		{"vendored file added", write("vendor/example.com/dep/zz.go", "package dep\n"), []string{"vendor/example.com/dep/zz.go"}, nil},
		{"unittest.py at the top", write("unittest.py", shadowUnittest), []string{"unittest.py"}, nil},
		{"a unittest package", write("py/unittest/__init__.py", shadowUnittest), []string{"py/unittest/__init__.py"}, nil},
		{"sitecustomize.py", write("py/sitecustomize.py", "import os\n"), []string{"py/sitecustomize.py"}, nil},
		{"a .pth file", write("py/evil.pth", "import os\n"), []string{"py/evil.pth"}, nil},
		{"a standard module shadowed on the path", write("py/random.py", "def random(): return 0\n"), []string{"py/random.py"}, nil},
		{"a module named like the standard library inside a package", write("py/app/types.py", "X = 1\n"), nil, nil},
		{"unittest.py inside a package (a check may run there)", write("py/app/unittest.py", shadowUnittest), []string{"py/app/unittest.py"}, nil},
		{"ignored unittest.pyc", write("py/unittest.pyc", "not really compiled\n"), []string{"py/unittest.pyc"}, nil},
		{"pytest.ini added", write("pytest.ini", "[pytest]\naddopts = -k nothing\n"), []string{"pytest.ini"}, nil},
		{"jest config added", write("web/jest.config.js", "module.exports = {testMatch: []}\n"), []string{"web/jest.config.js"}, nil},
		{"a .bin shim replaced by a script", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "web/node_modules/.bin/jest"))
			write("web/node_modules/.bin/jest", "#!/bin/sh\nexit 0\n")(t, dir)
		}, []string{"web/node_modules/.bin/jest"}, nil},
		{"a .bin shim linked out of node_modules", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "web/node_modules/.bin/jest"))
			if err := os.Symlink("../../fake.js", filepath.Join(dir, "web/node_modules/.bin/jest")); err != nil {
				t.Fatal(err)
			}
		}, []string{"web/node_modules/.bin/jest"}, nil},
		{"npm's own shim", func(t *testing.T, dir string) {
			write("web/node_modules/mocha/bin/mocha.js", "// mocha\n")(t, dir)
			if err := os.Symlink("../mocha/bin/mocha.js", filepath.Join(dir, "web/node_modules/.bin/mocha")); err != nil {
				t.Fatal(err)
			}
		}, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, fork := ruleRepo(t)
			c.change(t, dir)
			p, err := verify.Protect(context.Background(), git.Repo{Dir: dir}, dir, fork, verify.RulesOf(nil))
			if err != nil {
				t.Fatal(err)
			}
			got := blockingPaths(p)
			slices.Sort(got)
			if !slices.Equal(got, c.blocks) {
				t.Errorf("blocking changes %v, want %v (all: %v)", got, c.blocks, p.Changes)
			}
			var added []string
			for _, ch := range p.Changes {
				if ch.Rule == verify.RuleAddedTest {
					added = append(added, ch.Path)
				}
			}
			if !slices.Equal(added, c.added) {
				t.Errorf("left out without blocking %v, want %v", added, c.added)
			}
			// Whatever blocks is not in the protected run as the story
			// left it: R's version put back, or left out.
			_, hidden := p.View.Restored()
			for _, b := range c.blocks {
				if _, ok := p.View.Restore[b]; !ok && !slices.Contains(hidden, b) && b != "go.mod" {
					t.Errorf("%s is in the protected run as the story left it", b)
				}
			}
		})
	}
}

// write writes (or, with "", removes) one file of the tree.
func write(rel, content string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		if content == "" {
			if err := os.Remove(filepath.Join(dir, rel)); err != nil {
				t.Fatal(err)
			}
			return
		}
		testkit.WriteFiles(t, dir, map[string]string{rel: content})
	}
}
