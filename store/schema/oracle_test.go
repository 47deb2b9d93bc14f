package schema

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// The validator is checked against santhosh-tekuri/jsonschema, a complete
// JSON Schema 2020-12 implementation: on every document without syntax
// errors, both must report the same (instance path, keyword, property)
// violations.

// oracle compiles the embedded schemas with jsonschema; compiling also
// validates each schema against the 2020-12 metaschema.
func oracle(t testing.TB) map[Kind]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	out := map[Kind]*jsonschema.Schema{}
	for _, k := range Kinds {
		src, _ := Source(k)
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(src)))
		if err != nil {
			t.Fatal(err)
		}
		url := "mem:///" + string(k) + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			t.Fatalf("schema %s is not valid JSON Schema 2020-12: %v", k, err)
		}
		out[k] = sch
	}
	return out
}

// oracleFindings flattens jsonschema's error tree into comparable keys.
func oracleFindings(sch *jsonschema.Schema, v any) []string {
	err := sch.Validate(v)
	if err == nil {
		return nil
	}
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		path := strings.Join(e.InstanceLocation, "/")
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, p := range k.Missing {
				out = append(out, path+" required "+p)
			}
		case *kind.AdditionalProperties:
			for _, p := range k.Properties {
				out = append(out, path+" additionalProperties "+p)
			}
		default:
			out = append(out, path+" "+e.ErrorKind.KeywordPath()[0]+" ")
		}
	}
	walk(err.(*jsonschema.ValidationError))
	slices.Sort(out)
	return slices.Compact(out)
}

func ourFindings(s *Set, k Kind, root *jsonc.Node) []string {
	var out []string
	for _, v := range s.Validate(k, root) {
		out = append(out, strings.Join(v.Path, "/")+" "+v.Keyword+" "+v.Property)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// comparable: documents both sides see alike (no syntax errors, so the
// tree and its Go value are the same document).
func compare(t *testing.T, s *Set, or map[Kind]*jsonschema.Schema, k Kind, data []byte) {
	t.Helper()
	doc := jsonc.Parse(data)
	if doc.Root == nil || len(doc.Errors) > 0 {
		return
	}
	ours, theirs := ourFindings(s, k, doc.Root), oracleFindings(or[k], doc.Root.Value())
	if !slices.Equal(ours, theirs) {
		t.Errorf("%s document %s:\n ours:     %q\n jsonschema: %q", k, data, ours, theirs)
	}
}

func newSet(t testing.TB) *Set {
	t.Helper()
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func kindOf(path string) Kind {
	switch {
	case strings.HasSuffix(path, "story.json"):
		return Story
	case strings.Contains(path, "/epics/"):
		return Epic
	}
	return Task
}

// corpus is every JSON file of the examples and the test fixtures, those
// inside txtar archives too (named <archive>/<file>).
func corpus(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, dir := range []string{"../../examples", "../testdata/rules", "../../lsp/testdata"} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			switch {
			case err != nil || d.IsDir():
			case strings.HasSuffix(p, ".json"):
				data, _ := os.ReadFile(p)
				out[p] = data
			case strings.HasSuffix(p, ".txtar"):
				for name, data := range testkit.ReadArchive(t, p) {
					if strings.HasSuffix(name, ".json") {
						out[p+"/"+name] = []byte(data)
					}
				}
			}
			return nil
		})
	}
	return out
}

