package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestUpstreamDialect: the language server loads through store, so it sees
// upstream SAGA's layout as `check` does: a flat epic draws no epic-prefix,
// a misplaced file is reported, and a story that appears only in its
// worktree (as after planning upstream) stops being unknown-story; a broken
// task in that worktree copy is reported on the worktree's file.
func TestUpstreamDialect(t *testing.T) {
	c := start(t)
	c.onRequest = func(string, json.RawMessage) any { return nil }
	root := copyTestdata(t, "upstream")
	epic := ".saga/epics/checkout.json"
	mark := c.mark()
	c.initialize(root, `{"workspace":{"didChangeWatchedFiles":{"dynamicRegistration":true}}}`)
	d, _ := c.diagnostics(mark, epic, nil)
	if got := d.codes(); !slices.Equal(got, []string{"unknown-story"}) {
		t.Fatalf("%s after load: %v", epic, got)
	}
	d, _ = c.diagnostics(mark, ".saga/stories/login.json", nil)
	if got := d.codes(); !slices.Equal(got, []string{"misplaced-file"}) {
		t.Fatalf("misplaced file: %v", got)
	}

	// The story appears in its worktree only.
	wt := ".saga/worktrees/pay-form/.saga/stories/pay-form/"
	write := func(rel, text string) {
		t.Helper()
		path := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Marked before the writes: the server's run watcher, which watches
	// worktree copies itself, may bring them in before the client's event.
	mark = c.mark()
	write(wt+"story.json", `{"id": "pay-form", "title": "Pay form", "description": "", "epic": "checkout"}`)
	write(wt+"form.json", `{"id": "form", "subject": "Form", "description": "", "status": "pending", "blockedBy": [`)
	c.notify("workspace/didChangeWatchedFiles", fmt.Sprintf(`{"changes":[{"uri":%q,"type":1}]}`, c.uri(".saga/worktrees/pay-form")))
	c.diagnostics(mark, epic, func(p publishedDiagnostics) bool { return len(p.Diagnostics) == 0 })
	d, _ = c.diagnostics(mark, wt+"form.json", func(p publishedDiagnostics) bool { return len(p.Diagnostics) > 0 })
	if !slices.Contains(d.codes(), "json-syntax") {
		t.Fatalf("worktree task: %v", d.codes())
	}
	// Fixed in the worktree: cleared.
	mark = c.mark()
	write(wt+"form.json", `{"id": "form", "subject": "Form", "description": "", "status": "pending", "blockedBy": []}`)
	c.notify("workspace/didChangeWatchedFiles", fmt.Sprintf(`{"changes":[{"uri":%q,"type":2}]}`, c.uri(wt+"form.json")))
	c.diagnostics(mark, wt+"form.json", func(p publishedDiagnostics) bool { return len(p.Diagnostics) == 0 })
}
