package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.lsp.dev/uri"

	"github.com/saga-ai/saga-lsp/store"
)

// Client capabilities used by the rename and code action tests. Watched
// files are registered dynamically, so the tests report disk changes
// themselves (no fsnotify race).
const (
	capsFull     = `{"workspace":{"workspaceEdit":{"documentChanges":true,"resourceOperations":["create","rename","delete"]},"didChangeWatchedFiles":{"dynamicRegistration":true}}}`
	capsNoCreate = `{"workspace":{"workspaceEdit":{"documentChanges":true,"resourceOperations":["rename"]},"didChangeWatchedFiles":{"dynamicRegistration":true}}}`
	capsPlain    = `{"workspace":{"didChangeWatchedFiles":{"dynamicRegistration":true}}}`
)

// --- an editor's side of a WorkspaceEdit: apply it to files in memory ---

type wsEditJSON struct {
	Changes         map[string][]textEditJSON `json:"changes"`
	DocumentChanges []docChangeJSON           `json:"documentChanges"`
}

type textEditJSON struct {
	Range   lspRange `json:"range"`
	NewText string   `json:"newText"`
}

type docChangeJSON struct {
	Kind         string `json:"kind"`
	URI          string `json:"uri"`
	OldURI       string `json:"oldUri"`
	NewURI       string `json:"newUri"`
	TextDocument *struct {
		URI     string `json:"uri"`
		Version *int   `json:"version"`
	} `json:"textDocument"`
	Edits   []textEditJSON `json:"edits"`
	Options *struct {
		Overwrite      *bool `json:"overwrite"`
		IgnoreIfExists *bool `json:"ignoreIfExists"`
	} `json:"options"`
}

// editSession is a workspace as an editor holds it: open buffers with
// versions, the rest on disk; edits are applied in memory, then committed
// (didChange for open buffers, disk + didChangeWatchedFiles for the rest).
type editSession struct {
	t       *testing.T
	c       *client
	root    string
	open    map[string]int    // rel → version of open buffers
	text    map[string]string // rel → current text (open or touched)
	created map[string]bool
	deleted map[string]bool
	touched map[string]bool
}

func newEditSession(t *testing.T, c *client, root string) *editSession {
	return &editSession{t: t, c: c, root: root, open: map[string]int{}, text: map[string]string{},
		created: map[string]bool{}, deleted: map[string]bool{}, touched: map[string]bool{}}
}

// openFile opens rel from disk as version 1 and returns its text.
func (e *editSession) openFile(rel string) string {
	text := e.c.open(rel)
	e.open[rel], e.text[rel] = 1, text
	return text
}

func (e *editSession) relOf(u string) string {
	e.t.Helper()
	rel, err := filepath.Rel(e.root, uri.URI(u).FsPath())
	if err != nil || strings.HasPrefix(rel, "..") {
		e.t.Fatalf("edit outside the workspace: %s", u)
	}
	return filepath.ToSlash(rel)
}

func (e *editSession) exists(rel string) bool {
	if e.deleted[rel] {
		return false
	}
	if _, ok := e.text[rel]; ok {
		return true
	}
	_, err := os.Stat(filepath.Join(e.root, filepath.FromSlash(rel)))
	return err == nil
}

func (e *editSession) get(rel string) string {
	e.t.Helper()
	if s, ok := e.text[rel]; ok {
		return s
	}
	if e.deleted[rel] {
		e.t.Fatalf("edit of deleted file %s", rel)
	}
	b, err := os.ReadFile(filepath.Join(e.root, filepath.FromSlash(rel)))
	if err != nil {
		e.t.Fatalf("edit of missing file %s: %v", rel, err)
	}
	e.text[rel] = string(b)
	return string(b)
}

