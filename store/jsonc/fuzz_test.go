package jsonc

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unicode/utf8"
)

type jsonNumber = json.Number

// checkInvariants verifies the structural promises of a Document: node
// ranges inside the source and inside their parents, keys are strings,
// errors sorted, in range and capped.
func checkInvariants(t testing.TB, d *Document) {
	t.Helper()
	n := len(d.Src)
	var walk func(node *Node, lo, hi int, depth int)
	walk = func(node *Node, lo, hi int, depth int) {
		if node == nil {
			t.Fatal("nil node in tree")
		}
		if depth > maxDepth+1 {
			t.Fatalf("tree deeper than %d", maxDepth)
		}
		if node.Start() < lo || node.Start() > node.End() || node.End() > hi {
			t.Fatalf("node %v [%d,%d) outside parent [%d,%d]", node.Kind, node.Start(), node.End(), lo, hi)
		}
		if node.Kind != Object && node.Kind != Array && node.Kind != String && !node.Closed {
			t.Fatalf("%v node not Closed", node.Kind)
		}
		prev := node.Start()
		switch node.Kind {
		case Object:
			for _, m := range node.Members() {
				walk(m.Key.Node(), max(prev, node.Start()), node.End(), depth+1)
				prev = m.Key.End()
				if m.Colon() >= 0 {
					if m.Colon() < prev || m.Colon() >= node.End() || d.Src[m.Colon()] != ':' {
						t.Fatalf("colon at %d", m.Colon())
					}
					prev = m.Colon() + 1
				} else if m.Colon() != -1 {
					t.Fatalf("colon %d", m.Colon())
				}
				if m.Value != nil {
					walk(m.Value, prev, node.End(), depth+1)
					prev = m.Value.End()
				}
			}
		case Array:
			for _, e := range node.Elems() {
				walk(e, prev, node.End(), depth+1)
				prev = e.End()
			}
		default:
			if len(node.Members()) != 0 || len(node.Elems()) != 0 {
				t.Fatalf("%v node with children", node.Kind)
			}
		}
	}
	if d.Root != nil {
		walk(d.Root, 0, n, 0)
	}
	if len(d.Errors) > maxErrors+1 {
		t.Fatalf("%d errors", len(d.Errors))
	}
	for i, e := range d.Errors {
		if e.Start < 0 || e.Start > e.End || e.End > n {
			t.Fatalf("error %+v out of range (len %d)", e, n)
		}
		if e.Message == "" {
			t.Fatalf("error %+v without message", e)
		}
		if e.Start == e.End && e.Start != n && e.Message != "empty document" && e.Message != "too many errors" {
			t.Fatalf("empty error range %+v before EOF", e)
		}
		if i > 0 && d.Errors[i-1].Start > e.Start {
			t.Fatalf("errors not sorted: %+v then %+v", d.Errors[i-1], e)
		}
	}
}

// hasDuplicateKeys reports whether any object in the tree repeats a key.
func hasDuplicateKeys(n *Node) bool {
	if n == nil {
		return false
	}
	switch n.Kind {
	case Object:
		seen := map[string]bool{}
		for _, m := range n.Members() {
			if seen[m.Key.Str()] || hasDuplicateKeys(m.Value) {
				return true
			}
			seen[m.Key.Str()] = true
		}
	case Array:
		for _, e := range n.Elems() {
			if hasDuplicateKeys(e) {
				return true
			}
		}
	}
	return false
}

// nesting returns the maximum bracket nesting of valid JSON (strings
// skipped).
func nesting(src []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth--
		case '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		}
	}
	return deepest
}

