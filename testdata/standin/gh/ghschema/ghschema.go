// Package ghschema is GitHub's published GraphQL schema, vendored at the
// version npm/package-lock.json pins (schema_gen.go), and the two checks
// made against it: a document is one GitHub would accept (Query), and an
// answer has exactly the shape and types its document asks for
// (CheckAnswer). The gh stand-in refuses queries GitHub would refuse with
// it, and the tests of what saga-lsp sends GitHub validate both sides with
// it, offline.
package ghschema

//go:generate go run schema_gen.go

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	_ "github.com/vektah/gqlparser/v2/validator/rules" // the standard validation rules
)

//go:embed schema.graphql
var schemaText string

// Load parses and checks the schema. GitHub's published file defines two
// fields twice, identically (EnterpriseOwnerInfo.repositoryDeployKeySetting
// and …Organizations in 15.26.1), which a strict schema builder refuses;
// the second definition of a name within a type is dropped.
func Load() (*ast.Schema, error) {
	doc, err := parser.ParseSchemas(validator.Prelude, &ast.Source{Name: "schema.graphql", Input: schemaText})
	if err != nil {
		return nil, fmt.Errorf("GitHub's schema: %w", err)
	}
	for _, d := range doc.Definitions {
		seen := map[string]bool{}
		d.Fields = slices.DeleteFunc(d.Fields, func(f *ast.FieldDefinition) bool {
			dup := seen[f.Name]
			seen[f.Name] = true
			return dup
		})
	}
	s, err := validator.ValidateSchemaDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("GitHub's schema: %w", err)
	}
	return s, nil
}

// Query parses a document and validates it against the schema as GitHub
// does, its variables included; it returns the variables coerced to their
// declared types.
func Query(s *ast.Schema, text string, vars map[string]any) (*ast.QueryDocument, map[string]any, error) {
	doc, err := parser.ParseQuery(&ast.Source{Name: "query", Input: text})
	if err != nil {
		return nil, nil, err
	}
	if errs := validator.Validate(s, doc); len(errs) > 0 {
		return nil, nil, errs
	}
	if len(doc.Operations) != 1 {
		return nil, nil, fmt.Errorf("want one operation, got %d", len(doc.Operations))
	}
	coerced, err := validator.VariableValues(s, doc.Operations[0], vars)
	if err != nil {
		return nil, nil, err
	}
	return doc, coerced, nil
}

// Matches reports whether an object of type typ answers a fragment on cond
// (the type itself, or an interface or union it belongs to).
func Matches(s *ast.Schema, typ, cond string) bool {
	if typ == cond {
		return true
	}
	d := s.Types[cond]
	return d != nil && slices.ContainsFunc(s.GetPossibleTypes(d), func(p *ast.Definition) bool { return p.Name == typ })
}

// CheckAnswer checks that answer ({"data": …}) holds exactly the fields
// doc's operation selects, each of its declared type: non-null ones set,
// enums among their values, lists and objects as the selections nest.
func CheckAnswer(s *ast.Schema, doc *ast.QueryDocument, answer []byte) error {
	var a struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		return fmt.Errorf("the answer is not JSON: %w", err)
	}
	if a.Data == nil {
		return errors.New("the answer has no data")
	}
	op := doc.Operations[0]
	root := s.Query
	if op.Operation == ast.Mutation {
		root = s.Mutation
	}
	c := checker{s: s, doc: doc}
	return c.object("data", root, op.SelectionSet, a.Data)
}

type checker struct {
	s   *ast.Schema
	doc *ast.QueryDocument
}

// fields flattens a selection set for an object of type typ (its concrete
// type's name), fragments included when their condition matches.
func (c checker) fields(typ *ast.Definition, set ast.SelectionSet, out map[string]*ast.Field) {
	for _, sel := range set {
		switch x := sel.(type) {
		case *ast.Field:
			out[x.Alias] = x
		case *ast.InlineFragment:
			if x.TypeCondition == "" || Matches(c.s, typ.Name, x.TypeCondition) {
				c.fields(typ, x.SelectionSet, out)
			}
		case *ast.FragmentSpread:
			if f := c.doc.Fragments.ForName(x.Name); f != nil && Matches(c.s, typ.Name, f.TypeCondition) {
				c.fields(typ, f.SelectionSet, out)
			}
		}
	}
}

func (c checker) object(at string, typ *ast.Definition, set ast.SelectionSet, v map[string]any) error {
	if typ.IsAbstractType() {
		name, _ := v["__typename"].(string)
		concrete := c.s.Types[name]
		if concrete == nil || !Matches(c.s, name, typ.Name) {
			return fmt.Errorf("%s: an abstract %s needs its __typename to say which type it is (got %q)", at, typ.Name, name)
		}
		typ = concrete
	}
	want := map[string]*ast.Field{}
	c.fields(typ, set, want)
	for k := range v {
		if want[k] == nil {
			return fmt.Errorf("%s.%s: not asked for", at, k)
		}
	}
	for alias, f := range want {
		val, ok := v[alias]
		if !ok {
			return fmt.Errorf("%s.%s: missing", at, alias)
		}
		if f.Name == "__typename" {
			if val != typ.Name {
				return fmt.Errorf("%s.__typename: %v, want %s", at, val, typ.Name)
			}
			continue
		}
		def := typ.Fields.ForName(f.Name)
		if def == nil {
			return fmt.Errorf("%s.%s: no such field on %s", at, f.Name, typ.Name)
		}
		if err := c.value(at+"."+alias, def.Type, f.SelectionSet, val); err != nil {
			return err
		}
	}
	return nil
}

func (c checker) value(at string, t *ast.Type, set ast.SelectionSet, v any) error {
	if v == nil {
		if t.NonNull {
			return fmt.Errorf("%s: null, but %s is non-null", at, t)
		}
		return nil
	}
	if t.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: want a list (%s), got %T", at, t, v)
		}
		for i, e := range list {
			if err := c.value(fmt.Sprintf("%s[%d]", at, i), t.Elem, set, e); err != nil {
				return err
			}
		}
		return nil
	}
	def := c.s.Types[t.NamedType]
	switch def.Kind {
	case ast.Object, ast.Interface, ast.Union:
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object (%s), got %T", at, t, v)
		}
		return c.object(at, def, set, obj)
	case ast.Enum:
		s, ok := v.(string)
		if !ok || def.EnumValues.ForName(s) == nil {
			return fmt.Errorf("%s: %v is not a value of %s", at, v, def.Name)
		}
	case ast.Scalar:
		switch def.Name {
		case "Int":
			n, ok := v.(float64)
			if !ok || n != math.Trunc(n) || math.Abs(n) > math.MaxInt32 {
				return fmt.Errorf("%s: %v is not an Int", at, v)
			}
		case "Float":
			if _, ok := v.(float64); !ok {
				return fmt.Errorf("%s: %v is not a Float", at, v)
			}
		case "Boolean":
			if _, ok := v.(bool); !ok {
				return fmt.Errorf("%s: %v is not a Boolean", at, v)
			}
		default: // String, ID and GitHub's own scalars (DateTime, URI, …) are strings on the wire
			if _, ok := v.(string); !ok {
				return fmt.Errorf("%s: %v is not a %s", at, v, strings.ToLower(def.Name))
			}
		}
	}
	return nil
}
