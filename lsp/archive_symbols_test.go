package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The lines of TestArchives that ask for a file's or the workspace's
// symbols and a file's code lenses.

// lineSymbol is an expected document symbol: its range and selection range
// are needles of the file (sel "" is the quoted name; rng "" is sel, "*" the
// whole document).
type lineSymbol struct {
	name, detail string
	kind         int
	sel, rng     string
	selN, rngN   int
	children     []*lineSymbol
}

func (w *lineSymbol) ranges(t *testing.T, text string) (rng, sel lspRange) {
	t.Helper()
	if w.sel == "" {
		w.sel = jsonString(w.name)
	}
	sel = spanOf(t, text, w.sel, w.selN)
	switch w.rng {
	case "":
		rng = sel
	case "*":
		rng = spanOf(t, text, strings.TrimSpace(text), 0)
	default:
		rng = spanOf(t, text, w.rng, w.rngN)
	}
	return rng, sel
}

// symbolKind reads an LSP symbol kind by its name in the specification.
func (l *wantLine) symbolKind() int {
	l.t.Helper()
	switch w := l.word("a symbol kind"); w {
	case "Module":
		return 2
	case "Class":
		return 5
	case "Property":
		return 7
	case "Function":
		return 12
	case "Key":
		return 20
	default:
		l.malformed("unknown symbol kind %q (want Module, Class, Property, Function or Key)", w)
		return 0
	}
}

// documentSymbol reads `documentSymbol <file> => [] | <symbol>, …`, a symbol
// `[>…] <kind> <name> <detail> [sel <needle>[#n]] [range *|<needle>[#n]]`
// (one > per level below the top; the children of a symbol follow it), and
// checks the answer of both clients: a DocumentSymbol tree for one with
// hierarchical support, and the same symbols flattened (SymbolInformation,
// containerName the parent's name, the location the symbol's range) for one
// without.
func (s *archiveSession) documentSymbol(t *testing.T, l *wantLine) {
	rel := l.word("a file")
	l.arrow()
	var top []*lineSymbol
	if !l.maybe("[]") {
		var path []*lineSymbol // the last symbol read at each depth
		for more := true; more; more = l.maybe(",") {
			depth := 0
			if r := strings.TrimLeft(l.rest, " "); r != "" && r[0] == '>' {
				w := l.word("a depth")
				if depth = len(w); strings.Trim(w, ">") != "" {
					l.malformed("want a depth (>, >>, …) at %q", w)
				}
			}
			w := &lineSymbol{kind: l.symbolKind(), name: l.literal("a name"), detail: l.literal("a detail")}
			if l.maybe("sel") {
				w.sel, w.selN = l.needle()
			}
			if l.maybe("range") {
				if w.rng = "*"; !l.maybe("*") {
					w.rng, w.rngN = l.needle()
				}
			}
			switch {
			case depth == 0:
				top = append(top, w)
			case depth <= len(path):
				parent := path[depth-1]
				parent.children = append(parent.children, w)
			default:
				l.malformed("%q is %d levels below the top, under no symbol", w.name, depth)
			}
			path = append(path[:depth], w)
		}
	}
	l.end()
	params := func(c *client) string { return fmt.Sprintf(`{"textDocument":{"uri":%q}}`, c.uri(rel)) }

	hier := s.on("hierarchical")
	text := s.textIfAny(t, hier, rel)
	var tree []gotDocumentSymbol
	lineResult(t, hier.c, "textDocument/documentSymbol", params(hier.c), &tree)
	if tree == nil {
		t.Errorf("hierarchical: null, want a list")
	}
	checkDocumentSymbols(t, text, tree, top, "hierarchical: ")

	flat := s.on("default")
	text = s.textIfAny(t, flat, rel)
	var got []gotSymbolInformation
	lineResult(t, flat.c, "textDocument/documentSymbol", params(flat.c), &got)
	if got == nil {
		t.Errorf("flat: null, want a list")
	}
	want := flattenSymbols(top, "")
	if len(got) != len(want) {
		t.Fatalf("flat: %d symbols, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		container := ""
		if g.ContainerName != nil {
			container = *g.ContainerName
		}
		rng, _ := w.w.ranges(t, text)
		if g.Name != w.w.name || g.Kind != w.w.kind || container != w.container {
			t.Errorf("flat #%d: got %q kind %d container %q, want %q %d %q", i, g.Name, g.Kind, container, w.w.name, w.w.kind, w.container)
		}
		if g.Location.URI != flat.c.uri(rel) || g.Location.Range != rng {
			t.Errorf("flat #%d %s: location %s %+v, want %s %+v", i, g.Name, g.Location.URI, g.Location.Range, flat.c.uri(rel), rng)
		}
		if g.SelectionRange != nil {
			t.Errorf("flat #%d %s: a DocumentSymbol, not a SymbolInformation", i, g.Name)
		}
	}
}

// textIfAny is rel's buffer on ac (opened if need be), or "" for a file
// neither on disk nor given a buffer, which is asked about unopened.
func (s *archiveSession) textIfAny(t *testing.T, ac *archiveClient, rel string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(s.c.root, filepath.FromSlash(rel))); err != nil && rel != s.changed {
		return ""
	}
	return s.textOn(t, ac, rel)
}

