package ghrest_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/testdata/standin/gh/ghrest"
)

// TestVendoredREST: the committed rest.json and LICENSE are what `go
// generate` makes from the pinned tarball today (npm pack from the
// registry, its sha256 checked). It needs npm and the registry: with
// SAGA_GITHUB_SCHEMA_TEST=1 (.ci/run sets it) it runs, otherwise it is
// skipped.
func TestVendoredREST(t *testing.T) {
	if os.Getenv("SAGA_GITHUB_SCHEMA_TEST") != "1" {
		testkit.Needs(t, "set SAGA_GITHUB_SCHEMA_TEST=1 to vendor GitHub's REST description again (npm pack) and compare")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is not installed")
	}
	out := t.TempDir()
	if b, err := exec.Command("go", "run", "rest_gen.go", "-out", out).CombinedOutput(); err != nil {
		t.Fatalf("go run rest_gen.go: %v\n%s", err, b)
	}
	for _, f := range []string{"rest.json", "LICENSE"} {
		fresh, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fresh, committed) {
			t.Errorf("%s differs from a fresh vendoring: run go generate ./testdata/standin/gh/ghrest", f)
		}
	}
}

// The checks refuse what GitHub's description does not have: a path or
// method, a body field, a query parameter, an answer's field or type.
func TestChecks(t *testing.T) {
	s, err := ghrest.Load()
	if err != nil {
		t.Fatal(err)
	}
	if s.Source.Version == "" || len(s.Source.SHA256) != 64 {
		t.Errorf("the source is not recorded: %+v", s.Source)
	}
	op, vals, err := s.Find("POST", "repos/acme/shop/pulls/7/requested_reviewers")
	if err != nil || vals["pull_number"] != "7" || vals["owner"] != "acme" {
		t.Fatalf("find: %v %v", err, vals)
	}
	if _, _, err := s.Find("DELETE", "repos/acme/shop/pulls/7/requested_reviewers"); err == nil {
		t.Error("a method the subset does not hold found")
	}
	if _, _, err := s.Find("GET", "repos/acme/shop/pulls/7/requested_reviewer"); err == nil {
		t.Error("an unknown path found")
	}
	if err := op.CheckFields("body", map[string]any{"reviewers": []any{"alice"}}); err != nil {
		t.Errorf("reviewers refused: %v", err)
	}
	if err := op.CheckFields("body", map[string]any{"reviewer": []any{"alice"}}); err == nil {
		t.Error("an unknown body field accepted")
	}
	if err := op.CheckFields("body", map[string]any{"reviewers": "alice"}); err == nil {
		t.Error("a string for an array accepted")
	}
	arts, _, err := s.Find("GET", "repos/acme/shop/actions/runs/12/artifacts?per_page=100")
	if err != nil {
		t.Fatal(err)
	}
	if err := arts.CheckFields("query", map[string]any{"per_page": "100"}); err != nil {
		t.Errorf("per_page refused: %v", err)
	}
	if err := arts.CheckFields("query", map[string]any{"perpage": "100"}); err == nil {
		t.Error("an unknown query parameter accepted")
	}
	perm, _, err := s.Find("GET", "/repos/acme/shop/collaborators/alice/permission")
	if err != nil {
		t.Fatal(err)
	}
	for answer, ok := range map[string]bool{
		`{"permission":"write","role_name":"write","user":{"login":"alice","type":"User","site_admin":false}}`: true,
		`{"permission":"write","level":"write"}`:                            false, // not in the description
		`{"permission":3}`:                                                  false, // type
		`{"permission":"write","user":{"login":"alice","site_admin":"no"}}`: false, // nested type
	} {
		if err := perm.CheckAnswer(200, []byte(answer)); (err == nil) != ok {
			t.Errorf("CheckAnswer(%s): %v, want ok=%v", answer, err, ok)
		}
	}
	if err := perm.CheckAnswer(500, []byte(`{}`)); err == nil {
		t.Error("an undescribed status accepted")
	}
	if err := perm.Field(200, "permission"); err != nil {
		t.Error(err)
	}
	if err := perm.Field(200, "level"); err == nil {
		t.Error("an unknown field found")
	}
	if err := arts.Field(200, "artifacts", "[]", "workflow_run", "head_sha"); err != nil {
		t.Error(err)
	}
}
