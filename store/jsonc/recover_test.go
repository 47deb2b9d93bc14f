package jsonc

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// keys returns the member keys of an object node.
func keys(n *Node) []string {
	if n == nil {
		return nil
	}
	var ks []string
	for _, m := range n.Members() {
		ks = append(ks, m.Key.Str())
	}
	return ks
}

func TestRecovery(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		errs  []string // "start:end message"
		check func(t *testing.T, d *Document)
	}{
		{
			name: "missing comma between members",
			src:  `{"id": "a" "subject": "b"}`,
			errs: []string{`11:20 expected ','`},
			check: func(t *testing.T, d *Document) {
				if got := d.Root.Value(); !reflect.DeepEqual(got, map[string]any{"id": "a", "subject": "b"}) {
					t.Errorf("value %v", got)
				}
			},
		},
		{
			name: "missing comma between elements",
			src:  `[1 2, {"a":1} [3]]`,
			errs: []string{`3:4 expected ','`, `14:15 expected ','`},
			check: func(t *testing.T, d *Document) {
				if n := len(d.Root.Elems()); n != 4 || !d.Root.Closed {
					t.Errorf("elems %d", n)
				}
			},
		},
		{
			name: "trailing comma in object",
			src:  `{"a":1,}`,
			errs: []string{`6:7 trailing comma`},
			check: func(t *testing.T, d *Document) {
				if !reflect.DeepEqual(keys(d.Root), []string{"a"}) || !d.Root.Closed || d.Root.End() != 8 {
					t.Errorf("root %+v", d.Root)
				}
			},
		},
		{
			name: "trailing comma in array",
			src:  `[1,]`,
			errs: []string{`2:3 trailing comma`},
			check: func(t *testing.T, d *Document) {
				if len(d.Root.Elems()) != 1 || !d.Root.Closed {
					t.Errorf("root %+v", d.Root)
				}
			},
		},
		{
			name: "missing value before closing brace",
			src:  `{"a": , "b": 2}`,
			errs: []string{`6:7 expected value`},
			check: func(t *testing.T, d *Document) {
				m := d.Root.Member("a")
				if m == nil || m.Value != nil || m.Colon() != 4 {
					t.Errorf("member a %+v", m)
				}
				if d.Root.Get("b").Raw() != "2" {
					t.Error("b lost")
				}
			},
		},
		{
			name: "missing value before the next member",
			src:  "{\n  \"a\": \n  \"b\": 1,\n  \"c\":\n  d: 2\n}",
			errs: []string{`12:15 expected value`, `29:30 expected value`, `29:30 object keys must be double-quoted`},
			check: func(t *testing.T, d *Document) {
				if !reflect.DeepEqual(keys(d.Root), []string{"a", "b", "c", "d"}) {
					t.Fatalf("keys %v", keys(d.Root))
				}
				if d.Root.Get("a") != nil || d.Root.Get("b").Raw() != "1" || d.Root.Get("d").Raw() != "2" {
					t.Errorf("values %v", d.Root.Value())
				}
			},
		},
		{
			name: "missing value at end of object",
			src:  `{"a": }`,
			errs: []string{`6:7 expected value`},
			check: func(t *testing.T, d *Document) {
				if m := d.Root.Member("a"); m == nil || m.Value != nil || !d.Root.Closed {
					t.Errorf("member a %+v", m)
				}
			},
		},
		{
			name: "key without colon at EOF",
			src:  `{"a"`,
			errs: []string{`4:4 expected ':'`, `4:4 expected '}'`},
			check: func(t *testing.T, d *Document) {
				m := d.Root.Member("a")
				if m == nil || m.Colon() != -1 || m.Value != nil {
					t.Errorf("member a %+v", m)
				}
				if d.Root.Closed || d.Root.End() != 4 {
					t.Errorf("root %+v", d.Root)
				}
			},
		},
		{
			name: "key without colon before next member",
			src:  "{\"a\"\n \"b\": 1}",
			errs: []string{`6:9 expected ':'`},
			check: func(t *testing.T, d *Document) {
				if !reflect.DeepEqual(keys(d.Root), []string{"a", "b"}) || d.Root.Member("a").Value != nil {
					t.Errorf("keys %v", keys(d.Root))
				}
			},
		},
		{
			name: "missing colon before value",
			src:  `{"a" 1, "b": 2}`,
			errs: []string{`5:6 expected ':'`},
			check: func(t *testing.T, d *Document) {
				m := d.Root.Member("a")
				if m.Colon() != -1 || m.Value == nil || m.Value.Raw() != "1" || d.Root.Get("b") == nil {
					t.Errorf("member a %+v", m)
				}
			},
		},
		{
			name: "unquoted key",
			src:  `{a: 1, "b": 2}`,
			errs: []string{`1:2 object keys must be double-quoted`},
			check: func(t *testing.T, d *Document) {
				m := d.Root.Members()[0]
				if m.Key.Closed() || m.Key.Str() != "a" || m.Key.Start() != 1 || m.Key.End() != 2 || m.Value.Raw() != "1" {
					t.Errorf("member %+v key %+v", m, m.Key)
				}
				if d.Root.Get("b") == nil {
					t.Error("b lost")
				}
			},
		},
		{
			name: "bare word value",
			src:  `{"a": tru, "b": nul}`,
			errs: []string{`6:9 invalid literal "tru"`, `16:19 invalid literal "nul"`},
			check: func(t *testing.T, d *Document) {
				a := d.Root.Get("a")
				if a.Kind != Invalid || a.Start() != 6 || a.End() != 9 {
					t.Errorf("a = %+v", a)
				}
				if got := d.Root.Value(); !reflect.DeepEqual(got, map[string]any{"a": nil, "b": nil}) {
					t.Errorf("value %v", got)
				}
			},
		},
		{
			name: "bare word at top level",
			src:  `tru`,
			errs: []string{`0:3 invalid literal "tru"`},
			check: func(t *testing.T, d *Document) {
				if d.Root.Kind != Invalid || d.Root.End() != 3 {
					t.Errorf("root %+v", d.Root)
				}
			},
		},
		{
			name: "literal glued to a word",
			src:  `[truex, nullable]`,
			errs: []string{`1:6 invalid literal "truex"`, `8:16 invalid literal "nullable"`},
		},
		{
			name: "unclosed object at EOF",
			src:  `{"a": 1`,
			errs: []string{`7:7 expected '}'`},
			check: func(t *testing.T, d *Document) {
				if d.Root.Closed || d.Root.End() != 7 || d.Root.Get("a") == nil {
					t.Errorf("root %+v", d.Root)
				}
			},
		},
		{
			name: "unclosed nested containers report once",
			src:  `{"a": [1, {"b": [`,
			errs: []string{`17:17 expected ']'`},
			check: func(t *testing.T, d *Document) {
				inner := d.Pointer("/a/1/b")
				if inner == nil || inner.Closed || inner.End() != 17 || d.Root.Closed || d.Root.End() != 17 {
					t.Errorf("inner %+v root %+v", inner, d.Root)
				}
			},
		},
		{
			name: "array closed by brace of enclosing object",
			src:  `{"a": [1, 2}`,
			errs: []string{`11:12 expected ']'`},
			check: func(t *testing.T, d *Document) {
				a := d.Root.Get("a")
				if a.Closed || a.End() != 11 || len(a.Elems()) != 2 || !d.Root.Closed {
					t.Errorf("a %+v root %+v", a, d.Root)
				}
			},
		},
		{
			name: "object closed by bracket of enclosing array",
			src:  `[{"a":1], 2]`,
			errs: []string{`7:8 expected '}'`, `8:12 trailing data after the top-level value`},
			check: func(t *testing.T, d *Document) {
				if len(d.Root.Elems()) != 1 || d.Root.Elems()[0].Closed {
					t.Errorf("root %+v", d.Root)
				}
			},
		},
		{
			name: "stray closing brackets",
			src:  `{"a": 1 ], "b": [2 }]}`,
			// The '}' closes the object, as the enclosing container.
			errs: []string{`8:9 unexpected ']'`, `19:20 expected ']'`, `20:22 trailing data after the top-level value`},
			check: func(t *testing.T, d *Document) {
				if got := d.Root.Value(); !reflect.DeepEqual(got, map[string]any{"a": jsonNumber("1"), "b": []any{jsonNumber("2")}}) {
					t.Errorf("value %v", got)
				}
			},
		},
		{
			name: "stray tokens before the value",
			src:  `], {"a": 1}`,
			errs: []string{`0:1 unexpected ']'`, `1:2 unexpected ','`},
			check: func(t *testing.T, d *Document) {
				if d.Root.Kind != Object || d.Root.Get("a") == nil {
					t.Errorf("root %+v", d.Root)
				}
			},
		},
		{
			name: "only stray tokens",
			src:  ` ]] `,
			errs: []string{`1:2 unexpected ']'`, `2:3 unexpected ']'`},
			check: func(t *testing.T, d *Document) {
				if d.Root == nil || d.Root.Kind != Invalid || d.Root.Start() != 1 || d.Root.End() != 3 {
					t.Errorf("root %+v", d.Root)
				}
			},
		},
		{
			name: "trailing data is one error",
			src:  "{\"a\":1}} x y \n",
			errs: []string{`7:12 trailing data after the top-level value`},
		},
		{
			name: "two top-level values",
			src:  `1 2`,
			errs: []string{`2:3 trailing data after the top-level value`},
		},
		{
			name: "empty document",
			src:  " \n\t ",
			errs: []string{`0:0 empty document`},
			check: func(t *testing.T, d *Document) {
				if d.Root != nil {
					t.Errorf("root %+v", d.Root)
				}
			},
		},
		{
			name: "comments are skipped",
			src:  "// head\n{\"a\": /* inline */ 1, // tail\n \"b\": 2}",
			errs: []string{`0:7 comments are not allowed in JSON`, `14:26 comments are not allowed in JSON`, `30:37 comments are not allowed in JSON`},
			check: func(t *testing.T, d *Document) {
				if got := d.Root.Value(); !reflect.DeepEqual(got, map[string]any{"a": jsonNumber("1"), "b": jsonNumber("2")}) {
					t.Errorf("value %v", got)
				}
			},
		},
		{
			name: "unterminated block comment",
			src:  `[1] /* never closed`,
			errs: []string{`4:19 unterminated comment`},
		},
		{
			name: "slash that is not a comment",
			src:  `[1, /, 2]`,
			errs: []string{`4:5 unexpected character '/'`},
			check: func(t *testing.T, d *Document) {
				if len(d.Root.Elems()) != 3 {
					t.Errorf("elems %d", len(d.Root.Elems()))
				}
			},
		},
		{
			name: "malformed numbers are kept",
			src:  `[01, 1., +1, .5, -, 1e, 12px, -01.5]`,
			errs: []string{
				`1:3 invalid number`, `5:7 invalid number`, `9:11 invalid number`, `13:15 invalid number`,
				`17:18 invalid number`, `20:22 invalid number`, `24:28 invalid number`, `30:35 invalid number`,
			},
			check: func(t *testing.T, d *Document) {
				var raws []string
				for _, e := range d.Root.Elems() {
					if e.Kind != Number {
						t.Errorf("kind %v", e.Kind)
					}
					raws = append(raws, e.Raw())
				}
				if want := []string{"01", "1.", "+1", ".5", "-", "1e", "12px", "-01.5"}; !reflect.DeepEqual(raws, want) {
					t.Errorf("raws %q", raws)
				}
			},
		},
		{
			name: "duplicate keys are kept",
			src:  `{"id": 1, "x": 0, "id": 2}`,
			errs: []string{`18:22 duplicate key "id"`},
			check: func(t *testing.T, d *Document) {
				if len(d.Root.Members()) != 3 || d.Root.Get("id").Raw() != "2" {
					t.Errorf("members %v", keys(d.Root))
				}
			},
		},
		{
			name: "duplicate keys only within one object",
			src:  `{"a": {"a": 1}, "b": {"a": 2}}`,
		},
		{
			name: "unterminated string ends at end of line",
			src:  "{\"a\": \"open\n, \"b\": 2}",
			errs: []string{`6:11 unterminated string`},
			check: func(t *testing.T, d *Document) {
				a := d.Root.Get("a")
				if a.Kind != String || a.Closed || a.Str() != "open" || a.End() != 11 {
					t.Errorf("a %+v", a)
				}
				if d.Root.Get("b") == nil {
					t.Error("b lost")
				}
			},
		},
		{
			name: "unterminated string at EOF",
			src:  `["abc`,
			errs: []string{`1:5 unterminated string`, `5:5 expected ']'`},
			check: func(t *testing.T, d *Document) {
				s := d.Root.Elems()[0]
				if s.Closed || s.Str() != "abc" || s.End() != 5 {
					t.Errorf("s %+v", s)
				}
			},
		},
		{
			name: "unterminated string with CR line end",
			src:  "[\"abc\r\"x\"]",
			errs: []string{`1:5 unterminated string`},
			check: func(t *testing.T, d *Document) {
				if len(d.Root.Elems()) != 2 || d.Root.Elems()[1].Str() != "x" {
					t.Errorf("elems %+v", d.Root.Elems())
				}
			},
		},
		{
			name: "bad escapes decode best effort",
			src:  `"a\qb\u12G4c\u00"`,
			errs: []string{`2:4 invalid escape`, `5:9 invalid unicode escape`, `12:16 invalid unicode escape`},
			check: func(t *testing.T, d *Document) {
				if d.Root.Str() != `a\qb\u12G4c\u00` || !d.Root.Closed {
					t.Errorf("str %q", d.Root.Str())
				}
			},
		},
		{
			name: "backslash at end of line",
			src:  "[\"ab\\\n, 1]",
			errs: []string{`1:5 unterminated string`},
			check: func(t *testing.T, d *Document) {
				if len(d.Root.Elems()) != 2 {
					t.Errorf("elems %+v", d.Root.Elems())
				}
			},
		},
		{
			name: "control characters in string",
			src:  "\"a\tb\x01\"",
			errs: []string{`2:3 control character in string`, `4:5 control character in string`},
			check: func(t *testing.T, d *Document) {
				if d.Root.Str() != "a\tb\x01" || !d.Root.Closed {
					t.Errorf("str %q", d.Root.Str())
				}
			},
		},
		{
			name: "invalid UTF-8 in string",
			src:  "[\"a\xff\xfeb\", \"\xc3\"]",
			errs: []string{`3:5 invalid UTF-8`, `10:11 invalid UTF-8`},
			check: func(t *testing.T, d *Document) {
				if got := d.Root.Elems()[0].Str(); got != "a\uFFFD\uFFFDb" {
					t.Errorf("str %q", got)
				}
				if got := d.Root.Elems()[1].Str(); got != "\uFFFD" {
					t.Errorf("str %q", got)
				}
			},
		},
		{
			name: "invalid UTF-8 outside strings",
			src:  "[1, \xff\xfe, 2]",
			errs: []string{`4:6 invalid UTF-8`},
			check: func(t *testing.T, d *Document) {
				if len(d.Root.Elems()) != 3 || d.Root.Elems()[1].Kind != Invalid {
					t.Errorf("elems %+v", d.Root.Elems())
				}
			},
		},
		{
			name: "NUL byte outside strings",
			src:  "{\"a\": 1,\x00 \"b\": 2}",
			errs: []string{`8:9 unexpected character '\x00'`},
			check: func(t *testing.T, d *Document) {
				if d.Root.Get("b") == nil || d.Root.Get("a") == nil {
					t.Errorf("keys %v", keys(d.Root))
				}
			},
		},
		{
			name: "extra commas",
			src:  `[,1,,2] {,}`,
			errs: []string{`1:2 expected value`, `4:5 expected value`, `8:11 trailing data after the top-level value`},
		},
		{
			name: "colon in key position",
			src:  `{: 1, "b": 2}`,
			errs: []string{`1:2 expected key`},
			check: func(t *testing.T, d *Document) {
				if !reflect.DeepEqual(keys(d.Root), []string{"b"}) {
					t.Errorf("keys %v", keys(d.Root))
				}
			},
		},
		{
			name: "container in key position",
			src:  `{"a": 1 {"x": [1]} "b": 2}`,
			errs: []string{`8:18 expected key`},
			check: func(t *testing.T, d *Document) {
				if !reflect.DeepEqual(keys(d.Root), []string{"a", "b"}) {
					t.Errorf("keys %v", keys(d.Root))
				}
			},
		},
		{
			name: "no comma noise after an unterminated string",
			src:  "[\"a\n\"b\"]",
			errs: []string{`1:3 unterminated string`},
		},
		{
			name: "garbage in key position is skipped",
			src:  `{"a": 1, @# "b": 2}`,
			errs: []string{`9:11 unexpected character '@'`},
			check: func(t *testing.T, d *Document) {
				if !reflect.DeepEqual(keys(d.Root), []string{"a", "b"}) {
					t.Errorf("keys %v", keys(d.Root))
				}
			},
		},
		{
			name: "single quotes are words",
			src:  `{'a': 'b'}`,
			errs: []string{`1:4 object keys must be double-quoted`, `6:9 unexpected character '\''`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Parse([]byte(tt.src))
			if got := errorList(d); !reflect.DeepEqual(got, tt.errs) {
				t.Errorf("%q errors:\n got %q\nwant %q", tt.src, got, tt.errs)
			}
			checkInvariants(t, d)
			if tt.check != nil {
				tt.check(t, d)
			}
		})
	}
}