// apply applies a WorkspaceEdit (raw JSON) as an editor would, checking the
// versions of TextDocumentEdits against the open buffers.
func (e *editSession) apply(raw json.RawMessage) {
	e.t.Helper()
	var we wsEditJSON
	if err := json.Unmarshal(raw, &we); err != nil {
		e.t.Fatalf("decode WorkspaceEdit %s: %v", raw, err)
	}
	if len(we.Changes) > 0 && len(we.DocumentChanges) > 0 {
		e.t.Fatalf("WorkspaceEdit has both changes and documentChanges: %s", raw)
	}
	for u, edits := range we.Changes {
		e.applyText(e.relOf(u), edits)
	}
	for _, dc := range we.DocumentChanges {
		switch dc.Kind {
		case "create":
			rel := e.relOf(dc.URI)
			if e.exists(rel) {
				e.t.Fatalf("CreateFile of existing %s", rel)
			}
			e.text[rel], e.created[rel], e.touched[rel] = "", true, true
			delete(e.deleted, rel)
		case "rename":
			from, to := e.relOf(dc.OldURI), e.relOf(dc.NewURI)
			if e.exists(to) {
				e.t.Fatalf("RenameFile onto existing %s", to)
			}
			text := e.get(from)
			delete(e.text, from)
			e.deleted[from], e.touched[from] = true, true
			e.text[to], e.created[to], e.touched[to] = text, true, true
			delete(e.deleted, to)
			if v, ok := e.open[from]; ok { // the editor moves the buffer
				delete(e.open, from)
				e.c.notify("textDocument/didClose", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, e.c.uri(from)))
				e.open[to] = v
				e.c.openText(to, text, v)
			}
		case "delete":
			e.t.Fatalf("unexpected DeleteFile in %s", raw)
		case "":
			if dc.TextDocument == nil {
				e.t.Fatalf("document change without kind or textDocument: %s", raw)
			}
			rel := e.relOf(dc.TextDocument.URI)
			if dc.TextDocument.Version != nil {
				if v, ok := e.open[rel]; !ok || v != *dc.TextDocument.Version {
					e.t.Fatalf("TextDocumentEdit for %s at version %d; the buffer is at %d (open: %v)", rel, *dc.TextDocument.Version, v, ok)
				}
			}
			e.applyText(rel, dc.Edits)
		default:
			e.t.Fatalf("unknown document change kind %q", dc.Kind)
		}
	}
}

func (e *editSession) applyText(rel string, edits []textEditJSON) {
	e.t.Helper()
	text := e.get(rel)
	type sp struct {
		start, end int
		text       string
	}
	spans := make([]sp, len(edits))
	for i, ed := range edits {
		spans[i] = sp{lspOffset(text, ed.Range.Start), lspOffset(text, ed.Range.End), ed.NewText}
		if spans[i].end < spans[i].start {
			e.t.Fatalf("inverted range in %s: %+v", rel, ed.Range)
		}
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			e.t.Fatalf("overlapping edits in %s: %+v", rel, edits)
		}
	}
	for i := len(spans) - 1; i >= 0; i-- {
		text = text[:spans[i].start] + spans[i].text + text[spans[i].end:]
	}
	e.text[rel], e.touched[rel] = text, true
}

// utf16Offset converts an LSP position to a byte offset of text.
func lspOffset(text string, p lspPosition) int {
	off := 0
	for line := 0; line < p.Line; line++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	col := 0
	for i, r := range text[off:] {
		if col >= p.Character || r == '\n' || r == '\r' {
			return off + i
		}
		col++
		if r >= 0x10000 {
			col++
		}
	}
	return len(text)
}

