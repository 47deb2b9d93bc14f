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

// TestInstallGitHubActionsPinsCommit: a build from source outside
// saga-lsp's own repository — a clone of the module, built by Go with its
// commit recorded (-buildvcs=true), plain or stamped by make with git
// describe's output — pins the workflow to that commit's pseudo-version;
// the same clone with an uncommitted change is refused, saying so, and
// nothing is written.
func TestInstallGitHubActionsPinsCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds saga-lsp twice from a clone")
	}
	clone := copyModule(t)
	testkit.Git(t, clone, "init", "-q", "-b", "main")
	testkit.Git(t, clone, "add", "-A")
	testkit.Git(t, clone, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "saga-lsp")
	rev := testkit.Git(t, clone, "rev-parse", "HEAD")
	cmd := exec.Command("git", "log", "-1", "--format=%cd", "--date=format-local:%Y%m%d%H%M%S")
	cmd.Dir, cmd.Env = clone, append(os.Environ(), "TZ=UTC")
	at, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	pseudo := "v0.0.0-" + strings.TrimSpace(string(at)) + "-" + rev[:12]
	build := func(name string, ldflags ...string) string {
		t.Helper()
		bin := filepath.Join(t.TempDir(), name)
		// -trimpath: the clone's folder is new at each run, and Go's cache
		// keys a package compiled without it by its folder — each run
		// would compile the whole module again (≈ 2 minutes of a 2-core
		// machine's make test). With it, the packages are those make
		// cross compiled (CGO_ENABLED=0 -trimpath, the same files); the
		// commit recorded (-buildvcs=true) is what this test is about,
		// and -trimpath does not change it.
		args := append([]string{"build", "-buildvcs=true", "-trimpath", "-o", bin}, ldflags...)
		cmd := exec.Command("go", append(args, "./cmd/saga-lsp")...)
		cmd.Dir, cmd.Env = clone, append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		return bin
	}
	for name, bin := range map[string]string{
		"go build":   build("saga-lsp"),
		"make build": build("saga-lsp", "-ldflags", "-X github.com/saga-ai/saga-lsp/cli.Version="+rev[:7]),
	} {
		root := testkit.GitRepo(t, "")
		r := testkit.Run(t, root, nil, "", bin, "install", "--github-actions")
		if r.Code != 0 || !strings.HasPrefix(r.Stdout, "created .github/workflows/saga-story.yml\n") {
			t.Fatalf("%s: install: exit %d\n%s%s", name, r.Code, r.Stdout, r.Stderr)
		}
		if !strings.Contains(r.Stdout, "pinned to saga-lsp "+pseudo+", this build's commit") {
			t.Errorf("%s: install does not say which commit it pinned:\n%s", name, r.Stdout)
		}
		got := testkit.ReadFile(t, filepath.Join(root, ".github", "workflows", "saga-story.yml"))
		src, err := github.ReleaseSource(pseudo, runtime.Version())
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := github.Render(src); got != string(want) {
			t.Errorf("%s: the workflow is not runs/github's rendering for %s:\n%s", name, pseudo, got)
		}
		if !strings.Contains(got, "github.com/saga-ai/saga-lsp/cmd/saga-lsp@"+pseudo+" ") {
			t.Errorf("%s: the workflow does not install saga-lsp@%s", name, pseudo)
		}
	}

	// Dirty: refused, saying so.
	if err := os.WriteFile(filepath.Join(clone, "cli", "zz_change.go"), []byte("package cli\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirty := build("saga-lsp")
	root := testkit.GitRepo(t, "")
	r := testkit.Run(t, root, nil, "", dirty, "install", "--github-actions")
	if r.Code != 2 || !strings.Contains(r.Stderr, "built from a modified tree (commit "+rev[:12]+" plus uncommitted changes)") {
		t.Errorf("a dirty build: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(root, ".github")); !os.IsNotExist(err) {
		t.Errorf("a dirty build wrote .github: %v", err)
	}
}

// copyModule copies the module's tracked files, as they are in the working
// tree, into a new folder without git.
func copyModule(t *testing.T) string {
	root := testkit.ModuleRoot(t)
	list, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	clone := t.TempDir()
	for _, name := range strings.Split(strings.TrimSuffix(string(list), "\x00"), "\x00") {
		fi, err := os.Lstat(filepath.Join(root, name))
		if os.IsNotExist(err) || (err == nil && !fi.Mode().IsRegular()) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(clone, name)), 0o755)
		if err := os.WriteFile(filepath.Join(clone, name), data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return clone
}
