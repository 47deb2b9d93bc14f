package lsp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/saga-ai/saga-lsp/store"
)

const hierarchicalSymbolCaps = `{"textDocument":{"documentSymbol":{"hierarchicalDocumentSymbolSupport":true}}}`

// symbolFixture starts a server on a copy of testdata/symbols/<name>.
func symbolFixture(t *testing.T, name, caps string) *client {
	t.Helper()
	c := start(t)
	c.initialize(copyTestdata(t, filepath.Join("symbols", name)), caps)
	return c
}

func (c *client) symbolReadRel(rel string) string {
	c.t.Helper()
	data, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(rel)))
	if err != nil {
		c.t.Fatal(err)
	}
	return string(data)
}

type gotDocumentSymbol struct {
	Name           string              `json:"name"`
	Detail         *string             `json:"detail"`
	Kind           int                 `json:"kind"`
	Range          lspRange            `json:"range"`
	SelectionRange lspRange            `json:"selectionRange"`
	Children       []gotDocumentSymbol `json:"children"`
}

type gotSymbolInformation struct {
	Name          string  `json:"name"`
	Kind          int     `json:"kind"`
	ContainerName *string `json:"containerName"`
	Location      struct {
		URI   string   `json:"uri"`
		Range lspRange `json:"range"`
	} `json:"location"`
	SelectionRange *lspRange `json:"selectionRange"` // must be absent
}

// wantSymbol describes an expected symbol; ranges are given as needles in
// the file's text (the n-th occurrence). Sel "" means the quoted name; Rng ""
// means the same as Sel, "*" the whole top-level object.
type wantSymbol struct {
	Name     string       `json:"name"`
	Detail   string       `json:"detail"`
	Kind     int          `json:"kind"`
	Sel      string       `json:"sel"`
	SelN     int          `json:"selN"`
	Rng      string       `json:"rng"`
	RngN     int          `json:"rngN"`
	Children []wantSymbol `json:"children"`
}

func (w wantSymbol) ranges(t *testing.T, text string) (rng, sel lspRange) {
	t.Helper()
	sel = spanOf(t, text, cmp.Or(w.Sel, `"`+w.Name+`"`), w.SelN)
	switch w.Rng {
	case "":
		rng = sel
	case "*":
		rng = spanOf(t, text, strings.TrimSpace(text), 0)
	default:
		rng = spanOf(t, text, w.Rng, w.RngN)
	}
	return rng, sel
}

func checkDocumentSymbols(t *testing.T, text string, got []gotDocumentSymbol, want []wantSymbol, path string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d symbols, want %d: %+v", path, len(got), len(want), got)
		return
	}
	for i, w := range want {
		g := got[i]
		p := path + "/" + w.Name
		detail := ""
		if g.Detail != nil {
			detail = *g.Detail
		}
		if g.Name != w.Name || g.Kind != w.Kind || detail != w.Detail {
			t.Errorf("%s: got name %q kind %d detail %q, want %q %d %q", p, g.Name, g.Kind, detail, w.Name, w.Kind, w.Detail)
		}
		rng, sel := w.ranges(t, text)
		if g.Range != rng || g.SelectionRange != sel {
			t.Errorf("%s: range %+v selection %+v, want %+v %+v", p, g.Range, g.SelectionRange, rng, sel)
		}
		checkDocumentSymbols(t, text, g.Children, w.Children, p)
	}
}

// flatSymbol is a wantSymbol in flat (SymbolInformation) mode.
type flatSymbol struct {
	w         wantSymbol
	container string
}

func flattenSymbols(ws []wantSymbol, container string) []flatSymbol {
	var out []flatSymbol
	for _, w := range ws {
		out = append(out, flatSymbol{w, container})
		out = append(out, flattenSymbols(w.Children, w.Name)...)
	}
	return out
}

type symbolCase struct {
	Name string       `json:"name"`
	Rel  string       `json:"rel"`
	Want []wantSymbol `json:"want"`
}

// documentSymbolCases are testdata/symbols/document-symbols.json: a file
// of the shop fixture and the symbols it must answer.
func documentSymbolCases(t *testing.T) []symbolCase {
	t.Helper()
	var cases []symbolCase
	data, err := os.ReadFile(filepath.Join("testdata", "symbols", "document-symbols.json"))
	if err == nil {
		err = json.Unmarshal(data, &cases)
	}
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestDocumentSymbolsHierarchical(t *testing.T) {
	c := symbolFixture(t, "shop", hierarchicalSymbolCaps)
	for _, tc := range documentSymbolCases(t) {
		t.Run(tc.Name, func(t *testing.T) {
			var got []gotDocumentSymbol
			c.result("textDocument/documentSymbol", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, c.uri(tc.Rel)), &got)
			checkDocumentSymbols(t, c.symbolReadRel(tc.Rel), got, tc.Want, "")
		})
	}
}

