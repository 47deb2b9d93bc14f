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

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestEditRepublishesAcrossFiles: typing in one file republishes its own
// diagnostics with the buffer's version, and those of every file it affects;
// a cleared file gets [] (never null).
func TestEditRepublishesAcrossFiles(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	c := startOn(t, root, "")
	rel := ".saga/stories/user-auth--api/login-endpoint.json"
	text := c.open(rel)
	// Open file, no problems: [] with version 1.
	d, _ := c.diagnostics(0, rel, func(p publishedDiagnostics) bool { return p.Version != nil && *p.Version == 1 })
	if d.Diagnostics == nil || len(d.Diagnostics) != 0 {
		t.Fatalf("clean open file: %+v", d)
	}
	// Make login-endpoint depend on logout-endpoint, which depends on it: a
	// cycle across two files, so both are republished.
	mark := c.mark()
	edited := strings.Replace(text, `"blockedBy": ["hash-passwords"]`, `"blockedBy": ["hash-passwords", "logout-endpoint"]`, 1)
	c.didChange(rel, 2, wholeText(edited))
	d, _ = c.diagnostics(mark, rel, func(p publishedDiagnostics) bool { return p.Version != nil && *p.Version == 2 })
	if !slices.Contains(d.codes(), "dependency-cycle") {
		t.Fatalf("edited file: %v", d.codes())
	}
	other := ".saga/stories/user-auth--api/logout-endpoint.json"
	od, _ := c.diagnostics(mark, other, func(p publishedDiagnostics) bool { return slices.Contains(p.codes(), "dependency-cycle") })
	if od.Version != nil {
		t.Errorf("a file that is not open is published without version")
	}
	// Undo with an incremental change: both files clear, with [] not null.
	mark = c.mark()
	start := at(t, edited, `, "logout-endpoint"`, 0, 0)
	end := at(t, edited, `, "logout-endpoint"`, 0, len(`, "logout-endpoint"`))
	c.notify("textDocument/didChange", fmt.Sprintf(`{"textDocument":{"uri":%q,"version":3},"contentChanges":[{"range":{"start":%s,"end":%s},"text":""}]}`, c.uri(rel), start, end))
	d, _ = c.diagnostics(mark, rel, func(p publishedDiagnostics) bool { return p.Version != nil && *p.Version == 3 })
	if len(d.Diagnostics) != 0 {
		t.Fatalf("after undo: %v", d.codes())
	}
	raw, _ := c.waitFor(mark, "textDocument/publishDiagnostics", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "logout-endpoint.json") && strings.Contains(string(p), `"diagnostics":[]`)
	})
	if raw.Method == "" {
		t.Fatal("other file not cleared")
	}
}

// TestOutOfOrderVersions: an incremental change older than the buffer is not
// applied; a full-text change always is.
func TestOutOfOrderVersions(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	c := startOn(t, root, "")
	rel := ".saga/stories/add-logout-button/write-tests.json"
	text := c.open(rel)
	c.didChange(rel, 5, wholeText(text))
	// Version 4 arrives late and would break the file; it must be ignored.
	pos := at(t, text, `"status"`, 0, 0)
	c.notify("textDocument/didChange", fmt.Sprintf(`{"textDocument":{"uri":%q,"version":4},"contentChanges":[{"range":{"start":%s,"end":%s},"text":"garbage "}]}`, c.uri(rel), pos, pos))
	mark := c.mark()
	broken := strings.Replace(text, `"pending"`, `"done"`, 1)
	c.didChange(rel, 6, wholeText(broken))
	d, _ := c.diagnostics(mark, rel, func(p publishedDiagnostics) bool { return p.Version != nil && *p.Version == 6 })
	if codes := d.codes(); !slices.Equal(codes, []string{"schema"}) {
		t.Fatalf("after a late change and a full one: %v (the late change must not have been applied)", codes)
	}
}

