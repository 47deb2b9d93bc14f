package testkit

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// GoTestCache fills dst, a Go build cache, with the entries of the user's
// cache that go test of a one-package module reads (the standard library
// compiled for testing, its vet facts): a cache as warm as a user's after
// any go test, without compiling the standard library again (≈ 45 s of
// CPU) or linking the user's whole cache (146,000 files and as many
// removals on a developer's machine). Hard links when link is set (Go
// writes its entries once, by renaming new files, so a link is never
// written through), copies otherwise and where a link cannot be made. It
// returns how many files it put there.
func GoTestCache(tb testing.TB, dst string, link bool) int {
	tb.Helper()
	e, err := goTestEntries()
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, rel := range e.rels {
		from, to := filepath.Join(e.src, rel), filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			tb.Fatal(err)
		}
		if link && os.Link(from, to) == nil || copyFile(from, to) == nil {
			n++
		}
	}
	return n
}

// cacheFiles are files of the Go cache src, by their paths in it.
type cacheFiles struct {
	src  string
	rels []string
}

// goTestEntries is the user's Go cache and the files in it that go test
// of a one-package module reads, found once per test process:
// GODEBUG=gocachehash=1 prints every key the go command looks up (`go
// help cache`); each key with an index entry (<xx>/<key>-a) is kept with
// its output (<xx>/<output id>-d).
var goTestEntries = sync.OnceValues(func() (cacheFiles, error) {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return cacheFiles{}, fmt.Errorf("go env GOCACHE: %v", err)
	}
	src := strings.TrimSpace(string(out))
	probe, err := os.MkdirTemp("", "saga-lsp-testkit-probe-")
	if err != nil {
		return cacheFiles{}, err
	}
	defer os.RemoveAll(probe)
	for name, text := range map[string]string{
		"go.mod":       "module probe\n\ngo 1.22\n",
		"p/p.go":       "package p\n\nfunc Add(a, b int) int { return a + b }\n",
		"p/p_test.go":  "package p\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(Add(2, 3))\n\t}\n}\n",
		"p/x_test.go":  "package p_test\n\nimport (\n\t\"testing\"\n\n\t\"probe/p\"\n)\n\nfunc TestX(t *testing.T) { _ = p.Add(1, 1) }\n",
		"p/testdata/x": "x\n",
	} {
		if err := os.MkdirAll(filepath.Join(probe, filepath.Dir(name)), 0o755); err != nil {
			return cacheFiles{}, err
		}
		if err := os.WriteFile(filepath.Join(probe, name), []byte(text), 0o644); err != nil {
			return cacheFiles{}, err
		}
	}
	cmd := exec.Command("go", "test", "-count=1", "./...")
	cmd.Dir, cmd.Env = probe, append(os.Environ(), "GOCACHE="+src, "GODEBUG=gocachehash=1", "GOFLAGS=", "GOTOOLCHAIN=local")
	hashes, err := cmd.CombinedOutput()
	if err != nil {
		return cacheFiles{}, fmt.Errorf("go test of a probe module: %v\n%.2000s", err, hashes)
	}
	var rels []string
	seen := map[string]bool{}
	for _, key := range regexp.MustCompile(`\b[0-9a-f]{64}\b`).FindAllString(string(hashes), -1) {
		if seen[key] {
			continue
		}
		seen[key] = true
		index := filepath.Join(key[:2], key+"-a")
		entry, err := os.ReadFile(filepath.Join(src, index))
		if f := strings.Fields(string(entry)); err == nil && len(f) > 2 && len(f[2]) == 64 {
			rels = append(rels, index, filepath.Join(f[2][:2], f[2]+"-d"))
		}
	}
	if len(rels) == 0 {
		return cacheFiles{}, fmt.Errorf("go test with GODEBUG=gocachehash=1 named no entry of %s", src)
	}
	return cacheFiles{src, rels}, nil
})

// copyFile copies the regular file from to a new file to.
func copyFile(from, to string) error {
	r, err := os.Open(from)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
