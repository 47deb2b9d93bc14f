package jsonc

import "testing"

// The span builders lay new text out like its surroundings, and removals
// leave valid JSON.
func TestEdits(t *testing.T) {
	type tc struct {
		name, src, want string
		edit            func(src []byte, d *Document) []Edit
	}
	val := func(v any) func(bool) string {
		return func(p bool) string { return Layout{}.Marshal(v, p) }
	}
	cases := []tc{
		{"insert multi-line", "{\n    \"a\": 1\n}\n", "{\n    \"a\": 1,\n    \"b\": {\n        \"c\": 2\n    }\n}\n",
			func(src []byte, d *Document) []Edit {
				l := LayoutOf(src, d.Root)
				return []Edit{l.InsertMember(src, d.Root, "b", func(p bool) string { return l.Marshal(map[string]int{"c": 2}, p) })}
			}},
		{"insert inline compact", `{"a":1}`, `{"a":1,"b":{"c":2}}`,
			func(src []byte, d *Document) []Edit {
				l := LayoutOf(src, d.Root)
				return []Edit{l.InsertMember(src, d.Root, "b", func(p bool) string { return l.Marshal(map[string]int{"c": 2}, p) })}
			}},
		{"insert into empty", "{}", "{\n  \"a\": \"x\"\n}",
			func(src []byte, d *Document) []Edit { return []Edit{Layout{}.InsertMember(src, d.Root, "a", val("x"))} }},
		{"insert into unclosed", "{", "{\n  \"a\": 1\n",
			func(src []byte, d *Document) []Edit {
				return []Edit{Layout{}.InsertMember(src, d.Root, "a", Text("1"))}
			}},
		{"append multi-line", "[\n  \"a\"\n]", "[\n  \"a\",\n  \"b\"\n]",
			func(src []byte, d *Document) []Edit { return []Edit{Layout{}.AppendElement(src, d.Root, val("b"))} }},
		{"append inline", `["a"]`, `["a", "b"]`,
			func(src []byte, d *Document) []Edit { return []Edit{Layout{}.AppendElement(src, d.Root, val("b"))} }},
		{"set existing", `{"a": "x", "b": 1}`, `{"a": "y", "b": 1}`,
			func(src []byte, d *Document) []Edit { return []Edit{Layout{}.SetMember(src, d.Root, "a", val("y"))} }},
		{"remove first", `["a", "b"]`, `["b"]`,
			func(src []byte, d *Document) []Edit { return RemoveElement(src, d.Root, 0) }},
		{"remove last", "[\n  \"a\",\n  \"b\"\n]", "[\n  \"a\"\n]",
			func(src []byte, d *Document) []Edit { return RemoveElement(src, d.Root, 1) }},
		{"remove lone", `[ "a" ]`, `[]`,
			func(src []byte, d *Document) []Edit { return RemoveElement(src, d.Root, 0) }},
		{"remove member", `{"a": 1, "b": 2}`, `{"a": 1}`,
			func(src []byte, d *Document) []Edit { return RemoveMember(src, d.Root, "b") }},
		{"marshal keeps colons in strings", `{}`, "{\n  \"k\":\"a: b, c\"\n}",
			func(src []byte, d *Document) []Edit {
				return []Edit{Layout{Colon: ":", Comma: ","}.InsertMember(src, d.Root, "k", val("a: b, c"))}
			}},
	}
	for _, c := range cases {
		src := []byte(c.src)
		d := Parse(src)
		got := string(Apply(src, c.edit(src, d)...))
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}
