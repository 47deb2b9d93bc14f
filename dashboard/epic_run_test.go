package dashboard_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// epicFiles is epic shop, a diamond a → (b, c) → d and e on its own, each
// story two tasks; b's second task has a check that never passes.
func epicFiles() map[string]string {
	files := map[string]string{
		".saga/epics/shop/epic.json": `{"id": "shop", "title": "Shop", "description": "Sell things online.", "children": [
    {"id": "shop--a", "blockedBy": []},
    {"id": "shop--b", "blockedBy": ["shop--a"]},
    {"id": "shop--c", "blockedBy": ["shop--a"]},
    {"id": "shop--d", "blockedBy": ["shop--b", "shop--c"]},
    {"id": "shop--e", "blockedBy": []}
  ]}` + "\n",
		".saga/stories/shop--a/journal.md": "# Journal: shop--a\n\n## 2026-11-20T10:12:00Z decision\nPrices are integers in cents.\n",
	}
	titles := map[string]string{"a": "Base schema", "b": "Items API", "c": "Shop UI", "d": "Checkout", "e": "Docs"}
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		id := "shop--" + s
		files[".saga/stories/"+id+"/story.json"] = fmt.Sprintf(`{"id": %q, "title": %q, "description": "Part %s of the shop."}`+"\n", id, titles[s], s)
		files[".saga/stories/"+id+"/"+s+"1.json"] = task(s+"1", "pending")
		files[".saga/stories/"+id+"/"+s+"2.json"] = task(s+"2", "pending", s+"1")
	}
	chain(files, "fix-typo", "Fix the typo on the landing page", "", 1)
	files[".saga/stories/shop--b/b2.json"] = `{"id": "b2", "subject": "Serve the items", "description": "GET /items.", "status": "pending", "blockedBy": ["b1"], "checks": ["echo not yet; exit 1"]}` + "\n"
	return files
}

// TestEpicNeedsUser: an epic run from its page (two at once, through the
// stand-in claude, each run priced) in which a check fails: the story that failed and the dependent it
// holds are shown as needing the user — banners until acknowledged, the
// "needs me" filter, the graph — and the pages are photographed.
func TestEpicNeedsUser(t *testing.T) {
	testkit.Bwrap(t) // the checks run confined
	root := liveRepo(t, epicFiles(), "all", 0)
	t.Setenv("SAGA_STANDIN_COST_USD", "0.37")
	s := serve(t, root)
	key := repoKeyOf(root)
	b := newBrowser(t)
	b.open(s.srv.URL())
	b.open(s.base + "/r/" + key + "/epic/shop")
	b.WaitJS(`document.querySelectorAll('#graph .node').length === 5`, 10*time.Second)
	b.Do(js(`document.querySelector("form.action input[name=maxParallel]").value = "2"`))
	b.confirmAction("#run-epic")
	b.Do(visible("#stop-epic"))
	// The run ends: b's check never passes, so b fails once the check
	// refused it in --max-check-failures runs in a row, and d, behind it,
	// is held; a, c and e complete.
	b.WaitJS(`document.querySelector('#run-epic') && document.querySelector('#graph .node[data-id="shop--d"]').dataset.state === 'held'`, 240*time.Second)
	want := map[string]string{"shop--a": "completed", "shop--b": "failed", "shop--c": "completed", "shop--d": "held", "shop--e": "completed"}
	var got map[string]string
	b.Eval(`Object.fromEntries(Array.from(document.querySelectorAll('#graph .node')).map(n => [n.dataset.id, n.dataset.state]))`, &got)
	for id, st := range want {
		if got[id] != st {
			t.Errorf("%s drawn %s, want %s (all: %v)", id, got[id], st, got)
		}
	}
	if row := b.Text(`table[data-table=epic-stories] tr[data-id="shop--d"]`); !contains(row, "held", "by shop--b") {
		t.Errorf("d's row: %q", row)
	}
	if row := b.Text(`table[data-table=epic-stories] tr[data-id="shop--b"]`); !contains(row, "✓ 1 · ✗ 1") && !contains(row, "✗") {
		t.Errorf("b's row has no checks digest: %q", row)
	}
	// Both need the user, each said once.
	banners := b.Text("#banners")
	if !contains(banners, "shop--b: its run ended failed", "its check refused the completion in 3 runs in a row", `check "echo not yet; exit 1" failed`, "shop--d is held in epic shop by shop--b") {
		t.Errorf("banners: %q", banners)
	}
	if n := b.Count("#banners .banner"); n != 2 {
		t.Errorf("%d banners, want 2: %q", n, banners)
	}
	b.screenshot(t, "epic")

	// Home: the epic's counts; the "needs me" filter.
	b.open(s.base + "/")
	if row := b.Text(`table[data-table=epics] tr[data-id=shop]`); !contains(row, "7/10 tasks", "3/5", "‖ 1", "✗ 1", "$") {
		t.Errorf("epic row: %q", row)
	}
	b.screenshot(t, "home")
	b.open(s.base + "/?needs=1")
	var ids []string
	b.Eval(`Array.from(document.querySelectorAll('table[data-table=stories] tr[data-id]')).map(r => r.dataset.id)`, &ids)
	if !slices.Equal(ids, []string{"shop--b", "shop--d"}) { // not fix-typo, not a, c, e
		t.Errorf("needs me: %v", ids)
	}

	// The story that failed: its task's check result.
	b.open(s.base + "/r/" + key + "/story/shop--b")
	if tasks := b.Text("#tasks"); !contains(tasks, "#b2 [○ pending] Serve the items", "✗ check failed: echo not yet; exit 1 (exit status 1)") {
		t.Errorf("b's tasks: %q", tasks)
	}
	b.Do(click(`#details-b2 > summary`))
	b.screenshot(t, "story")

	// Acknowledged, a banner goes, the other stays — across pages.
	b.Do(click(`#banners .banner[data-key^="held:"] form.ack button`))
	b.WaitJS(`document.querySelectorAll('#banners .banner').length === 1`, 10*time.Second)
	b.open(s.base + "/")
	if banners := b.Text("#banners"); strings.Contains(banners, "held") || !strings.Contains(banners, "shop--b") {
		t.Errorf("banners after acknowledging d's: %q", banners)
	}
}

// TestEpicStop: an epic run stopped from its page.
func TestEpicStop(t *testing.T) {
	files := map[string]string{
		".saga/epics/crate/epic.json": `{"id": "crate", "title": "Crate", "description": "", "children": [{"id": "crate--x", "blockedBy": []}, {"id": "crate--y", "blockedBy": ["crate--x"]}]}` + "\n",
	}
	chain(files, "crate--x", "X", "", 3)
	chain(files, "crate--y", "Y", "", 3)
	root := liveRepo(t, files, "slow", 400)
	s := serve(t, root)
	b := newBrowser(t)
	b.open(s.srv.URL())
	b.open(s.base + "/r/" + repoKeyOf(root) + "/epic/crate")
	b.confirmAction("#run-epic")
	b.WaitJS(`document.querySelector('#stop-epic') && (document.querySelector('#graph .node[data-id="crate--x"]')||{dataset:{}}).dataset.state === 'running'`, 120*time.Second)
	b.confirmAction("#stop-epic")
	b.WaitJS(`document.querySelector('#run-epic') && document.querySelector('#epic-facts').textContent.includes('ended stopped')`, 120*time.Second)
	var st string
	b.Eval(`document.querySelector('#graph .node[data-id="crate--x"]').dataset.state`, &st)
	if st != "stopped" {
		t.Errorf("x after the stop: %s", st)
	}
}
