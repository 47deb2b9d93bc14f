package dashboard_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// Red team (issue 32, closing note): several repositories in one
// dashboard. A story or an epic of repository B, named on repository A's
// pages and actions, is neither shown nor acted on: every page and action
// looks the id up in the repository its URL names, and runs there only.
func TestRepositoriesKeptApart(t *testing.T) {
	a := shopRepo(t)
	b, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	testkit.WriteFiles(t, b, map[string]string{
		".saga/stories/bonly/story.json": `{"id": "bonly", "title": "B-ONLY-TITLE", "description": "B-ONLY-DESCRIPTION"}` + "\n",
		".saga/stories/bonly/t.json":     task("t", "pending"),
		".saga/stories/bonly/journal.md": "# Journal: bonly\n\nB-ONLY-JOURNAL\n",
		".saga/epics/bepic/epic.json":    `{"id": "bepic", "title": "B-EPIC-TITLE", "description": "", "children": [{"id": "bonly", "blockedBy": []}]}` + "\n",
	})
	testkit.InitRepo(t, b)
	s := serve(t, a, b)
	c := s.client(t)
	ka, kb := repoKeyOf(a), repoKeyOf(b)
	if ka == kb {
		t.Fatalf("both repositories have the key %s", ka)
	}

	// B's own pages show B's story: the fixture is right.
	if res, body := get(t, c, s.base+"/r/"+kb+"/story/bonly", nil); res.StatusCode != 200 || !strings.Contains(body, "B-ONLY-TITLE") {
		t.Fatalf("B's page of its story: %s", res.Status)
	}
	// A's pages never show it.
	for _, p := range []string{"/story/bonly", "/story/bonly/output", "/story/bonly/review", "/story/bonly/review?file=.saga/stories/bonly/journal.md",
		"/epic/bepic"} {
		res, body := get(t, c, s.base+"/r/"+ka+p, nil)
		if res.StatusCode == 200 || strings.Contains(body, "B-ONLY") || strings.Contains(body, "B-EPIC") {
			t.Errorf("GET /r/%s%s (B's id on A's page): %s\n%s", ka, p, res.Status, body)
		}
	}
	// A's actions refuse it, confirmed or not, and nothing starts anywhere.
	same := map[string]string{"Origin": s.base, "Accept": "application/json"}
	for _, op := range []string{"run", "stop", "reset", "clean"} {
		res, body := post(t, c, s.base+"/r/"+ka+"/story/bonly/"+op, url.Values{"confirm": {"yes"}, "dryRun": {"on"}}, same)
		if res.StatusCode != 400 || !strings.Contains(body, `no story \"bonly\" in `+ka) {
			t.Errorf("POST story/bonly/%s on A: %s %s", op, res.Status, body)
		}
	}
	for _, op := range []string{"run", "stop"} {
		res, body := post(t, c, s.base+"/r/"+ka+"/epic/bepic/"+op, url.Values{"confirm": {"yes"}, "dryRun": {"on"}}, same)
		if res.StatusCode != 400 || strings.Contains(body, "Started") {
			t.Errorf("POST epic/bepic/%s on A: %s %s", op, res.Status, body)
		}
	}
	for _, root := range []string{a, b} {
		if out := testkit.Git(t, root, "branch", "--list", "*bonly*"); strings.TrimSpace(out) != "" {
			t.Errorf("a branch of bonly in %s: %s", root, out)
		}
		if _, err := os.Stat(filepath.Join(root, ".saga/worktrees")); err == nil {
			t.Errorf("a worktree was made in %s", root)
		}
	}
	if runs, _ := filepath.Glob(filepath.Join(os.Getenv("SAGA_SESSION_DIR"), "*bonly*")); len(runs) > 0 {
		t.Errorf("runs of bonly: %v", runs)
	}
}