func checkDocumentSymbols(t *testing.T, text string, got []gotDocumentSymbol, want []*lineSymbol, path string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s%d symbols, want %d: %+v", path, len(got), len(want), got)
		return
	}
	for i, w := range want {
		g := got[i]
		p := path + "/" + w.name
		detail := ""
		if g.Detail != nil {
			detail = *g.Detail
		}
		if g.Name != w.name || g.Kind != w.kind || detail != w.detail {
			t.Errorf("%s: got name %q kind %d detail %q, want %q %d %q", p, g.Name, g.Kind, detail, w.name, w.kind, w.detail)
		}
		rng, sel := w.ranges(t, text)
		if g.Range != rng || g.SelectionRange != sel {
			t.Errorf("%s: range %+v selection %+v, want %+v %+v", p, g.Range, g.SelectionRange, rng, sel)
		}
		checkDocumentSymbols(t, text, g.Children, w.children, p)
	}
}

// flatSymbol is a lineSymbol in flat (SymbolInformation) mode.
type flatSymbol struct {
	w         *lineSymbol
	container string
}

func flattenSymbols(ws []*lineSymbol, container string) []flatSymbol {
	var out []flatSymbol
	for _, w := range ws {
		out = append(out, flatSymbol{w, container})
		out = append(out, flattenSymbols(w.children, w.name)...)
	}
	return out
}

// workspaceSymbol reads `workspaceSymbol <query> => [] | <symbol>, …`, the
// whole answer in order; a symbol is `<name>` or
// `<name> <kind> <file> [in <container>]`: then its kind, its container
// (none without in) and its location, the name's first quoted occurrence in
// the file on disk.
func (s *archiveSession) workspaceSymbol(t *testing.T, l *wantLine) {
	query := l.literal("a query")
	l.arrow()
	type entry struct {
		name, rel, container string
		kind                 int
	}
	want := []entry{}
	if !l.maybe("[]") {
		for more := true; more; more = l.maybe(",") {
			e := entry{name: l.literal("a name")}
			if r := strings.TrimLeft(l.rest, " "); r != "" && r[0] != ',' {
				e.kind = l.symbolKind()
				e.rel = l.word("a file")
				if l.maybe("in") {
					e.container = l.literal("a container")
				}
			}
			want = append(want, e)
		}
	}
	l.end()
	var got []gotSymbolInformation
	lineResult(t, s.c, "workspace/symbol", fmt.Sprintf(`{"query":%s}`, jsonString(query)), &got)
	if len(got) != len(want) {
		t.Fatalf("query %q: %v, want %d symbols", query, symbolNames(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.name {
			t.Errorf("query %q: %v, want #%d %q", query, symbolNames(got), i, w.name)
			continue
		}
		if w.rel == "" {
			continue
		}
		container := ""
		if g.ContainerName != nil {
			container = *g.ContainerName
		}
		loc := spanOf(t, navDisk(t, s.c, w.rel), jsonString(w.name), 0)
		if g.Kind != w.kind || container != w.container || g.Location.URI != s.c.uri(w.rel) || g.Location.Range != loc {
			t.Errorf("%s: kind %d container %q at %s %+v, want %d %q %s %+v", w.name, g.Kind, container,
				g.Location.URI, g.Location.Range, w.kind, w.container, s.c.uri(w.rel), loc)
		}
	}
}

// codeLens reads `codeLens <file> => [] | <lens>, …`, the whole answer in
// order; a lens is `<needle>[#n] <title>`, informational (an empty command id,
// no arguments), or `<needle>[#n] <title> <command> <arguments>`, the
// arguments as JSON; its range is the needle's in the file.
func (s *archiveSession) codeLens(t *testing.T, l *wantLine) {
	rel := l.word("a file")
	l.arrow()
	want := []wantLens{}
	if !l.maybe("[]") {
		for more := true; more; more = l.maybe(",") {
			var w wantLens
			w.needle, w.n = l.needle()
			w.title = l.literal("a title")
			if r := strings.TrimLeft(l.rest, " "); r != "" && r[0] != ',' {
				w.cmd = l.word("a command")
				w.args = l.literal("the arguments (JSON)")
			}
			want = append(want, w)
		}
	}
	l.end()
	text := s.textIfAny(t, s.clients["default"], rel)
	var got []gotCodeLens
	if lineResult(t, s.c, "textDocument/codeLens", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, s.c.uri(rel)), &got); got == nil {
		t.Fatal("codeLens = null, want a list")
	}
	checkLenses(t, rel, text, got, want)
}

// lineResult is c.result failing the line's t, not the archive's.
func lineResult(t *testing.T, c *client, method, params string, v any) {
	t.Helper()
	m := c.call(method, params)
	if m.Error != nil {
		t.Fatalf("%s: error %d %s", method, m.Error.Code, m.Error.Message)
	}
	if err := json.Unmarshal(m.Result, v); err != nil {
		t.Fatalf("%s: decode %s: %v", method, m.Result, err)
	}
}
