package jsonc

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"
)

// Kind is the type of a JSON value in the tree.
type Kind uint8

const (
	Invalid Kind = iota // a token that is not a JSON value (recovered garbage) or a missing value
	Object
	Array
	String
	Number
	Bool
	Null
)

// String returns the JSON Schema name of the kind ("object", "boolean", ...),
// so it can be used directly in messages about expected types.
func (k Kind) String() string {
	switch k {
	case Invalid:
		return "invalid"
	case Object:
		return "object"
	case Array:
		return "array"
	case String:
		return "string"
	case Number:
		return "number"
	case Bool:
		return "boolean"
	case Null:
		return "null"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Node is one value in the syntax tree (a member's key is a Key). Offsets
// are byte offsets into Document.Src.
type Node struct {
	// Offsets in 32 bits (Parse stops at 2 GiB): Start and End.
	start, end int32
	// What a node holds, in one pointer and a count: a string's decoded
	// value (Str), an object's members (*Member), an array's elements
	// (**Node) or a number's literal text (Raw) — a node is only ever one of
	// them. With the small fields last a node takes 24 bytes: a workspace
	// holds hundreds of thousands of them, three in four strings, and the
	// two offsets, the string and the three slices or strings this replaces
	// took 88 (docs/architecture.md#memory-at-88000-files).
	kids   unsafe.Pointer
	nkids  int32
	Kind   Kind
	Bool   bool // Bool: the value
	Closed bool // Object/Array: closing bracket found; String: closing quote found; others: true
}

// Start is the byte offset of the first byte of the value.
func (n *Node) Start() int { return int(n.start) }

// End is the byte offset just past the value (for an unterminated
// string/object/array: where recovery stopped).
func (n *Node) End() int { return int(n.end) }

// Str is a String's decoded value (escapes resolved; best effort when
// unterminated or with bad escapes), "" for any other node.
func (n *Node) Str() string {
	if n == nil || n.Kind != String || n.kids == nil {
		return ""
	}
	return unsafe.String((*byte)(n.kids), n.nkids)
}

// setStr sets a String node's value.
func (n *Node) setStr(s string) {
	n.kids, n.nkids = unsafe.Pointer(unsafe.StringData(s)), int32(len(s))
}

// Members returns an object's members in source order (duplicates kept),
// nil for other nodes. The slice is the tree's: do not modify it.
func (n *Node) Members() []Member {
	if n == nil || n.Kind != Object || n.kids == nil {
		return nil
	}
	return unsafe.Slice((*Member)(n.kids), n.nkids)
}

// Elems returns an array's elements in source order, nil for other nodes.
// The slice is the tree's: do not modify it.
func (n *Node) Elems() []*Node {
	if n == nil || n.Kind != Array || n.kids == nil {
		return nil
	}
	return unsafe.Slice((**Node)(n.kids), n.nkids)
}

// Raw returns a number's literal text, "true" or "false" for a Bool,
// "null" for a Null, and "" for any other node.
func (n *Node) Raw() string {
	switch {
	case n == nil:
		return ""
	case n.Kind == Number && n.kids != nil:
		return unsafe.String((*byte)(n.kids), n.nkids)
	case n.Kind == Bool && n.Bool:
		return "true"
	case n.Kind == Bool:
		return "false"
	case n.Kind == Null:
		return "null"
	}
	return ""
}

// Member is one key/value pair of an object.
type Member struct {
	Key   Key
	Value *Node // nil when the value is missing (e.g. `{"a":}` or `{"a"`)
}

// Colon returns the byte offset of the member's ':', or -1 when it is
// missing.
func (m *Member) Colon() int { return int(m.Key.colon) }

// Key is a member's key string (and where its colon is), held in its
// Member rather than as a Node: keys are half the strings of a document,
// and a workspace keeps hundreds of thousands of them. For the same reason
// its offsets are kept in 32 bits (Parse stops at 2 GiB). A recovered
// unquoted key is a Key too, not Closed, with an error recorded.
type Key struct {
	// The decoded key (Str) as a pointer and, with the closing quote found
	// in the top bit, a length: a Key takes 24 bytes and a Member 32, where
	// a string field and a bool took 32 and 40 — 5 MB at 88,000 files
	// (docs/architecture.md#memory-at-88000-files).
	str               unsafe.Pointer
	start, end, colon int32
	n                 uint32
}

// keyClosed is the bit of Key.n that says the closing quote was found.
const keyClosed = 1 << 31

// Str is the decoded key, as Node.Str.
func (k Key) Str() string {
	if k.n&^keyClosed == 0 {
		return ""
	}
	return unsafe.String((*byte)(k.str), k.n&^keyClosed)
}

// set sets the decoded key and whether its closing quote was found.
func (k *Key) set(s string, closed bool) {
	k.str, k.n = unsafe.Pointer(unsafe.StringData(s)), uint32(len(s))
	if closed {
		k.n |= keyClosed
	}
}

// Start is the byte offset of the key's opening quote (or of an unquoted
// key's first byte).
func (k Key) Start() int { return int(k.start) }

// End is the byte offset just past the closing quote (or where an
// unterminated or unquoted key was cut).
func (k Key) End() int { return int(k.end) }

// Closed reports whether the key's closing quote was found.
func (k Key) Closed() bool { return k.n&keyClosed != 0 }

// Node returns the key as a String node of its own, for code that treats
// every string token alike (locations, edits, ranges).
func (k Key) Node() *Node {
	n := &Node{Kind: String, start: k.start, end: k.end, Closed: k.Closed()}
	n.setStr(k.Str())
	return n
}

// Error is a problem found while parsing. Errors are data: Parse never fails.
type Error struct {
	Start, End int    // byte range of the offending token (End > Start when there is a token; Start==End at EOF)
	Message    string // short and lowercase, e.g. "unterminated string"
}

// Document is the result of Parse.
type Document struct {
	Src    []byte
	Root   *Node   // nil only for empty/whitespace-only input (an Error is recorded then: "empty document")
	Errors []Error // sorted by Start
	// lines is made on first use (Lines): most of a workspace's documents
	// are never asked for a position, and at 88,000 files an index made
	// with each would be 3.5 MB of the peak (docs/architecture.md#memory-at-88000-files).
	lines atomic.Pointer[LineIndex]
}

// Lines returns the document's line index, made on first use. It is safe
// for concurrent use: concurrent first uses may each make one; one is kept.
func (d *Document) Lines() *LineIndex {
	if li := d.lines.Load(); li != nil {
		return li
	}
	li := NewLineIndex(d.Src)
	if !d.lines.CompareAndSwap(nil, li) {
		li = d.lines.Load()
	}
	return li
}

// Member returns the last member with the given key in an Object (the one
// that wins in encoding/json and JSON Schema), or nil.
func (n *Node) Member(key string) *Member {
	if n == nil || n.Kind != Object {
		return nil
	}
	ms := n.Members()
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Key.Str() == key {
			return &ms[i]
		}
	}
	return nil
}

// Get returns the value of the last member with the given key, or nil when
// n is not an object, the key is absent or its value is missing.
func (n *Node) Get(key string) *Node {
	if m := n.Member(key); m != nil {
		return m.Value
	}
	return nil
}

// Value converts the tree to the shapes encoding/json produces with
// UseNumber: map[string]any, []any, string, json.Number, bool and nil.
// Invalid nodes become nil and members without a value are left out, so a
// half-typed document can still be validated against a JSON Schema.
func (n *Node) Value() any {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case Object:
		m := make(map[string]any, len(n.Members()))
		for _, mem := range n.Members() {
			if mem.Value != nil {
				m[mem.Key.Str()] = mem.Value.Value()
			}
		}
		return m
	case Array:
		a := make([]any, len(n.Elems()))
		for i, e := range n.Elems() {
			a[i] = e.Value()
		}
		return a
	case String:
		return n.Str()
	case Number:
		return json.Number(n.Raw())
	case Bool:
		return n.Bool
	}
	return nil
}

// Pointer resolves an RFC 6901 JSON pointer ("" is the root,
// "/children/0/id", "~0" is '~' and "~1" is '/'). It returns nil when the
// pointer is malformed or the value is absent.
func (d *Document) Pointer(ptr string) *Node {
	if d == nil {
		return nil
	}
	if ptr == "" {
		return d.Root
	}
	if ptr[0] != '/' {
		return nil
	}
	segs := strings.Split(ptr[1:], "/")
	for i, s := range segs {
		u, ok := unescapePointer(s)
		if !ok {
			return nil
		}
		segs[i] = u
	}
	return d.PointerSegments(segs)
}

// PointerSegments is Pointer with already split and unescaped segments, as
// JSON Schema validators report instance locations.
func (d *Document) PointerSegments(segs []string) *Node {
	if d == nil {
		return nil
	}
	n := d.Root
	for _, s := range segs {
		if n == nil {
			return nil
		}
		switch n.Kind {
		case Object:
			n = n.Get(s)
		case Array:
			i, ok := arrayIndex(s)
			if !ok || i >= len(n.Elems()) {
				return nil
			}
			n = n.Elems()[i]
		default:
			return nil
		}
	}
	return n
}

func unescapePointer(s string) (string, bool) {
	if strings.IndexByte(s, '~') < 0 {
		return s, true
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '~' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(s) {
			return "", false
		}
		i++
		switch s[i] {
		case '0':
			b.WriteByte('~')
		case '1':
			b.WriteByte('/')
		default:
			return "", false
		}
	}
	return b.String(), true
}

// arrayIndex parses an RFC 6901 array index: "0" or digits without a
// leading zero. "-" (past the end) never names an existing element.
func arrayIndex(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