// TestHalfTypedTask is the editor case: a task file being typed, with an
// unterminated string in the middle. Everything after it must survive.
func TestHalfTypedTask(t *testing.T) {
	src := readFixture(t, "halftyped_task.json")
	d := Parse(src)
	checkInvariants(t, d)
	if want := []string{"id", "subject", "description", "status", "blockedBy", "guidance", "priority", "doneWhen"}; !reflect.DeepEqual(keys(d.Root), want) {
		t.Fatalf("keys %v", keys(d.Root))
	}
	if s := d.Root.Get("subject"); s.Closed || s.Str() != "Half typed subject that the user is still writing" {
		t.Errorf("subject %+v", s)
	}
	if s := d.Root.Get("description"); !s.Closed || s.Str() != "The subject above has no closing quote." {
		t.Errorf("description %+v", s)
	}
	if s := d.Root.Get("status"); s.Str() != "open" {
		t.Errorf("status %+v", s)
	}
	if b := d.Root.Get("blockedBy"); len(b.Elems()) != 2 || !b.Closed || b.Elems()[1].Str() != "task-00" || b.Elems()[1].Closed {
		t.Errorf("blockedBy %+v", b)
	}
	if m := d.Root.Member("guidance"); m == nil || m.Value != nil || m.Colon() < 0 {
		t.Errorf("guidance %+v", m)
	}
	if p := d.Root.Get("priority"); p == nil || p.Raw() != "2" {
		t.Errorf("priority %+v", p)
	}
	if m := d.Root.Member("doneWhen"); m == nil || m.Value != nil || m.Colon() < 0 {
		t.Errorf("doneWhen %+v", m)
	}
	var msgs []string
	for _, e := range d.Errors {
		msgs = append(msgs, e.Message+" "+string(src[e.Start:e.End]))
	}
	want := []string{
		`unterminated string "Half typed subject that the user is still writing`,
		`unterminated string "task-00`,
		`expected value "priority"`,
		`expected value }`,
	}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("errors\n got %q\nwant %q", msgs, want)
	}
}

