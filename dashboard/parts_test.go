package dashboard_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// partsAttr is the page's sums, as its last element carries them.
var partsAttr = regexp.MustCompile(`<div id="page-parts" hidden data-parts="([^"]*)">`)

// fetchPage gets url as a live page fetching itself does, with the sums
// of the page it holds (none: the page whole); it answers the page's text
// or, by parts, the JSON answer.
func fetchPage(t *testing.T, c *http.Client, url, held string) (html string, parts map[string]string, sums string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("X-Dashboard-Refresh", "1")
	if held != "" {
		req.Header.Set("X-Dashboard-Parts", held)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, res.Status)
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		var j struct {
			Sums  string            `json:"sums"`
			Parts map[string]string `json:"parts"`
		}
		if err := json.Unmarshal(body, &j); err != nil {
			t.Fatalf("the answer by parts: %v: %s", err, body)
		}
		return "", j.Parts, j.Sums
	}
	m := partsAttr.FindSubmatch(body)
	if m == nil {
		t.Fatalf("the page has no sums: %.300s", body)
	}
	return string(body), nil, string(m[1])
}

// changeStream opens the dashboard's event stream; waitChange reads it
func changeStream(t *testing.T, s *served, c *http.Client) *bufio.Reader {
	t.Helper()
	res, err := c.Get(s.base + "/events")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	r := bufio.NewReader(res.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the event stream: %v", err)
		}
		if strings.HasPrefix(line, "event: hello") {
			return r
		}
	}
}

// until a change names story (any change: "").
func waitChange(t *testing.T, r *bufio.Reader, story string) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the event stream ended before a change naming %s: %v", story, err)
		}
		if strings.HasPrefix(line, "data:") && (story == "" || strings.Contains(line, `"`+story+`"`)) {
			return
		}
	}
}

// partKey is a part's key, from its start tag.
var partKey = regexp.MustCompile(`^<\w+ data-part="([^"]*)"`)

// partKeys are the keys of the parts an answer carries, sorted.
func partKeys(parts map[string]string) []string {
	var out []string
	for _, html := range parts {
		if m := partKey.FindStringSubmatch(html); m != nil {
			out = append(out, m[1])
		} else {
			out = append(out, "?"+html)
		}
	}
	slices.Sort(out)
	return out
}

// TestPageInParts: a live page that sends the sums of the page it holds
// gets nothing when nothing changed; after a task completes, only the
// parts that show it — its story's row, the graph's data, the epic's
// facts — each as the page made afresh has it; after a change of the
// page's frame (the epic's description), the page whole. Sums that are
// not well-formed get the page whole.
func TestPageInParts(t *testing.T) {
	root := shopRepo(t)
	s := serve(t, root)
	c := s.client(t)
	url := s.base + "/r/" + repoKeyOf(root) + "/epic/shop"
	_, _, sums := fetchPage(t, c, url, "")
	if n := len(strings.Fields(sums)); n != 13 { // the frame; the problems' count, banners, facts, actions, graph, legend, 5 rows, outcome
		t.Errorf("the epic page has %d sums, want 13: %q", n, sums)
	}

	html, parts, again := fetchPage(t, c, url, sums)
	if html != "" || len(parts) != 0 || again != sums {
		t.Fatalf("nothing changed: got %d bytes of page, parts %v, sums %q (want none, none, %q)", len(html), partKeys(parts), again, sums)
	}

	events := changeStream(t, s, c)
	testkit.WriteFiles(t, root, map[string]string{".saga/stories/shop--e2e/run.json": task("run", "completed")})
	waitChange(t, events, "shop--e2e")
	html, parts, after := fetchPage(t, c, url, sums)
	for html == "" && len(parts) == 0 {
		// The epic's state as the watcher last derived it came first; its
		// epic loop's change follows (runs/watch: EpicStatus).
		waitChange(t, events, "")
		html, parts, after = fetchPage(t, c, url, sums)
	}
	if html != "" {
		t.Fatalf("a task completed: the page was sent whole")
	}
	keys := partKeys(parts)
	for _, want := range []string{"facts", "graph", "row shop--e2e"} {
		if !slices.Contains(keys, want) {
			t.Errorf("a task of shop--e2e completed: parts %q, want %q among them", keys, want)
		}
	}
	for _, other := range []string{"row shop--api", "row shop--schema", "row shop--docs", "banners", "actions"} {
		if slices.Contains(keys, other) {
			t.Errorf("a task of shop--e2e completed: parts %q hold %q, which did not change", keys, other)
		}
	}
	whole, _, wholeSums := fetchPage(t, c, url, "")
	if wholeSums != after {
		t.Errorf("the sums by parts %q, the page made afresh %q", after, wholeSums)
	}
	for i, part := range parts {
		if !strings.Contains(whole, part) {
			t.Errorf("part %s is not the page made afresh's: %.200s", i, part)
		}
	}

	testkit.WriteFiles(t, root, map[string]string{".saga/epics/shop/epic.json": strings.Replace(shopFiles()[".saga/epics/shop/epic.json"], "Sell things.", "Sell more things.", 1)})
	waitChange(t, events, "shop")
	if html, parts, _ := fetchPage(t, c, url, after); !strings.Contains(html, "Sell more things.") || parts != nil {
		t.Errorf("the epic's description changed: want the page whole, got %d bytes of page and parts %q", len(html), partKeys(parts))
	}
	for _, bad := range []string{"x", after + " tooLongToBeASum0", strings.Repeat("A", 16)} {
		if html, _, _ := fetchPage(t, c, url, bad); html == "" {
			t.Errorf("sums %q: want the page whole", bad)
		}
	}
}

