package jsonc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// errorList renders errors as "start:end message" for compact comparison.
func errorList(d *Document) []string {
	var out []string
	for _, e := range d.Errors {
		out = append(out, fmt.Sprintf("%d:%d %s", e.Start, e.End, e.Message))
	}
	return out
}

// stdlibValue decodes src the way Value() is meant to match.
func stdlibValue(t testing.TB, src []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("stdlib decode %q: %v", src, err)
	}
	return v
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestKindString(t *testing.T) {
	want := map[Kind]string{
		Invalid: "invalid", Object: "object", Array: "array", String: "string",
		Number: "number", Bool: "boolean", Null: "null", Kind(42): "Kind(42)",
	}
	for k, s := range want {
		if got := k.String(); got != s {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, s)
		}
	}
}

// TestSizes: what a workspace holds hundreds of thousands of stays as
// small as docs/architecture.md#memory-at-88000-files says, on 64-bit
// platforms.
func TestSizes(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return // the figures are for 64-bit pointers
	}
	for _, c := range []struct {
		what      string
		got, want uintptr
	}{
		{"Node", unsafe.Sizeof(Node{}), 24},
		{"Member", unsafe.Sizeof(Member{}), 32},
		{"Document", unsafe.Sizeof(Document{}), 64},
	} {
		if c.got != c.want {
			t.Errorf("a %s takes %d bytes, want %d", c.what, c.got, c.want)
		}
	}
}

func TestParseTreeShapeAndOffsets(t *testing.T) {
	src := []byte(`{"a": [1, "x\ny", true], "b": {"c": null}, "d": -2.5e3, "e": false}`)
	d := Parse(src)
	if len(d.Errors) != 0 {
		t.Fatalf("errors: %v", errorList(d))
	}
	root := d.Root
	if root.Kind != Object || root.Start() != 0 || root.End() != len(src) || !root.Closed {
		t.Fatalf("root = %+v", root)
	}
	if len(root.Members()) != 4 {
		t.Fatalf("members = %d", len(root.Members()))
	}
	text := func(n *Node) string { return string(src[n.Start():n.End()]) }

	a := root.Members()[0]
	if a.Key.Str() != "a" || text(a.Key.Node()) != `"a"` || a.Colon() != 4 || !a.Key.Closed() {
		t.Errorf("member a: key %+v colon %d", a.Key, a.Colon())
	}
	arr := a.Value
	if arr.Kind != Array || text(arr) != `[1, "x\ny", true]` || len(arr.Elems()) != 3 || !arr.Closed {
		t.Fatalf("a = %+v", arr)
	}
	if e := arr.Elems()[0]; e.Kind != Number || e.Raw() != "1" || text(e) != "1" || !e.Closed {
		t.Errorf("a[0] = %+v", e)
	}
	if e := arr.Elems()[1]; e.Kind != String || e.Str() != "x\ny" || text(e) != `"x\ny"` {
		t.Errorf("a[1] = %+v", e)
	}
	if e := arr.Elems()[2]; e.Kind != Bool || !e.Bool || e.Raw() != "true" || text(e) != "true" {
		t.Errorf("a[2] = %+v", e)
	}
	b := root.Get("b")
	if b.Kind != Object || text(b) != `{"c": null}` {
		t.Errorf("b = %+v", b)
	}
	if c := b.Get("c"); c.Kind != Null || c.Raw() != "null" || text(c) != "null" {
		t.Errorf("c = %+v", c)
	}
	if n := root.Get("d"); n.Kind != Number || n.Raw() != "-2.5e3" {
		t.Errorf("d = %+v", n)
	}
	if n := root.Get("e"); n.Kind != Bool || n.Bool || n.Raw() != "false" {
		t.Errorf("e = %+v", n)
	}
	if root.Get("zz") != nil || root.Member("zz") != nil {
		t.Error("absent key found")
	}
	var nilNode *Node
	if nilNode.Get("a") != nil || nilNode.Member("a") != nil || nilNode.Value() != nil {
		t.Error("nil receiver")
	}
	if arr.Get("a") != nil {
		t.Error("Get on an array")
	}
}

func TestParseStrings(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{`""`, ""},
		{`"plain"`, "plain"},
		{`"\" \\ \/ \b \f \n \r \t"`, "\" \\ / \b \f \n \r \t"},
		{`"\u0041\u00e9\u4e2d"`, "Aé中"},
		{`"\ud83d\ude00"`, "😀"},
		{`"\uD83D\uDE00x"`, "😀x"},
		{`"😀 é 中"`, "😀 é 中"},
		{`"\ud800"`, "\uFFFD"},        // lone high surrogate, as encoding/json
		{`"\udc00\u0041"`, "\uFFFDA"}, // lone low surrogate
		{`"\ud800\u0041"`, "\uFFFDA"}, // high surrogate not followed by a low one
		{`"\ud800\ud800"`, "\uFFFD\uFFFD"},
		{`"a\u0000b"`, "a\x00b"},
	}
	for _, tt := range tests {
		d := Parse([]byte(tt.src))
		if len(d.Errors) != 0 {
			t.Errorf("%s: errors %v", tt.src, errorList(d))
		}
		if d.Root.Kind != String || d.Root.Str() != tt.want || !d.Root.Closed || d.Root.End() != len(tt.src) {
			t.Errorf("%s: got %+v, want Str %q", tt.src, d.Root, tt.want)
		}
		if std := stdlibValue(t, []byte(tt.src)); std != d.Root.Str() {
			t.Errorf("%s: stdlib %q, ours %q", tt.src, std, d.Root.Str())
		}
	}
}

