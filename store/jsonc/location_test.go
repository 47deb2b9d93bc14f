package jsonc

import (
	"reflect"
	"strings"
	"testing"
)

func TestPointer(t *testing.T) {
	d := Parse(readFixture(t, "nested.json"))
	tests := []struct {
		ptr  string
		want string // source text of the node, "" for nil
	}{
		{"", "{"},
		{"/a~1b", "1"},
		{"/m~0n", "2"},
		{"/", `"empty key"`},
		{"/children/1/id", `"c2"`},
		{"/children/0/tags/1", `"y"`},
		{"/numbers/0", "0"},
		{"/numbers/9", "123456789012345678901234567890"},
		{"/literals/2", "null"},
		{"/empty/obj", "{}"},
		{"/children/01", ""},
		{"/children/-", ""},
		{"/children/2", ""},
		{"/children/x", ""},
		{"/children/99999999999999999999", ""},
		{"/missing", ""},
		{"/name/x", ""},
		{"a", ""},
		{"/m~2n", ""},
		{"/m~", ""},
		{"/a/b", ""}, // "a/b" must be written a~1b
	}
	for _, tt := range tests {
		n := d.Pointer(tt.ptr)
		got := ""
		if n != nil {
			got = string(d.Src[n.Start():n.End()])
			if tt.ptr == "" {
				got = got[:1]
			}
		}
		if got != tt.want {
			t.Errorf("Pointer(%q) = %q, want %q", tt.ptr, got, tt.want)
		}
	}

	segs := []struct {
		segs []string
		want string
	}{
		{nil, "{"},
		{[]string{"a/b"}, "1"},
		{[]string{"m~n"}, "2"},
		{[]string{""}, `"empty key"`},
		{[]string{"children", "0", "tags", "1"}, `"y"`},
		{[]string{"children", "-1"}, ""},
		{[]string{"a~1b"}, ""}, // segments are already unescaped
	}
	for _, tt := range segs {
		n := d.PointerSegments(tt.segs)
		got := ""
		if n != nil {
			got = string(d.Src[n.Start():n.End()])
			if len(tt.segs) == 0 {
				got = got[:1]
			}
		}
		if got != tt.want {
			t.Errorf("PointerSegments(%q) = %q, want %q", tt.segs, got, tt.want)
		}
	}

	var nilDoc *Document
	if nilDoc.Pointer("") != nil || nilDoc.PointerSegments(nil) != nil {
		t.Error("nil document")
	}
	// A member without a value resolves to nil, not to a panic.
	d = Parse([]byte(`{"a": , "b": {"c": }}`))
	if d.Pointer("/a") != nil || d.Pointer("/b/c") != nil || d.Pointer("/b/c/d") != nil || d.Pointer("/b") == nil {
		t.Error("missing values")
	}
	// Duplicate keys: the last one wins, as in encoding/json.
	d = Parse([]byte(`{"a": 1, "a": 2}`))
	if n := d.Pointer("/a"); n == nil || n.Raw() != "2" {
		t.Errorf("duplicate key: %+v", n)
	}
}

