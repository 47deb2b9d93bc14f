// Package schema owns the JSON Schemas (draft 2020-12) of SAGA's story, epic
// and task files: the embedded texts, their validation, and the property
// documentation editors show in hover and completion.
package schema

import (
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/saga-ai/saga-lsp/store/jsonc"
)

//go:embed schemas/*.schema.json
var files embed.FS

// Kind names one of the three file formats.
type Kind string

const (
	Story Kind = "story"
	Epic  Kind = "epic"
	Task  Kind = "task"
)

// Kinds lists every format, in the order help texts show them.
var Kinds = []Kind{Story, Epic, Task}

// Source returns the schema's text, as printed by `saga-lsp schema <kind>`.
func Source(k Kind) ([]byte, error) {
	b, err := files.ReadFile("schemas/" + string(k) + ".schema.json")
	if err != nil {
		return nil, fmt.Errorf("no schema %q (want story, epic or task)", k)
	}
	return b, nil
}

// Set holds the compiled schemas. It is immutable after New and safe for
// concurrent use.
type Set struct {
	raw   map[Kind]map[string]any
	rules map[Kind]*rule
}

// New compiles the embedded schemas.
func New() (*Set, error) {
	s := &Set{raw: map[Kind]map[string]any{}, rules: map[Kind]*rule{}}
	for _, k := range Kinds {
		src, err := Source(k)
		if err != nil {
			return nil, err
		}
		var doc map[string]any
		if err := json.Unmarshal(src, &doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", k, err)
		}
		r, err := compileRule(doc, doc)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", k, err)
		}
		s.raw[k], s.rules[k] = doc, r
	}
	return s, nil
}

// Violation is one schema finding, located by the instance path of the value
// it concerns and by that value's node (no lookup by path: an object with
// 60,000 unknown members must not cost 60,000 scans of its members).
type Violation struct {
	Path     []string    // instance location: object keys and array indexes
	Node     *jsonc.Node // the value at Path
	At       *jsonc.Node // where to report when narrower than Node: an unknown member's key, a repeated item
	Keyword  string      // the failing keyword: required, additionalProperties, pattern, type, enum, …
	Property string      // required/additionalProperties: the property concerned
	Message  string
}

// Property documents one property of an object in a schema.
type Property struct {
	Name        string
	Description string
	Required    bool
	Type        string   // "string", "array", "object", or "" when given by enum
	Enum        []string // allowed values, when the schema lists them
	Default     string   // the schema's default, as JSON ("" when none)
	// ReadOnly: written by saga-lsp, never by hand (the schema's readOnly
	// annotation); completion does not offer it.
	ReadOnly bool
}

// Properties returns the properties allowed in the object at path (instance
// path: keys and array indexes) of a kind's document, sorted required first
// and then by name. It returns nil when path does not lead to an object.
func (s *Set) Properties(k Kind, path []string) []Property {
	node := s.resolve(k, path)
	if node == nil {
		return nil
	}
	props, _ := node["properties"].(map[string]any)
	req := map[string]bool{}
	if r, ok := node["required"].([]any); ok {
		for _, name := range r {
			if n, ok := name.(string); ok {
				req[n] = true
			}
		}
	}
	out := make([]Property, 0, len(props))
	for name, v := range props {
		p, _ := v.(map[string]any)
		out = append(out, describe(name, p, req[name]))
	}
	slices.SortFunc(out, func(a, b Property) int {
		if a.Required != b.Required {
			if a.Required {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// InstancePath is a location's path as Properties and Lookup take it: keys,
// and array indexes as decimal strings.
func InstancePath(path []jsonc.PathElem) []string {
	out := make([]string, len(path))
	for i, e := range path {
		if e.Index >= 0 {
			out[i] = strconv.Itoa(e.Index)
		} else {
			out[i] = e.Key
		}
	}
	return out
}

// Lookup documents the property at path (its last element is the property
// name), or reports false.
func (s *Set) Lookup(k Kind, path []string) (Property, bool) {
	if len(path) == 0 {
		return Property{}, false
	}
	for _, p := range s.Properties(k, path[:len(path)-1]) {
		if p.Name == path[len(path)-1] {
			return p, true
		}
	}
	return Property{}, false
}

func describe(name string, p map[string]any, required bool) Property {
	prop := Property{Name: name, Required: required}
	prop.Description, _ = p["description"].(string)
	prop.ReadOnly, _ = p["readOnly"].(bool)
	prop.Type, _ = p["type"].(string)
	if types, ok := p["type"].([]any); ok { // "boolean | array"
		names := make([]string, 0, len(types))
		for _, t := range types {
			if s, ok := t.(string); ok {
				names = append(names, s)
			}
		}
		prop.Type = strings.Join(names, " | ")
	}
	if d, ok := p["default"]; ok {
		if b, err := json.Marshal(d); err == nil {
			prop.Default = string(b)
		}
	}
	if e, ok := p["enum"].([]any); ok {
		for _, v := range e {
			if s, ok := v.(string); ok {
				prop.Enum = append(prop.Enum, s)
			}
		}
	}
	return prop
}

// resolve walks the raw schema of k along an instance path and returns the
// object schema found there, following "properties", "items" and local $refs.
func (s *Set) resolve(k Kind, path []string) map[string]any {
	root := s.raw[k]
	node := root
	for _, seg := range path {
		node = deref(root, node)
		if node == nil {
			return nil
		}
		if _, err := strconv.Atoi(seg); err == nil {
			if items, ok := node["items"].(map[string]any); ok {
				node = items
				continue
			}
		}
		props, _ := node["properties"].(map[string]any)
		next, _ := props[seg].(map[string]any)
		node = next
	}
	node = deref(root, node)
	if node == nil || node["properties"] == nil {
		return nil
	}
	return node
}

func deref(root, node map[string]any) map[string]any {
	for range 8 { // refs chain at most a few levels; the bound keeps a bad schema from looping
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		if !ok {
			return nil
		}
		defs, _ := root["$defs"].(map[string]any)
		node, _ = defs[name].(map[string]any)
		if node == nil {
			return nil
		}
	}
	return nil
}
