package store_test

import (
	"reflect"

	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// sameValue is reflect.DeepEqual, but for syntax tree nodes, which are
// compared by what they say (offsets, kind, value, members, elements):
// a node keeps its contents behind one untyped pointer, which DeepEqual
// compares by address.
func sameValue(a, b any) bool {
	return sameReflect(reflect.ValueOf(a), reflect.ValueOf(b), map[[2]uintptr]bool{})
}

var (
	nodeType     = reflect.TypeFor[jsonc.Node]()
	documentType = reflect.TypeFor[jsonc.Document]()
)

func sameReflect(a, b reflect.Value, seen map[[2]uintptr]bool) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		key := [2]uintptr{a.Pointer(), b.Pointer()}
		if seen[key] {
			return true
		}
		seen[key] = true
		if a.Type().Elem() == nodeType {
			return sameNode(a.Interface().(*jsonc.Node), b.Interface().(*jsonc.Node))
		}
		return sameReflect(a.Elem(), b.Elem(), seen)
	case reflect.Struct:
		if a.Type() == nodeType {
			na, nb := a.Interface().(jsonc.Node), b.Interface().(jsonc.Node)
			return sameNode(&na, &nb)
		}
		for i := range a.NumField() {
			if a.Type() == documentType && !a.Type().Field(i).IsExported() {
				continue // the line index, made on first use
			}
			if !sameReflect(a.Field(i), b.Field(i), seen) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if a.Kind() == reflect.Slice && (a.IsNil() != b.IsNil()) {
			return false
		}
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !sameReflect(a.Index(i), b.Index(i), seen) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			if !sameReflect(a.MapIndex(k), b.MapIndex(k), seen) {
				return false
			}
		}
		return true
	case reflect.Interface:
		return sameReflect(a.Elem(), b.Elem(), seen)
	case reflect.Func:
		return a.IsNil() && b.IsNil()
	}
	switch a.Kind() {
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.String:
		return a.String() == b.String()
	}
	return a.UnsafePointer() == b.UnsafePointer()
}

func sameNode(a, b *jsonc.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Start() != b.Start() || a.End() != b.End() || a.Kind != b.Kind || a.Str() != b.Str() || a.Raw() != b.Raw() ||
		a.Bool != b.Bool || a.Closed != b.Closed || len(a.Members()) != len(b.Members()) || len(a.Elems()) != len(b.Elems()) {
		return false
	}
	for i, m := range a.Members() {
		n := b.Members()[i]
		if m.Key.Str() != n.Key.Str() || m.Key.Start() != n.Key.Start() || m.Key.End() != n.Key.End() ||
			m.Colon() != n.Colon() || m.Key.Closed() != n.Key.Closed() || !sameNode(m.Value, n.Value) {
			return false
		}
	}
	for i, e := range a.Elems() {
		if !sameNode(e, b.Elems()[i]) {
			return false
		}
	}
	return true
}
