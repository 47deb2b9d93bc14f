package vscode_test

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestREADMERecipe runs the README's VS Code recipe as written, from the
// root of a copy of the repository (its tracked files): `make build`, then
// package-target.sh with the relative paths the README gives. The .vsix
// it leaves carries that bin/saga-lsp as its server. `code
// --install-extension` is the one line not run (TestVSCodeExtension
// installs a .vsix packaged the same way into code-server). Needs the npm
// registry (npm ci), so it runs with SAGA_VSCODE_TEST=1, as .ci/run sets.
func TestREADMERecipe(t *testing.T) {
	if os.Getenv("SAGA_VSCODE_TEST") != "1" {
		t.Skip("set SAGA_VSCODE_TEST=1 to package the README's .vsix (needs npm and its registry)")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the README's recipe packages linux-x64")
	}
	t.Parallel() // a copy of the repository of its own: beside TestVSCodeExtension
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```sh\n(make build\neditors/vscode/scripts/package-target.sh [^\n]*\ncode --install-extension [^\n]*\n)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README.md has no VS Code recipe (make build, package-target.sh, code --install-extension)")
	}
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(string(block[1])), "\n") {
		line, _, _ = strings.Cut(line, "   #") // the comment: other targets
		if !strings.HasPrefix(line, "code ") {
			lines = append(lines, strings.TrimSpace(line))
		}
	}
	clone := testkit.CopyRepository(t)
	cmd := exec.Command("bash", "-euc", strings.Join(lines, "\n"))
	// GOFLAGS=-trimpath: Go's cache keys a package built without it by its
	// folder, and the copy's is new, so make build would compile the whole
	// module again; with it, the packages are those make cross compiled
	// (CGO_ENABLED=0 -trimpath, the same files). The commands are the
	// README's as written.
	cmd.Dir, cmd.Env = clone, append(os.Environ(), "GOFLAGS=-trimpath")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's recipe from the repository's root:\n%s\nfailed: %v\n%s", strings.Join(lines, "\n"), err, out)
	}
	want, err := os.ReadFile(filepath.Join(clone, "bin", "saga-lsp"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(filepath.Join(clone, "saga-lsp.vsix"))
	if err != nil {
		t.Fatalf("the recipe left no saga-lsp.vsix at the root: %v", err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name == "extension/server/saga-lsp" {
			r, _ := f.Open()
			got, _ := io.ReadAll(r)
			r.Close()
			if !bytes.Equal(got, want) {
				t.Errorf("the .vsix's server is not bin/saga-lsp")
			}
			return
		}
	}
	t.Errorf("the .vsix has no extension/server/saga-lsp")
}
