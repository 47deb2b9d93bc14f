package schema

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// The validator interprets the keywords our schemas use directly over the
// syntax tree, so every finding already knows its source node and nothing is
// converted to Go values. It is our own rather than santhosh-tekuri/jsonschema
// because that library compiles the metaschemas of five drafts in its package
// init — 5 ms at the start of every process that links it, more than the
// whole budget of `saga-lsp hook` (docs/architecture.md). The library remains
// the oracle: the tests check, document by document and under fuzzing, that
// both find the same violations at the same places.

// rule is a compiled schema node.
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
	exclMin    *float64 // exclusiveMinimum
	maximum    *float64
}

// knownKeywords are the keywords compileRule understands; a schema using any
// other makes New fail, so nothing is ever silently ignored.
var knownKeywords = []string{"$schema", "$id", "$defs", "$ref", "title", "description", "default", "type", "required",
	"properties", "additionalProperties", "enum", "pattern", "minLength", "items", "uniqueItems",
	"exclusiveMinimum", "maximum", "readOnly"}

func compileRule(root, node map[string]any) (*rule, error) {
	node = deref(root, node)
	if node == nil {
		return nil, fmt.Errorf("unresolvable $ref")
	}
	for k := range node {
		if !slices.Contains(knownKeywords, k) {
			return nil, fmt.Errorf("keyword %q is not supported by the validator", k)
		}
	}
	r := &rule{}
	switch t := node["type"].(type) {
	case string:
		r.types = []string{t}
	case []any:
		for _, v := range t {
			r.types = append(r.types, fmt.Sprint(v))
		}
	}
	for _, v := range asSlice(node["required"]) {
		r.required = append(r.required, fmt.Sprint(v))
	}
	if props, ok := node["properties"].(map[string]any); ok {
		r.properties = map[string]*rule{}
		for name, p := range props {
			pm, ok := p.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: not a schema", name)
			}
			sub, err := compileRule(root, pm)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			r.properties[name] = sub
		}
	}
	if ap, ok := node["additionalProperties"]; ok {
		if b, isBool := ap.(bool); !isBool || b {
			return nil, fmt.Errorf("only additionalProperties: false is supported")
		}
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
		v, err := strconv.Atoi(fmt.Sprint(n))
		if err != nil {
			return nil, fmt.Errorf("minLength %v", n)
		}
		r.minLength = v
	}
	if items, ok := node["items"].(map[string]any); ok {
		sub, err := compileRule(root, items)
		if err != nil {
			return nil, fmt.Errorf("items: %w", err)
		}
		r.items = sub
	}
	r.unique, _ = node["uniqueItems"].(bool)
	for key, dst := range map[string]**float64{"exclusiveMinimum": &r.exclMin, "maximum": &r.maximum} {
		if v, ok := node[key]; ok {
			f, isNum := v.(float64)
			if !isNum {
				return nil, fmt.Errorf("%s %v is not a number", key, v)
			}
			*dst = &f
		}
	}
	return r, nil
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// Validate checks a document tree against the schema of kind k. Members
// without a value (half-typed documents) are skipped: the parser reports
// them. The result is nil for a valid document, without allocating.
func (s *Set) Validate(k Kind, root *jsonc.Node) []Violation {
	r := s.rules[k]
	if r == nil || root == nil {
		return nil
	}
	var out []Violation
	r.check(root, make([]string, 0, 8), &out)
	return out
}

