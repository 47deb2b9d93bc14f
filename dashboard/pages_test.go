package dashboard_test

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// task is a task file's text.
func task(id, status string, blockedBy ...string) string {
	b, _ := json.Marshal(blockedBy)
	if blockedBy == nil {
		b = []byte("[]")
	}
	return fmt.Sprintf(`{"id": %q, "subject": "Do %s", "description": "Work on %s.", "status": %q, "blockedBy": %s}`+"\n", id, id, id, status, b)
}

// shopFiles is the pages' fixture: epic shop, a diamond schema → (api,
// ui) → e2e and docs on its own; a story outside the epic whose title and
// journal hold markup; a task naming a task that does not exist.
func shopFiles() map[string]string {
	files := map[string]string{
		".saga/epics/shop/epic.json": `{"id": "shop", "title": "Shop", "description": "Sell things.", "children": [
    {"id": "shop--schema", "blockedBy": []},
    {"id": "shop--api", "blockedBy": ["shop--schema"]},
    {"id": "shop--ui", "blockedBy": ["shop--schema"]},
    {"id": "shop--e2e", "blockedBy": ["shop--api", "shop--ui"]},
    {"id": "shop--docs", "blockedBy": []}
  ]}` + "\n",
		".saga/stories/shop--api/story.json": `{"id": "shop--api", "title": "Items API", "description": "Serve the items.", "guidance": "Keep handlers small.", "doneWhen": "GET /items answers."}` + "\n",
		".saga/stories/shop--api/list.json":  task("list", "completed"),
		".saga/stories/shop--api/get.json": `{"id": "get", "subject": "Get one item", "description": "GET /items/{id}.", "status": "in_progress", "blockedBy": ["list"],
  "guidance": "Reuse the list query.", "doneWhen": "It answers 404 for an unknown id.", "checks": ["go test ./items"]}` + "\n",
		".saga/stories/shop--api/put.json":       task("put", "pending", "get", "ghost"),
		".saga/stories/shop--api/journal.md":     "# Journal: shop--api\n\n## 2026-11-20T10:12:00Z decision\nPrices are **integers** in `cents`.\n\n- one\n- two\n",
		".saga/stories/fix-typo/story.json":      `{"id": "fix-typo", "title": "Fix the <script>document.title='pwned'</script> typo", "description": "<img src=x onerror=\"document.title='pwned'\">"}` + "\n",
		".saga/stories/fix-typo/edit.json":       task("edit", "pending"),
		".saga/stories/fix-typo/journal.md":      "# Journal\n\n## 2026-11-21T09:00:00Z blocker\nWaiting for <img src=x onerror=\"document.title='pwned'\"> copy.\n",
		".saga/stories/shop--schema/story.json":  `{"id": "shop--schema", "title": "Base schema", "description": ""}` + "\n",
		".saga/stories/shop--schema/tables.json": task("tables", "completed"),
		".saga/stories/shop--ui/story.json":      `{"id": "shop--ui", "title": "Shop UI", "description": ""}` + "\n",
		".saga/stories/shop--ui/page.json":       task("page", "pending"),
		".saga/stories/shop--e2e/story.json":     `{"id": "shop--e2e", "title": "End-to-end tests", "description": ""}` + "\n",
		".saga/stories/shop--e2e/run.json":       task("run", "pending"),
		".saga/stories/shop--docs/story.json":    `{"id": "shop--docs", "title": "Docs", "description": ""}` + "\n",
		".saga/stories/shop--docs/write.json":    task("write", "pending"),
		".saga/stories/shop--docs/review.json":   task("review", "pending", "write"),
	}
	return files
}

func shopRepo(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	testkit.WriteFiles(t, root, shopFiles())
	testkit.InitRepo(t, root)
	return root
}

