package github_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/doctor"
	"github.com/saga-ai/saga-lsp/runs/github"
)

// doctor --on github's check of the workflow, offline: missing, in the
// checkout only, on origin's default branch as last fetched, edited, and
// changed since it was pushed.
func TestWorkflowCheck(t *testing.T) {
	ctx := context.Background()
	repo := testkit.GitRepo(t, "")
	check := func(step string, level doctor.Level, has string) {
		t.Helper()
		c := github.WorkflowCheck(ctx, repo)
		if c.Level != level || !strings.Contains(c.Detail, has) || (level != doctor.OK && c.Fix == "") {
			t.Errorf("%s: %+v, want %s with %q and a fix", step, c, level, has)
		}
	}
	check("none", doctor.Error, "no .github/workflows/saga-story.yml")
	res, err := github.Install(repo, sources["release"], false)
	if err != nil {
		t.Fatal(err)
	}
	check("no origin", doctor.Unchecked, "not checked offline")
	testkit.BareOrigin(t, repo)
	testkit.Git(t, repo, "remote", "set-head", "origin", "main")
	check("not pushed", doctor.Error, "origin/main has no .github/workflows/saga-story.yml (as last fetched)")
	testkit.Git(t, repo, "add", ".github")
	testkit.Git(t, repo, "commit", "-qm", "workflow")
	testkit.Git(t, repo, "push", "-q", "origin", "main")
	check("pushed", doctor.OK, "on origin/main as last fetched")
	newer, err := github.Install(repo, github.Source{Version: "v9.9.9", GoVersion: "1.26"}, false)
	if err != nil || !newer.Written {
		t.Fatalf("install a newer one: %+v, %v", newer, err)
	}
	check("changed, not pushed", doctor.Warning, "differs from origin/main's")
	edited := strings.Replace(string(res.Content), "timeout-minutes: 120", "timeout-minutes: 300", 1)
	if err := os.WriteFile(filepath.Join(repo, github.WorkflowPath), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	check("edited", doctor.Warning, "was edited since saga-lsp wrote it")
}