var fuzzSeeds = []string{
	``, ` `, `{`, `[`, `"`, `}`, `]`, `{"a":`, `{"a"`, `{"a":1,}`, `[1,]`, `{a:1}`, `tru`,
	`{"id": "a" "subject": "b"}`, "{\"a\": \"x\n\"b\": 1}", `"\ud83d\ude00"`, `"\ud800\u0041"`,
	`"\u12"`, `"\`, `"\u`, `01`, `-`, `1.`, `+1`, `.5`, `1e`, `//`, `/*`, `/`, "\xef\xbb\xbf{}",
	"\xff", "\"\xff\"", "\x00", `{"a":1,"a":2}`, `[{]`, `{[}`, `{: 1}`, `{"a" 1}`, `{"a" "b": 1}`,
	`[[[[[[`, `{"a":{"a":{"a":`, `1 2`, `]]`, `{"a": [1, 2}`, `[{"a":1]`, "\"a\r\"b\"",
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	for _, s := range validDocs {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob("testdata/*.json")
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		d := Parse(src)
		checkInvariants(t, d)
		// A Batch, its chunks already in use, gives the same tree.
		var b Batch
		b.ParseOwned([]byte(`{"a": [1, "b", {"c": null}]}`))
		if bd := b.ParseOwned(bytes.Clone(src)); !sameDoc(bd, d) {
			t.Fatalf("%q: a Batch's tree differs from Parse's", src)
		}
		_ = d.Root.Value()
		// Every offset resolves without panicking.
		if len(src) < 256 {
			for o := -1; o <= len(src)+1; o++ {
				loc := d.LocationAt(o)
				if loc.Node != nil && !contains(loc.Node, o) {
					t.Fatalf("LocationAt(%d) node [%d,%d)", o, loc.Node.Start(), loc.Node.End())
				}
			}
		}
		valid := json.Valid(src)
		if !valid && len(d.Errors) == 0 && !bytes.HasPrefix(src, []byte("\xEF\xBB\xBF")) {
			t.Fatalf("invalid JSON %q parsed without errors", src)
		}
		// encoding/json accepts invalid UTF-8 inside strings (decoding it as
		// U+FFFD) and nesting up to 10000; this parser reports both.
		if !valid || !utf8.Valid(src) || nesting(src) > maxDepth {
			return
		}
		if hasDuplicateKeys(d.Root) {
			return
		}
		if len(d.Errors) != 0 {
			t.Fatalf("valid JSON %q: errors %v", src, errorList(d))
		}
		want := stdlibValue(t, src)
		if got := d.Root.Value(); !reflect.DeepEqual(got, want) {
			t.Fatalf("valid JSON %q:\n got %#v\nwant %#v", src, got, want)
		}
	})
}

func FuzzLineIndex(f *testing.F) {
	f.Add([]byte("a\nb"), 1, 0, 1)
	f.Add([]byte("a\r\nb\rc"), 2, 1, 0)
	f.Add([]byte("😀e\u0301中\xff\n\r\n"), 3, 0, 3)
	f.Add([]byte(""), 0, 0, 0)
	f.Fuzz(func(t *testing.T, src []byte, offset, line, char int) {
		li := NewLineIndex(src)
		o := offset
		if o < 0 {
			o = -o
		}
		o %= len(src) + 1
		back := li.Offset(li.Position(o))
		if want := runeStartAtOrBefore(src, o); back != want {
			t.Fatalf("%q: Offset(Position(%d)) = %d, want %d", src, o, back, want)
		}
		p := Position{Line: abs(line) % (li.LineCount() + 2), Character: abs(char) % 300}
		q := li.Position(li.Offset(p))
		if q.Line > p.Line || (q.Line == p.Line && q.Character > p.Character) {
			t.Fatalf("%q: Position(Offset(%+v)) = %+v", src, p, q)
		}
		// Column marks (here every 2 bytes) change nothing but the cost.
		marked, plain := &LineIndex{src: src, stride: 2}, &LineIndex{src: src, stride: -1}
		if got, want := marked.Offset(p), plain.Offset(p); got != want {
			t.Fatalf("%q: Offset(%+v) = %d with marks, %d without", src, p, got, want)
		}
		if len(src) < 512 {
			for o := 0; o <= len(src); o++ {
				if got, want := marked.Position(o), plain.Position(o); got != want {
					t.Fatalf("%q: Position(%d) = %+v with marks, %+v without", src, o, got, want)
				}
			}
		}
	})
}

func abs(x int) int {
	if x < 0 {
		if -x < 0 { // math.MinInt
			return 0
		}
		return -x
	}
	return x
}

// runeStartAtOrBefore walks src rune by rune (invalid bytes are one rune
// each, "\r\n" is one unit) and returns the last boundary at or before o.
func runeStartAtOrBefore(src []byte, o int) int {
	last := 0
	for i := 0; i <= len(src); {
		if i > o {
			return last
		}
		last = i
		if i == len(src) {
			break
		}
		if src[i] == '\r' && i+1 < len(src) && src[i+1] == '\n' {
			i += 2
			continue
		}
		_, size := utf8.DecodeRune(src[i:])
		i += size
	}
	return last
}