// TestPages: every page of a fixture workspace, its links, filters in the
// URL with the back button, keyboard navigation, and markup from the
// workspace shown as text.
func TestPages(t *testing.T) {
	root := shopRepo(t)
	s := serve(t, root)
	b := newBrowser(t)
	b.open(s.srv.URL())
	if loc := b.Location(); strings.Contains(loc, "token=") {
		t.Errorf("the token stays in the address bar: %s", loc)
	}

	// Home: the epic with its progress, the story outside it.
	epicRow := b.Text(`table[data-table=epics] tr[data-id=shop]`)
	if !contains(epicRow, "shop", "Shop", "in progress", "2/8 tasks", "1/5") {
		t.Errorf("epic row: %q", epicRow)
	}
	typo := b.Text(`table[data-table=stories] tr[data-id=fix-typo]`)
	if !contains(typo, "<script>document.title='pwned'</script>", "blocked") {
		t.Errorf("story row: %q", typo)
	}
	// The journal's blocker needs the user.
	if banner := b.Text("#banners"); !contains(banner, "Needs you", "fix-typo", "blocker") {
		t.Errorf("banners: %q", banner)
	}
	b.screenshot(t, "home-fixture")

	// The epic's graph: five nodes, the critical path schema's dependents.
	b.NavigateBy(click(`a[href="/r/` + repoKeyOf(root) + `/epic/shop"]`))
	b.WaitJS(`document.querySelectorAll('#graph .node').length === 5`, 15*time.Second)
	nodes := b.nodes()
	for id, want := range map[string]string{"shop--schema": "st-completed", "shop--api": "st-ready", "shop--e2e": "st-waiting"} {
		if !strings.Contains(nodes[id], want) {
			t.Errorf("node %s: class %q, want %s", id, nodes[id], want)
		}
	}
	var critical []string
	b.Eval(`Array.from(document.querySelectorAll('#graph .node.critical')).map(n => n.dataset.id)`, &critical)
	if !slices.Equal(critical, []string{"shop--api", "shop--e2e"}) {
		t.Errorf("critical path %v, want shop--api → shop--e2e", critical)
	}
	if n := b.Count(`#graph .edge.critical`); n != 1 {
		t.Errorf("%d critical edges, want 1", n)
	}
	if n := b.Count(`#graph .edge`); n != 4 {
		t.Errorf("%d edges, want 4", n)
	}
	// A node is a link to its story; back returns to the graph.
	epicURL := b.Location()
	b.NavigateBy(click(`#graph .node[data-id="shop--api"]`))
	b.Do(visible(`#tasks`))
	if loc := b.Location(); !strings.HasSuffix(loc, "/story/shop--api") {
		t.Fatalf("clicked node → %s", loc)
	}
	// The story: tasks TaskList-style, its fields, the journal rendered.
	tasks := b.Text("#tasks")
	for _, want := range []string{"#get [◐ in progress] Get one item", "#list [✓ completed] Do list", "#put [○ pending] Do put blocked by #get, #ghost"} {
		if !strings.Contains(tasks, want) {
			t.Errorf("tasks lack %q:\n%s", want, tasks)
		}
	}
	b.Do(click(`#details-get > summary`))
	if d := b.Text("#details-get"); !contains(d, "Reuse the list query.", "It answers 404", "go test ./items") {
		t.Errorf("task details: %q", d)
	}
	if about := b.Text("section.about"); !contains(about, "Serve the items.", "Keep handlers small.", "GET /items answers.") {
		t.Errorf("about: %q", about)
	}
	var strong string
	b.Eval(`(document.querySelector('.journal strong')||{}).textContent`, &strong)
	if strong != "integers" || b.Count(".journal li") != 2 || b.Count(".journal code") != 1 {
		t.Errorf("journal not rendered: %q", b.Text(".journal"))
	}
	b.screenshot(t, "story-fixture")
	// Back: chromium may keep the page in its back-forward cache (it lets
	// its stream go on pagehide) and show it again, live once more.
	b.Back()
	b.InPage(`(() => { const n = document.querySelector('#graph .node');
		return !!n && n.getBoundingClientRect().width > 0 && window.sagaDashboard.connected; })()`, 30*time.Second)
	if loc := b.Location(); loc != epicURL {
		t.Errorf("back → %s, want %s", loc, epicURL)
	}
	b.screenshot(t, "epic-fixture")

	// Markup in a title, a description or a journal is text.
	b.open(s.base + "/r/" + repoKeyOf(root) + "/story/fix-typo")
	var title string
	b.Eval(`document.title`, &title)
	if strings.Contains(title, "pwned") || b.Count("main img") > 0 || b.Count("main script") > 0 {
		t.Errorf("markup from the workspace ran: title %q, %d img", title, b.Count("main img"))
	}
	if j := b.Text(".journal"); !strings.Contains(j, `<img src=x onerror="document.title='pwned'"> copy.`) {
		t.Errorf("journal text: %q", j)
	}
	if h := b.Text(".journal h3.blocker"); !strings.Contains(h, "blocker") {
		t.Errorf("blocker heading: %q", h)
	}

	// Problems: check's finding with the quick fix's titles.
	b.open(s.base + "/problems")
	row := b.Text(`table[data-table=problems] tr[data-code=unknown-dependency]`)
	if !contains(row, ".saga/stories/shop--api/put.json", "unknown-dependency", "Remove ghost from blockedBy", "Create task ghost") {
		t.Errorf("problem row: %q", row)
	}

	// Filters live in the URL; back undoes one.
	b.open(s.base + "/")
	b.NavigateBy(js(`(s => { s.value = 'pending'; s.dispatchEvent(new Event('change', {bubbles: true})) })(document.querySelector('select[name=state]'))`))
	if loc := b.Location(); !strings.HasSuffix(loc, "/?state=pending") {
		t.Fatalf("the filter is not in the URL: %s", loc)
	}
	var states []string
	b.Eval(`Array.from(document.querySelectorAll('table[data-table=stories] tr[data-id]')).map(r => r.dataset.state)`, &states)
	if len(states) == 0 || slices.ContainsFunc(states, func(s string) bool { return s != "pending" }) {
		t.Errorf("state=pending lists %v", states)
	}
	var ids []string
	b.Eval(`Array.from(document.querySelectorAll('table[data-table=stories] tr[data-id]')).map(r => r.dataset.id)`, &ids)
	if !slices.Contains(ids, "shop--e2e") || slices.Contains(ids, "shop--schema") {
		t.Errorf("state=pending lists %v: every pending story, in an epic or not", ids)
	}
	b.Back()
	if loc := b.Location(); strings.Contains(loc, "state=") {
		t.Errorf("back → %s", loc)
	}
	b.open(s.base + "/?needs=1")
	b.Eval(`Array.from(document.querySelectorAll('table[data-table=stories] tr[data-id]')).map(r => r.dataset.id)`, &ids)
	if !slices.Equal(ids, []string{"fix-typo"}) {
		t.Errorf("needs=1 lists %v", ids)
	}

	// Keyboard: / to the filter, j to the first row, Enter opens it.
	b.open(s.base + "/")
	var active string
	b.Do(chromedp.KeyEvent("/"))
	b.Eval(`document.activeElement.id`, &active)
	if active != "filter-q" {
		t.Errorf("/ focused %q", active)
	}
	b.Do(chromedp.KeyEvent(kb.Escape), chromedp.KeyEvent("j"))
	b.Eval(`document.activeElement.getAttribute('href')`, &active)
	if !strings.HasSuffix(active, "/epic/shop") {
		t.Errorf("j focused %q", active)
	}
	b.Do(chromedp.KeyEvent("j"))
	b.NavigateBy(chromedp.KeyEvent(kb.Enter))
	if loc := b.Location(); !strings.HasSuffix(loc, "/story/fix-typo") {
		t.Errorf("j j Enter → %s", loc)
	}

	// Acknowledged, the banner goes, on every page.
	b.open(s.base + "/")
	b.Do(click(`#banners form.ack button`))
	b.WaitJS(`document.querySelectorAll('#banners .banner').length === 0`, 10*time.Second)
	b.open(s.base + "/problems")
	if n := b.Count("#banners .banner"); n != 0 {
		t.Errorf("%d banners after acknowledging", n)
	}
}