func TestDocumentSymbolsFlat(t *testing.T) {
	c := symbolFixture(t, "shop", `{"textDocument":{"documentSymbol":{"hierarchicalDocumentSymbolSupport":false}}}`)
	for _, tc := range documentSymbolCases(t) {
		t.Run(tc.Name, func(t *testing.T) {
			text := c.symbolReadRel(tc.Rel)
			var got []gotSymbolInformation
			c.result("textDocument/documentSymbol", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, c.uri(tc.Rel)), &got)
			want := flattenSymbols(tc.Want, "")
			if len(got) != len(want) {
				t.Fatalf("%d symbols, want %d: %+v", len(got), len(want), got)
			}
			for i, w := range want {
				g := got[i]
				container := ""
				if g.ContainerName != nil {
					container = *g.ContainerName
				}
				rng, _ := w.w.ranges(t, text)
				if g.Name != w.w.Name || g.Kind != w.w.Kind || container != w.container {
					t.Errorf("#%d: got %q kind %d container %q, want %q %d %q", i, g.Name, g.Kind, container, w.w.Name, w.w.Kind, w.container)
				}
				if g.Location.URI != c.uri(tc.Rel) || g.Location.Range != rng {
					t.Errorf("#%d %s: location %s %+v, want %s %+v", i, g.Name, g.Location.URI, g.Location.Range, c.uri(tc.Rel), rng)
				}
				if g.SelectionRange != nil {
					t.Errorf("#%d %s: flat mode sent a DocumentSymbol", i, g.Name)
				}
			}
		})
	}
}

// Files that define nothing answer [], not null; the open buffer wins over
// the disk.
func TestDocumentSymbolsEdgeCases(t *testing.T) {
	c := symbolFixture(t, "shop", hierarchicalSymbolCaps)
	for _, rel := range []string{"README.md", ".saga/stories/shop--cart/nothing.json"} {
		m := c.call("textDocument/documentSymbol", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, c.uri(rel)))
		if m.Error != nil || string(m.Result) != "[]" {
			t.Errorf("%s: %s %+v, want []", rel, m.Result, m.Error)
		}
	}

	rel := ".saga/stories/shop--cart/cart-badge.json"
	text := "{\n  \"id\": \"cart-badge\",\n  \"subject\": \"Badge 🛒 count\",\n  \"status\": \"in_progress\",\n  \"blockedBy\": [\"nope\"]\n}\n"
	c.openText(rel, text, 1)
	var got []gotDocumentSymbol
	c.result("textDocument/documentSymbol", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, c.uri(rel)), &got)
	checkDocumentSymbols(t, text, got, []wantSymbol{{
		Name: "cart-badge", Kind: 12, Detail: "Badge 🛒 count · in_progress", Rng: "*",
		Children: []wantSymbol{{Name: "nope", Kind: 20, Detail: "no such task"}},
	}}, "")

	// A broken buffer still has symbols for what parses.
	c.didChange(rel, 2, wholeText(`{"id": "cart-badge", "subject": "Half`))
	m := c.call("textDocument/documentSymbol", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, c.uri(rel)))
	if m.Error != nil || !strings.Contains(string(m.Result), `"name":"cart-badge"`) {
		t.Errorf("broken buffer: %s %+v", m.Result, m.Error)
	}
}

func workspaceSymbols(c *client, query string) []gotSymbolInformation {
	c.t.Helper()
	var got []gotSymbolInformation
	c.result("workspace/symbol", fmt.Sprintf(`{"query":%s}`, jsonString(query)), &got)
	return got
}

func symbolNames(got []gotSymbolInformation) []string {
	out := make([]string, len(got))
	for i, g := range got {
		out[i] = g.Name
	}
	return out
}

func TestWorkspaceSymbols(t *testing.T) {
	c := symbolFixture(t, "shop", "")
	tests := []struct {
		query string
		want  []string // the whole answer, in order
	}{
		{"cart-total", []string{"cart-total"}},
		// Prefix matches (ids or titles) first, then substrings, then
		// subsequences; epics, stories, tasks within a tier.
		{"cart", []string{"cart-badge", "cart-total", "shop--cart", "add-item", "persist-cart", "remove-item"}},
		{"shop", []string{"shop", "shop--cart", "shop--checkout"}},
		// Case-insensitive on ids and titles.
		{"SHOPPING", []string{"shop--cart"}},
		{"PaY", []string{"pay-button"}},
		{"login", []string{"fix-login-typo"}},
		// Subsequence.
		{"cbdg", []string{"cart-badge"}},
		{"zzz", []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			got := symbolNames(workspaceSymbols(c, tc.query))
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("query %q: %v, want %v", tc.query, got, tc.want)
			}
		})
	}

	// Kinds, containers and locations.
	all := workspaceSymbols(c, "")
	if len(all) != 14 {
		t.Fatalf("empty query: %d symbols, want all 14: %v", len(all), symbolNames(all))
	}
	byName := map[string]gotSymbolInformation{}
	for _, s := range all {
		byName[s.Name] = s
	}
	for _, tc := range []struct {
		name, container, rel string
		kind                 int
	}{
		{"shop", "", ".saga/epics/shop/epic.json", 2},
		{"shop--cart", "shop", ".saga/stories/shop--cart/story.json", 5},
		{"fix-login-typo", "", ".saga/stories/fix-login-typo/story.json", 5},
		{"pay-button", "shop--checkout", ".saga/stories/shop--checkout/pay-button.json", 12},
		{"correct-label", "fix-login-typo", ".saga/stories/fix-login-typo/correct-label.json", 12},
	} {
		s, ok := byName[tc.name]
		if !ok {
			t.Errorf("%s missing from the empty query", tc.name)
			continue
		}
		container := ""
		if s.ContainerName != nil {
			container = *s.ContainerName
		}
		want := spanOf(t, c.symbolReadRel(tc.rel), jsonString(tc.name), 0)
		if s.Kind != tc.kind || container != tc.container || s.Location.URI != c.uri(tc.rel) || s.Location.Range != want {
			t.Errorf("%s: kind %d container %q at %s %+v, want %d %q %s %+v", tc.name, s.Kind, container,
				s.Location.URI, s.Location.Range, tc.kind, tc.container, c.uri(tc.rel), want)
		}
	}
	// The empty query lists epics, then stories, then tasks.
	if got := symbolNames(all[:4]); strings.Join(got, ",") != "shop,fix-login-typo,shop--cart,shop--checkout" {
		t.Errorf("empty query starts with %v", got)
	}
}

