package schema

import (
	"fmt"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// TestUniqueItemsLongList: uniqueness over a 60,000-entry blockedBy finds
// exactly the duplicates, each against its first occurrence (the check is
// one map lookup per element; a pairwise check took seconds here — the
// timing is BenchmarkHugeBlockedBy in package bench).
func TestUniqueItemsLongList(t *testing.T) {
	s := newSet(t)
	const n = 60000
	var b strings.Builder
	b.WriteString(`{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": [`)
	for i := range n {
		fmt.Fprintf(&b, `"t-%05d", `, i)
	}
	b.WriteString(`"t-00017", "t-59999"]}`)
	doc := jsonc.Parse([]byte(b.String()))
	var got []string
	for _, v := range s.Validate(Task, doc.Root) {
		got = append(got, v.Keyword+": "+v.Message)
	}
	want := []string{"uniqueItems: items at 17 and 60000 are equal", "uniqueItems: items at 59999 and 60001 are equal"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("violations = %q, want %q", got, want)
	}
}

// TestValueKey: equal exactly when JSON Schema says so, with keys and
// in a short list.
func TestValueKey(t *testing.T) {
	cases := []struct {
		a, b  string
		equal bool
	}{
		{`"x"`, `"x"`, true},
		{`"x"`, `"y"`, false},
		{`1`, `1.0`, true},
		{`0`, `-0`, true},
		{`1`, `"1"`, false},
		{`true`, `true`, true},
		{`true`, `false`, false},
		{`null`, `null`, true},
		{`null`, `"null"`, false},
		{`{"a": 1, "b": [2]}`, `{"b": [2], "a": 1}`, true},
		{`{"a": 1}`, `{"a": 2}`, false},
		{`[1, 2]`, `[2, 1]`, false},
		{`["s"]`, `"s"`, false},
		{`1e999`, `1e999`, false}, // out of float64's range: equal to nothing
	}
	for _, c := range cases {
		ka, oka := valueKey(jsonc.Parse([]byte(c.a)).Root)
		kb, okb := valueKey(jsonc.Parse([]byte(c.b)).Root)
		if got := oka && okb && ka == kb; got != c.equal {
			t.Errorf("%s vs %s: equal = %v, want %v", c.a, c.b, got, c.equal)
		}
		// A short list compares items without keys, to the same result.
		a, b := jsonc.Parse([]byte(c.a)).Root, jsonc.Parse([]byte(c.b)).Root
		if got := firstEqual([]*jsonc.Node{b}, a) == 0; got != c.equal {
			t.Errorf("%s vs %s in a short list: equal = %v, want %v", c.a, c.b, got, c.equal)
		}
	}
}