func TestParseNumbers(t *testing.T) {
	for _, s := range []string{"0", "-0", "1", "-1", "10", "0.5", "-0.5", "1e5", "1E5", "1e+5", "1e-5", "12.34e-56", "123456789012345678901234567890"} {
		d := Parse([]byte(s))
		if len(d.Errors) != 0 || d.Root.Kind != Number || d.Root.Raw() != s || d.Root.End() != len(s) {
			t.Errorf("%s: %+v %v", s, d.Root, errorList(d))
		}
	}
}

// validDocs are compared with encoding/json; fixtures are added to them.
var validDocs = []string{
	`{}`, `[]`, `""`, `0`, `true`, `false`, `null`, `-12.5e-3`,
	` {"a" : [ 1 , 2 , { "b" : null } ] } `,
	`[[[[[]]]], {}, [{}], {"x": [{"y": {}}]}]`,
	`{"a": 1, "b": "two", "c": [true, false, null], "d": {"e": 1.5}}`,
	`"\u00e9\ud83d\ude00\n"`,
	"\t\n\r [1,\n2]\r\n",
	`{"": {"": ""}}`,
	`[1e400, -0.0, 0.1e1]`,
}

func TestValueMatchesStdlib(t *testing.T) {
	docs := append([]string(nil), validDocs...)
	for _, name := range []string{"task.json", "nested.json", "crlf.json"} {
		docs = append(docs, string(readFixture(t, name)))
	}
	for _, s := range docs {
		d := Parse([]byte(s))
		if len(d.Errors) != 0 {
			t.Errorf("%.40q: errors %v", s, errorList(d))
			continue
		}
		if got, want := d.Root.Value(), stdlibValue(t, []byte(s)); !reflect.DeepEqual(got, want) {
			t.Errorf("%.40q:\n got %#v\nwant %#v", s, got, want)
		}
	}
}

func TestFixtureNested(t *testing.T) {
	src := readFixture(t, "nested.json")
	d := Parse(src)
	if len(d.Errors) != 0 {
		t.Fatal(errorList(d))
	}
	if got := d.Root.Get("name").Str(); got != "nested \"quoted\" \\ slash/ \b\f\n\r\t" {
		t.Errorf("name = %q", got)
	}
	if got := d.Root.Get("unicode").Str(); got != "café 中文 😀 😀 é" {
		t.Errorf("unicode = %q", got)
	}
	e := d.Pointer("/deep/a/b/c/0/0/0/d/1/e")
	if e == nil || e.Str() != "f" {
		t.Fatalf("deep pointer = %+v", e)
	}
	if got := string(src[e.Start():e.End()]); got != `"f"` {
		t.Errorf("deep node text %q", got)
	}
}

func TestBOMIsSkipped(t *testing.T) {
	src := []byte("\xEF\xBB\xBF{\"a\": 1}")
	d := Parse(src)
	if len(d.Errors) != 0 {
		t.Fatal(errorList(d))
	}
	if d.Root.Start() != 3 || d.Root.Get("a").Raw() != "1" {
		t.Errorf("root %+v", d.Root)
	}
	d = Parse([]byte("\xEF\xBB\xBF"))
	if d.Root != nil || strings.Join(errorList(d), ";") != "0:0 empty document" {
		t.Errorf("BOM only: %+v %v", d.Root, errorList(d))
	}
}

func TestDocumentLines(t *testing.T) {
	d := Parse([]byte("{\n  \"a\": 1\n}"))
	if d.Lines().LineCount() != 3 {
		t.Fatalf("lines %d", d.Lines().LineCount())
	}
	v := d.Root.Get("a")
	if p := d.Lines().Position(v.Start()); p != (Position{1, 7}) {
		t.Errorf("position %+v", p)
	}
}