// commit hands the edited files back to the server: didChange for open
// buffers (version+1), disk plus didChangeWatchedFiles for the rest. It
// writes open buffers to disk too, so store.Load sees the editor's state.
func (e *editSession) commit() {
	e.t.Helper()
	var events []string
	rels := make([]string, 0, len(e.touched))
	for rel := range e.touched {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		abs := filepath.Join(e.root, filepath.FromSlash(rel))
		if e.deleted[rel] {
			if err := os.Remove(abs); err != nil {
				e.t.Fatal(err)
			}
			events = append(events, fmt.Sprintf(`{"uri":%q,"type":3}`, e.c.uri(rel)))
			continue
		}
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(e.text[rel]), 0o644); err != nil {
			e.t.Fatal(err)
		}
		if v, ok := e.open[rel]; ok {
			v++
			e.open[rel] = v
			e.c.didChange(rel, v, wholeText(e.text[rel]))
			continue
		}
		typ := 2
		if e.created[rel] {
			typ = 1
		}
		events = append(events, fmt.Sprintf(`{"uri":%q,"type":%d}`, e.c.uri(rel), typ))
	}
	if len(events) > 0 {
		e.c.notify("workspace/didChangeWatchedFiles", `{"changes":[`+strings.Join(events, ",")+`]}`)
	}
	e.touched, e.created, e.deleted = map[string]bool{}, map[string]bool{}, map[string]bool{}
}

// --- checks against the store: what `saga-lsp check` would say ---

func newStoreParser(t *testing.T) *store.Parser {
	t.Helper()
	p, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// diskDiagnostics loads the workspace from disk.
func diskDiagnostics(t *testing.T, root string) []store.Diagnostic {
	t.Helper()
	ws, err := newStoreParser(t).Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return ws.Diagnostics()
}

// countBy counts diagnostics per "file code", errors only unless all.
func countDiagnostics(ds []store.Diagnostic, all bool) map[string]int {
	out := map[string]int{}
	for _, d := range ds {
		if all || d.Severity == store.SeverityError {
			out[d.File+" "+string(d.Code)]++
		}
	}
	return out
}

// assertNoNewErrors fails when an error (file, code) appears more often
// after than before.
func assertNoNewErrors(t *testing.T, before, after []store.Diagnostic) {
	t.Helper()
	b, a := countDiagnostics(before, false), countDiagnostics(after, false)
	for k, n := range a {
		if n > b[k] {
			var msgs []string
			for _, d := range after {
				if d.File+" "+string(d.Code) == k {
					msgs = append(msgs, d.Message)
				}
			}
			t.Errorf("new error %s (%d, was %d): %v", k, n, b[k], msgs)
		}
	}
}

// assertCleanFile parses content as the file at rel and fails on any error.
func assertCleanFile(t *testing.T, rel, content string) {
	t.Helper()
	f := newStoreParser(t).Parse(rel, []byte(content), -1)
	for _, d := range f.Local {
		if d.Severity == store.SeverityError {
			t.Errorf("%s: %s: %s\n%s", rel, d.Code, d.Message, content)
		}
	}
}

// --- code action requests ---

type codeActionJSON struct {
	Title       string          `json:"title"`
	Kind        string          `json:"kind"`
	IsPreferred *bool           `json:"isPreferred"`
	Diagnostics []diagJSON      `json:"diagnostics"`
	Edit        json.RawMessage `json:"edit"`
	Command     json.RawMessage `json:"command"`
}

func actionTitles(as []codeActionJSON) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Title
	}
	return out
}

func actionTitled(as []codeActionJSON, title string) *codeActionJSON {
	for i := range as {
		if as[i].Title == title {
			return &as[i]
		}
	}
	return nil
}

// codeActions requests actions for rel over rng with the given context
// diagnostics and only filter (raw JSON, "" for none).
func (c *client) codeActions(rel string, rng lspRange, diags []diagJSON, only string) []codeActionJSON {
	c.t.Helper()
	if diags == nil {
		diags = []diagJSON{}
	}
	dj, _ := json.Marshal(diags)
	rj, _ := json.Marshal(rng)
	ctx := `{"diagnostics":` + string(dj)
	if only != "" {
		ctx += `,"only":` + only
	}
	ctx += `}`
	var out []codeActionJSON
	c.result("textDocument/codeAction", fmt.Sprintf(`{"textDocument":{"uri":%q},"range":%s,"context":%s}`, c.uri(rel), rj, ctx), &out)
	if out == nil {
		c.t.Fatalf("codeAction returned null, want an array")
	}
	// "Run story" carries a command, not an edit; TestCodeActionRunStory
	// checks it, the edit tests leave it aside.
	return slices.DeleteFunc(out, func(a codeActionJSON) bool { return strings.HasPrefix(a.Title, "Run story ") })
}