// TestSavedEditLive: a task file saved on disk shows on the open page
// without a reload.
func TestSavedEditLive(t *testing.T) {
	root := shopRepo(t)
	s := serve(t, root)
	b := newBrowser(t)
	b.open(s.srv.URL())
	b.open(s.base + "/r/" + repoKeyOf(root) + "/story/shop--ui")
	b.WaitJS(`document.querySelector('#task-page').dataset.status === 'pending'`, 5*time.Second)
	testkit.WriteFiles(t, root, map[string]string{".saga/stories/shop--ui/page.json": task("page", "completed")})
	b.WaitJS(`document.querySelector('#task-page').dataset.status === 'completed'`, 10*time.Second)
	if f := b.Text("#story-facts"); !contains(f, "completed", "1/1 tasks") {
		t.Errorf("facts after the edit: %q", f)
	}
}

// openShopEpic serves the shop fixture at root and opens its epic's page,
// its graph drawn.
func openShopEpic(t *testing.T, root string) (*served, *browser) {
	t.Helper()
	s := serve(t, root)
	b := newBrowser(t)
	b.open(s.srv.URL())
	b.open(s.base + "/r/" + repoKeyOf(root) + "/epic/shop")
	b.WaitJS(`document.querySelectorAll('#graph .node').length === 5`, 15*time.Second)
	return s, b
}