// TestRandomValidDocuments compares Value with encoding/json on generated
// documents: random structure, random strings (escaped and raw, astral and
// BMP characters), compact and indented.
func TestRandomValidDocuments(t *testing.T) {
	r := randomBytes(1<<16, 7)
	next := 0
	rnd := func(n int) int {
		next++
		return int(r[next%len(r)]) % n
	}
	alphabet := []rune{'a', 'Z', '0', ' ', '"', '\\', '/', '\n', '\t', '\x01', '<', '&', 'é', '中', '😀', '\u2028', '\uFFFD', '\x7f'}
	var gen func(depth int) any
	gen = func(depth int) any {
		k := rnd(8)
		if depth > 4 {
			k = rnd(4)
		}
		switch k {
		case 0:
			return nil
		case 1:
			return rnd(2) == 0
		case 2:
			return json.Number([]string{"0", "-1", "3.25", "1e10", "-2.5E-3", "123456789"}[rnd(6)])
		case 3, 4:
			var b strings.Builder
			for range rnd(12) {
				b.WriteRune(alphabet[rnd(len(alphabet))])
			}
			return b.String()
		case 5:
			a := make([]any, rnd(5))
			for i := range a {
				a[i] = gen(depth + 1)
			}
			return a
		default:
			m := map[string]any{}
			for range rnd(5) {
				m[string(alphabet[rnd(len(alphabet))])+"k"] = gen(depth + 1)
			}
			return m
		}
	}
	for i := range 500 {
		v := gen(0)
		var src []byte
		var err error
		if i%2 == 0 {
			src, err = json.Marshal(v)
		} else {
			src, err = json.MarshalIndent(v, "", "\t")
		}
		if err != nil {
			t.Fatal(err)
		}
		d := Parse(src)
		if len(d.Errors) != 0 {
			t.Fatalf("%s: errors %v", src, errorList(d))
		}
		checkInvariants(t, d)
		if got, want := d.Root.Value(), stdlibValue(t, src); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %#v\nwant %#v", src, got, want)
		}
	}
}

// TestBatch: documents parsed one after the other by a Batch, sharing its
// chunks, are the trees ParseOwned gives, and stay so while later
// documents are parsed and while anyone appends to their lists.
func TestBatch(t *testing.T) {
	srcs := slices.Concat(fuzzSeeds, validDocs)
	files, _ := filepath.Glob("testdata/*.json")
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, string(src))
	}
	// Enough documents to fill several chunks of every kind.
	for i := range 1000 {
		srcs = append(srcs, fmt.Sprintf(`{"id": "t-%d", "blockedBy": ["a", "b", %d], "n": {"x": [true, null]}}`, i, i))
	}
	var b Batch
	docs := make([]*Document, len(srcs))
	for i, s := range srcs {
		docs[i] = b.ParseOwned([]byte(s))
	}
	check := func(when string) {
		t.Helper()
		for i, s := range srcs {
			if want := ParseOwned([]byte(s)); !sameDoc(docs[i], want) {
				t.Fatalf("%s: batch tree of %q differs from ParseOwned's", when, s)
			}
		}
	}
	check("after parsing")
	for _, d := range docs {
		var walk func(n *Node)
		walk = func(n *Node) {
			if n == nil {
				return
			}
			for _, m := range n.Members() {
				walk(m.Value)
			}
			for _, e := range n.Elems() {
				walk(e)
			}
			_ = append(n.Members(), Member{Value: &Node{Kind: Null}})
			_ = append(n.Elems(), &Node{Kind: Invalid})
		}
		walk(d.Root)
	}
	check("after appending to every list")
}

// TestSizeLimit: a document longer than the parser's limit (2 GiB: a Key's
// offsets are 32 bits) is parsed up to it, with an error on the rest.
func TestSizeLimit(t *testing.T) {
	src := []byte(`{"a": 1, "bb": [2]}   `)
	p := parser{maxSize: 9}
	d := p.parse(src, string(src))
	if d.Root == nil || d.Root.End() != 9 || d.Root.Get("a") == nil || len(d.Root.Members()) != 1 || !bytes.Equal(d.Src, src) {
		t.Fatalf("root %+v", d.Root)
	}
	last := d.Errors[len(d.Errors)-1]
	if last.Start != 9 || last.End != len(src) || last.Message != msgTooLarge {
		t.Errorf("errors %v", errorList(d))
	}
}

// sameDoc compares two documents by what their trees say, not where their
// nodes point: a node's members, elements and number text sit behind one
// untyped pointer, which reflect.DeepEqual compares by address.
func sameDoc(a, b *Document) bool {
	if a == nil || b == nil {
		return a == b
	}
	return bytes.Equal(a.Src, b.Src) && reflect.DeepEqual(a.Errors, b.Errors) &&
		reflect.DeepEqual(plainTree(a.Root), plainTree(b.Root))
}

// plainNode is a Node spelled out for reflect.DeepEqual.
type plainNode struct {
	Start, End     int
	Str, Raw       string
	Kind           Kind
	Bool, Closed   bool
	Keys           []plainKey
	Members, Elems []*plainNode
}

// plainKey is a Key spelled out: its string sits behind an untyped pointer.
type plainKey struct {
	Str               string
	Start, End, Colon int
	Closed            bool
}

func plainTree(n *Node) *plainNode {
	if n == nil {
		return nil
	}
	p := &plainNode{Start: n.Start(), End: n.End(), Str: n.Str(), Raw: n.Raw(), Kind: n.Kind, Bool: n.Bool, Closed: n.Closed}
	for _, m := range n.Members() {
		p.Keys = append(p.Keys, plainKey{m.Key.Str(), m.Key.Start(), m.Key.End(), m.Colon(), m.Key.Closed()})
		p.Members = append(p.Members, plainTree(m.Value))
	}
	for _, e := range n.Elems() {
		p.Elems = append(p.Elems, plainTree(e))
	}
	return p
}
