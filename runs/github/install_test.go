package github_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/runs/github"
)

// TestInstall: created, up to date, replaced when an older saga-lsp wrote
// it, refused with a diff once a person edited it, replaced with force.
func TestInstall(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, ".github", "workflows", "saga-story.yml")
	older := github.Source{Version: "v1.4.1", GoVersion: "1.26"}
	src := sources["release"]

	res, err := github.Install(root, older, false)
	if err != nil || !res.Created || !res.Written || res.Path != path {
		t.Fatalf("first install: %+v, %v", res, err)
	}
	res, err = github.Install(root, src, false)
	if err != nil || res.Created || !res.Written {
		t.Fatalf("install over an older, unedited workflow: %+v, %v", res, err)
	}
	res, err = github.Install(root, src, false)
	if err != nil || res.Written {
		t.Fatalf("install again: %+v, %v (want up to date)", res, err)
	}

	edited := strings.Replace(string(res.Content), "timeout-minutes: 120", "timeout-minutes: 300", 1)
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = github.Install(root, github.Source{Version: "v1.5.0", GoVersion: "1.26"}, false)
	var ee *github.EditedError
	if !errors.As(err, &ee) || res.Written {
		t.Fatalf("install over an edited workflow: %+v, %v", res, err)
	}
	if d := string(ee.Diff); !strings.Contains(d, "-    timeout-minutes: 300") || !strings.Contains(d, "+    timeout-minutes: 120") {
		t.Errorf("diff:\n%s", d)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("refusal %q: want the file and --force", err)
	}
	if got, _ := os.ReadFile(path); string(got) != edited {
		t.Error("the edited workflow was changed")
	}
	// A file saga-lsp did not write counts as edited.
	os.WriteFile(path, []byte("name: ours\non: push\n"), 0o644)
	if _, err := github.Install(root, src, false); !errors.As(err, &ee) {
		t.Errorf("install over a file saga-lsp did not write: %v", err)
	}
	res, err = github.Install(root, src, true)
	if err != nil || !res.Written {
		t.Fatalf("install --force: %+v, %v", res, err)
	}
	if got, _ := os.ReadFile(path); !github.Pristine(got) {
		t.Error("install --force did not write saga-lsp's workflow")
	}
}

// TestRemove: only an unedited workflow, or with force; none is no error.
func TestRemove(t *testing.T) {
	root := t.TempDir()
	src := sources["release"]
	path := filepath.Join(root, filepath.FromSlash(github.WorkflowPath))
	if res, err := github.Remove(root, src, false); err != nil || res.Removed {
		t.Fatalf("remove with none: %+v, %v", res, err)
	}
	if _, err := github.Install(root, github.Source{Version: "v1.0.0", GoVersion: "1.25"}, false); err != nil {
		t.Fatal(err)
	}
	if res, err := github.Remove(root, src, false); err != nil || !res.Removed {
		t.Fatalf("remove an unedited one (of another version): %+v, %v", res, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("still there: %v", err)
	}
	github.Install(root, src, false)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, append(data, "# mine\n"...), 0o644)
	var ee *github.EditedError
	if _, err := github.Remove(root, src, false); !errors.As(err, &ee) || !ee.Remove || !strings.Contains(string(ee.Diff), "-# mine") ||
		!strings.Contains(err.Error(), "--remove --force") {
		t.Fatalf("remove an edited one: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the edited workflow was removed: %v", err)
	}
	if res, err := github.Remove(root, src, true); err != nil || !res.Removed {
		t.Fatalf("remove --force: %+v, %v", res, err)
	}
}

// TestFromSource: only in saga-lsp's own repository.
func TestFromSource(t *testing.T) {
	root := t.TempDir()
	var fe *github.FromSourceError
	if _, err := github.Install(root, github.Source{FromSource: true}, false); !errors.As(err, &fe) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("no go.mod: %v", err)
	}
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/shop\n\ngo 1.26\n"), 0o644)
	if _, err := github.Install(root, github.Source{FromSource: true}, false); !errors.As(err, &fe) || !strings.Contains(err.Error(), "example.com/shop") {
		t.Fatalf("another module: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, ".github")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a refused install created .github")
	}
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("// saga-lsp\nmodule github.com/saga-ai/saga-lsp\n\ngo 1.26.0\n"), 0o644)
	if res, err := github.Install(root, github.Source{FromSource: true}, false); err != nil || !res.Created {
		t.Fatalf("saga-lsp's repository: %+v, %v", res, err)
	}
}
