//go:build unix

package lsp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/test/chaos"
)

// editorPos is the LSP position of a byte offset of text, as an editor
// computes it (independent of jsonc.LineIndex, which it checks).
func editorPos(text string, off int) lspPosition {
	l, c := chaos.EditorPos(text, off)
	return lspPosition{Line: l, Character: c}
}

// change is one didChange content change as JSON.
func change(start, end lspPosition, text string) string {
	return fmt.Sprintf(`{"range":{"start":{"line":%d,"character":%d},"end":{"line":%d,"character":%d}},"text":%s}`,
		start.Line, start.Character, end.Line, end.Character, jsonString(text))
}

// showMessages returns the window/showMessage texts received so far.
func (c *client) showMessages() []string {
	var out []string
	for _, n := range c.notesOf(0, "window/showMessage") {
		var p struct {
			Message string `json:"message"`
		}
		json.Unmarshal(n.Params, &p)
		out = append(out, p.Message)
	}
	return out
}

// TestDidChangeInvalidRange: a change with an unusable range is refused —
// the text keeps its last good state, the changes after it still apply,
// and the user is told once per opened document, naming the file. Before,
// such a change replaced the whole document.
func TestDidChangeInvalidRange(t *testing.T) {
	const rel = ".saga/stories/add-logout-button/write-tests.json"
	bad := []struct{ name, change string }{
		{"negative line", `{"range":{"start":{"line":-1,"character":0},"end":{"line":0,"character":1}},"text":"X"}`},
		{"negative character", `{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":-3}},"text":"X"}`},
		{"fractional position", `{"range":{"start":{"line":1.5,"character":0},"end":{"line":2,"character":0}},"text":"X"}`},
		{"beyond uinteger", `{"range":{"start":{"line":2147483648,"character":0},"end":{"line":0,"character":0}},"text":"X"}`},
		{"beyond float64", `{"range":{"start":{"line":1e400,"character":0},"end":{"line":0,"character":0}},"text":"X"}`},
		{"position as a string", `{"range":{"start":{"line":"1","character":0},"end":{"line":1,"character":0}},"text":"X"}`},
		{"position null", `{"range":{"start":{"line":null,"character":0},"end":{"line":1,"character":0}},"text":"X"}`},
		{"range an array", `{"range":[0,0,1,1],"text":"X"}`},
		{"range a string", `{"range":"0:0-1:1","text":"X"}`},
		{"range null", `{"range":null,"text":"X"}`},
		{"start missing", `{"range":{"end":{"line":0,"character":1}},"text":"X"}`},
		{"character missing", `{"range":{"start":{"line":0},"end":{"line":0,"character":1}},"text":"X"}`},
		{"start a number", `{"range":{"start":3,"end":{"line":0,"character":1}},"text":"X"}`},
		{"text missing", `{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}}}`},
		{"text a number", `{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}},"text":42}`},
		{"text null", `{"text":null}`},
		{"change a number", `7`},
		{"change null", `null`},
	}
	c := start(t)
	c.initialize(testkit.CopyExample(t, "workspace"), "")
	for i, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			uri := c.uri(rel)
			c.notify("textDocument/didClose", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, uri))
			before := len(c.showMessages())
			text := c.open(rel)
			// A good change, the bad one, a good one: the good ones apply.
			first := change(editorPos(text, 1), editorPos(text, 1), " ")
			text = text[:1] + " " + text[1:]
			end := editorPos(text, len(text))
			third := change(end, end, "\n")
			want := text + "\n"
			c.didChange(rel, 2, first, tc.change, third)
			if got, _ := c.serverText(rel); got != want {
				t.Fatalf("server text %q, want %q", got, want)
			}
			// Once per opened document: a second refusal is only logged.
			c.didChange(rel, 3, tc.change)
			if got, _ := c.serverText(rel); got != want {
				t.Fatalf("after a second refusal: %q, want %q", got, want)
			}
			msgs := c.showMessages()[before:]
			if len(msgs) != 1 || !strings.Contains(msgs[0], rel) || !strings.Contains(msgs[0], "refused an edit with an invalid range") {
				t.Fatalf("messages %q (case %d)", msgs, i)
			}
		})
	}
}

