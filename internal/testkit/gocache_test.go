package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// TestGoTestCache: go test of another module than the probe, with the
// cache GoTestCache filled, compiles none of the standard library — only
// the module's own package and its test main — and the cache's files are
// copies, not the user's (a write to one leaves the user's as it was).
func TestGoTestCache(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "go-build")
	n := GoTestCache(t, cache, false)
	if n == 0 {
		t.Fatal("no file put")
	}
	dir := t.TempDir()
	WriteFiles(t, dir, map[string]string{
		"go.mod":           "module example.com/calc\n\ngo 1.22\n",
		"calc/calc.go":     "package calc\n\nfunc Mul(a, b int) int { return a * b }\n",
		"calc/mul_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Fatal(Mul(2, 3))\n\t}\n}\n",
	})
	cmd := exec.Command("go", "test", "-x", "-count=1", "./...")
	cmd.Dir, cmd.Env = dir, append(CleanEnv(), "GOCACHE="+cache, "GOFLAGS=", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}
	if std := regexp.MustCompile(`(?m)/compile .* -std .*$`).FindAllString(string(out), -1); len(std) > 0 {
		t.Errorf("go test compiled %d packages of the standard library again, e.g.\n%s", len(std), std[0])
	}
	e, _ := goTestEntries()
	a, b := filepath.Join(e.src, e.rels[0]), filepath.Join(cache, e.rels[0])
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA != nil || errB != nil || os.SameFile(fa, fb) {
		t.Errorf("%s is not a copy of %s: %v %v", b, a, errA, errB)
	}
}
