package lsp

import (
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

// The document and workspace symbol cases, and the code lens ones, are lines
// of testdata/symbols/shop.txtar (TestArchives); the tests here are what a
// line cannot say.

// shopFixture starts a server on a copy of that archive's workspace.
func shopFixture(t *testing.T, caps string) *client {
	t.Helper()
	return startOn(t, archiveWorkspace(t, "testdata/symbols/shop.txtar"), caps)
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

// An unsaved buffer counts: a task renamed in the editor is found by its new
// subject.
func TestWorkspaceSymbolsFollowBuffers(t *testing.T) {
	c := shopFixture(t, "")
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