// codeActionRoot is a copy of the workspace of testdata/codeaction/fixes.txtar.
func codeActionRoot(t *testing.T) string {
	t.Helper()
	return archiveWorkspace(t, "testdata/codeaction/fixes.txtar")
}

// TestCodeActionRunStory: task and story files offer the source action "Run
// story", the code lens's command.
func TestCodeActionRunStory(t *testing.T) {
	root := codeActionRoot(t)
	c := startOn(t, root, "")
	for _, tc := range []struct {
		rel  string
		want bool
	}{{".saga/stories/fixes/mismatch.json", true}, {".saga/stories/fixes/story.json", true}} {
		var out []codeActionJSON
		c.result("textDocument/codeAction", fmt.Sprintf(`{"textDocument":{"uri":%q},"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"context":{"diagnostics":[],"only":["source"]}}`, c.uri(tc.rel)), &out)
		var run *codeActionJSON
		for i := range out {
			if out[i].Title == "Run story fixes" {
				run = &out[i]
			}
		}
		if (run != nil) != tc.want {
			t.Fatalf("%s: actions %q", tc.rel, actionTitles(out))
		}
		var cmd struct {
			Command   string            `json:"command"`
			Arguments []json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(run.Command, &cmd); err != nil || cmd.Command != "saga.runStory" || len(cmd.Arguments) != 1 || string(cmd.Arguments[0]) != `{"story":"fixes"}` {
			t.Errorf("%s: command %s", tc.rel, run.Command)
		}
	}
}

// openWithDiagnostic opens rel and waits until its published diagnostics
// (for version 1) include code; it returns them.
func openWithDiagnostic(t *testing.T, e *editSession, rel, code string) publishedDiagnostics {
	t.Helper()
	from := e.c.mark()
	e.openFile(rel)
	pd, _ := e.c.diagnostics(from, rel, func(pd publishedDiagnostics) bool {
		return pd.Version != nil && *pd.Version == 1
	})
	if !slices.Contains(pd.codes(), code) {
		t.Fatalf("%s: no %s diagnostic after open: %v", rel, code, pd.codes())
	}
	return pd
}

// openFixable starts a server with caps on a copy of codeActionRoot,
// opens rel and returns its first diagnostic with code.
func openFixable(t *testing.T, caps, rel, code string) (*client, *editSession, diagJSON) {
	t.Helper()
	root := codeActionRoot(t)
	c := startOn(t, root, caps)
	e := newEditSession(t, c, root)
	pd := openWithDiagnostic(t, e, rel, code)
	return c, e, pd.Diagnostics[slices.Index(pd.codes(), code)]
}

func countCode(pd publishedDiagnostics, code string) int {
	n := 0
	for _, c := range pd.codes() {
		if c == code {
			n++
		}
	}
	return n
}

type fixData struct {
	Fix *store.Fix `json:"fix"`
}

// TestCodeActionQuickFixes applies each quick fix: to the buffer, then to
// disk, after which the server drops the diagnostic and no new error
// appears. The fixes offered for each diagnostic are lines of
// testdata/codeaction/fixes.txtar.
func TestCodeActionQuickFixes(t *testing.T) {
	tests := []struct {
		name  string
		rel   string // file to open ("" → the file holding the weak cycle link)
		code  string
		weak  bool // pick the dependency-cycle diagnostic marked weak
		title string
		// wantText: a substring of the file after the fix.
		wantText string
	}{
		{name: "id-mismatch task", rel: ".saga/stories/fixes/mismatch.json", code: "id-mismatch",
			title: `Set id to "mismatch"`, wantText: `"id": "mismatch",`},
		{name: "id-mismatch story", rel: ".saga/stories/renamed-story/story.json", code: "id-mismatch",
			title: `Set id to "renamed-story"`, wantText: `"id": "renamed-story",`},
		{name: "invalid-id blocker", rel: ".saga/stories/fixes/bad-ref.json", code: "invalid-id",
			title:    `Change "Write_Tests" to "write-tests"`,
			wantText: `"blockedBy": ["write-tests"]`},
		{name: "unknown-dependency remove first", rel: ".saga/stories/fixes/needs-ghost.json", code: "unknown-dependency",
			title:    "Remove ghost from blockedBy",
			wantText: "\"blockedBy\": [\n    \"write-tests\"\n  ]"},
		{name: "unknown-dependency remove last", rel: ".saga/stories/fixes/needs-phantom.json", code: "unknown-dependency",
			title:    "Remove phantom from blockedBy",
			wantText: `"blockedBy": ["write-tests"]`},
		{name: "unknown-dependency create", rel: ".saga/stories/fixes/needs-ghost.json", code: "unknown-dependency",
			title:    "Create task ghost",
			wantText: `"ghost",`},
		{name: "unknown-dependency epic child", rel: ".saga/epics/plan/epic.json", code: "unknown-dependency",
			title:    "Remove plan--ghost from blockedBy",
			wantText: `{ "id": "plan--one", "blockedBy": [] },`},
		{name: "self-dependency task", rel: ".saga/stories/fixes/selfish.json", code: "self-dependency",
			title:    "Remove selfish from blockedBy",
			wantText: `"blockedBy": []`},
		{name: "self-dependency epic child", rel: ".saga/epics/plan/epic.json", code: "self-dependency",
			title:    "Remove plan--two from blockedBy",
			wantText: `{ "id": "plan--two", "blockedBy": [] },`},
		{name: "dependency-cycle weakest link", code: "dependency-cycle", weak: true,
			title:    "Remove weakest link cycle-b → cycle-a",
			wantText: `"blockedBy": []`},
		{name: "schema missing status", rel: ".saga/stories/fixes/no-status.json", code: "schema",
			title:    `Add missing property "status"`,
			wantText: "\"blockedBy\": [],\n  \"status\": \"pending\"\n}"},
		{name: "schema missing blockedBy", rel: ".saga/stories/fixes/no-blockers.json", code: "schema",
			title:    `Add missing property "blockedBy"`,
			wantText: "\"status\": \"pending\",\n  \"blockedBy\": []\n}"},
		{name: "schema missing subject inline", rel: ".saga/stories/fixes/no-subject.json", code: "schema",
			title:    `Add missing property "subject"`,
			wantText: `"blockedBy": [], "subject": "No subject" }`},
		{name: "schema missing blockedBy in epic child", rel: ".saga/epics/plan/epic.json", code: "schema",
			title:    `Add missing property "blockedBy"`,
			wantText: `{ "id": "plan--three", "blockedBy": [] }`},
		{name: "unknown-property near miss", rel: ".saga/stories/fixes/typo.json", code: "unknown-property",
			title:    `Rename property "subjet" to "subject"`,
			wantText: `"subject": "A misspelt property",`},
		{name: "duplicate-id", rel: ".saga/stories/fixes/dup.json", code: "duplicate-id",
			title: `Set id to "dup"`, wantText: `"id": "dup",`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := codeActionRoot(t)
			before := diskDiagnostics(t, root)
			rel := tt.rel
			if rel == "" {
				for _, d := range before {
					if string(d.Code) == tt.code && d.Fix != nil && d.Fix.Weak == tt.weak {
						rel = d.File
					}
				}
			}
			c := start(t)
			c.initialize(root, capsFull)
			e := newEditSession(t, c, root)
			pd := openWithDiagnostic(t, e, rel, tt.code)
			var diag *diagJSON
			for i, d := range pd.Diagnostics {
				if d.Code != tt.code {
					continue
				}
				if tt.weak {
					var fd fixData
					if json.Unmarshal(d.Data, &fd) != nil || fd.Fix == nil || !fd.Fix.Weak {
						continue
					}
				}
				diag = &pd.Diagnostics[i]
				break
			}
			if diag == nil {
				t.Fatalf("no %s diagnostic to fix in %v", tt.code, pd.codes())
			}
			actions := c.codeActions(rel, diag.Range, []diagJSON{*diag}, `["quickfix"]`)
			a := actionTitled(actions, tt.title)
			if a == nil {
				t.Fatalf("no quick fix %q in %q", tt.title, actionTitles(actions))
			}
			e.apply(a.Edit)
			changed := e.text[rel]
			if strings.HasPrefix(tt.title, "Create task ") {
				ref := strings.TrimPrefix(tt.title, "Create task ")
				newRel := store.TaskFileRel("fixes", ref)
				if !e.created[newRel] {
					t.Fatalf("no CreateFile of %s in %s", newRel, a.Edit)
				}
				assertCleanFile(t, newRel, e.text[newRel])
				if want := `"id": "` + ref + `"`; !strings.Contains(e.text[newRel], want) {
					t.Errorf("created task lacks %s:\n%s", want, e.text[newRel])
				}
			}
			if !strings.Contains(changed, tt.wantText) {
				t.Errorf("after the fix %s lacks %q:\n%s", rel, tt.wantText, changed)
			}
			n := countCode(pd, tt.code)
			from := c.mark()
			e.commit()
			// The server agrees: the diagnostic is gone from the buffer.
			c.diagnostics(from, rel, func(p publishedDiagnostics) bool { return countCode(p, tt.code) < n })
			after := diskDiagnostics(t, root)
			assertNoNewErrors(t, before, after)
			if b, a := countDiagnostics(before, true)[rel+" "+tt.code], countDiagnostics(after, true)[rel+" "+tt.code]; a >= b {
				t.Errorf("%s %s: %d diagnostics after the fix, %d before", rel, tt.code, a, b)
			}
		})
	}
}

