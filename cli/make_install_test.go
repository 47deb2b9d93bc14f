package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestMakeInstall runs `make install` into a PREFIX of its own, as README
// and docs/releasing.md#make-install say: the two programs in PREFIX/bin,
// the page `saga-lsp man` prints where man finds it for that saga-lsp on
// PATH, and the completions where bash-completion, zsh and fish look, each
// what `saga-lsp completion` prints; bash completes from the installed
// script.
func TestMakeInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and installs saga-lsp")
	}
	prefix := t.TempDir()
	cmd := exec.Command("make", "install", "PREFIX="+prefix)
	// GOFLAGS=-trimpath: make install builds CGO_ENABLED=0, which no
	// other build of make test does without -trimpath, so it compiled the
	// whole module once more (≈ 1 minute of both cores); with it, the
	// packages are those make cross compiled (docs/architecture.md#test-time).
	// What is installed, and where, is what this test is about.
	cmd.Dir, cmd.Env = testkit.ModuleRoot(t), append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -trimpath"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	bin := filepath.Join(prefix, "bin", "saga-lsp")
	if _, err := os.Stat(filepath.Join(prefix, "bin", "saga-lsp-hook")); err != nil {
		t.Error(err)
	}
	for file, args := range map[string][]string{
		"share/man/man1/saga-lsp.1":                     {"man"},
		"share/bash-completion/completions/saga-lsp":    {"completion", "bash"},
		"share/zsh/site-functions/_saga-lsp":            {"completion", "zsh"},
		"share/fish/vendor_completions.d/saga-lsp.fish": {"completion", "fish"},
	} {
		want, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("saga-lsp %v: %v", args, err)
		}
		got, err := os.ReadFile(filepath.Join(prefix, file))
		if err != nil || !bytes.Equal(got, want) || len(got) == 0 {
			t.Errorf("%s is not what saga-lsp %s prints (%v)", file, strings.Join(args, " "), err)
		}
	}
	page, _ := os.ReadFile(filepath.Join(prefix, "share/man/man1/saga-lsp.1"))
	if !bytes.Contains(page, []byte(".B \\-\\-dry\\-run\n")) {
		t.Errorf("the installed page shows --dry-run with a placeholder or not at all")
	}
	// man-db finds PREFIX/share/man for PREFIX/bin on PATH.
	if _, err := exec.LookPath("man"); err == nil {
		cmd := exec.Command("man", "-w", "saga-lsp")
		cmd.Env = append(testkit.CleanEnv(), "PATH="+filepath.Dir(bin)+":/usr/bin:/bin", "HOME="+t.TempDir())
		out, err := cmd.Output()
		if want := filepath.Join(prefix, "share/man/man1/saga-lsp.1"); err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("man -w saga-lsp: %q %v, want %s", out, err, want)
		}
	}
	out := shellOut(t, t.TempDir(), append(testkit.CleanEnv(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH")), "bash", "-c",
		`source "$0"; COMP_WORDS=(saga-lsp run --dry); COMP_CWORD=2; _saga_lsp; echo "${COMPREPLY[*]}"`,
		filepath.Join(prefix, "share/bash-completion/completions/saga-lsp"))
	if strings.TrimSpace(out) != "--dry-run" {
		t.Errorf("bash completion from the installed script: %q", out)
	}
}
