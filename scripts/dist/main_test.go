package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/runs"
)

// TestDist builds the release for the host's target (all six, and the
// VS Code extensions, with SAGA_DIST_TEST=1 as CI sets it) twice: the
// archives hold what docs/releasing.md lists, the host's binary reports the
// stamped version, checksums.txt verifies with sha256sum, and the second
// build's archives are byte for byte the first's (the .vsix files are
// vsce's zips, with its times: not compared).
func TestDist(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: cross-builds saga-lsp for six targets")
	}
	if err := os.Chdir("../.."); err != nil {
		t.Fatal(err)
	}
	only, vsix := runtime.GOOS+"/"+runtime.GOARCH, false
	if os.Getenv("SAGA_DIST_TEST") == "1" {
		only, vsix = "", true
	}
	first, second := filepath.Join(t.TempDir(), "dist"), filepath.Join(t.TempDir(), "dist")
	if err := run(first, "v1.2.3-test", only, vsix); err != nil {
		t.Fatal(err)
	}
	if err := run(second, "v1.2.3-test", only, false); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(first, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := 6
	if only != "" {
		want = 1
	}
	if vsix {
		want *= 2
	}
	if n := strings.Count(string(sums), "\n"); n != want {
		t.Fatalf("checksums.txt lists %d files, want %d:\n%s", n, want, sums)
	}
	check := exec.Command("sha256sum", "-c", "checksums.txt")
	check.Dir = first
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum -c: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		name := strings.Fields(line)[1]
		if strings.HasSuffix(name, ".vsix") {
			continue
		}
		a, _ := os.ReadFile(filepath.Join(first, name))
		b, _ := os.ReadFile(filepath.Join(second, name))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two builds of the same commit", name)
		}
		files := archiveFiles(t, filepath.Join(first, name))
		base := strings.TrimSuffix(strings.TrimSuffix(name, ".tar.gz"), ".zip")
		exe, hookExe := "saga-lsp", "saga-lsp-hook"
		if strings.Contains(name, "_windows_") {
			exe, hookExe = exe+".exe", hookExe+".exe"
		}
		for _, f := range []string{exe, hookExe, "README.md", "LICENSE", "man/saga-lsp.1", "completions/saga-lsp.bash", "completions/_saga-lsp", "completions/saga-lsp.fish"} {
			if len(files[base+"/"+f]) == 0 {
				t.Errorf("%s: no %s", name, f)
			}
		}
		// Every link of every Markdown file in it leads to a file in it:
		// the README's docs/*.md, and theirs.
		for f, data := range files {
			if !strings.HasSuffix(f, ".md") {
				continue
			}
			if !strings.Contains(f, "/docs/") && !strings.HasSuffix(f, "/README.md") {
				continue
			}
			for _, m := range regexp.MustCompile(`\]\(([^)#\s]+)`).FindAllStringSubmatch(string(data), -1) {
				if strings.Contains(m[1], ":") {
					continue
				}
				if target := path.Join(path.Dir(f), m[1]); len(files[target]) == 0 {
					t.Errorf("%s: %s links to %s, which is not in the archive", name, strings.TrimPrefix(f, base+"/"), m[1])
				}
			}
		}
		if files[base+"/docs/commands.md"] == nil {
			t.Errorf("%s: no docs/commands.md", name)
		}
		if strings.Contains(name, "_"+runtime.GOOS+"_"+runtime.GOARCH+".") {
			dir := t.TempDir()
			bin := filepath.Join(dir, exe)
			os.WriteFile(bin, files[base+"/"+exe], 0o755)
			os.WriteFile(filepath.Join(dir, hookExe), files[base+"/"+hookExe], 0o755)
			out, err := exec.Command(bin, "--version").Output()
			if err != nil || string(out) != "saga-lsp v1.2.3-test\n" {
				t.Errorf("%s --version: %q %v", name, out, err)
			}
			// The hook program in the archive is the one the worker runs.
			if got := runs.HookProgram(bin); got != filepath.Join(dir, hookExe) {
				t.Errorf("%s: the worker would run %s, not the archive's %s", name, got, hookExe)
			}
		}
	}
}

func archiveFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			r, _ := f.Open()
			files[f.Name], _ = io.ReadAll(r)
			r.Close()
		}
		return files
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name], _ = io.ReadAll(tr)
	}
	return files
}