func TestErrorCap(t *testing.T) {
	src := []byte("[" + strings.Repeat("x,", 500) + "]")
	d := Parse(src)
	if len(d.Errors) != maxErrors+1 {
		t.Fatalf("%d errors", len(d.Errors))
	}
	last := d.Errors[len(d.Errors)-1]
	if last.Message != "too many errors" || last.Start < d.Errors[maxErrors-1].Start {
		t.Errorf("last error %+v", last)
	}
	if len(d.Root.Elems()) != 500 {
		t.Errorf("parsing stopped: %d elems", len(d.Root.Elems()))
	}
	checkInvariants(t, d)
}

func TestLargeObjectDuplicates(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("{")
	for i := range 200 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k`)
		b.WriteString(strings.Repeat("x", i%100))
		b.WriteString(`": 1`)
	}
	b.WriteString("}")
	d := Parse(b.Bytes())
	// Keys repeat from the 101st member on: 100 duplicates, found through
	// the map once the object has more than duplicateMapAt members.
	if len(d.Errors) != 100 {
		t.Fatalf("%d errors", len(d.Errors))
	}
	for _, e := range d.Errors {
		if !strings.HasPrefix(e.Message, "duplicate key ") {
			t.Fatalf("error %+v", e)
		}
	}
	if len(d.Root.Members()) != 200 {
		t.Errorf("%d members", len(d.Root.Members()))
	}
}

