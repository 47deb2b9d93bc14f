package ghschema_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/testdata/standin/gh/ghschema"
)

// TestVendoredSchema: the committed schema.graphql is what `go generate`
// makes from npm/package-lock.json today (npm ci from the registry). It
// needs npm and the registry: with SAGA_GITHUB_SCHEMA_TEST=1 (.ci/run sets
// it) it runs, otherwise it is skipped.
func TestVendoredSchema(t *testing.T) {
	if os.Getenv("SAGA_GITHUB_SCHEMA_TEST") != "1" {
		testkit.Needs(t, "set SAGA_GITHUB_SCHEMA_TEST=1 to vendor GitHub's schema again (npm ci) and compare")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is not installed")
	}
	out := t.TempDir()
	if b, err := exec.Command("go", "run", "schema_gen.go", "-out", out).CombinedOutput(); err != nil {
		t.Fatalf("go run schema_gen.go: %v\n%s", err, b)
	}
	for _, f := range []string{"schema.graphql", "LICENSE.md"} {
		fresh, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fresh, committed) {
			t.Errorf("%s differs from a fresh vendoring: run go generate ./testdata/standin/gh/ghschema", f)
		}
	}
}

// The schema loads (GitHub's duplicated definitions dropped), and the
// checks refuse what GitHub would: an unknown field, a missing variable,
// an answer missing a field or of the wrong type.
func TestChecks(t *testing.T) {
	s, err := ghschema.Load()
	if err != nil {
		t.Fatal(err)
	}
	q := `query Q($owner: String!) { repository(owner: $owner, name: "x") { id isPrivate stargazerCount } }`
	if _, _, err := ghschema.Query(s, q, map[string]any{"owner": "acme"}); err != nil {
		t.Fatalf("a valid query refused: %v", err)
	}
	if _, _, err := ghschema.Query(s, `query { repository(owner: "a", name: "b") { nope } }`, nil); err == nil {
		t.Error("an unknown field accepted")
	}
	if _, _, err := ghschema.Query(s, q, nil); err == nil {
		t.Error("a missing variable accepted")
	}
	doc, _, err := ghschema.Query(s, q, map[string]any{"owner": "acme"})
	if err != nil {
		t.Fatal(err)
	}
	for answer, ok := range map[string]bool{
		`{"data":{"repository":{"id":"R_1","isPrivate":false,"stargazerCount":3}}}`:           true,
		`{"data":{"repository":null}}`:                                                        true,
		`{"data":{"repository":{"id":"R_1","isPrivate":false}}}`:                              false, // missing
		`{"data":{"repository":{"id":"R_1","isPrivate":"no","stargazerCount":3}}}`:            false, // type
		`{"data":{"repository":{"id":"R_1","isPrivate":false,"stargazerCount":3,"extra":1}}}`: false, // not asked
		`{"data":{"repository":{"id":null,"isPrivate":false,"stargazerCount":3}}}`:            false, // non-null
		`{"data":{"repository":{"id":"R_1","isPrivate":false,"stargazerCount":1.5}}}`:         false, // Int
	} {
		if err := ghschema.CheckAnswer(s, doc, []byte(answer)); (err == nil) != ok {
			t.Errorf("CheckAnswer(%s): %v, want ok=%v", answer, err, ok)
		}
	}
}
