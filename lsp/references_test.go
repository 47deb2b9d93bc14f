package lsp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// navReferences asks for references; nil for null, empty (non-nil) for [].
func navReferences(t *testing.T, c *client, rel, pos string, decl bool) []navLocation {
	t.Helper()
	m := c.call("textDocument/references", navParams(c, rel, pos, fmt.Sprintf(`,"context":{"includeDeclaration":%t}`, decl)))
	if m.Error != nil {
		t.Fatalf("references: error %d %s", m.Error.Code, m.Error.Message)
	}
	if string(m.Result) == "null" {
		return nil
	}
	out := []navLocation{}
	if err := json.Unmarshal(m.Result, &out); err != nil {
		t.Fatalf("references result %s: %v", m.Result, err)
	}
	return out
}

func navShow(c *client, ls []navLocation) string {
	if ls == nil {
		return "null"
	}
	if len(ls) == 0 {
		return "[]"
	}
	var b strings.Builder
	prefix := c.uri("") + "/"
	for _, l := range ls {
		fmt.Fprintf(&b, "\n  %s %d:%d-%d:%d", strings.TrimPrefix(l.URI, prefix),
			l.Range.Start.Line, l.Range.Start.Character, l.Range.End.Line, l.Range.End.Character)
	}
	return b.String()
}

// TestNavigationUnsavedEdits: hover, definition and references read the open
// buffers, not disk.
func TestNavigationUnsavedEdits(t *testing.T) {
	nav := startArchive(t, navArchive)
	c := nav.c
	total := navDisk(t, c, navCartTotal) // cart-total.json stays closed at first: read from disk

	// An unsaved remove-item.json: new subject, no longer blocked by add-item.
	edited := strings.Replace(navDisk(t, c, navRemoveItem), "Remove an item", "Remove an item (unsaved)", 1)
	edited = strings.Replace(edited, `["add-item"]`, `[]`, 1)
	c.openText(navRemoveItem, edited, 1)
	h := navHover(t, c, navCartTotal, at(t, total, `"remove-item"`, 0, 2))
	if h == nil || !strings.Contains(h.Contents.Value, "Remove an item (unsaved)") {
		t.Fatalf("hover does not show the unsaved subject: %+v", h)
	}
	got := navReferences(t, c, navAddItem, at(t, navDisk(t, c, navAddItem), `"add-item"`, 0, 2), false)
	if want := []navLocation{nav.location(t, place{rel: navCartTotal, needle: `"add-item"`})}; !slices.Equal(got, want) {
		t.Fatalf("references after the unsaved edit\n got %s\nwant %s", navShow(c, got), navShow(c, want))
	}

	// An incremental didChange moves add-item.json's id two lines down.
	c.open(navAddItem)
	c.notify("textDocument/didChange", fmt.Sprintf(`{"textDocument":{"uri":%q,"version":2},"contentChanges":[`+
		`{"range":{"start":{"line":0,"character":1},"end":{"line":0,"character":1}},"text":"\n\n"}]}`, c.uri(navAddItem)))
	defs := navDefinition(t, c, navCartTotal, at(t, total, `"add-item"`, 0, 2))
	if want := (lspRange{Start: lspPosition{Line: 3, Character: 8}, End: lspPosition{Line: 3, Character: 18}}); len(defs) != 1 || defs[0].Range != want {
		t.Fatalf("definition after the incremental edit %+v, want range %+v", defs, want)
	}

	// An edit of the hovered file itself: ghost-task becomes new-task.
	c.open(navCartTotal)
	start := at(t, total, "ghost-task", 0, 0)
	end := at(t, total, "ghost-task", 0, len("ghost-task"))
	c.notify("textDocument/didChange", fmt.Sprintf(`{"textDocument":{"uri":%q,"version":2},"contentChanges":[`+
		`{"range":{"start":%s,"end":%s},"text":"new-task"}]}`, c.uri(navCartTotal), start, end))
	newText := strings.Replace(total, "ghost-task", "new-task", 1)
	h = navHover(t, c, navCartTotal, at(t, newText, `"new-task"`, 0, 2))
	if h == nil || !strings.Contains(h.Contents.Value, "No task `new-task` in story `shop--cart`") {
		t.Fatalf("hover on the edited entry: %+v", h)
	}
	if want := spanOf(t, newText, `"new-task"`, 0); h.Range == nil || *h.Range != want {
		t.Fatalf("range %+v, want %+v", h.Range, want)
	}
}

// TestNavigationBadParams: malformed params give -32602 for each method.
func TestNavigationBadParams(t *testing.T) {
	nav := startArchive(t, navArchive)
	for _, method := range []string{"textDocument/hover", "textDocument/definition", "textDocument/references"} {
		for _, params := range []string{`{"textDocument":42}`, `{"textDocument":{"uri":"file:///x"},"position":"here"}`} {
			if m := nav.c.call(method, params); m.Error == nil || m.Error.Code != -32602 {
				t.Errorf("%s %s: %+v", method, params, m)
			}
		}
		// A file outside the workspace: null, not an error.
		m := nav.c.call(method, `{"textDocument":{"uri":"file:///elsewhere/x.json"},"position":{"line":0,"character":0},"context":{"includeDeclaration":true}}`)
		if m.Error != nil || string(m.Result) != "null" {
			t.Errorf("%s outside the workspace: %+v %s", method, m.Error, m.Result)
		}
	}
}
