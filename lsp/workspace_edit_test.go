package lsp

import (
	"testing"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
	"github.com/saga-ai/saga-lsp/test/chaos"
)

// TestKeepsSyntaxWindow: checking only the edited stretch of a container
// decides as parsing the whole edited file does, for removals of elements
// and replacements of scalars, keys and separators — good and bad — in
// arrays and objects at every depth.
func TestKeepsSyntaxWindow(t *testing.T) {
	docs := []string{
		`{"id": "a", "blockedBy": ["b", "c", "d"]}`,
		"{\n  \"id\": \"a\",\n  \"blockedBy\": [\n    \"b\",\n    \"c\"\n  ]\n}\n",
		"{\r\n  \"children\": [{\"id\": \"e--a\", \"blockedBy\": [\"e--b\"]}, {\"id\": \"e--b\", \"blockedBy\": []}],\r\n  \"x\": {\"y\": [1, [2, 3], {\"z\": null}]}\r\n}",
		`{"only": ["x"]}`,
		`{"a": [ "x" ], "b": {}}`,
		`[1, 2, 3]`,
	}
	texts := []string{``, `"x"`, `1`, `,`, `]`, `}`, `"k": 1`, `[`, `"a", "b"`, `{}`, `// c`, `"u`, ` `}
	r, _ := chaos.Start(t, 0) // seeded: a failure says how to replay it
	for _, d := range docs {
		doc := jsonc.Parse([]byte(d))
		if len(doc.Errors) > 0 {
			t.Fatalf("fixture %q has errors: %v", d, doc.Errors)
		}
		f := &store.File{Src: doc.Src, Doc: doc}
		var nodes []*jsonc.Node
		var walk func(n *jsonc.Node)
		walk = func(n *jsonc.Node) {
			nodes = append(nodes, n)
			for _, m := range n.Members() {
				nodes = append(nodes, m.Key.Node())
				walk(m.Value)
			}
			for _, e := range n.Elems() {
				walk(e)
			}
		}
		walk(doc.Root)
		check := func(spans []jsonc.Edit) {
			t.Helper()
			after := jsonc.Parse(jsonc.Apply(f.Src, spans...))
			want := len(after.Errors) == 0
			if want != keepsSyntax(f, spans) {
				t.Fatalf("%q with %+v: keepsSyntax = %v, the whole file says %v (%v)", d, spans, !want, want, after.Errors)
			}
		}
		for _, n := range nodes {
			for _, text := range texts {
				check([]jsonc.Edit{{Start: n.Start(), End: n.End(), Text: text}})
			}
			if n.Kind == jsonc.Array {
				for i := range n.Elems() {
					check(jsonc.RemoveElement(f.Src, n, i))
				}
			}
		}
		for range 300 {
			a, b := r.IntN(len(d)+1), r.IntN(len(d)+1)
			check([]jsonc.Edit{{Start: min(a, b), End: max(a, b), Text: texts[r.IntN(len(texts))]}})
		}
	}
}
