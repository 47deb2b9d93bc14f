package dashboard_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// goTestOutput is a failing `go test`'s output, tabs and all.
const goTestOutput = "ok  \texample.com/shop/cart\t(cached)\n--- FAIL: TestPay (0.00s)\n    pay_test.go:12: total = 3, want 4\nFAIL\texample.com/shop/checkout\t0.004s\n"

// failedCheckRepo is the shop fixture with a failed run of shop--api: its
// check's output, the worker's message over several lines, a journal with
// a table and raw HTML, a description of three lines.
func failedCheckRepo(t *testing.T) string {
	t.Helper()
	root := shopRepo(t)
	sessions := t.TempDir()
	t.Setenv("SAGA_SESSION_DIR", sessions)
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/shop--api/story.json": `{"id": "shop--api", "title": "Items API", "description": "Serve the items.\nOne handler per route.\n\tIndented line."}` + "\n",
		".saga/stories/shop--api/journal.md": "# Journal: shop--api\n\n## 2026-11-20T10:12:00Z decision\nPrices in `cents`:\n\n| item | cents |\n|---|---|\n| pen | 150 |\n| <b>ink</b> | 90 |\n\n<script>alert(1)</script>\n",
	})
	s := "saga-story-shop--api-1767323045000"
	var lines []string
	for _, e := range []runs.Event{
		{Time: time.Now().Add(-time.Minute), Story: "shop--api", Session: s, Event: runs.KindWorkerStart},
		{Story: "shop--api", Session: s, Event: runs.KindStep, Step: runs.StepWorktree, Worktree: store.WorktreeDir(root, "shop--api")},
		{Story: "shop--api", Session: s, Event: runs.KindRunStart, Cycle: 1},
		{Story: "shop--api", Session: s, Event: runs.KindRunEnd, Cycle: 1, ExitCode: runs.Int(0), Done: runs.Int(1), Total: runs.Int(3)},
		{Story: "shop--api", Session: s, Event: runs.KindCheckEnd, Task: "get", Command: "go test ./items", ExitCode: runs.Int(1), Passed: runs.Bool(false), Message: goTestOutput},
		{Time: time.Now(), Story: "shop--api", Session: s, Event: runs.KindWorkerEnd, Status: runs.StatusFailed, ExitCode: runs.Int(1),
			Message: "task get: its check failed:\n" + goTestOutput},
	} {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	if err := os.WriteFile(runs.EventsFile(runs.OutputFile(sessions, s)), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(runs.OutputFile(sessions, s), []byte("running go test ./items\n"+goTestOutput), 0o644)
	return root
}

// TestOutputAsLines: output a person reads keeps its lines and tabs in the
// story page, its banner and its runs table; the journal's Markdown is
// rendered (a table too) with its raw HTML as text; the description keeps
// its line breaks (issue 33 point 1).
func TestOutputAsLines(t *testing.T) {
	root := failedCheckRepo(t)
	s := serve(t, root)
	c := s.client(t)
	story := s.base + "/r/" + repoKeyOf(root) + "/story/shop--api"
	_, body := get(t, c, story, nil)
	tabbed := "ok  \texample.com/shop/cart\t(cached)\n--- FAIL: TestPay (0.00s)\n    pay_test.go:12: total = 3, want 4\nFAIL\texample.com/shop/checkout"
	for name, want := range map[string]string{
		"the banner":           `<pre class="out detail">task get: its check failed:` + "\n" + tabbed,
		"the runs table":       `</small><pre class="out detail">task get: its check failed:` + "\n" + tabbed,
		"the check's output":   `<dt>Last check output</dt><dd><pre class="out">` + tabbed,
		"the output pane":      `aria-label="Worker output">running go test ./items` + "\n" + tabbed,
		"the journal's table":  "<table>\n<thead>\n<tr>\n<th>item</th>\n<th>cents</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>pen</td>\n<td>150</td>\n</tr>",
		"raw HTML in a cell":   "<td>&lt;b&gt;ink&lt;/b&gt;</td>",
		"a raw HTML block":     `<p class="pre">&lt;script&gt;alert(1)&lt;/script&gt;`,
		"the journal's code":   "Prices in <code>cents</code>:",
		"the description":      `<p class="description pre">Serve the items.` + "\nOne handler per route.\n\tIndented line.</p>",
		"a heading under ours": `<h3>2026-11-20T10:12:00Z decision</h3>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("%s: no %q in the page", name, want)
		}
	}
	for _, bad := range []string{`\t`, "<script>alert", "<b>ink"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}

	// In the browser: the lines as shown, and the page as a screenshot
	// (make screenshots: docs/dashboard-story-failing-check.png).
	b := newBrowser(t)
	b.open(s.srv.URL())
	b.open(story)
	var banner string
	b.Eval(`document.querySelector('#banners pre.detail').innerText`, &banner)
	if !strings.Contains(banner, "FAIL\texample.com/shop/checkout") || strings.Count(banner, "\n") < 4 {
		t.Errorf("the banner's output as shown: %q", banner)
	}
	if n := b.Count(".journal table td"); n != 4 {
		t.Errorf("%d cells in the journal's table, want 4", n)
	}
	var lineHeight, height float64
	b.Eval(`parseFloat(getComputedStyle(document.querySelector('.description')).lineHeight) || 16`, &lineHeight)
	b.Eval(`document.querySelector('.description').getBoundingClientRect().height`, &height)
	if height < 2.5*lineHeight {
		t.Errorf("the description is %.0f px high (line %.0f): its lines were joined", height, lineHeight)
	}
	b.screenshot(t, "story-failing-check")
}
