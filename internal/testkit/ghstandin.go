package testkit

import (
	"path/filepath"
	"strings"
	"testing"
)

// StandinPR opens a story's pull request on the gh stand-in
// (testdata/standin/gh), for tests of what reads or lands it: the stand-in
// is the test's gh (SAGA_GH, its state in a temporary file, the repository
// acme/shop, green CI on every pushed commit); story/<story> is made from
// main in repo with files committed, pushed to repo's origin, and its PR
// opened into main. It returns the PR's URL and the stand-in's state file.
func StandinPR(tb testing.TB, repo, story string, files map[string]string) (url, state string) {
	tb.Helper()
	state = filepath.Join(tb.TempDir(), "gh.json")
	WriteFiles(tb, filepath.Dir(state), map[string]string{"gh.json": `{"repository": {"ci": [{"name": "test", "conclusion": "SUCCESS"}]}}`})
	gh := Build(tb, "./testdata/standin/gh")
	tb.Setenv("SAGA_GH", gh)
	tb.Setenv("GH_STANDIN_STATE", state)
	tb.Setenv("GH_STANDIN_REPO", "acme/shop")
	branch := "story/" + story
	Git(tb, repo, "checkout", "-q", "-b", branch, "main")
	WriteFiles(tb, repo, files)
	Git(tb, repo, "add", "-A")
	Git(tb, repo, "commit", "-q", "-m", story+": its work")
	Git(tb, repo, "push", "-q", "origin", branch)
	Git(tb, repo, "checkout", "-q", "main")
	r := Run(tb, repo, nil, "", gh, "pr", "create", "--title", story, "--body", "", "--base", "main", "--head", branch)
	if r.Code != 0 {
		tb.Fatalf("gh pr create: %s", r.Stderr)
	}
	return strings.TrimSpace(r.Stdout), state
}
