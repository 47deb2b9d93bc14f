package lsp

import (
	"encoding/json"
	"fmt"
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

// navRef names an expected location: the n-th occurrence of needle in file.
type navRef struct {
	file, needle string
	n            int
}

func TestReferences(t *testing.T) {
	nav := newNav(t)
	addItemRefs := []navRef{{navCartTotal, `"add-item"`, 0}, {navRemoveItem, `"add-item"`, 0}}
	addItemDecl := append([]navRef{{navAddItem, `"add-item"`, 0}}, addItemRefs...)
	cartRefs := []navRef{{navBillingEpic, `"shop--cart"`, 0}, {navShopEpic, `"shop--cart"`, 0}, {navShopEpic, `"shop--cart"`, 1}}
	cartDecl := append(append([]navRef{}, cartRefs...), navRef{navCartStory, `"shop--cart"`, 0})
	shopRefs := []navRef{{navCartStory, `"shop"`, 0}, {navCheckout, `"shop"`, 0}}
	shopDecl := append([]navRef{{navShopEpic, `"shop"`, 0}}, shopRefs...)

	tests := []struct {
		name   string
		file   string
		needle string
		n, off int
		decl   bool
		want   []navRef // nil: a null result
	}{
		{name: "task id without declaration", file: navAddItem, needle: `"add-item"`, off: 2, want: addItemRefs},
		{name: "task id with declaration", file: navAddItem, needle: `"add-item"`, off: 2, decl: true, want: addItemDecl},
		{name: "blockedBy entry with declaration", file: navCartTotal, needle: `"add-item"`, off: 2, decl: true, want: addItemDecl},
		{name: "blockedBy entry in CRLF file", file: navRemoveItem, needle: `"add-item"`, off: 2, want: addItemRefs},
		{name: "blockedBy entry after emoji", file: navCartTotal, needle: `"remove-item"`, off: 2, decl: true,
			want: []navRef{{navCartTotal, `"remove-item"`, 0}, {navRemoveItem, `"remove-item"`, 0}}},
		{name: "dangling blockedBy entry", file: navCartTotal, needle: `"ghost-task"`, off: 2, decl: true,
			want: []navRef{{navCartTotal, `"ghost-task"`, 0}}},
		{name: "task nobody names", file: navPay, needle: `"pay"`, off: 2, want: []navRef{}},
		{name: "task nobody names with declaration", file: navPay, needle: `"pay"`, off: 2, decl: true,
			want: []navRef{{navPay, `"pay"`, 0}}},
		{name: "story id across epics", file: navCartStory, needle: `"shop--cart"`, off: 3, want: cartRefs},
		{name: "story id with declaration", file: navCartStory, needle: `"shop--cart"`, off: 3, decl: true, want: cartDecl},
		{name: "epic child", file: navShopEpic, needle: `"shop--cart"`, off: 3, decl: true, want: cartDecl},
		{name: "epic child blockedBy entry", file: navShopEpic, needle: `"shop--cart"`, n: 1, off: 3, decl: true, want: cartDecl},
		{name: "single-file epic child", file: navBillingEpic, needle: `"billing--invoices"`, off: 3, decl: true,
			want: []navRef{{navBillingEpic, `"billing--invoices"`, 0}, {navInvoiceStory, `"billing--invoices"`, 0}}},
		{name: "unknown epic child", file: navShopEpic, needle: `"shop--ghost"`, off: 3, decl: true,
			want: []navRef{{navShopEpic, `"shop--ghost"`, 0}}},
		{name: "epic id without declaration", file: navShopEpic, needle: `"shop"`, off: 2, want: shopRefs},
		{name: "epic id with declaration", file: navShopEpic, needle: `"shop"`, off: 2, decl: true, want: shopDecl},
		{name: "story epic value", file: navCheckout, needle: `"shop"`, off: 2, decl: true, want: shopDecl},
		{name: "single-file epic id", file: navBillingEpic, needle: `"billing"`, off: 2, decl: true,
			want: []navRef{{navBillingEpic, `"billing"`, 0}, {navInvoiceStory, `"billing"`, 0}}},
		{name: "unknown story epic", file: navLonelyStory, needle: `"nowhere"`, off: 2, decl: true,
			want: []navRef{{navLonelyStory, `"nowhere"`, 0}}},
		{name: "property key", file: navPay, needle: `"blockedBy"`, off: 2, decl: true},
		{name: "plain value", file: navPay, needle: `"Pay by card"`, off: 2, decl: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := nav.text(tc.file)
			got := navReferences(t, nav.c, tc.file, at(t, text, tc.needle, tc.n, tc.off), tc.decl)
			if tc.want == nil {
				if got != nil {
					t.Fatalf("want null, got %+v", got)
				}
				return
			}
			want := navLocations(t, nav.c, tc.want)
			if got == nil || !navEqual(got, want) {
				t.Fatalf("references\n got %s\nwant %s", navShow(nav.c, got), navShow(nav.c, want))
			}
		})
	}
}

func navLocations(t *testing.T, c *client, refs []navRef) []navLocation {
	t.Helper()
	out := []navLocation{}
	for _, r := range refs {
		out = append(out, navLocation{URI: c.uri(r.file), Range: spanOf(t, navDisk(t, c, r.file), r.needle, r.n)})
	}
	return out
}

func navEqual(a, b []navLocation) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func navShow(c *client, ls []navLocation) string {
	if ls == nil {
		return "null"
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
	nav := newNav(t)
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
	if want := navLocations(t, c, []navRef{{navCartTotal, `"add-item"`, 0}}); !navEqual(got, want) {
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
	nav := newNav(t)
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