// samePage waits, in the page, until the page as patched is the page made
// afresh — its #banners, #problem-count and #main as a fresh fetch of it
// has them (the graph's drawing aside, which is checked against the
// fresh page's data: each node's state and counts) — checking again at
// each update the page applies; it answers how many updates the page
// applied by parts and whole since the test began.
func samePage(t *testing.T, b *browser) (partials, wholes int) {
	t.Helper()
	const check = `new Promise((resolve) => {
		const norm = (el) => { const c = el.cloneNode(true); const g = c.querySelector('#graph'); if (g) g.replaceChildren(); return c.outerHTML; };
		const drawn = (doc) => {
			const g = doc.querySelector('#graph');
			if (!g) return [];
			const data = JSON.parse(g.dataset.graph);
			return data.nodes.filter((n) => {
				const a = document.querySelector('#graph .node[data-id="' + CSS.escape(n.id) + '"]');
				return !a || a.dataset.state !== n.state || !a.getAttribute('aria-label').includes(n.done + ' of ' + n.total + ' tasks');
			}).map((n) => 'node ' + n.id);
		};
		const diff = async () => {
			const res = await fetch(location.href, { cache: 'no-store' });
			const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
			const d = ['#banners', '#problem-count', '#main'].filter((sel) => norm(document.querySelector(sel)) !== norm(doc.querySelector(sel)));
			return d.concat(drawn(doc));
		};
		let busy = false;
		const again = async () => {
			if (busy) return;
			busy = true;
			window.__diff = await diff();
			busy = false;
			if (!window.__diff.length) {
				document.removeEventListener('saga:refreshed', again);
				resolve({ partials: window.sagaDashboard.partials, wholes: window.sagaDashboard.refreshes - window.sagaDashboard.partials });
			}
		};
		document.addEventListener('saga:refreshed', again);
		again();
	})`
	ctx, cancel := b.CtxFor(15 * time.Second)
	defer cancel()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[struct{ Partials, Wholes int }](check, chromedp.EvalAwaitPromise))
	if err != nil {
		var diff []string
		b.Eval(`window.__diff || []`, &diff)
		t.Fatalf("the page as patched is not the page made afresh: %v; differing: %q", err, diff)
	}
	return got.Partials, got.Wholes
}

// TestPagePatchedIsPageMade: an epic's page patched by parts, change
// after change — a task completed, a story renamed (the graph laid out
// again), a problem fixed (the problems' count), then a story added (the
// page's frame: the page whole) — is the page made afresh each time; and
// so is the backlog's.
func TestPagePatchedIsPageMade(t *testing.T) {
	root := shopRepo(t)
	s, b := openShopEpic(t, root)
	partials, wholes := samePage(t, b)
	for _, step := range []struct {
		name  string
		files map[string]string
		whole bool
	}{
		{"a task completed", map[string]string{".saga/stories/shop--e2e/run.json": task("run", "completed")}, false},
		{"a story renamed", map[string]string{".saga/stories/shop--ui/story.json": `{"id": "shop--ui", "title": "Storefront UI, rebuilt", "description": ""}` + "\n"}, false},
		{"a problem fixed", map[string]string{".saga/stories/shop--api/put.json": task("put", "pending", "get")}, false},
		{"a story added", map[string]string{
			".saga/stories/shop--guide/story.json": `{"id": "shop--guide", "title": "Guide", "description": ""}` + "\n",
			".saga/stories/shop--guide/write.json": task("write", "pending"),
			".saga/epics/shop/epic.json": strings.Replace(shopFiles()[".saga/epics/shop/epic.json"],
				`{"id": "shop--docs", "blockedBy": []}`, `{"id": "shop--docs", "blockedBy": []}, {"id": "shop--guide", "blockedBy": ["shop--docs"]}`, 1),
		}, true},
	} {
		var before int
		b.Eval(`window.sagaDashboard.refreshes`, &before)
		testkit.WriteFiles(t, root, step.files)
		b.WaitJS(`window.sagaDashboard.refreshes > `+strconv.Itoa(before), 10*time.Second)
		p, w := samePage(t, b)
		switch {
		case step.whole && w == wholes:
			t.Errorf("%s: the page was not taken whole (by parts %d → %d)", step.name, partials, p)
		case !step.whole && (p == partials || w != wholes):
			t.Errorf("%s: by parts %d → %d, whole %d → %d: want it by parts only", step.name, partials, p, wholes, w)
		}
		partials, wholes = p, w
	}
	if n := b.Count("#graph .node"); n != 6 {
		t.Errorf("%d nodes drawn, want 6", n)
	}

	// The backlog too: a task completed is its story's row, its epic's.
	b.open(s.base + "/")
	partials, wholes = samePage(t, b)
	var before int
	b.Eval(`window.sagaDashboard.refreshes`, &before)
	testkit.WriteFiles(t, root, map[string]string{".saga/stories/shop--ui/page.json": task("page", "completed")})
	b.WaitJS(`window.sagaDashboard.refreshes > `+strconv.Itoa(before), 10*time.Second)
	if p, w := samePage(t, b); p == partials || w != wholes {
		t.Errorf("the backlog: by parts %d → %d, whole %d → %d: want it by parts only", partials, p, wholes, w)
	}
}