func TestCodeActionWithoutResourceCreate(t *testing.T) {
	rel := ".saga/stories/fixes/needs-ghost.json"
	c, _, d := openFixable(t, capsNoCreate, rel, "unknown-dependency")
	got := c.codeActions(rel, d.Range, []diagJSON{d}, "")
	if !slices.Equal(actionTitles(got), []string{"Remove ghost from blockedBy"}) {
		t.Fatalf("actions without resource create = %q, want only the removal (no source actions)", actionTitles(got))
	}
}

func TestCodeActionPlainChanges(t *testing.T) {
	// A client without documentChanges gets `changes`.
	rel := ".saga/stories/fixes/mismatch.json"
	c, e, d := openFixable(t, capsPlain, rel, "id-mismatch")
	got := c.codeActions(rel, d.Range, []diagJSON{d}, "")
	if len(got) != 1 {
		t.Fatalf("actions = %q", actionTitles(got))
	}
	var we wsEditJSON
	if err := json.Unmarshal(got[0].Edit, &we); err != nil || len(we.DocumentChanges) != 0 || len(we.Changes[c.uri(rel)]) != 1 {
		t.Fatalf("edit = %s, want one change in `changes`", got[0].Edit)
	}
	e.apply(got[0].Edit)
	from := c.mark()
	e.commit()
	c.diagnostics(from, rel, func(p publishedDiagnostics) bool { return countCode(p, "id-mismatch") == 0 })
}

