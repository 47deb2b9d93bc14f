//go:build unix

package lsp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/bench/workload"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// longEntries is the length of the hostile list: 60,000 blockedBy entries,
// about 600 KB (issue 17). The timings are BenchmarkLongList in package
// bench; here every request must answer, and answer right.
const longEntries = 60000

// TestLongList: on a task whose blockedBy holds 60,000 entries — one per
// line, or all on one line — every request answers correctly: diagnostics
// (one per unknown or repeated entry), hover, definition, references,
// completion, rename, document and workspace symbols, code lens, quick fixes
// for a whole-file selection, and an incremental edit.
func TestLongList(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout workload.LongLayout
	}{{"lines", workload.LongLines}, {"one-line", workload.LongOneLine}} {
		t.Run(tc.name, func(t *testing.T) {
			c, root, text, pd := openLongList(t, tc.layout)
			rel := workload.LongTaskRel
			repeats := longEntries/2 - workload.LongSiblings/2
			if got := countCode(pd, "unknown-dependency"); got != longEntries/2 {
				t.Errorf("unknown-dependency: %d, want %d", got, longEntries/2)
			}
			if got := countCode(pd, "schema"); got != repeats {
				t.Errorf("schema (uniqueItems): %d, want %d", got, repeats)
			}
			entry := func(i, off int) string { // the position in entry i, off bytes into its quoted text
				return at(t, text, `"`+workload.LongEntry(i)+`"`, longOccurrence(i), off)
			}

			h := navHover(t, c, rel, entry(30001, 2))
			if h == nil || !strings.Contains(h.Contents.Value, "**Task `k-001`** — Sibling 1") {
				t.Errorf("hover on entry 30001: %+v", h)
			}
			h = navHover(t, c, rel, at(t, text, `"huge"`, 0, 2))
			if h == nil || !strings.Contains(h.Contents.Value, "Blocked by `u-00000`, `k-001`, `u-00002`") ||
				!strings.Contains(h.Contents.Value, fmt.Sprintf("and %d more", longEntries-hoverMaxBlockers)) {
				t.Errorf("hover on the id: %+v", h)
			}

			defs := navDefinition(t, c, rel, entry(longEntries-1, 2))
			if len(defs) != 1 || !strings.HasSuffix(defs[0].URI, "/k-099.json") {
				t.Errorf("definition of the last entry: %+v", defs)
			}

			var refs []struct {
				URI   string   `json:"uri"`
				Range lspRange `json:"range"`
			}
			c.result("textDocument/references", navParams(c, rel, entry(30001, 2), `,"context":{"includeDeclaration":false}`), &refs)
			if len(refs) != longEntries/workload.LongSiblings {
				t.Errorf("references to k-001: %d, want %d", len(refs), longEntries/workload.LongSiblings)
			} else if want := spanOf(t, text, `"k-001"`, longEntries/workload.LongSiblings-1); refs[len(refs)-1].Range != want {
				t.Errorf("last reference at %+v, want %+v", refs[len(refs)-1].Range, want)
			}

			// In the first entry: the siblings not listed yet.
			var list struct {
				Items []struct {
					Label string `json:"label"`
				} `json:"items"`
			}
			c.result("textDocument/completion", navParams(c, rel, entry(0, 1), ""), &list)
			var labels []string
			for _, it := range list.Items {
				labels = append(labels, it.Label)
			}
			if len(labels) != workload.LongSiblings/2 || slices.Contains(labels, "k-001") || !slices.Contains(labels, "k-000") {
				t.Errorf("completion offers %d: %v", len(labels), labels)
			}

			var we json.RawMessage
			c.result("textDocument/rename", navParams(c, rel, entry(30001, 2), `,"newName":"k-one"`), &we)
			if n := strings.Count(string(we), `"newText":"k-one"`); n != longEntries/workload.LongSiblings+1 {
				t.Errorf("rename edits %d names, want %d", n, longEntries/workload.LongSiblings+1)
			}

			var syms []gotSymbolInformation
			c.result("textDocument/documentSymbol", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, c.uri(rel)), &syms)
			if len(syms) != longEntries+1 {
				t.Fatalf("document symbols: %d, want %d", len(syms), longEntries+1)
			}
			last := syms[len(syms)-1]
			if want := spanOf(t, text, `"k-099"`, longEntries/workload.LongSiblings-1); last.Name != "k-099" || last.Location.Range != want {
				t.Errorf("last symbol %+v, want k-099 at %+v", last, want)
			}
			var ws []gotSymbolInformation
			c.result("workspace/symbol", `{"query":"huge"}`, &ws)
			if len(ws) != 1 || ws[0].Name != "huge" {
				t.Errorf("workspace symbols for huge: %+v", ws)
			}
			if lenses := codeLenses(c, rel); len(lenses) != 1 {
				t.Errorf("code lenses: %+v", lenses)
			}

			// A whole-file selection: fixes for the first diagnostics, each
			// leaving valid JSON.
			whole := lspRange{End: lspPosition{Line: strings.Count(text, "\n") + 1}}
			actions := c.codeActions(rel, whole, nil, "")
			remove := actionTitled(actions, "Remove u-00000 from blockedBy")
			if remove == nil || len(actions) > 2*maxFixedDiagnostics+1 {
				t.Fatalf("%d actions: %q", len(actions), actionTitles(actions)[:min(len(actions), 5)])
			}
			e := newEditSession(t, c, root)
			e.open[rel], e.text[rel] = 1, text
			e.apply(remove.Edit)
			fixed := e.text[rel]
			if doc := jsonc.Parse([]byte(fixed)); len(doc.Errors) > 0 || strings.Contains(fixed, `"u-00000"`) || len(fixed) >= len(text) {
				t.Fatalf("the fix left errors %v or kept the entry", doc.Errors)
			}

			// The same removal typed as an incremental change: one
			// unknown-dependency fewer, and the model is the editor's text.
			var edits struct {
				DocumentChanges []docChangeJSON `json:"documentChanges"`
			}
			if err := json.Unmarshal(remove.Edit, &edits); err != nil || len(edits.DocumentChanges) != 1 {
				t.Fatalf("fix edit %s", remove.Edit)
			}
			var changes []string
			for _, ed := range edits.DocumentChanges[0].Edits {
				changes = append(changes, change(ed.Range.Start, ed.Range.End, ed.NewText))
			}
			from := c.mark()
			c.didChange(rel, 2, changes...)
			pd, _ = c.diagnostics(from, rel, func(pd publishedDiagnostics) bool { return pd.Version != nil && *pd.Version == 2 })
			if got := countCode(pd, "unknown-dependency"); got != longEntries/2-1 {
				t.Errorf("after the edit: unknown-dependency %d, want %d", got, longEntries/2-1)
			}
			h = navHover(t, c, rel, at(t, fixed, `"huge"`, 0, 2))
			if h == nil || !strings.Contains(h.Contents.Value, "Blocked by `k-001`, `u-00002`") {
				t.Errorf("hover after the edit: %+v", h)
			}
		})
	}
}

