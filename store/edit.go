package store

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Byte-minimal edits of whole files (the span edits are jsonc's): the
// user's formatting, key order and everything not touched stay as they were.

// SetString sets the string member key of the top-level object to value:
// only the value's bytes change when the member exists; otherwise the member
// is appended after the last one, in the file's layout.
func SetString(src []byte, key, value string) ([]byte, error) {
	doc := jsonc.Parse(src)
	if len(doc.Errors) > 0 {
		return nil, fmt.Errorf("fix the JSON first: %s", doc.Errors[0].Message)
	}
	root := doc.Root
	if root == nil || root.Kind != jsonc.Object {
		return nil, fmt.Errorf("top-level value is not an object")
	}
	return jsonc.Apply(src, jsonc.LayoutOf(src, root).SetMember(src, root, key, jsonc.Text(jsonc.Quote(value)))), nil
}

// AppendElement appends v to the array at pointer, encoded and laid out
// like the array's existing elements (one line in a one-line array).
func AppendElement(src []byte, pointer string, v any) ([]byte, error) {
	doc := jsonc.Parse(src)
	if len(doc.Errors) > 0 {
		return nil, fmt.Errorf("fix the JSON first: %s", doc.Errors[0].Message)
	}
	arr := doc.Pointer(pointer)
	if arr == nil || arr.Kind != jsonc.Array {
		return nil, fmt.Errorf("no array at %s", pointer)
	}
	lay := jsonc.LayoutOf(src, doc.Root)
	return jsonc.Apply(src, lay.AppendElement(src, arr, func(pretty bool) string { return lay.Marshal(v, pretty) })), nil
}

// MarshalIndent encodes v as 2-space indented JSON without HTML escaping,
// ending in a newline, as SAGA writes its files.
func MarshalIndent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
