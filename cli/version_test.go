package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

func TestVersionOf(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "816994d59a3587c436963fa7bf0a85680dd3313b"}, {Key: "vcs.modified", Value: "true"}}
	for _, c := range []struct {
		main     string
		settings []debug.BuildSetting
		want     string
	}{
		{"v1.2.3", nil, "v1.2.3"}, // go install …@v1.2.3
		{"v0.0.0-20261127033714-816994d59a35+dirty", rev, "v0.0.0-20261127033714-816994d59a35+dirty"},
		{"(devel)", rev, "devel-816994d59a35+dirty"},
		{"", rev[:1], "devel-816994d59a35"},
		{"(devel)", nil, "unknown"},
	} {
		info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/saga-ai/saga-lsp", Version: c.main}, Settings: c.settings}
		if got := versionOf(info); got != c.want {
			t.Errorf("versionOf(%q, %v) = %q, want %q", c.main, c.settings, got, c.want)
		}
	}
}

// TestVersionOfPlainBuild: `go build` in a git checkout, no ldflags, reports
// the commit it was built from — never "dev" (issue 25).
func TestVersionOfPlainBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binary")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// A clone, not a linked worktree (.git a file), where the toolchain
	// records no commit either.
	if fi, err := os.Stat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
		testkit.Needs(t, "a git clone, not a linked worktree or a source archive: elsewhere the build records no commit")
	}
	bin := filepath.Join(t.TempDir(), "saga-lsp")
	// -trimpath: the packages make cross compiled (CGO_ENABLED=0), not a
	// compile of the module of its own; the commit recorded is the same.
	build := exec.Command("go", "build", "-buildvcs=true", "-trimpath", "-o", bin, "./cmd/saga-lsp")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	head := testkit.Git(t, root, "rev-parse", "--short=12", "HEAD")
	if !regexp.MustCompile(`^saga-lsp v0\.0\.0-[0-9]{14}-` + head + `(\+dirty)?\n$`).Match(out) {
		t.Fatalf("--version of a plain build at %s: %q", head, out)
	}
}