// openLongList starts a server on the long-list workspace laid out as
// layout, opens the long task file and returns its first diagnostics.
func openLongList(t *testing.T, layout workload.LongLayout) (c *client, root, text string, pd publishedDiagnostics) {
	t.Helper()
	root = t.TempDir()
	text, err := workload.LongList(root, longEntries, layout)
	if err != nil {
		t.Fatal(err)
	}
	c = start(t)
	c.initialize(root, capsFull)
	from := c.mark()
	c.openText(workload.LongTaskRel, text, 1)
	pd, _ = c.diagnostics(from, workload.LongTaskRel, func(pd publishedDiagnostics) bool { return pd.Version != nil && *pd.Version == 1 })
	return c, root, text, pd
}

// longOccurrence is which occurrence of entry i's text entry i is.
func longOccurrence(i int) int {
	if i%2 == 0 {
		return 0
	}
	return i / workload.LongSiblings
}

// TestLongObject: an object with 60,000 unknown properties is one
// unknown-property finding per member, and requests on it answer.
func TestLongObject(t *testing.T) {
	c, _, text, pd := openLongList(t, workload.LongKeys)
	rel := workload.LongTaskRel
	if got := countCode(pd, "unknown-property"); got != longEntries {
		t.Errorf("unknown-property: %d, want %d", got, longEntries)
	}
	if h := navHover(t, c, rel, at(t, text, `"subject"`, 0, 2)); h == nil || !strings.Contains(h.Contents.Value, "**`subject`**") {
		t.Errorf("hover on subject: %+v", h)
	}
	whole := lspRange{End: lspPosition{Line: strings.Count(text, "\n") + 1}}
	if actions := c.codeActions(rel, whole, nil, ""); len(actions) == 0 {
		t.Errorf("no actions for a whole-file selection")
	}
	var syms []gotSymbolInformation
	c.result("textDocument/documentSymbol", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, c.uri(rel)), &syms)
	if len(syms) != 1 {
		t.Errorf("document symbols: %+v", syms)
	}
}
