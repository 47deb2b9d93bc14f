package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/store/jsonc"
)

func newSet(t testing.TB) *Set {
	t.Helper()
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// kindOf guesses the schema of an example file from its path.
func kindOf(path string) Kind {
	switch {
	case strings.HasSuffix(path, "story.json"):
		return Story
	case strings.Contains(path, "/epics/"):
		return Epic
	}
	return Task
}

// corpus: every JSON file of the examples and rule fixtures.
func corpus(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, dir := range []string{"../../examples", "../testdata/rules"} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
				data, _ := os.ReadFile(p)
				out[p] = data
			}
			return nil
		})
	}
	return out
}

// TestQuickAgreesWithJSONSchema: whenever the quick validator accepts a
// document, jsonschema finds nothing; and every valid example is accepted
// quickly (else the fast path is useless).
func TestQuickAgreesWithJSONSchema(t *testing.T) {
	s := newSet(t)
	cases := map[string]struct {
		kind Kind
		doc  string
	}{
		"valid task":           {Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": ["b"]}`},
		"status object":        {Task, `{"id": "a", "subject": "s", "description": "", "status": {}, "blockedBy": []}`},
		"status number":        {Task, `{"id": "a", "subject": "s", "description": "", "status": 1, "blockedBy": []}`},
		"blockedBy duplicate":  {Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": ["b", "b"]}`},
		"blockedBy number":     {Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": [1]}`},
		"empty subject":        {Task, `{"id": "a", "subject": "", "description": "", "status": "pending", "blockedBy": []}`},
		"unknown key":          {Task, `{"id": "a", "subject": "s", "description": "", "status": "pending", "blockedBy": [], "x": 1}`},
		"missing blockedBy":    {Task, `{"id": "a", "subject": "s", "description": "", "status": "pending"}`},
		"bad id":               {Task, `{"id": "A", "subject": "s", "description": "", "status": "pending", "blockedBy": []}`},
		"array root":           {Task, `[]`},
		"valid epic":           {Epic, `{"id": "e", "title": "E", "description": "", "children": [{"id": "e--a", "blockedBy": []}]}`},
		"epic child extra key": {Epic, `{"id": "e", "title": "E", "description": "", "children": [{"id": "e--a", "blockedBy": [], "z": true}]}`},
		"epic child not obj":   {Epic, `{"id": "e", "title": "E", "description": "", "children": ["e--a"]}`},
		"story canonical":      {Story, `{"id": "a--b", "title": "T", "description": ""}`},
		"story bad name":       {Story, `{"id": "a---b", "title": "T", "description": ""}`},
		"story null title":     {Story, `{"id": "a", "title": null, "description": ""}`},
		"emoji title":          {Story, `{"id": "a", "title": "😀", "description": ""}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) { checkAgreement(t, s, c.kind, []byte(c.doc)) })
	}
	for path, data := range corpus(t) {
		doc := jsonc.Parse(data)
		k := kindOf(path)
		checkAgreement(t, s, k, data)
		if len(doc.Errors) == 0 && len(s.Validate(k, doc.Root.Value())) == 0 && !s.Quick(k, doc.Root) {
			t.Errorf("%s: valid, but the quick validator sends it down the slow path", path)
		}
	}
}

func checkAgreement(t *testing.T, s *Set, k Kind, data []byte) {
	t.Helper()
	doc := jsonc.Parse(data)
	if doc.Root == nil {
		return
	}
	quick := s.Quick(k, doc.Root)
	full := s.Validate(k, doc.Root.Value())
	if quick && len(full) > 0 {
		t.Errorf("quick accepted a document jsonschema rejects (%v):\n%s", full, data)
	}
	if !quick && len(full) == 0 && len(doc.Errors) == 0 {
		t.Logf("note: quick rejected a valid document (slow path, still correct): %s", data)
	}
}

// FuzzQuickSound mutates real files: the quick validator must never accept
// what jsonschema rejects.
func FuzzQuickSound(f *testing.F) {
	for path, data := range corpus(f) {
		f.Add(string(kindOf(path)), data)
	}
	s := newSet(f)
	f.Fuzz(func(t *testing.T, kind string, data []byte) {
		k := Kind(kind)
		if k != Task && k != Story && k != Epic {
			k = Task
		}
		doc := jsonc.Parse(data)
		if doc.Root == nil {
			return
		}
		if s.Quick(k, doc.Root) {
			if v := s.Validate(k, doc.Root.Value()); len(v) > 0 {
				t.Fatalf("quick accepted what jsonschema rejects: %v\n%q", v, data)
			}
		}
	})
}
