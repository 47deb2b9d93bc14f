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

// TestDefinitionCRLFTarget pins the target range in the CRLF file: line 1,
// the id value after `  "id": `.
func TestDefinitionCRLFTarget(t *testing.T) {
	nav := startArchive(t, navArchive)
	got := navDefinition(t, nav.c, navCartTotal, at(t, nav.text(t, navCartTotal), `"remove-item"`, 0, 1))
	want := lspRange{Start: lspPosition{Line: 1, Character: 8}, End: lspPosition{Line: 1, Character: 21}}
	if len(got) != 1 || got[0].Range != want {
		t.Fatalf("definition %+v, want range %+v", got, want)
	}
}

// TestDefinitionNoID: a target file without an id points at its start.
func TestDefinitionNoID(t *testing.T) {
	nav := startArchive(t, navArchive)
	// An unsaved buffer of add-item.json without its id member.
	nav.c.openText(navAddItem, `{"subject": "Add an item to the cart", "description": "", "status": "completed", "blockedBy": []}`, 1)
	got := navDefinition(t, nav.c, navCartTotal, at(t, nav.text(t, navCartTotal), `"add-item"`, 0, 1))
	want := navLocation{URI: nav.c.uri(navAddItem)}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("definition %+v, want %+v", got, want)
	}
}