func (r *rule) check(n *jsonc.Node, path []string, out *[]Violation) {
	if n == nil || n.Kind == jsonc.Invalid {
		return
	}
	got := jsonType(n)
	if len(r.types) > 0 && !slices.Contains(r.types, got) && !(got == "integer" && slices.Contains(r.types, "number")) {
		add(out, n, nil, path, "type", "", fmt.Sprintf("expected %s, got %s", strings.Join(r.types, " or "), got))
		return
	}
	if r.enum != nil && (n.Kind != jsonc.String || !slices.Contains(r.enum, n.Str())) {
		want := make([]string, len(r.enum))
		for i, e := range r.enum {
			want[i] = strconv.Quote(e)
		}
		add(out, n, nil, path, "enum", "", "expected one of "+strings.Join(want, ", "))
	}
	switch n.Kind {
	case jsonc.Number:
		f, err := strconv.ParseFloat(n.Raw(), 64)
		if err != nil {
			break
		}
		if r.exclMin != nil && f <= *r.exclMin {
			add(out, n, nil, path, "exclusiveMinimum", "", "must be greater than "+strconv.FormatFloat(*r.exclMin, 'f', -1, 64))
		}
		if r.maximum != nil && f > *r.maximum {
			add(out, n, nil, path, "maximum", "", "must be at most "+strconv.FormatFloat(*r.maximum, 'f', -1, 64))
		}
	case jsonc.String:
		if r.minLength > 0 && utf8.RuneCountInString(n.Str()) < r.minLength {
			msg := fmt.Sprintf("must be at least %d characters long", r.minLength)
			if r.minLength == 1 {
				msg = "must not be empty"
			}
			add(out, n, nil, path, "minLength", "", msg)
		}
		if r.pattern != nil && !r.pattern.MatchString(n.Str()) {
			add(out, n, nil, path, "pattern", "", fmt.Sprintf("%q does not match pattern %q", n.Str(), r.pattern.String()))
		}
	case jsonc.Object:
		for _, m := range n.Members() {
			if m.Value == nil {
				continue
			}
			if sub := r.properties[m.Key.Str()]; sub != nil {
				sub.check(m.Value, append(path, m.Key.Str()), out)
			} else if r.closed {
				add(out, n, m.Key.Node(), path, "additionalProperties", m.Key.Str(), fmt.Sprintf("unknown property %q", m.Key.Str()))
			}
		}
		for _, req := range r.required {
			if n.Member(req) == nil {
				add(out, n, nil, path, "required", req, fmt.Sprintf("missing required property %q", req))
			}
		}
	case jsonc.Array:
		var first map[string]int // uniqueItems in a long list: each value's first index
		if r.unique && len(n.Elems()) > shortList {
			first = make(map[string]int, len(n.Elems()))
		}
		for i, e := range n.Elems() {
			if r.items != nil {
				r.items.check(e, append(path, strconv.Itoa(i)), out)
			}
			if !r.unique {
				continue
			}
			if first == nil {
				if j := firstEqual(n.Elems()[:i], e); j >= 0 {
					add(out, n, e, path, "uniqueItems", "", fmt.Sprintf("items at %d and %d are equal", j, i))
				}
				continue
			}
			key, ok := valueKey(e)
			if !ok {
				continue
			}
			if j, dup := first[key]; dup {
				add(out, n, e, path, "uniqueItems", "", fmt.Sprintf("items at %d and %d are equal", j, i))
			} else {
				first[key] = i
			}
		}
	}
}

// add records a violation on node n (at: the narrower place to report it)
// with its own copy of the path.
func add(out *[]Violation, n, at *jsonc.Node, path []string, keyword, property, msg string) {
	*out = append(*out, Violation{Path: slices.Clone(path), Node: n, At: at, Keyword: keyword, Property: property, Message: msg})
}

// jsonType names a node's JSON Schema type.
func jsonType(n *jsonc.Node) string {
	switch n.Kind {
	case jsonc.Object:
		return "object"
	case jsonc.Array:
		return "array"
	case jsonc.String:
		return "string"
	case jsonc.Bool:
		return "boolean"
	case jsonc.Null:
		return "null"
	case jsonc.Number:
		if f, err := strconv.ParseFloat(n.Raw(), 64); err == nil && f == float64(int64(f)) {
			return "integer"
		}
		return "number"
	}
	return "invalid"
}

// valueKey is an element's identity for uniqueItems — two elements are
// equal exactly when their keys are — so uniqueness is one map lookup per
// element, never a comparison of every pair (a 60,000-entry blockedBy must
// not cost 1.8 billion comparisons). Scalars compare by value (numbers
// numerically), containers by their decoded values. ok is false for an
// element equal to nothing: a missing or invalid node, or a number out of
// float64's range.
// shortList is the length up to which uniqueItems compares each item with
// the earlier ones instead of keeping a map: a task's blockedBy is short, and
// a workspace has tens of thousands of them.
const shortList = 16

// firstEqual returns the index of the first of items equal to e (as
// valueKey compares them), or -1. Strings, nearly every item, are compared
// without building their keys.
func firstEqual(items []*jsonc.Node, e *jsonc.Node) int {
	key, ok := "", false
	for j, d := range items {
		switch {
		case e == nil || d == nil:
		case e.Kind == jsonc.String && d.Kind == jsonc.String:
			if d.Str() == e.Str() {
				return j
			}
		case e.Kind == jsonc.String || d.Kind == jsonc.String:
		default:
			if !ok {
				if key, ok = valueKey(e); !ok {
					return -1
				}
			}
			if k, ok := valueKey(d); ok && k == key {
				return j
			}
		}
	}
	return -1
}

func valueKey(n *jsonc.Node) (key string, ok bool) {
	if n == nil {
		return "", false
	}
	switch n.Kind {
	case jsonc.String:
		return "s" + n.Str(), true
	case jsonc.Number:
		f, err := strconv.ParseFloat(n.Raw(), 64)
		if err != nil {
			return "", false
		}
		if f == 0 {
			f = 0 // -0 equals 0
		}
		return "n" + strconv.FormatFloat(f, 'g', -1, 64), true
	case jsonc.Bool:
		return "b" + strconv.FormatBool(n.Bool), true
	case jsonc.Null:
		return "z", true
	case jsonc.Object, jsonc.Array:
		// encoding/json sorts map keys: the encoding is canonical.
		b, err := json.Marshal(n.Value())
		if err != nil {
			return "", false
		}
		return "c" + string(b), true
	}
	return "", false
}
