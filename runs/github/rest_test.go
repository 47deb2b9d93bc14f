package github_test

import (
	"testing"

	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/testdata/standin/gh/ghrest"
)

// The REST calls this package makes through `gh api` (the workflow's id,
// a run's artifacts) are operations of GitHub's published description
// (ghrest), and the fields it reads of their answers are in it — listed
// here as workflowID and artifactSize decode them. The stand-in checks
// each call and each of its answers against the same description.
func TestRESTAgainstGitHubDescription(t *testing.T) {
	spec, err := ghrest.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path   string
		query  map[string]any
		fields [][]string
	}{
		{"repos/acme/shop/actions/workflows/" + github.WorkflowFile, nil, [][]string{{"id"}, {"path"}}},
		{"repos/acme/shop/actions/runs/42/artifacts", map[string]any{"per_page": "100"},
			[][]string{{"artifacts", "[]", "name"}, {"artifacts", "[]", "size_in_bytes"}, {"artifacts", "[]", "expired"}}},
	} {
		op, _, err := spec.Find("GET", c.path)
		if err != nil {
			t.Error(err)
			continue
		}
		if err := op.CheckFields("query", c.query); err != nil {
			t.Error(err)
		}
		for _, f := range c.fields {
			if err := op.Field(200, f...); err != nil {
				t.Error(err)
			}
		}
	}
}
