package jsonc

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Byte-preserving edits of JSON text, for every writer of the project (the
// store's field writes, the hook's settings merge, the language server's
// quick fixes): an Edit replaces one span, and the span builders below lay
// new text out like its surroundings so the user's formatting, key order and
// everything not touched stay as they were.

// Edit replaces src[Start:End] with Text.
type Edit struct {
	Start, End int
	Text       string
}

// Apply applies non-overlapping edits (in any order) to src.
func Apply(src []byte, edits ...Edit) []byte {
	sorted := slices.Clone(edits)
	slices.SortStableFunc(sorted, func(a, b Edit) int { return a.Start - b.Start })
	out := make([]byte, 0, len(src))
	at := 0
	for _, e := range sorted {
		out = append(out, src[at:e.Start]...)
		out = append(out, e.Text...)
		at = e.End
	}
	return append(out, src[at:]...)
}

// Replace is the edit replacing a value with the JSON text v.
func Replace(n *Node, v string) Edit { return Edit{n.Start(), n.End(), v} }

// LineIndent returns the leading white space of the line holding offset.
func LineIndent(src []byte, offset int) string {
	start := bytes.LastIndexByte(src[:offset], '\n') + 1
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}

// Reindent prefixes every line of a multi-line text but the first.
func Reindent(text, indent string) string { return strings.ReplaceAll(text, "\n", "\n"+indent) }

// Layout is how a file lays JSON out: one indentation step of multi-line
// containers, and the spacing after a colon and between the children of a
// one-line container. The zero Layout is 2 spaces, ": " and ", ".
type Layout struct {
	Unit  string
	Colon string
	Comma string
}

func (l Layout) withDefaults() Layout {
	if l.Unit == "" {
		l.Unit = "  "
	}
	if l.Colon == "" {
		l.Colon = ": "
	}
	if l.Comma == "" {
		l.Comma = ", "
	}
	return l
}

// LayoutOf reads the layout off the top-level object (the defaults where it
// cannot tell).
func LayoutOf(src []byte, root *Node) Layout {
	l := Layout{}.withDefaults()
	if root == nil || root.Kind != Object || len(root.Members()) == 0 {
		return l
	}
	first := root.Members()[0]
	if MultiLine(src, root) {
		if u, ok := strings.CutPrefix(LineIndent(src, first.Key.Start()), LineIndent(src, root.Start())); ok && u != "" {
			l.Unit = u
		}
	}
	if c := first.Colon(); c >= 0 && c+1 < len(src) && src[c+1] != ' ' {
		l.Colon, l.Comma = ":", ","
	}
	return l
}

// MultiLine reports whether a container lays its children out on lines of
// their own; an empty container gets the multi-line layout.
func MultiLine(src []byte, n *Node) bool {
	first := -1
	switch {
	case n.Kind == Object && len(n.Members()) > 0:
		first = n.Members()[0].Key.Start()
	case n.Kind == Array && len(n.Elems()) > 0:
		first = n.Elems()[0].Start()
	default:
		return true
	}
	return bytes.IndexByte(src[n.Start():first], '\n') >= 0
}

// Marshal encodes v without HTML escaping and without a final newline:
// indented by the layout's step (pretty), or on one line with its spacing.
func (l Layout) Marshal(v any, pretty bool) string {
	l = l.withDefaults()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", l.Unit)
	}
	_ = enc.Encode(v) // callers pass values that always encode
	out := strings.TrimSuffix(b.String(), "\n")
	if pretty {
		if l.Colon == ":" {
			return respace(out, ": ", ":")
		}
		return out
	}
	return respace(respace(out, ":", l.Colon), ",", l.Comma)
}