// TestPathologicalInputs checks that deep nesting and garbage return (no
// timing assertions: a hang or stack overflow is the failure).
func TestPathologicalInputs(t *testing.T) {
	const deep = 100000
	inputs := map[string][]byte{
		"deep arrays":  bytes.Repeat([]byte("["), deep),
		"deep objects": bytes.Repeat([]byte(`{"a":`), deep),
		"deep closed":  append(bytes.Repeat([]byte("["), deep), bytes.Repeat([]byte("]"), deep)...),
		"random bytes": randomBytes(5<<20, 1),
	}
	for name, src := range inputs {
		t.Run(name, func(t *testing.T) {
			d := Parse(src)
			if len(d.Errors) == 0 {
				t.Fatal("no errors recorded")
			}
			if len(d.Errors) > maxErrors+1 {
				t.Fatalf("%d errors", len(d.Errors))
			}
			checkInvariants(t, d)
		})
	}
	d := Parse(inputs["deep closed"])
	if got := errorList(d); !reflect.DeepEqual(got, []string{"1000:199000 nesting deeper than 1000 levels"}) {
		t.Errorf("deep closed errors %q", got)
	}
	if !d.Root.Closed || d.Root.End() != 2*deep {
		t.Errorf("root %+v", d.Root)
	}
}

// randomBytes is a deterministic pseudo-random byte stream (xorshift).
func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	x := seed*0x9E3779B97F4A7C15 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x >> 24)
	}
	return b
}

func TestNestingAtTheLimit(t *testing.T) {
	ok := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	if d := Parse([]byte(ok)); len(d.Errors) != 0 {
		t.Errorf("depth %d: %v", maxDepth, errorList(d))
	}
	tooDeep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	d := Parse([]byte(tooDeep))
	if got := errorList(d); !reflect.DeepEqual(got, []string{"1000:1002 nesting deeper than 1000 levels"}) {
		t.Errorf("depth %d: %q", maxDepth+1, got)
	}
	// The document after the deep part is still parsed; brackets in
	// strings and comments of the skipped part do not count.
	deepPart := strings.Repeat("[", maxDepth) + `["]", /* ] */ {"a": "}"} // ]` + "\n" + `]` + strings.Repeat("]", maxDepth)
	d = Parse([]byte(`{"deep": ` + deepPart + `, "after": 1}`))
	if d.Root.Get("after") == nil || len(d.Errors) != 1 || d.Errors[0].Message != "nesting deeper than 1000 levels" {
		t.Errorf("after deep part: %v", errorList(d))
	}
}
