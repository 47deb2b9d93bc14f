package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The navigation archive (its hover, definition and references cases) and
// the files of its workspace the Go tests below use.
const (
	navArchive    = "testdata/navigation/navigation.txtar"
	navAddItem    = ".saga/stories/shop--cart/add-item.json"
	navRemoveItem = ".saga/stories/shop--cart/remove-item.json" // CRLF line endings
	navCartTotal  = ".saga/stories/shop--cart/cart-total.json"  // emoji before blockedBy on one line; dangling ghost-task
)

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

// TestHoverUTF16Range pins the range of the entry after the emoji: columns
// count the 🛒 as two UTF-16 units.
func TestHoverUTF16Range(t *testing.T) {
	nav := startArchive(t, navArchive)
	text := nav.text(t, navCartTotal)
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