// respace replaces the separator from (":" or ",", or ": ") with to outside
// strings.
func respace(text, from, to string) string {
	if from == to {
		return text
	}
	var b strings.Builder
	inStr := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inStr && c == '\\':
			b.WriteByte(c)
			i++
			b.WriteByte(text[i])
			continue
		case c == '"':
			inStr = !inStr
		case !inStr && strings.HasPrefix(text[i:], from):
			b.WriteString(to)
			i += len(from) - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// closeAt is where a container's closing bracket is (its end when a
// recovering parse found none).
func closeAt(n *Node) int {
	if n.Closed {
		return n.End() - 1
	}
	return n.End()
}

// InsertMember is the edit adding the member key after obj's last member,
// laid out like its members (one per line when they are, else inline).
// value gives the member's JSON text for a multi-line (pretty) or one-line
// layout.
func (l Layout) InsertMember(src []byte, obj *Node, key string, value func(pretty bool) string) Edit {
	l = l.withDefaults()
	k := Quote(key) + l.Colon
	ms := obj.Members()
	if len(ms) == 0 {
		indent := LineIndent(src, obj.Start())
		inner := indent + l.Unit
		return Edit{obj.Start() + 1, closeAt(obj), "\n" + inner + k + Reindent(value(true), inner) + "\n" + indent}
	}
	last := ms[len(ms)-1]
	end := last.Key.End()
	if last.Value != nil {
		end = last.Value.End()
	}
	if bytes.IndexByte(src[obj.Start():last.Key.Start()], '\n') < 0 {
		return Edit{end, end, l.Comma + k + value(false)}
	}
	indent := LineIndent(src, last.Key.Start())
	return Edit{end, end, ",\n" + indent + k + Reindent(value(true), indent)}
}

// AppendElement is the edit adding an element after arr's last one, laid
// out like its elements.
func (l Layout) AppendElement(src []byte, arr *Node, elem func(pretty bool) string) Edit {
	l = l.withDefaults()
	if len(arr.Elems()) == 0 {
		indent := LineIndent(src, arr.Start())
		inner := indent + l.Unit
		return Edit{arr.Start() + 1, closeAt(arr), "\n" + inner + Reindent(elem(true), inner) + "\n" + indent}
	}
	last := arr.Elems()[len(arr.Elems())-1]
	if !MultiLine(src, arr) {
		return Edit{last.End(), last.End(), l.Comma + elem(false)}
	}
	indent := LineIndent(src, arr.Elems()[0].Start())
	return Edit{last.End(), last.End(), ",\n" + indent + Reindent(elem(true), indent)}
}

// SetMember is the edit setting key of obj to a value: the value's bytes
// are replaced when the member exists, else the member is added.
func (l Layout) SetMember(src []byte, obj *Node, key string, value func(pretty bool) string) Edit {
	if m := obj.Member(key); m != nil && m.Value != nil {
		return Replace(m.Value, value(false))
	}
	return l.InsertMember(src, obj, key, value)
}

// Text is a value whose text is the same in every layout.
func Text(s string) func(bool) string { return func(bool) string { return s } }

// RemoveElement returns the edits removing element i of arr with one
// adjacent comma, leaving valid JSON: "a, b" → "b"; "a, b" minus the last
// → "a"; a lone element empties the brackets when only white space
// surrounds it. Comments next to the element stay.
func RemoveElement(src []byte, arr *Node, i int) []Edit {
	spans := make([][2]int, len(arr.Elems()))
	for j, e := range arr.Elems() {
		spans[j] = [2]int{e.Start(), e.End()}
	}
	return removeChild(src, arr, spans, i)
}

// RemoveMember returns the edits removing the member key (the last one of
// that name) of obj; none when it has no such member.
func RemoveMember(src []byte, obj *Node, key string) []Edit {
	spans := make([][2]int, len(obj.Members()))
	idx := -1
	for j, m := range obj.Members() {
		end := m.Key.End()
		if m.Value != nil {
			end = m.Value.End()
		}
		spans[j] = [2]int{m.Key.Start(), end}
		if m.Key.Str() == key {
			idx = j
		}
	}
	if idx < 0 {
		return nil
	}
	return removeChild(src, obj, spans, idx)
}

func removeChild(src []byte, n *Node, spans [][2]int, i int) []Edit {
	s := spans[i]
	switch {
	case len(spans) == 1:
		inner, end := n.Start()+1, closeAt(n)
		if blank(src[inner:s[0]]) && blank(src[s[1]:end]) {
			return []Edit{{inner, end, ""}}
		}
		return []Edit{{s[0], s[1], ""}}
	case i < len(spans)-1:
		next := spans[i+1]
		between := src[s[1]:next[0]]
		if commaBlank(between) {
			// Up to the next child: the comma and the white space after it.
			return []Edit{{s[0], next[0], ""}}
		}
		if c := bytes.IndexByte(between, ','); c >= 0 {
			return []Edit{{s[0], s[1] + c + 1, ""}}
		}
		return []Edit{{s[0], s[1], ""}}
	default:
		prev := spans[i-1]
		between := src[prev[1]:s[0]]
		if commaBlank(between) {
			// From the end of the previous child: the comma and the line break.
			return []Edit{{prev[1], s[1], ""}}
		}
		if c := bytes.IndexByte(between, ','); c >= 0 {
			return []Edit{{prev[1] + c, prev[1] + c + 1, ""}, {s[0], s[1], ""}}
		}
		return []Edit{{s[0], s[1], ""}}
	}
}

func blank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

func commaBlank(b []byte) bool {
	t := bytes.TrimSpace(b)
	return len(t) == 1 && t[0] == ','
}

// Quote is s as a JSON string, without HTML escaping (as SAGA writes it).
func Quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