func TestLocationAt(t *testing.T) {
	src := `{"id": "a", "children": [{"id": "c1"}, 22], "empty": , "s": tru}`
	d := Parse([]byte(src))
	at := func(sub string, delta int) int {
		i := strings.Index(src, sub)
		if i < 0 {
			t.Fatalf("%q not in source", sub)
		}
		return i + delta
	}
	text := func(n *Node) string {
		if n == nil {
			return "<nil>"
		}
		return src[n.Start():n.End()]
	}
	children := d.Root.Get("children")
	tests := []struct {
		name   string
		offset int
		path   []PathElem
		node   string // source text of Node
		member string // key of Member, "" for nil
		parent *Node
	}{
		{"root start", 0, nil, src, "", nil},
		{"inside key", 2, []PathElem{{Key: "id", Index: -1, IsKey: true}}, `"id"`, "id", d.Root},
		{"on key quote", 1, []PathElem{{Key: "id", Index: -1, IsKey: true}}, `"id"`, "id", d.Root},
		{"just after key", 5, []PathElem{{Key: "id", Index: -1, IsKey: true}}, `"id"`, "id", d.Root},
		{"between colon and value", 6, nil, src, "", nil},
		{"inside value", 8, []PathElem{{Key: "id", Index: -1}}, `"a"`, "id", d.Root},
		{"nested key", at(`"id": "c1"`, 1), []PathElem{{Key: "children", Index: -1}, {Index: 0}, {Key: "id", Index: -1, IsKey: true}}, `"id"`, "id", children.Elems()[0]},
		{"nested value", at(`"c1"`, 2), []PathElem{{Key: "children", Index: -1}, {Index: 0}, {Key: "id", Index: -1}}, `"c1"`, "id", children.Elems()[0]},
		{"array element", at("22", 1), []PathElem{{Key: "children", Index: -1}, {Index: 1}}, "22", "", children},
		{"end of array element", at("22", 2), []PathElem{{Key: "children", Index: -1}, {Index: 1}}, "22", "", children},
		{"between elements", at(", 22", 1), []PathElem{{Key: "children", Index: -1}}, text(children), "children", d.Root},
		{"just after string, on brace", at(`"c1"}`, 4), []PathElem{{Key: "children", Index: -1}, {Index: 0}, {Key: "id", Index: -1}}, `"c1"`, "id", children.Elems()[0]},
		{"after closing brace of element", at(`"c1"}`, 5), []PathElem{{Key: "children", Index: -1}}, text(children), "children", d.Root},
		{"missing value", at(`"empty": ,`, 9), []PathElem{{Key: "empty", Index: -1}}, "<nil>", "empty", d.Root},
		{"missing value, after comma", at(`"empty": ,`, 10), nil, src, "", nil},
		{"bare word end", at("tru", 3), []PathElem{{Key: "s", Index: -1}}, "tru", "s", d.Root},
		{"just after word, on brace", len(src) - 1, []PathElem{{Key: "s", Index: -1}}, "tru", "s", d.Root},
		{"before key", at(`"s"`, 0) - 1, nil, src, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc := d.LocationAt(tt.offset)
			if !reflect.DeepEqual(loc.Path, tt.path) {
				t.Errorf("offset %d: path %+v, want %+v", tt.offset, loc.Path, tt.path)
			}
			if got := text(loc.Node); got != tt.node {
				t.Errorf("offset %d: node %q, want %q", tt.offset, got, tt.node)
			}
			member := ""
			if loc.Member != nil {
				member = loc.Member.Key.Str()
			}
			if member != tt.member {
				t.Errorf("offset %d: member %q, want %q", tt.offset, member, tt.member)
			}
			if loc.Parent != tt.parent {
				t.Errorf("offset %d: parent %v, want %v", tt.offset, loc.Parent, tt.parent)
			}
		})
	}

	// Outside the closed root, and before it.
	for _, o := range []int{-1, len(src), len(src) + 5} {
		if loc := d.LocationAt(o); loc.Node != nil || loc.Path != nil || loc.Member != nil {
			t.Errorf("offset %d: %+v", o, loc)
		}
	}
	if loc := Parse([]byte("  ")).LocationAt(1); loc.Node != nil {
		t.Errorf("empty document: %+v", loc)
	}
}

func TestLocationAtEOF(t *testing.T) {
	// Completion at the end of a half-typed document.
	tests := []struct {
		src    string
		path   []PathElem
		node   string
		member string
	}{
		{`{"a": `, []PathElem{{Key: "a", Index: -1}}, "<nil>", "a"},
		{`{"a": tr`, []PathElem{{Key: "a", Index: -1}}, "tr", "a"},
		{`{"a": "x`, []PathElem{{Key: "a", Index: -1}}, `"x`, "a"},
		{`{"a": 1, "b`, []PathElem{{Key: "b", Index: -1, IsKey: true}}, `"b`, "b"},
		{`{"a": [1, `, []PathElem{{Key: "a", Index: -1}}, `[1, `, "a"},
		{`{"a": 1, `, nil, `{"a": 1, `, ""},
		{`[1, 2]`, nil, "<nil>", ""},
		{`"abc"`, nil, `"abc"`, ""},
	}
	for _, tt := range tests {
		d := Parse([]byte(tt.src))
		loc := d.LocationAt(len(tt.src))
		node := "<nil>"
		if loc.Node != nil {
			node = tt.src[loc.Node.Start():loc.Node.End()]
		}
		member := ""
		if loc.Member != nil {
			member = loc.Member.Key.Str()
		}
		if !reflect.DeepEqual(loc.Path, tt.path) || node != tt.node || member != tt.member {
			t.Errorf("%q: path %+v node %q member %q; want %+v %q %q", tt.src, loc.Path, node, member, tt.path, tt.node, tt.member)
		}
	}
}