// TestDidChangeClamped: positions past the end of a line or of the document
// are clamped to it, and a range whose end comes before its start is taken
// in order — as clients expect; nothing is refused.
func TestDidChangeClamped(t *testing.T) {
	const rel = ".saga/stories/add-logout-button/write-tests.json"
	c := start(t)
	c.initialize(testkit.CopyExample(t, "workspace"), "")
	text := c.open(rel)
	lineEnd := func(s string) int { return strings.IndexByte(s, '\n') } // of line 0
	cases := []struct {
		name   string
		change string
		want   func(string) string
	}{
		{"character past the line end", change(lspPosition{Line: 0, Character: 500}, lspPosition{Line: 0, Character: 500}, "A"),
			func(s string) string { return s[:lineEnd(s)] + "A" + s[lineEnd(s):] }},
		{"line past the end", change(lspPosition{Line: 9999, Character: 0}, lspPosition{Line: 9999, Character: 7}, "B"),
			func(s string) string { return s + "B" }},
		{"end before start", change(lspPosition{Line: 1, Character: 4}, lspPosition{Line: 1, Character: 2}, "C"),
			func(s string) string { i := lineEnd(s) + 1; return s[:i+2] + "C" + s[i+4:] }},
		{"integral float", `{"range":{"start":{"line":0,"character":1.0},"end":{"line":0,"character":1e0}},"text":"D"}`,
			func(s string) string { return s[:1] + "D" + s[1:] }},
	}
	for i, tc := range cases {
		want := tc.want(text)
		c.didChange(rel, 2+i, tc.change)
		if got, _ := c.serverText(rel); got != want {
			t.Fatalf("%s: server text %q, want %q", tc.name, got, want)
		}
		text = want
	}
	if msgs := c.showMessages(); len(msgs) != 0 {
		t.Fatalf("messages %q", msgs)
	}
}

// TestDidChangeOverLimit: a .saga buffer over the 4 MB limit has no syntax
// tree, yet tracks every edit (before, an incremental change panicked and
// was dropped) and shows one diagnostic saying why; the edit that brings it
// under the limit makes it a parsed file again.
func TestDidChangeOverLimit(t *testing.T) {
	const rel = ".saga/stories/add-logout-button/write-tests.json"
	c := start(t)
	c.initialize(testkit.CopyExample(t, "workspace"), "")
	small := c.open(rel)
	pad := strings.Repeat("a", 4<<20)
	at := strings.Index(small, `"Template`) + 1 // inside the description
	text := small[:at] + pad + small[at:]
	from := c.mark()
	c.didChange(rel, 2, `{"text":`+jsonString(text)+`}`)
	pd, _ := c.diagnostics(from, rel, func(pd publishedDiagnostics) bool { return pd.Version != nil && *pd.Version == 2 })
	if len(pd.Diagnostics) != 1 || pd.Diagnostics[0].Code != "unreadable-file" || !strings.Contains(pd.Diagnostics[0].Message, "over the 4 MB limit") {
		t.Fatalf("over the limit: %+v", pd.Diagnostics)
	}
	// Incremental edits of the big buffer: typed at its start and end.
	end := editorPos(text, len(text))
	from = c.mark()
	c.didChange(rel, 3, change(lspPosition{Line: 0, Character: 1}, lspPosition{Line: 0, Character: 1}, " "), change(end, end, "\n"))
	text = text[:1] + " " + text[1:] + "\n"
	if got, _ := c.serverText(rel); got != text {
		t.Fatalf("the big buffer lost an edit (%d bytes, want %d)", len(got), len(text))
	}
	pd, _ = c.diagnostics(from, rel, func(pd publishedDiagnostics) bool { return pd.Version != nil && *pd.Version == 3 })
	if len(pd.Diagnostics) != 1 || pd.Diagnostics[0].Code != "unreadable-file" {
		t.Fatalf("after an edit: %+v", pd.Diagnostics)
	}
	// Deleting the padding: parsed again, its findings are the file's own.
	s, e := strings.Index(text, pad), strings.Index(text, pad)+len(pad)
	from = c.mark()
	c.didChange(rel, 4, change(editorPos(text, s), editorPos(text, e), ""))
	text = text[:s] + text[e:]
	pd, _ = c.diagnostics(from, rel, func(pd publishedDiagnostics) bool { return pd.Version != nil && *pd.Version == 4 })
	if len(pd.Diagnostics) != 0 {
		t.Fatalf("back under the limit: %+v", pd.Diagnostics)
	}
	if got, _ := c.serverText(rel); got != text {
		t.Fatalf("server text %q, want %q", got, text)
	}
	if h := navHover(t, c, rel, at2pos(text, `"write-tests"`)); h == nil || !strings.Contains(h.Contents.Value, "Task `write-tests`") {
		t.Fatalf("hover after the edit: %+v", h)
	}
}

// at2pos is the position (JSON) just inside the first occurrence of needle.
func at2pos(text, needle string) string {
	p := editorPos(text, strings.Index(text, needle)+1)
	return fmt.Sprintf(`{"line":%d,"character":%d}`, p.Line, p.Character)
}
