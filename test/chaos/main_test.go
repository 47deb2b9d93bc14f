package chaos_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// bin is the saga-lsp binary the chaos tests drive, built once.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "saga-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "saga-lsp")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/saga-lsp").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// workspace copies examples/workspace into a temp dir.
func workspace(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dst := filepath.Join(t.TempDir(), "ws")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(filepath.Dir(file), "..", "..", "examples", "workspace"))); err != nil {
		t.Fatal(err)
	}
	return dst
}