// repoKeyOf is the key the dashboard gives the repository at root.
func repoKeyOf(root string) string { return filepath.Base(root) }

// TestEpicGraphUpdatedInPlace: a live change of the epic's stories
// repaints the drawn graph's nodes and the page's rows in place — the
// elements the reader sees and holds (the focus) stay, and nothing
// unchanged is rebuilt — and a change of the graph's shape (a story
// added to the epic) draws it again.
func TestEpicGraphUpdatedInPlace(t *testing.T) {
	root := shopRepo(t)
	_, b := openShopEpic(t, root)
	b.Eval(`(() => {
		document.querySelector('#graph .node[data-id="shop--e2e"]').sagaMark = 'e2e';
		document.querySelector('#graph svg').sagaMark = 'svg';
		document.querySelector('#main tr[data-id="shop--schema"]').sagaMark = 'row';
		document.querySelector('#graph .node[data-id="shop--api"]').focus();
		return true; })()`, nil)
	before := b.Text(`#main tr[data-id="shop--e2e"]`)
	if !strings.Contains(before, "0/1") {
		t.Fatalf("shop--e2e's row before: %q", before)
	}
	testkit.WriteFiles(t, root, map[string]string{".saga/stories/shop--e2e/run.json": task("run", "completed")})
	b.WaitJS(`/ 1 of 1 tasks/.test(document.querySelector('#graph .node[data-id="shop--e2e"]').getAttribute('aria-label'))`, 10*time.Second)
	var kept map[string]any
	b.Eval(`({
		node: document.querySelector('#graph .node[data-id="shop--e2e"]').sagaMark || '',
		svg: document.querySelector('#graph svg').sagaMark || '',
		row: document.querySelector('#main tr[data-id="shop--schema"]').sagaMark || '',
		focus: document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.id || '' : '',
		text: document.querySelector('#graph .node[data-id="shop--e2e"] text.st').textContent,
	})`, &kept)
	if kept["node"] != "e2e" || kept["svg"] != "svg" || kept["row"] != "row" || kept["focus"] != "shop--api" || !strings.Contains(kept["text"].(string), "1/1 tasks") {
		t.Errorf("after a task completed, the page kept %v: want the same node, SVG and unchanged row, the focus on shop--api, and the node saying 1/1 tasks", kept)
	}
	if row := b.Text(`#main tr[data-id="shop--e2e"]`); !strings.Contains(row, "1/1") {
		t.Errorf("shop--e2e's row after: %q", row)
	}
	// A new story in the epic: the layout changes, the graph is drawn anew.
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/shop--guide/story.json": `{"id": "shop--guide", "title": "Guide", "description": ""}` + "\n",
		".saga/stories/shop--guide/write.json": task("write", "pending"),
		".saga/epics/shop/epic.json": strings.Replace(shopFiles()[".saga/epics/shop/epic.json"],
			`{"id": "shop--e2e", "blockedBy": ["shop--api", "shop--ui"]}`, `{"id": "shop--e2e", "blockedBy": ["shop--api", "shop--ui"]}, {"id": "shop--guide", "blockedBy": ["shop--e2e"]}`, 1),
	})
	b.WaitJS(`document.querySelectorAll('#graph .node').length === 6 && !document.querySelector('#graph svg').sagaMark`, 10*time.Second)
}