// An unsaved buffer counts: a task renamed in the editor is found by its new
// subject.
func TestWorkspaceSymbolsFollowBuffers(t *testing.T) {
	c := symbolFixture(t, "shop", "")
	rel := ".saga/stories/fix-login-typo/correct-label.json"
	c.openText(rel, `{"id": "correct-label", "subject": "Reword the Quokka label", "status": "pending", "blockedBy": []}`, 1)
	got := workspaceSymbols(c, "quokka")
	if len(got) != 1 || got[0].Name != "correct-label" || got[0].Location.Range.Start.Character != 7 {
		t.Errorf("query on an edited subject: %+v", got)
	}
}

// writeBulkWorkspace writes stories bulk-00… with perStory tasks each
// (t-0000, t-0001, … across stories) and returns the root.
func writeBulkWorkspace(t *testing.T, stories, perStory int) string {
	t.Helper()
	root := t.TempDir()
	for s := range stories {
		id := fmt.Sprintf("bulk-%02d", s)
		dir := filepath.Join(root, ".saga", "stories", id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		story := fmt.Sprintf("{\n  \"id\": %q,\n  \"title\": \"Bulk story %d\",\n  \"status\": \"pending\"\n}\n", id, s)
		if err := os.WriteFile(filepath.Join(dir, "story.json"), []byte(story), 0o644); err != nil {
			t.Fatal(err)
		}
		for i := range perStory {
			n := s*perStory + i
			task := fmt.Sprintf("{\n  \"id\": \"t-%04d\",\n  \"subject\": \"Generated task %d\",\n  \"status\": \"pending\",\n  \"blockedBy\": []\n}\n", n, n)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("t-%04d.json", n)), []byte(task), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func TestWorkspaceSymbolsLargeWorkspace(t *testing.T) {
	root := writeBulkWorkspace(t, 20, 100) // 2,000 tasks
	c := startOn(t, root, "")
	for _, tc := range []struct {
		query     string
		wantCount int
		wantFirst string
	}{
		{"", 500, "bulk-00"},
		{"t-", 500, "t-0000"},
		{"generated", 500, "t-0000"},
		{"t-1234", 1, "t-1234"},
	} {
		began := time.Now()
		got := workspaceSymbols(c, tc.query)
		t.Logf("query %q: %d symbols in %s", tc.query, len(got), time.Since(began))
		if len(got) != tc.wantCount {
			t.Errorf("query %q: %d symbols, want %d", tc.query, len(got), tc.wantCount)
		}
		if len(got) > 0 && got[0].Name != tc.wantFirst {
			t.Errorf("query %q: first %q, want %q", tc.query, got[0].Name, tc.wantFirst)
		}
	}
	// Prefix matches (t-1230…t-1239) come before subsequence ones (t-0123…).
	got := symbolNames(workspaceSymbols(c, "T-123"))
	want := "t-1230,t-1231,t-1232,t-1233,t-1234,t-1235,t-1236,t-1237,t-1238,t-1239"
	if len(got) <= 10 || strings.Join(got[:10], ",") != want || !slices.Contains(got, "t-0123") {
		t.Errorf("query T-123: %v", got)
	}
}

// The handler gives up on a cancelled request instead of finishing the scan.
func TestWorkspaceSymbolCancelled(t *testing.T) {
	root := writeBulkWorkspace(t, 4, 300)
	p, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	ws, err := p.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	snap := &Snapshot{Root: root, WS: ws, Loaded: true}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := workspaceSymbol(ctx, nil, snap, json.RawMessage(`{"query":""}`))
	if err == nil || res != nil {
		t.Fatalf("cancelled request: %v, %v; want an error", res, err)
	}
	res, err = workspaceSymbol(context.Background(), nil, snap, json.RawMessage(`{"query":"t-1042"}`))
	if got, _ := res.([]protocol.SymbolInformation); err != nil || len(got) != 1 || got[0].Name != "t-1042" {
		t.Fatalf("live request: %d symbols, %v", len(got), err)
	}
}