func TestCodeActionDiagnosticsFromRange(t *testing.T) {
	// No diagnostics in the context (some clients send none): the server's
	// own diagnostics under the range get their fixes.
	rel := ".saga/stories/fixes/selfish.json"
	c, _, d := openFixable(t, capsFull, rel, "self-dependency")
	got := c.codeActions(rel, lspRange{Start: d.Range.Start, End: d.Range.Start}, nil, `["quickfix"]`)
	if !slices.Equal(actionTitles(got), []string{"Remove selfish from blockedBy"}) || len(got[0].Diagnostics) != 1 || got[0].Diagnostics[0].Code != "self-dependency" {
		t.Fatalf("actions = %+v", got)
	}
}

func TestCodeActionStaleDiagnostic(t *testing.T) {
	// A diagnostic the buffer no longer has gets no fix.
	rel := ".saga/stories/fixes/mismatch.json"
	c, e, d := openFixable(t, capsFull, rel, "id-mismatch")
	e.text[rel] = strings.Replace(e.text[rel], `"mismatched-name"`, `"mismatch"`, 1)
	e.touched[rel] = true
	from := c.mark()
	e.commit()
	c.diagnostics(from, rel, func(p publishedDiagnostics) bool { return p.Version != nil && *p.Version == 2 })
	if got := c.codeActions(rel, d.Range, []diagJSON{d}, `["quickfix"]`); len(got) != 0 {
		t.Fatalf("actions for a stale diagnostic: %q", actionTitles(got))
	}
}

