package lsp

import (
	"encoding/json"
	"testing"
)

type navLocation struct {
	URI   string   `json:"uri"`
	Range lspRange `json:"range"`
}

// navDefinition asks for a definition; nil for null. A single Location and a
// one-element array are both accepted.
func navDefinition(t *testing.T, c *client, rel, pos string) []navLocation {
	t.Helper()
	m := c.call("textDocument/definition", navParams(c, rel, pos, ""))
	if m.Error != nil {
		t.Fatalf("definition: error %d %s", m.Error.Code, m.Error.Message)
	}
	switch {
	case string(m.Result) == "null":
		return nil
	case len(m.Result) > 0 && m.Result[0] == '[':
		var out []navLocation
		if err := json.Unmarshal(m.Result, &out); err != nil {
			t.Fatalf("definition result %s: %v", m.Result, err)
		}
		return out
	}
	var l navLocation
	if err := json.Unmarshal(m.Result, &l); err != nil {
		t.Fatalf("definition result %s: %v", m.Result, err)
	}
	return []navLocation{l}
}

func TestDefinition(t *testing.T) {
	nav := newNav(t)
	tests := []struct {
		name       string
		file       string
		needle     string
		n, off     int
		targetFile string // "" for a null result
		targetText string // the target's id value (quoted) the location spans
	}{
		{name: "blockedBy entry after emoji", file: navCartTotal, needle: `"remove-item"`, off: 4,
			targetFile: navRemoveItem, targetText: `"remove-item"`},
		{name: "blockedBy entry to a task", file: navCartTotal, needle: `"add-item"`, off: 1,
			targetFile: navAddItem, targetText: `"add-item"`},
		{name: "blockedBy entry in a CRLF file", file: navRemoveItem, needle: `"add-item"`, off: 3,
			targetFile: navAddItem, targetText: `"add-item"`},
		{name: "unknown blockedBy entry", file: navCartTotal, needle: `"ghost-task"`, off: 3},
		{name: "epic child (folder dialect)", file: navShopEpic, needle: `"shop--cart"`, off: 3,
			targetFile: navCartStory, targetText: `"shop--cart"`},
		{name: "epic child blockedBy entry", file: navShopEpic, needle: `"shop--cart"`, n: 1, off: 3,
			targetFile: navCartStory, targetText: `"shop--cart"`},
		{name: "second epic child", file: navShopEpic, needle: `"shop--checkout"`, off: 3,
			targetFile: navCheckout, targetText: `"shop--checkout"`},
		{name: "epic child (single-file dialect)", file: navBillingEpic, needle: `"billing--invoices"`, off: 3,
			targetFile: navInvoiceStory, targetText: `"billing--invoices"`},
		{name: "child blockedBy naming another epic's story", file: navBillingEpic, needle: `"shop--cart"`, off: 3,
			targetFile: navCartStory, targetText: `"shop--cart"`},
		{name: "unknown epic child", file: navShopEpic, needle: `"shop--ghost"`, off: 3},
		{name: "story epic to folder dialect", file: navCartStory, needle: `"shop"`, off: 2,
			targetFile: navShopEpic, targetText: `"shop"`},
		{name: "story epic to single-file dialect", file: navInvoiceStory, needle: `"billing"`, off: 2,
			targetFile: navBillingEpic, targetText: `"billing"`},
		{name: "unknown story epic", file: navLonelyStory, needle: `"nowhere"`, off: 2},
		{name: "property key", file: navPay, needle: `"subject"`, off: 2},
		{name: "task id value", file: navPay, needle: `"pay"`, off: 2},
		{name: "plain value", file: navPay, needle: `"Pay by card"`, off: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := nav.text(tc.file)
			got := navDefinition(t, nav.c, tc.file, at(t, text, tc.needle, tc.n, tc.off))
			if tc.targetFile == "" {
				if got != nil {
					t.Fatalf("want null, got %+v", got)
				}
				return
			}
			want := navLocation{URI: nav.c.uri(tc.targetFile), Range: spanOf(t, navDisk(t, nav.c, tc.targetFile), tc.targetText, 0)}
			if len(got) != 1 || got[0] != want {
				t.Fatalf("definition %+v, want %+v", got, want)
			}
		})
	}
}

// TestDefinitionCRLFTarget pins the target range in the CRLF file: line 1,
// the id value after `  "id": `.
func TestDefinitionCRLFTarget(t *testing.T) {
	nav := newNav(t)
	got := navDefinition(t, nav.c, navCartTotal, at(t, nav.text(navCartTotal), `"remove-item"`, 0, 1))
	want := lspRange{Start: lspPosition{Line: 1, Character: 8}, End: lspPosition{Line: 1, Character: 21}}
	if len(got) != 1 || got[0].Range != want {
		t.Fatalf("definition %+v, want range %+v", got, want)
	}
}

// TestDefinitionNoID: a target file without an id points at its start.
func TestDefinitionNoID(t *testing.T) {
	nav := newNav(t)
	// An unsaved buffer of add-item.json without its id member.
	nav.c.openText(navAddItem, `{"subject": "Add an item to the cart", "description": "", "status": "completed", "blockedBy": []}`, 1)
	got := navDefinition(t, nav.c, navCartTotal, at(t, nav.text(navCartTotal), `"add-item"`, 0, 1))
	want := navLocation{URI: nav.c.uri(navAddItem)}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("definition %+v, want %+v", got, want)
	}
}