func TestAgreesWithJSONSchema(t *testing.T) {
	s, or := newSet(t), oracle(t)
	cases := []struct {
		kind Kind
		doc  string
	}{
		{Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": ["b"]}`},
		{Task, `{"id": "a", "subject": "s", "description": "", "status": {}, "blockedBy": []}`},
		{Task, `{"id": "a", "subject": "s", "description": "", "status": 1, "blockedBy": []}`},
		{Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": ["b", "b"]}`},
		{Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": [1, {}, {}, "B"]}`},
		{Task, `{"id": "a", "subject": "", "description": "", "status": "pending", "blockedBy": []}`},
		{Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": [], "x": 1, "y": null}`},
		{Task, `{"id": "a", "subject": "s", "description": "", "status": "pending"}`},
		{Task, `{"id": "A", "subject": 2.5, "description": true, "status": "done", "blockedBy": "u", "priority": "urgent"}`},
		{Task, `{}`},
		{Task, `[]`},
		{Task, `"task"`},
		{Task, `null`},
		{Epic, `{"id": "e", "title": "E", "description": "", "children": [{"id": "e--a", "blockedBy": []}]}`},
		{Epic, `{"id": "e", "title": "E", "description": "", "children": [{"id": "e--a", "blockedBy": [], "z": true}, {}]}`},
		{Epic, `{"id": "e", "title": "E", "description": "", "children": ["e--a", 3, null]}`},
		{Epic, `{"id": "e", "title": "E", "description": "", "children": {}}`},
		{Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": [], "checks": ["go test ./...", "", 3, null], "checkTimeout": 0}`},
		{Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": [], "checks": "make", "checkTimeout": -1.5}`},
		{Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": [], "checks": [], "checkTimeout": 600}`},
		{Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": [], "checks": ["x"], "checkTimeout": 0.5}`},
		{Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": [], "checkTimeout": 86401}`},
		{Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": [], "checkTimeout": "60"}`},
		{Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": [], "checkLimits": {"memory": "4GiB", "fileSize": "512MiB", "processes": 64}}`},
		{Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": [], "checkLimits": {"memory": "4GB", "fileSize": 1024, "processes": 0.5, "cpu": 1}}`},
		{Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": [], "checkLimits": {"memory": "0GiB", "processes": 65537}}`},
		{Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": [], "checkLimits": []}`},
		{Story, `{"id": "a--b", "title": "T", "description": ""}`},
		{Story, `{"id": "a---b", "title": "T", "description": "", "epic": "E"}`},
		{Story, `{"id": "a", "title": null, "description": ""}`},
		{Story, `{"id": "a", "title": "😀", "description": "", "status": "completed", "pr": 12}`},
	}
	for _, c := range cases {
		compare(t, s, or, c.kind, []byte(c.doc))
	}
	n := 0
	for path, data := range corpus(t) {
		compare(t, s, or, kindOf(path), data)
		n++
	}
	if n < 50 {
		t.Errorf("corpus too small: %d files", n)
	}
}

// FuzzAgreesWithJSONSchema mutates real files and checks both validators
// still agree.
func FuzzAgreesWithJSONSchema(f *testing.F) {
	for path, data := range corpus(f) {
		f.Add(string(kindOf(path)), data)
	}
	s, or := newSet(f), oracle(f)
	f.Fuzz(func(t *testing.T, k string, data []byte) {
		kind := Kind(k)
		if kind != Task && kind != Story && kind != Epic {
			kind = Task
		}
		compare(t, s, or, kind, data)
	})
}

func TestUnsupportedKeywordRefused(t *testing.T) {
	doc := map[string]any{"type": "object", "maxProperties": 3.0}
	if _, err := compileRule(doc, doc); err == nil || !strings.Contains(err.Error(), "maxProperties") {
		t.Fatalf("compileRule accepted an unsupported keyword: %v", err)
	}
}

func ExampleSet_Validate() {
	s, _ := New()
	doc := jsonc.Parse([]byte(`{"id": "Bad", "subject": "s", "description": "", "status": "done", "blockedBy": []}`))
	for _, v := range s.Validate(Task, doc.Root) {
		fmt.Println(strings.Join(v.Path, "/"), v.Keyword, v.Message)
	}
	// Output:
	// id pattern "Bad" does not match pattern "^[a-z0-9]+(-[a-z0-9]+)*$"
	// status enum expected one of "pending", "in_progress", "completed"
}