func TestCodeActionSourceCreateTask(t *testing.T) {
	for _, rel := range []string{".saga/stories/fixes/write-tests.json", ".saga/stories/fixes/story.json"} {
		t.Run(filepath.Base(rel), func(t *testing.T) {
			root := codeActionRoot(t)
			before := diskDiagnostics(t, root)
			c := start(t)
			c.initialize(root, capsFull)
			e := newEditSession(t, c, root)
			from := c.mark()
			e.openFile(rel)
			c.diagnostics(from, rel, nil)
			for _, want := range []string{"new-task", "new-task-2"} {
				got := c.codeActions(rel, lspRange{}, nil, `["source"]`)
				if !slices.Equal(actionTitles(got), []string{"Create task in this story"}) || got[0].Kind != "source" || len(got[0].Diagnostics) != 0 {
					t.Fatalf("source actions = %+v", got)
				}
				e.apply(got[0].Edit)
				newRel := store.TaskFileRel("fixes", want)
				if !e.created[newRel] {
					t.Fatalf("no CreateFile of %s: %s", newRel, got[0].Edit)
				}
				assertCleanFile(t, newRel, e.text[newRel])
				if !strings.Contains(e.text[newRel], `"id": "`+want+`"`) || !strings.Contains(e.text[newRel], `"blockedBy": []`) {
					t.Errorf("new task:\n%s", e.text[newRel])
				}
				e.commit()
				assertKnowsTask(t, c, rel, want)
			}
			assertNoNewErrors(t, before, diskDiagnostics(t, root))
		})
	}
}

// assertKnowsTask checks that the server knows task id: a source action
// proposes the next free name only then. Notifications are applied in
// arrival order and a request reads the snapshot current when it arrives,
// so the didChange/didChangeWatchedFiles of the commit are already in force.
func assertKnowsTask(t *testing.T, c *client, rel, id string) {
	t.Helper()
	got := c.codeActions(rel, lspRange{}, nil, `["source"]`)
	if len(got) != 1 || strings.Contains(string(got[0].Edit), "/"+id+".json") {
		t.Fatalf("the server does not know task %s after the commit: %+v", id, got)
	}
}

