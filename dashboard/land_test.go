//go:build unix

package dashboard_test

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
)

// TestLandAction: the story page offers Land for a story whose PR is not
// landed, with its land state beside it; the same-origin POST runs a land
// pass against the gh stand-in — the PR is merged on origin — and answers
// what it did; the page then says landed and offers no Land. A POST from
// another site is refused before anything runs.
func TestLandAction(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	testkit.WriteFiles(t, root, map[string]string{
		".saga/epics/shop/epic.json":       `{"id": "shop", "title": "Shop", "description": "", "children": [{"id": "shop--a", "blockedBy": []}]}` + "\n",
		".saga/stories/shop--a/story.json": `{"id": "shop--a", "title": "A", "description": ""}` + "\n",
		".saga/stories/shop--a/one.json":   task("one", "pending"),
	})
	testkit.InitRepo(t, root)
	origin := testkit.BareOrigin(t, root)
	pr, state := testkit.StandinPR(t, root, "shop--a", map[string]string{"a.txt": "a\n", ".saga/stories/shop--a/one.json": task("one", "completed")})
	if err := runs.WriteRecord(root, runs.Record{Story: "shop--a", Session: "saga-story-shop--a-1", Status: runs.StatusCompleted,
		Ended: time.Now().UTC(), Branch: "story/shop--a", Base: "main", PR: pr}); err != nil {
		t.Fatal(err)
	}

	s := serve(t, root)
	c := s.client(t)
	key := repoKeyOf(root)
	page := s.base + "/r/" + key + "/story/shop--a"
	if _, body := get(t, c, page, nil); !strings.Contains(body, `id="land-story"`) || !strings.Contains(body, `data-land="unlanded"`) {
		t.Fatalf("the story page offers no Land, or no land state:\n%s", body)
	}
	if _, body := get(t, c, s.base+"/r/"+key+"/epic/shop", nil); !strings.Contains(body, `id="land-epic"`) {
		t.Errorf("the epic page offers no Land")
	}
	merged := func() bool {
		st := map[string]any{}
		json.Unmarshal([]byte(testkit.ReadFile(t, state)), &st)
		prs, _ := st["prs"].([]any)
		return len(prs) == 1 && prs[0].(map[string]any)["state"] == "MERGED"
	}

	form := url.Values{"confirm": {"yes"}}
	for name, h := range map[string]map[string]string{
		"another origin": {"Origin": "http://evil.example"},
		"cross-site":     {"Sec-Fetch-Site": "cross-site"},
	} {
		if res, _ := post(t, c, page+"/land", form, h); res.StatusCode != 403 {
			t.Errorf("POST land, %s: %s", name, res.Status)
		}
	}
	if merged() {
		t.Fatal("a cross-site POST landed the story")
	}

	res, body := post(t, c, page+"/land", form, map[string]string{"Origin": s.base, "Accept": "application/json"})
	var ar struct {
		OK      bool   `json:"ok"`
		Message string `json:"message"`
	}
	json.Unmarshal([]byte(body), &ar)
	if res.StatusCode != 200 || !ar.OK || !strings.Contains(ar.Message, "merged shop--a: #1 with merge") || !strings.Contains(ar.Message, "shop--a: landed") {
		t.Fatalf("POST land: %s %s", res.Status, body)
	}
	if !merged() {
		t.Fatal("the stand-in's PR is not merged")
	}
	if got := testkit.Git(t, origin, "log", "-1", "--format=%s", "main"); !strings.Contains(got, "Merge") && !strings.Contains(got, "#1") {
		t.Errorf("origin's main: %q", got)
	}
	if _, body := get(t, c, page, nil); !strings.Contains(body, `data-land="landed"`) || strings.Contains(body, `id="land-story"`) {
		t.Errorf("after the land the page does not say landed, or still offers Land:\n%s", body)
	}
	// No open conflict: Resolve is refused, nothing starts.
	if res, body := post(t, c, page+"/resolve", form, map[string]string{"Origin": s.base, "Accept": "application/json"}); res.StatusCode != 409 ||
		!strings.Contains(body, "has no open conflict to resolve") {
		t.Errorf("POST resolve: %s %s", res.Status, body)
	}
}