// TestUTF16Positions: diagnostics after emoji, combining marks and on CRLF
// lines are placed in UTF-16 code units, and incremental edits use them.
func TestUTF16Positions(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	c := startOn(t, root, "")
	rel := ".saga/stories/add-logout-button/write-tests.json"
	text := "{\r\n  \"id\": \"write-tests\", \"subject\": \"😀 é\u0301 🎉\", \"description\": \"\", \"status\": \"nope\",\r\n  \"blockedBy\": []\r\n}\r\n"
	c.openText(rel, text, 1)
	d, _ := c.diagnostics(0, rel, func(p publishedDiagnostics) bool { return len(p.Diagnostics) > 0 })
	want := at(t, text, `"nope"`, 0, 0)
	var got lspRange
	for _, x := range d.Diagnostics {
		if x.Code == "schema" {
			got = x.Range
		}
	}
	if b, _ := json.Marshal(got.Start); string(b) != want {
		t.Fatalf("schema diagnostic at %s, want %s", b, want)
	}
	if got.End.Character-got.Start.Character != len(`"nope"`) {
		t.Errorf("range %+v should span \"nope\"", got)
	}
	// Replace "nope" by position (UTF-16) with an incremental edit.
	mark := c.mark()
	end := at(t, text, `"nope"`, 0, len(`"nope"`))
	c.notify("textDocument/didChange", fmt.Sprintf(`{"textDocument":{"uri":%q,"version":2},"contentChanges":[{"range":{"start":%s,"end":%s},"text":"\"pending\""}]}`, c.uri(rel), want, end))
	d, _ = c.diagnostics(mark, rel, func(p publishedDiagnostics) bool { return p.Version != nil && *p.Version == 2 })
	if len(d.Diagnostics) != 0 {
		t.Fatalf("after the UTF-16 edit: %+v", d.Diagnostics)
	}
}

// TestCancelAndSlowRequests: a request held open does not block
// notifications; $/cancelRequest answers it with -32800.
func TestCancelAndSlowRequests(t *testing.T) {
	c := startWith(t, Options{requestHook: func(ctx context.Context, method string) {
		if method == "textDocument/hover" {
			select {
			case <-ctx.Done():
			case <-time.After(15 * time.Second):
			}
		}
	}})
	c.initialize(testkit.CopyExample(t, "workspace"), "")
	rel := ".saga/stories/add-logout-button/write-tests.json"
	text := c.open(rel)
	id := c.send("textDocument/hover", fmt.Sprintf(`{"textDocument":{"uri":%q},"position":{"line":1,"character":10}}`, c.uri(rel)))
	// While hover hangs, typing still produces diagnostics.
	mark := c.mark()
	c.didChange(rel, 2, wholeText(strings.Replace(text, `"pending"`, `"nope"`, 1)))
	c.diagnostics(mark, rel, func(p publishedDiagnostics) bool {
		return p.Version != nil && *p.Version == 2 && len(p.Diagnostics) == 1
	})
	c.notify("$/cancelRequest", fmt.Sprintf(`{"id":%s}`, id))
	m := c.wait(id)
	if m.Error == nil || m.Error.Code != -32800 {
		t.Fatalf("cancelled request: %+v", m)
	}
}

// TestExternalEdits: with no client file watching, the server watches
// .saga itself: a hook writing a status, a new story folder, a deleted file.
func TestExternalEdits(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	c := startOn(t, root, "")
	// A status written by another process (atomically, as hooks do).
	rel := ".saga/stories/add-logout-button/implement-button.json"
	path := filepath.Join(root, rel)
	data, _ := os.ReadFile(path)
	mark := c.mark()
	writeAtomic(t, path, strings.Replace(string(data), `"pending"`, `"completed"`, 1))
	d, _ := c.diagnostics(mark, rel, func(p publishedDiagnostics) bool { return len(p.Diagnostics) > 0 })
	if !slices.Contains(d.codes(), "status-inconsistent") {
		t.Fatalf("after an external status write: %v", d.codes())
	}
	// A new story folder with a broken task, written at once (as a checkout
	// does): the folder is listed when its creation is seen, so files that
	// land before its watch is added are read too.
	mark = c.mark()
	dir := filepath.Join(root, ".saga/stories/fresh")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "story.json"), []byte(`{"id": "fresh", "title": "F", "description": ""}`), 0o644)
	os.WriteFile(filepath.Join(dir, "t.json"), []byte(`{"id": "t"`), 0o644)
	d, _ = c.diagnostics(mark, ".saga/stories/fresh/t.json", func(p publishedDiagnostics) bool { return len(p.Diagnostics) > 0 })
	if !slices.Contains(d.codes(), "json-syntax") {
		t.Fatalf("new folder's file: %v", d.codes())
	}
	// Deleting it clears its diagnostics.
	mark = c.mark()
	os.Remove(filepath.Join(dir, "t.json"))
	c.diagnostics(mark, ".saga/stories/fresh/t.json", func(p publishedDiagnostics) bool { return len(p.Diagnostics) == 0 })
}

