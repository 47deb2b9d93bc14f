//go:build unix

package lsp

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
)

// landWorkspace is testdata/land.txtar in a git repository with an origin
// and the gh stand-in: cart's branch pushed and its PR open on the
// stand-in, recorded with the reason land last stopped it; clash's last
// restack stopped on a conflict at its branch's tip; shop--pay's PR open.
func landWorkspace(t *testing.T) (root string) {
	t.Helper()
	t.Setenv("SAGA_SESSION_DIR", filepath.Join(t.TempDir(), "sessions"))
	root = archiveWorkspace(t, "testdata/land.txtar")
	testkit.InitRepo(t, root)
	testkit.BareOrigin(t, root)
	pr, _ := testkit.StandinPR(t, root, "cart", map[string]string{"cart.go": "package cart\n\nfunc Total() int { return 0 }\n"})
	testkit.Git(t, root, "branch", "story/clash")
	head := testkit.Git(t, root, "rev-parse", "story/clash")
	now := time.Now().UTC()
	for _, rec := range []runs.Record{
		{Story: "cart", Session: "saga-story-cart-1", Status: runs.StatusCompleted, Ended: now, Branch: "story/cart", Base: "main",
			PR: pr, PRState: runs.PROpen, Land: &runs.LandRecord{At: now, State: "not ready", Why: "#1 is a draft"}},
		{Story: "clash", Session: "saga-story-clash-1", Status: runs.StatusCompleted, Ended: now, Branch: "story/clash", Base: "main",
			PR: "https://github.com/acme/shop/pull/9", PRState: runs.PROpen,
			Restack: &runs.RestackRecord{At: now, Onto: []string{"main"}, Tips: []string{head}, Head: head, Conflicts: []string{"cart.go"},
				Task: "restack-0123456789", Digest: "00", Why: "rebuilding it on main conflicts in cart.go"}},
		{Story: "shop--pay", Session: "saga-story-shop--pay-1", Status: runs.StatusCompleted, Ended: now, Branch: "story/shop--pay",
			Base: "main", PR: "https://github.com/acme/shop/pull/8", PRState: runs.PROpen},
	} {
		if err := runs.WriteRecord(root, rec); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// The lenses offer Land where a PR is not landed (the story's, the
// epic's) and Resolve where a conflict is open; Land from the lens runs
// land against the gh stand-in and answers land's JSON; then the story
// says landed and is offered no Land. resolveConflict refuses a story
// without an open conflict, its task file gone.
func TestLandLensAndCommand(t *testing.T) {
	root := landWorkspace(t)
	c := startOn(t, root, "")
	lenses := func(rel string) string {
		t.Helper()
		b, _ := json.Marshal(codeLenses(c, rel))
		return string(b)
	}
	cart := lenses(".saga/stories/cart/story.json")
	if !strings.Contains(cart, `"title":"⇣ Land","command":"saga.land","arguments":[{"story":"cart"}]`) || !strings.Contains(cart, " · land: not ready") {
		t.Errorf("cart's lenses: %s", cart)
	}
	if clash := lenses(".saga/stories/clash/story.json"); !strings.Contains(clash, `"title":"Resolve conflict","command":"saga.resolveConflict","arguments":[{"story":"clash"}]`) {
		t.Errorf("clash's lenses: %s", clash)
	}
	if epic := lenses(".saga/epics/shop/epic.json"); !strings.Contains(epic, `"title":"⇣ Land epic","command":"saga.land","arguments":[{"epic":"shop"}]`) {
		t.Errorf("the epic's lenses: %s", epic)
	}

	raw := execLens(c, ".saga/stories/cart/story.json", "⇣ Land", nil)
	var res struct {
		Method  string `json:"method"`
		Stories []struct{ Story, State string }
	}
	if json.Unmarshal(raw, &res) != nil || res.Method != "merge" || len(res.Stories) != 1 || res.Stories[0].State != "landed" {
		t.Fatalf("saga.land: %s", raw)
	}
	if after := lenses(".saga/stories/cart/story.json"); strings.Contains(after, "⇣ Land") || !strings.Contains(after, " · landed") {
		t.Errorf("cart's lenses after land: %s", after)
	}

	if m := c.execCommand("saga.resolveConflict", []any{"clash"}); m.Error == nil || m.Error.Code != codeRequestFailed ||
		!strings.Contains(m.Error.Message, "story clash has no open conflict to resolve: its task restack-0123456789 is gone") {
		t.Errorf("resolveConflict without its task: %+v", m.Error)
	}
	if m := c.execCommand("saga.land", []any{map[string]string{"story": "cart", "epic": "shop"}}); m.Error == nil || m.Error.Code != codeInvalidParams {
		t.Errorf("land with a story and an epic: %+v", m.Error)
	}
}