func TestCodeActionSourceCreateStory(t *testing.T) {
	root := codeActionRoot(t)
	before := diskDiagnostics(t, root)
	c := start(t)
	c.initialize(root, capsFull)
	e := newEditSession(t, c, root)
	rel := ".saga/epics/plan/epic.json"
	from := c.mark()
	e.openFile(rel)
	c.diagnostics(from, rel, nil)
	got := c.codeActions(rel, lspRange{Start: lspPosition{Line: 3}, End: lspPosition{Line: 3}}, nil, `["source"]`)
	if !slices.Equal(actionTitles(got), []string{"Create story in this epic"}) || got[0].Kind != "source" {
		t.Fatalf("source actions = %+v", got)
	}
	// The CreateFile comes first, then its content, then the epic's edit
	// (versioned: the epic is open).
	var we wsEditJSON
	if err := json.Unmarshal(got[0].Edit, &we); err != nil || len(we.DocumentChanges) != 3 ||
		we.DocumentChanges[0].Kind != "create" || we.DocumentChanges[2].TextDocument == nil ||
		we.DocumentChanges[2].TextDocument.Version == nil || *we.DocumentChanges[2].TextDocument.Version != 1 {
		t.Fatalf("edit = %s", got[0].Edit)
	}
	e.apply(got[0].Edit)
	storyRel := store.StoryFileRel("plan--new-story")
	if !e.created[storyRel] {
		t.Fatalf("no CreateFile of %s: %s", storyRel, got[0].Edit)
	}
	assertCleanFile(t, storyRel, e.text[storyRel])
	assertCleanFile(t, rel, strings.Replace(e.text[rel], `{ "id": "plan--three" }`, `{ "id": "plan--three", "blockedBy": [] }`, 1))
	wantChild := "    { \"id\": \"plan--three\" },\n    {\n      \"id\": \"plan--new-story\",\n      \"blockedBy\": []\n    }\n  ]"
	if !strings.Contains(e.text[rel], wantChild) {
		t.Errorf("epic after the action:\n%s", e.text[rel])
	}
	from = c.mark()
	e.commit()
	c.diagnostics(from, rel, func(p publishedDiagnostics) bool { return p.Version != nil && *p.Version == 2 })
	after := diskDiagnostics(t, root)
	assertNoNewErrors(t, before, after)
	for _, d := range after {
		if d.File == storyRel && d.Code != store.CodeEmptyStory {
			t.Errorf("new story: %s %s", d.Code, d.Message)
		}
	}
}

// TestCodeActionOverlapFix: the paths-overlap quick fix, offered on a task,
// edits the epic — users blocked by auth — and once committed the finding
// is gone from both stories' tasks (docs/landing.md#conflicts-foreseen).
func TestCodeActionOverlapFix(t *testing.T) {
	root := archiveWorkspace(t, "testdata/codeaction/overlap.txtar")
	rel, epic := ".saga/stories/users/list.json", ".saga/epics/shop.json"
	c := start(t)
	c.initialize(root, capsFull)
	e := newEditSession(t, c, root)
	pd := openWithDiagnostic(t, e, rel, "paths-overlap")
	var diag *diagJSON
	for i, d := range pd.Diagnostics {
		if d.Code == "paths-overlap" {
			diag = &pd.Diagnostics[i]
		}
	}
	if diag == nil {
		t.Fatalf("no paths-overlap in %v", pd.codes())
	}
	if !strings.Contains(diag.Message, "story auth") || !strings.Contains(diag.Message, "api/users.go of users, api/** of auth") {
		t.Errorf("message %q does not name the other story and the glob pair", diag.Message)
	}
	a := actionTitled(c.codeActions(rel, diag.Range, []diagJSON{*diag}, `["quickfix"]`), "Add auth to blockedBy of users in epic shop")
	if a == nil {
		t.Fatal("no quick fix adding the blocker")
	}
	e.apply(a.Edit)
	if got := e.text[epic]; !strings.Contains(got, `{"id": "users", "blockedBy": ["auth"]}`) {
		t.Errorf("after the fix the epic reads:\n%s", got)
	}
	if e.touched[rel] {
		t.Errorf("the fix edited the task file")
	}
	from := c.mark()
	e.commit()
	c.diagnostics(from, rel, func(p publishedDiagnostics) bool { return countCode(p, "paths-overlap") == 0 })
	for _, d := range diskDiagnostics(t, root) {
		if d.Code == "paths-overlap" {
			t.Errorf("still %s on %s after the fix", d.Code, d.File)
		}
	}
}
