package schema

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Quick validation: most files are valid, and converting every syntax tree
// to Go values for the jsonschema library costs more than parsing it. So a
// small interpreter of the keywords our schemas use walks the tree directly;
// only documents it rejects go through jsonschema, which then produces the
// authoritative findings. Both are driven by the same embedded schema text,
// and a differential test (quick_test.go) checks they agree on validity.

// rule is a compiled schema node, limited to the keywords our schemas use.
type rule struct {
	types      []string // "object", "array", "string"
	required   []string
	properties map[string]*rule
	closed     bool // additionalProperties: false
	enum       []string
	pattern    *regexp.Regexp
	minLength  int
	items      *rule
	unique     bool
}

// knownKeywords are the keywords compileRule understands; anything else in a
// schema makes New fail, so the quick path can never silently ignore one.
var knownKeywords = []string{"$schema", "$id", "$defs", "$ref", "title", "description", "type", "required",
	"properties", "additionalProperties", "enum", "pattern", "minLength", "items", "uniqueItems"}

func compileRule(root, node map[string]any) (*rule, error) {
	node = deref(root, node)
	if node == nil {
		return nil, fmt.Errorf("unresolvable $ref")
	}
	for k := range node {
		if !slices.Contains(knownKeywords, k) {
			return nil, fmt.Errorf("keyword %q is not supported by the quick validator", k)
		}
	}
	r := &rule{}
	switch t := node["type"].(type) {
	case string:
		r.types = []string{t}
	case []any:
		for _, v := range t {
			r.types = append(r.types, v.(string))
		}
	}
	for _, v := range asSlice(node["required"]) {
		r.required = append(r.required, v.(string))
	}
	if props, ok := node["properties"].(map[string]any); ok {
		r.properties = map[string]*rule{}
		for name, p := range props {
			sub, err := compileRule(root, p.(map[string]any))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			r.properties[name] = sub
		}
	}
	if ap, ok := node["additionalProperties"].(bool); ok && !ap {
		r.closed = true
	}
	for _, v := range asSlice(node["enum"]) {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("non-string enum value %v", v)
		}
		r.enum = append(r.enum, s)
	}
	if p, ok := node["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, err
		}
		r.pattern = re
	}
	if n, ok := node["minLength"]; ok {
		f, err := strconv.Atoi(fmt.Sprint(n))
		if err != nil {
			return nil, fmt.Errorf("minLength %v", n)
		}
		r.minLength = f
	}
	if items, ok := node["items"].(map[string]any); ok {
		sub, err := compileRule(root, items)
		if err != nil {
			return nil, fmt.Errorf("items: %w", err)
		}
		r.items = sub
	}
	r.unique, _ = node["uniqueItems"].(bool)
	return r, nil
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// Quick reports whether the document tree certainly satisfies the schema of
// kind k. A false answer means "run Validate": it is never used to report.
func (s *Set) Quick(k Kind, n *jsonc.Node) bool {
	r := s.quick[k]
	return r != nil && r.accepts(n)
}

func (r *rule) accepts(n *jsonc.Node) bool {
	if n == nil {
		return false
	}
	switch n.Kind {
	case jsonc.Object:
		if !r.allows("object") || r.enum != nil {
			return false
		}
		for _, m := range n.Members {
			if m.Value == nil {
				return false
			}
			sub := r.properties[m.Key.Str]
			if sub == nil {
				if r.closed {
					return false
				}
				continue
			}
			if !sub.accepts(m.Value) {
				return false
			}
		}
		for _, req := range r.required {
			if n.Member(req) == nil {
				return false
			}
		}
		return true
	case jsonc.Array:
		if !r.allows("array") || r.enum != nil {
			return false
		}
		for i, e := range n.Elems {
			if r.items != nil && !r.items.accepts(e) {
				return false
			}
			if r.unique {
				for _, prev := range n.Elems[:i] {
					if !distinctScalars(prev, e) {
						return false
					}
				}
			}
		}
		return true
	case jsonc.String:
		if len(r.types) > 0 && !r.allows("string") {
			return false
		}
		if r.enum != nil && !slices.Contains(r.enum, n.Str) {
			return false
		}
		if r.minLength > 0 && len([]rune(n.Str)) < r.minLength {
			return false
		}
		return r.pattern == nil || r.pattern.MatchString(n.Str)
	default:
		// Numbers, booleans and null appear nowhere in our schemas: anything
		// else is for the full validator to judge.
		return false
	}
}

func (r *rule) allows(t string) bool {
	return len(r.types) == 0 || slices.Contains(r.types, t)
}

// distinctScalars tells two array elements apart when both are strings;
// anything else is left to the full validator.
func distinctScalars(a, b *jsonc.Node) bool {
	return a.Kind == jsonc.String && b.Kind == jsonc.String && a.Str != b.Str
}