// TestSamePageNotParsedAgain: a change event for what the open page does
// not show — here a task description of a story outside the epic — has
// the page fetch itself again and get nothing back to apply, its sums the
// same (docs/architecture.md#a-live-page-in-parts); a change it shows is
// applied as before.
func TestSamePageNotParsedAgain(t *testing.T) {
	root := shopRepo(t)
	_, b := openShopEpic(t, root)
	const fetches = `performance.getEntriesByType('resource').filter(e => e.initiatorType === 'fetch' && e.name === location.href).length`
	// A first change the page shows: the page as fetched is known from then.
	testkit.WriteFiles(t, root, map[string]string{".saga/stories/shop--docs/write.json": task("write", "completed")})
	b.WaitJS(`/ 1 of 2 tasks/.test(document.querySelector('#graph .node[data-id="shop--docs"]').getAttribute('aria-label'))`, 10*time.Second)
	var n int
	b.Eval(`(() => { window.__applied = 0; document.addEventListener('saga:refreshed', () => window.__applied++); window.__fetched = `+fetches+`; return window.__fetched; })()`, &n)

	testkit.WriteFiles(t, root, map[string]string{".saga/stories/fix-typo/edit.json": strings.Replace(task("edit", "pending"), `"description": "`, `"description": "Reworded. `, 1)})
	b.WaitJS(fetches+` > window.__fetched`, 10*time.Second)
	var applied int
	b.Eval(`window.__applied`, &applied)
	if applied != 0 {
		t.Errorf("the same page was applied %d times", applied)
	}
	testkit.WriteFiles(t, root, map[string]string{".saga/stories/shop--e2e/run.json": task("run", "completed")})
	b.WaitJS(`/ 1 of 1 tasks/.test(document.querySelector('#graph .node[data-id="shop--e2e"]').getAttribute('aria-label')) && window.__applied === 1`, 10*time.Second)
}

// TestGraphDataQuoted: the graph's data is sent in a single-quoted
// attribute, its JSON's double quotes as they are; a story title holding
// both quotes, markup and an entity reaches the drawn node as its text,
// and nothing in it runs.
func TestGraphDataQuoted(t *testing.T) {
	root := shopRepo(t)
	const title = `Docs 'n "q" <img src=x onerror=window.pwned=1> &amp;`
	testkit.WriteFiles(t, root, map[string]string{".saga/stories/shop--docs/story.json": `{"id": "shop--docs", "title": ` + jsonOf(title) + `, "description": ""}` + "\n"})
	s, b := openShopEpic(t, root)
	res, err := s.client(t).Get(s.base + "/r/" + repoKeyOf(root) + "/epic/shop")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if i := strings.Index(string(page), " data-graph="); i < 0 || !strings.HasPrefix(string(page[i:]), ` data-graph='{"edges":[`) {
		t.Errorf("the graph's data is not single-quoted JSON: %.200s", page[max(i, 0):])
	}
	var got struct {
		Tip    string `json:"tip"`
		Pwned  bool   `json:"pwned"`
		Images int    `json:"images"`
	}
	b.Eval(`({tip: document.querySelector('#graph .node[data-id="shop--docs"] title').textContent, pwned: !!window.pwned, images: document.querySelectorAll('#main img').length})`, &got)
	if !strings.HasPrefix(got.Tip, "shop--docs · ") || !strings.HasSuffix(got.Tip, "\n"+title) || got.Pwned || got.Images != 0 {
		t.Errorf("the node's tip %q, pwned %v, %d images in the page", got.Tip, got.Pwned, got.Images)
	}
}
