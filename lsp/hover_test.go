package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fixture paths in testdata/navigation (shared by the hover, definition and
// references tests).
const (
	navShopEpic     = ".saga/epics/shop/epic.json" // folder dialect
	navBillingEpic  = ".saga/epics/billing.json"   // single-file dialect
	navCartStory    = ".saga/stories/shop--cart/story.json"
	navAddItem      = ".saga/stories/shop--cart/add-item.json"
	navRemoveItem   = ".saga/stories/shop--cart/remove-item.json" // CRLF line endings
	navCartTotal    = ".saga/stories/shop--cart/cart-total.json"  // emoji before blockedBy on one line; dangling ghost-task
	navCheckout     = ".saga/stories/shop--checkout/story.json"
	navPay          = ".saga/stories/shop--checkout/pay.json"
	navInvoiceStory = ".saga/stories/billing--invoices/story.json"
	navLonelyStory  = ".saga/stories/lonely/story.json" // epic "nowhere" does not exist
)

// navSession is a server on a copy of testdata/navigation; files are opened
// (didOpen with the disk text) the first time a test asks for them.
type navSession struct {
	c      *client
	opened map[string]string
}

func newNav(t *testing.T) *navSession {
	t.Helper()
	c := start(t)
	c.initialize(copyTestdata(t, "navigation"), "")
	if !strings.Contains(navDisk(t, c, navRemoveItem), "\r\n") {
		t.Fatalf("%s lost its CRLF line endings (check .gitattributes / core.autocrlf)", navRemoveItem)
	}
	return &navSession{c: c, opened: map[string]string{}}
}

// text opens rel (once) and returns its text.
func (n *navSession) text(rel string) string {
	if s, ok := n.opened[rel]; ok {
		return s
	}
	s := n.c.open(rel)
	n.opened[rel] = s
	return s
}

// navDisk reads a file of the copied workspace without opening it.
func navDisk(t *testing.T, c *client, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// navParams builds TextDocumentPositionParams (plus extra members).
func navParams(c *client, rel, pos, extra string) string {
	return fmt.Sprintf(`{"textDocument":{"uri":%q},"position":%s%s}`, c.uri(rel), pos, extra)
}

type navHoverResult struct {
	Contents struct {
		Kind  string `json:"kind"`
		Value string `json:"value"`
	} `json:"contents"`
	Range *lspRange `json:"range"`
}

// navHover asks for a hover and returns nil for a null result.
func navHover(t *testing.T, c *client, rel, pos string) *navHoverResult {
	t.Helper()
	m := c.call("textDocument/hover", navParams(c, rel, pos, ""))
	if m.Error != nil {
		t.Fatalf("hover: error %d %s", m.Error.Code, m.Error.Message)
	}
	if string(m.Result) == "null" {
		return nil
	}
	var h navHoverResult
	if err := json.Unmarshal(m.Result, &h); err != nil {
		t.Fatalf("hover result %s: %v", m.Result, err)
	}
	return &h
}

func TestHover(t *testing.T) {
	nav := newNav(t)
	tests := []struct {
		name   string
		file   string
		needle string // the hovered node, quoted: its span is the expected range
		n      int    // occurrence of needle
		off    int    // bytes into needle where the cursor is
		want   []string
		not    []string
		null   bool
	}{
		{name: "blockedBy entry after emoji on the same line", file: navCartTotal, needle: `"remove-item"`, off: 3,
			want: []string{"**Task `remove-item`** — Remove an item", "Status: `in_progress`", "story `shop--cart`",
				"Blocked by `add-item`", "A remove button on each cart line."}},
		{name: "blockedBy entry at its closing quote", file: navCartTotal, needle: `"remove-item"`, off: len(`"remove-item"`),
			want: []string{"Task `remove-item`"}},
		{name: "blockedBy entry with long description is cut", file: navCartTotal, needle: `"add-item"`, off: 1,
			want: []string{"Add an item to the cart", "Status: `completed`", "Add a button on every product page", "…"},
			not:  []string{"TAIL-MARKER", "Blocked by"}},
		{name: "unknown blockedBy entry", file: navCartTotal, needle: `"ghost-task"`, off: 4,
			want: []string{"No task `ghost-task` in story `shop--cart`"}},
		{name: "blockedBy entry in a CRLF file", file: navRemoveItem, needle: `"add-item"`, off: 2,
			want: []string{"Task `add-item`", "Add an item to the cart"}},
		{name: "epic child (folder dialect)", file: navShopEpic, needle: `"shop--cart"`, off: 5,
			want: []string{"**Story `shop--cart`** — Shopping cart", "Status: `in_progress`", "1/3 tasks done", "epic `shop`"}},
		{name: "epic child blockedBy entry", file: navShopEpic, needle: `"shop--cart"`, n: 1, off: 5,
			want: []string{"Story `shop--cart`", "1/3 tasks done"}},
		{name: "epic child (single-file dialect)", file: navBillingEpic, needle: `"billing--invoices"`, off: 5,
			want: []string{"Story `billing--invoices`** — Invoices", "Status: `completed`", "1/1 tasks done"}},
		{name: "child blockedBy naming another epic's story", file: navBillingEpic, needle: `"shop--cart"`, off: 5,
			want: []string{"Shopping cart", "1/3 tasks done"}},
		{name: "unknown epic child", file: navShopEpic, needle: `"shop--ghost"`, off: 5,
			want: []string{"No story `shop--ghost`"}},
		{name: "story epic (folder dialect)", file: navCartStory, needle: `"shop"`, off: 2,
			want: []string{"**Epic `shop`** — Online shop", "Status: `in_progress`", "3 child stories, 0 completed", "`.saga/epics/shop/epic.json`"}},
		{name: "story epic (single-file dialect)", file: navInvoiceStory, needle: `"billing"`, off: 2,
			want: []string{"**Epic `billing`** — Billing", "1 child story, 1 completed", "`.saga/epics/billing.json`"}},
		{name: "unknown story epic", file: navLonelyStory, needle: `"nowhere"`, off: 2,
			want: []string{"No epic `nowhere`"}},
		{name: "task property key", file: navPay, needle: `"blockedBy"`, off: 3,
			want: []string{"**`blockedBy`** (required, array)", "Ids of tasks in the same story that must be completed first."}},
		{name: "enum property key", file: navPay, needle: `"status"`, off: 3,
			want: []string{"**`status`** (required)", "Execution status.", "Allowed values: `pending`, `in_progress`, `completed`"}},
		{name: "optional enum property key", file: navCartTotal, needle: `"priority"`, off: 3,
			want: []string{"**`priority`**", "Allowed values: `critical`, `high`, `medium`, `low`"},
			not:  []string{"required"}},
		{name: "checks property key", file: navPay, needle: `"checks"`, off: 3,
			want: []string{"**`checks`** (array)", "runs with `sh -c` in the story's worktree", "TaskCompleted hook refuses a completion", "committed where the story branch forked"},
			not:  []string{"required"}},
		{name: "checkTimeout property key", file: navPay, needle: `"checkTimeout"`, off: 3,
			want: []string{"**`checkTimeout`** (number)", "Seconds each of the task's checks may run", "Default: `600`"}},
		{name: "epic child property key", file: navShopEpic, needle: `"blockedBy"`, off: 3,
			want: []string{"**`blockedBy`** (required, array)", "Canonical names of sibling stories"}},
		{name: "story property key", file: navCartStory, needle: `"epic"`, off: 1,
			want: []string{"**`epic`** (string)", "Id of the epic this story belongs to"}, not: []string{"required"}},
		{name: "task id value", file: navAddItem, needle: `"add-item"`, off: 3,
			want: []string{"**Task `add-item`** — Add an item to the cart", "Status: `completed`", "…"}},
		{name: "story id value", file: navCartStory, needle: `"shop--cart"`, off: 3,
			want: []string{"**Story `shop--cart`** — Shopping cart", "1/3 tasks done", "Let shoppers collect items"}},
		{name: "epic id value (single-file dialect)", file: navBillingEpic, needle: `"billing"`, off: 3,
			want: []string{"**Epic `billing`** — Billing", "1 child story"}},
		{name: "epic id value (folder dialect)", file: navShopEpic, needle: `"shop"`, off: 3,
			want: []string{"**Epic `shop`**", "3 child stories"}},
		{name: "plain value", file: navPay, needle: `"Pay by card"`, off: 3, null: true},
		{name: "status value", file: navShopEpic, needle: `"in_progress"`, off: 3, null: true},
		{name: "between members", file: navPay, needle: "{", null: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := nav.text(tc.file)
			h := navHover(t, nav.c, tc.file, at(t, text, tc.needle, tc.n, tc.off))
			if tc.null {
				if h != nil {
					t.Fatalf("want null, got %q", h.Contents.Value)
				}
				return
			}
			if h == nil {
				t.Fatal("hover is null")
			}
			if h.Contents.Kind != "markdown" {
				t.Errorf("kind %q, want markdown", h.Contents.Kind)
			}
			for _, w := range tc.want {
				if !strings.Contains(h.Contents.Value, w) {
					t.Errorf("hover lacks %q:\n%s", w, h.Contents.Value)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(h.Contents.Value, w) {
					t.Errorf("hover has %q:\n%s", w, h.Contents.Value)
				}
			}
			want := spanOf(t, text, tc.needle, tc.n)
			if h.Range == nil || *h.Range != want {
				t.Errorf("range %+v, want %+v", h.Range, want)
			}
		})
	}
}

// TestHoverUTF16Range pins the range of the entry after the emoji: columns
// count the 🛒 as two UTF-16 units.
func TestHoverUTF16Range(t *testing.T) {
	nav := newNav(t)
	text := nav.text(navCartTotal)
	// `  "subject": "Sum 🛒 prices", "blockedBy": ["remove-item", …`: the entry
	// starts at byte 46, rune 43, UTF-16 unit 44, and ends at unit 57. A
	// server counting runes or bytes would land elsewhere.
	h := navHover(t, nav.c, navCartTotal, `{"line":2,"character":45}`)
	if h == nil || !strings.Contains(h.Contents.Value, "Task `remove-item`") {
		t.Fatalf("hover at UTF-16 column 45: %+v", h)
	}
	want := lspRange{Start: lspPosition{Line: 2, Character: 44}, End: lspPosition{Line: 2, Character: 57}}
	if *h.Range != want {
		t.Fatalf("range %+v, want %+v", *h.Range, want)
	}
	if got := spanOf(t, text, `"remove-item"`, 0); got != want {
		t.Fatalf("fixture changed: entry at %+v", got)
	}
}

func TestHoverExcerpt(t *testing.T) {
	long := strings.Repeat("word ", 100)
	tests := []struct{ in, want string }{
		{"short text", "short text"},
		{"  padded  ", "padded"},
		{strings.Repeat("a", 300), strings.Repeat("a", 300)},
		{long, strings.Repeat("word ", 59) + "word…"},
		{strings.Repeat("é", 301), strings.Repeat("é", 300) + "…"}, // one long word: cut mid-word
		{strings.Repeat("x", 298) + " yyyy", strings.Repeat("x", 298) + "…"},
		{strings.Repeat("x", 299) + ", tail", strings.Repeat("x", 299) + "…"},
	}
	for _, tc := range tests {
		if got := hoverExcerpt(tc.in, 300); got != tc.want {
			t.Errorf("hoverExcerpt(%.20q…) = %.40q… (len %d), want len %d", tc.in, got, len(got), len(tc.want))
		}
	}
}
