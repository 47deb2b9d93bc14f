package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/github"
)

// TestInstallGitHubActionsRelease: a release build writes the workflow
// pinned at its own version, with the Go it was built with; the file is
// exactly what runs/github renders (its golden and actionlint tests).
func TestInstallGitHubActionsRelease(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "saga-lsp")
	build := exec.Command("go", "build", "-ldflags", "-X github.com/saga-ai/saga-lsp/cli.Version=v9.8.7", "-o", bin, "./cmd/saga-lsp")
	build.Dir = testkit.ModuleRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root := testkit.GitRepo(t, "")
	r := testkit.Run(t, root, nil, "", bin, "install", "--github-actions")
	if r.Code != 0 || r.Stdout == "" || !strings.HasPrefix(r.Stdout, "created .github/workflows/saga-story.yml\n") {
		t.Fatalf("install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	got, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "saga-story.yml"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := github.ReleaseSource("v9.8.7", runtime.Version())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := github.Render(src)
	if string(got) != string(want) {
		t.Errorf("the workflow differs from runs/github's rendering for v9.8.7:\n%s", got)
	}
	if !strings.Contains(string(got), "github.com/saga-ai/saga-lsp/cmd/saga-lsp@v9.8.7") {
		t.Error("the workflow does not pin v9.8.7")
	}
}
