package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Byte-minimal edits of JSON text: the user's formatting, key order and
// everything not touched stay as they were.

// ReplaceValue returns src with the value node replaced by the JSON text v.
func ReplaceValue(src []byte, n *jsonc.Node, v string) []byte {
	out := make([]byte, 0, len(src)+len(v))
	out = append(out, src[:n.Start]...)
	out = append(out, v...)
	return append(out, src[n.End:]...)
}

// SetString sets the string member key of the top-level object to value:
// only the value's bytes change when the member exists; otherwise the member
// is appended after the last one, in the file's indentation.
func SetString(src []byte, key, value string) ([]byte, error) {
	doc := jsonc.Parse(src)
	if len(doc.Errors) > 0 {
		return nil, fmt.Errorf("fix the JSON first: %s", doc.Errors[0].Message)
	}
	root := doc.Root
	if root == nil || root.Kind != jsonc.Object {
		return nil, fmt.Errorf("top-level value is not an object")
	}
	enc := MarshalString(value)
	if m := root.Member(key); m != nil && m.Value != nil {
		return ReplaceValue(src, m.Value, enc), nil
	}
	return insertMember(src, root, MarshalString(key)+": "+enc), nil
}

// SetStoryString is SetString for a story.json, except that "status" is
// only kept up to date, never added: upstream SAGA's strict story object has
// no status (a story's status is derived from its tasks), and rejects a
// file that carries one it did not write.
func SetStoryString(src []byte, key, value string) ([]byte, error) {
	if key == "status" {
		doc := jsonc.Parse(src)
		if doc.Root == nil || doc.Root.Kind != jsonc.Object || doc.Root.Member(key) == nil {
			return src, nil
		}
	}
	return SetString(src, key, value)
}

// AppendElement appends the JSON text elem to the array at pointer, laid out
// like the array's existing elements.
func AppendElement(src []byte, pointer, elem string) ([]byte, error) {
	doc := jsonc.Parse(src)
	if len(doc.Errors) > 0 {
		return nil, fmt.Errorf("fix the JSON first: %s", doc.Errors[0].Message)
	}
	arr := doc.Pointer(pointer)
	if arr == nil || arr.Kind != jsonc.Array {
		return nil, fmt.Errorf("no array at %s", pointer)
	}
	if len(arr.Elems) == 0 {
		indent := lineIndent(src, arr.Start)
		// "[]" becomes a multi-line array indented one step deeper than its line.
		body := "\n" + indent + "  " + reindent(elem, indent+"  ") + "\n" + indent
		out := append([]byte{}, src[:arr.Start+1]...)
		out = append(out, body...)
		return append(out, src[arr.End-1:]...), nil
	}
	last := arr.Elems[len(arr.Elems)-1]
	sep := ", "
	indent := ""
	if first := arr.Elems[0]; bytes.IndexByte(src[arr.Start:first.Start], '\n') >= 0 {
		indent = lineIndent(src, first.Start)
		sep = ",\n" + indent
	}
	out := append([]byte{}, src[:last.End]...)
	out = append(out, sep...)
	out = append(out, reindent(elem, indent)...)
	return append(out, src[last.End:]...), nil
}

// insertMember adds a member text after the object's last member.
func insertMember(src []byte, obj *jsonc.Node, member string) []byte {
	if len(obj.Members) == 0 {
		indent := lineIndent(src, obj.Start)
		out := append([]byte{}, src[:obj.Start+1]...)
		out = append(out, "\n"+indent+"  "+member+"\n"+indent...)
		return append(out, src[obj.End-1:]...)
	}
	last := obj.Members[len(obj.Members)-1]
	end := last.Key.End
	if last.Value != nil {
		end = last.Value.End
	}
	sep := ", "
	if bytes.IndexByte(src[obj.Start:last.Key.Start], '\n') >= 0 {
		sep = ",\n" + lineIndent(src, last.Key.Start)
	}
	out := append([]byte{}, src[:end]...)
	out = append(out, sep+member...)
	return append(out, src[end:]...)
}

// lineIndent returns the leading white space of the line holding offset.
func lineIndent(src []byte, offset int) string {
	start := bytes.LastIndexByte(src[:offset], '\n') + 1
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}

// reindent prefixes every line of a multi-line JSON text but the first.
func reindent(text, indent string) string {
	return strings.ReplaceAll(text, "\n", "\n"+indent)
}

// MarshalString encodes s as a JSON string without HTML escaping.
func MarshalString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
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