// TestDynamicWatchRegistration: a client that offers dynamic registration
// is asked to watch, and its didChangeWatchedFiles events are applied.
func TestDynamicWatchRegistration(t *testing.T) {
	c := start(t)
	registered := make(chan string, 1)
	c.onRequest = func(method string, params json.RawMessage) any {
		if method == "client/registerCapability" {
			registered <- string(params)
		}
		return nil
	}
	root := testkit.CopyExample(t, "workspace")
	c.initialize(root, `{"workspace":{"didChangeWatchedFiles":{"dynamicRegistration":true}}}`)
	select {
	case p := <-registered:
		if !strings.Contains(p, "workspace/didChangeWatchedFiles") || !strings.Contains(p, "**/.saga/**") {
			t.Fatalf("registration %s", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no client/registerCapability")
	}
	rel := ".saga/stories/add-logout-button/write-tests.json"
	os.WriteFile(filepath.Join(root, rel), []byte(`{"id": "oops"`), 0o644)
	mark := c.mark()
	c.notify("workspace/didChangeWatchedFiles", fmt.Sprintf(`{"changes":[{"uri":%q,"type":2}]}`, c.uri(rel)))
	d, _ := c.diagnostics(mark, rel, func(p publishedDiagnostics) bool { return len(p.Diagnostics) > 0 })
	if !slices.Contains(d.codes(), "json-syntax") {
		t.Fatalf("%v", d.codes())
	}
}

func writeAtomic(t *testing.T, path, data string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-test")
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestOpenDocumentPublishedFirst: an edit that changes many files'
// diagnostics publishes the document being typed in first — the editor's
// answer does not wait behind the files it affects.
func TestOpenDocumentPublishedFirst(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	var children []string
	for i := range 30 {
		id := fmt.Sprintf("e--s%02d", i)
		children = append(children, fmt.Sprintf(`{"id": %q, "blockedBy": []}`, id))
		files[".saga/stories/"+id+"/story.json"] = fmt.Sprintf(`{"id": %q, "title": "S", "description": "d"}`+"\n", id)
		files[".saga/stories/"+id+"/t.json"] = `{"id": "t", "subject": "T", "description": "d", "status": "pending", "blockedBy": []}` + "\n"
	}
	epic := `{"id": "e", "title": "E", "description": "d", "children": [` + strings.Join(children, ", ") + "]}\n"
	files[".saga/epics/e/epic.json"] = epic
	testkit.WriteFiles(t, root, files)
	c := startOn(t, root, "")
	rel := ".saga/epics/e/epic.json"
	c.open(rel)
	c.diagnostics(0, rel, func(p publishedDiagnostics) bool { return p.Version != nil && *p.Version == 1 })
	// The epic lists none of them now: each story is an orphan of its
	// epic, 30 files republished with the epic itself.
	mark := c.mark()
	c.didChange(rel, 2, wholeText(`{"id": "e", "title": "E", "description": "d", "children": []}`+"\n"))
	first, _ := c.waitFor(mark, "textDocument/publishDiagnostics", nil)
	var p publishedDiagnostics
	json.Unmarshal(first.Params, &p)
	if p.URI != c.uri(rel) {
		t.Fatalf("first publication after the edit is %s (%s), want the open %s", p.URI, first.Params, rel)
	}
	// …and the others did change.
	c.diagnostics(mark, ".saga/stories/e--s29/story.json", func(p publishedDiagnostics) bool { return len(p.Diagnostics) > 0 })
}
