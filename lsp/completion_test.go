package lsp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
)

// The completion cases are lines of testdata/completion/completion.txtar
// (TestArchives); the tests here are what a line cannot say, on that
// archive's workspace.

// completionRoot is a copy of the completion archive's workspace.
func completionRoot(t *testing.T) string {
	t.Helper()
	return archiveWorkspace(t, "testdata/completion/completion.txtar")
}

type complItem struct {
	Label            string          `json:"label"`
	Kind             int             `json:"kind"`
	Detail           string          `json:"detail"`
	Documentation    json.RawMessage `json:"documentation"`
	SortText         string          `json:"sortText"`
	FilterText       string          `json:"filterText"`
	InsertTextFormat int             `json:"insertTextFormat"`
	TextEdit         *struct {
		Range   lspRange `json:"range"`
		NewText string   `json:"newText"`
	} `json:"textEdit"`
	AdditionalTextEdits []struct {
		Range   lspRange `json:"range"`
		NewText string   `json:"newText"`
	} `json:"additionalTextEdits"`
}

type complList struct {
	IsIncomplete bool        `json:"isIncomplete"`
	Items        []complItem `json:"items"`
}

const snippetCaps = `{"textDocument":{"completion":{"completionItem":{"snippetSupport":true}}}}`

// TestCompletionDocumentation: property names and enum values carry their
// schema description as Markdown documentation.
func TestCompletionDocumentation(t *testing.T) {
	c := startOn(t, completionRoot(t), "")
	text := "{\n  \"id\": \"lint\",\n  \"status\": \"\",\n  \n}\n"
	rel := ".saga/stories/pipeline/lint.json"
	c.openText(rel, text, 1)
	for _, tc := range []struct {
		pos, label, want string
	}{
		{at(t, text, "\",\n  \n", 0, 5), "priority", "Order within a wave"},
		{at(t, text, `"status": "`, 0, len(`"status": "`)), "in_progress", "Execution status"},
	} {
		var list complList
		c.result("textDocument/completion", fmt.Sprintf(`{"textDocument":{"uri":%q},"position":%s}`, c.uri(rel), tc.pos), &list)
		found := false
		for _, it := range list.Items {
			if it.Label != tc.label {
				continue
			}
			found = true
			var doc struct{ Kind, Value string }
			if err := json.Unmarshal(it.Documentation, &doc); err != nil || doc.Kind != "markdown" || !strings.Contains(doc.Value, tc.want) {
				t.Errorf("%q documentation = %s, want markdown containing %q", tc.label, it.Documentation, tc.want)
			}
		}
		if !found {
			t.Errorf("%q not offered", tc.label)
		}
	}
}

// TestCompletionFollowsEdits: the cycle rule reads the other buffers, not
// only disk: once lint is made blocked by report (in an open buffer),
// report's blockedBy no longer offers lint.
func TestCompletionFollowsEdits(t *testing.T) {
	c := startOn(t, completionRoot(t), "")
	c.openText(".saga/stories/pipeline/lint.json",
		"{\"id\": \"lint\", \"subject\": \"Lint\", \"description\": \"\", \"status\": \"pending\", \"blockedBy\": [\"report\"]}", 1)
	text := "{\"id\": \"report\", \"subject\": \"Report\", \"description\": \"\", \"status\": \"pending\", \"blockedBy\": [\"clean-data\", ]}"
	rel := ".saga/stories/pipeline/report.json"
	c.openText(rel, text, 1)
	var list complList
	c.result("textDocument/completion", fmt.Sprintf(`{"textDocument":{"uri":%q},"position":%s}`,
		c.uri(rel), at(t, text, ", ]", 0, 2)), &list)
	var labels []string
	for _, it := range list.Items {
		labels = append(labels, it.Label)
	}
	slices.Sort(labels)
	if want := []string{"fetch-data", "load-data"}; !slices.Equal(labels, want) {
		t.Errorf("labels = %v, want %v", labels, want)
	}
}

// TestCompletionEveryOffset asks for completion at every position of
// half-typed documents: the answer is always a list or null, never an error.
func TestCompletionEveryOffset(t *testing.T) {
	c := startOn(t, completionRoot(t), snippetCaps)
	docs := map[string]string{
		".saga/stories/pipeline/lint.json":   "{\n  \"id\": \"lint\", \"sub\n  \"blockedBy\": [\"re, \"\", fetch-data,\n  \"status\": \"in_\n  \"priority\": hi\n  \"doneWhen\" \n  , \"guidance\": {\"é😀\": [}\r\n  \"",
		".saga/epics/shop/epic.json":         "{\"id\": \"shop\", \"children\": [{\"id\": \"shop--\", \"blockedBy\": [\"shop--cart\", ]}, {\"id\" \"x\", {}, [\"\n  ], \"status\": ",
		".saga/stories/shop--pay/story.json": "{\"id\": \"shop--pay\",, \"epic\": \"sh\", \"status\": [\"pending\"], \"title\": {\"x\":",
	}
	hits := 0
	for rel, text := range docs {
		c.openText(rel, text, 1)
		for off := range len(text) + 1 {
			if off < len(text) && !utf8.RuneStart(text[off]) {
				continue
			}
			p := lspclient.PositionAt(text, off)
			m := c.call("textDocument/completion", fmt.Sprintf(`{"textDocument":{"uri":%q},"position":{"line":%d,"character":%d}}`,
				c.uri(rel), p.Line, p.Character))
			if m.Error != nil {
				t.Fatalf("%s at byte %d (%+v): error %d %s", rel, off, p, m.Error.Code, m.Error.Message)
			}
			if s := string(m.Result); s != "null" && !strings.HasPrefix(s, `{"isIncomplete":false,"items":[`) {
				t.Fatalf("%s at byte %d: result %s", rel, off, s)
			}
			// LSP: an item's edit is on the cursor's line and contains it.
			var list complList
			_ = json.Unmarshal(m.Result, &list)
			for _, it := range list.Items {
				if it.TextEdit == nil {
					t.Fatalf("%s at byte %d: %q has no textEdit", rel, off, it.Label)
				}
				r := it.TextEdit.Range
				if r.Start.Line != p.Line || r.End.Line != p.Line || r.Start.Character > p.Character || r.End.Character < p.Character {
					t.Fatalf("%s at byte %d (%+v): %q edit range %+v does not hold the cursor", rel, off, p, it.Label, r)
				}
			}
			hits += len(list.Items)
		}
	}
	if hits == 0 {
		t.Error("no position offered anything")
	}
}
