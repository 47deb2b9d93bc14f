package agentsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// obj is a JSON object that remembers the order its keys were added in and
// is serialised the way JavaScript's JSON.stringify orders an ordinary
// object's properties: array-index keys ("0", "1", …) first in ascending
// numeric order, then every other key in insertion order. Claude Code is a
// Node program, so this is the order its files and stream lines have.
//
// Values held in an obj (and in the []any slices inside it) are nil, bool,
// float64, int, int64, string, []string, []any or *obj.
type obj struct {
	keys []string
	vals map[string]any
}

// newObj builds an object from key, value pairs.
func newObj(kv ...any) *obj {
	o := &obj{vals: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

func (o *obj) set(k string, v any) {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *obj) get(k string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.vals[k]
	return v, ok
}

func (o *obj) str(k string) string {
	v, _ := o.get(k)
	s, _ := v.(string)
	return s
}

func (o *obj) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, key := range o.keys {
		if key == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

// clone copies the object deeply enough that edits to the copy (set, del,
// nested objects) do not reach the original.
func (o *obj) clone() *obj {
	if o == nil {
		return nil
	}
	c := &obj{keys: append([]string(nil), o.keys...), vals: make(map[string]any, len(o.vals))}
	for k, v := range o.vals {
		c.vals[k] = cloneValue(v)
	}
	return c
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case *obj:
		return x.clone()
	case []any:
		c := make([]any, len(x))
		for i := range x {
			c[i] = cloneValue(x[i])
		}
		return c
	case []string:
		return append([]string(nil), x...)
	}
	return v
}

// order is the property order JSON.stringify uses.
func (o *obj) order() []string {
	var idx, rest []string
	for _, k := range o.keys {
		if isArrayIndex(k) {
			idx = append(idx, k)
		} else {
			rest = append(rest, k)
		}
	}
	if len(idx) == 0 {
		return rest
	}
	sort.Slice(idx, func(i, j int) bool {
		a, _ := strconv.ParseUint(idx[i], 10, 64)
		b, _ := strconv.ParseUint(idx[j], 10, 64)
		return a < b
	})
	return append(idx, rest...)
}

// isArrayIndex reports whether k is a canonical array index (an integer in
// [0, 2^32-2] without leading zeros), which JavaScript enumerates first.
func isArrayIndex(k string) bool {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < '0' || k[i] > '9' {
			return false
		}
	}
	n, err := strconv.ParseUint(k, 10, 64)
	return err == nil && n < math.MaxUint32
}

// MarshalJSON lets an obj sit inside values encoded by encoding/json.
func (o *obj) MarshalJSON() ([]byte, error) { return []byte(stringify(o, "")), nil }

// parseJSON decodes one JSON document, keeping object key order. Numbers
// become float64 (as in JavaScript); duplicate keys keep their first
// position and last value (as JSON.parse does).
func parseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := newObj()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return a, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, err
		}
		return f, nil
	default:
		return t, nil // nil, bool, string
	}
}

// stringify serialises v like JSON.stringify(v, null, indent): indent ""
// gives the compact form.
func stringify(v any, indent string) string {
	var b strings.Builder
	writeValue(&b, v, indent, "")
	return b.String()
}

// writeMembers writes n members between open and close, each on a line of
// its own at cur+indent when indent is set; member(i, inner) writes the i-th.
func writeMembers(b *strings.Builder, open, close byte, n int, indent, cur string, member func(i int, inner string)) {
	b.WriteByte(open)
	if n == 0 {
		b.WriteByte(close)
		return
	}
	inner := cur + indent
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if indent != "" {
			b.WriteByte('\n')
			b.WriteString(inner)
		}
		member(i, inner)
	}
	if indent != "" {
		b.WriteByte('\n')
		b.WriteString(cur)
	}
	b.WriteByte(close)
}

func writeValue(b *strings.Builder, v any, indent, cur string) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case float64:
		b.WriteString(jsNumber(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case string:
		writeString(b, x)
	case []string:
		a := make([]any, len(x))
		for i := range x {
			a[i] = x[i]
		}
		writeValue(b, a, indent, cur)
	case []any:
		writeMembers(b, '[', ']', len(x), indent, cur, func(i int, inner string) { writeValue(b, x[i], indent, inner) })
	case *obj:
		if x == nil {
			b.WriteString("null")
			return
		}
		keys := x.order()
		writeMembers(b, '{', '}', len(keys), indent, cur, func(i int, inner string) {
			writeString(b, keys[i])
			b.WriteByte(':')
			if indent != "" {
				b.WriteByte(' ')
			}
			writeValue(b, x.vals[keys[i]], indent, inner)
		})
	default:
		// Anything else goes through encoding/json (used for small Go
		// structs in stream lines only).
		data, err := json.Marshal(x)
		if err != nil {
			b.WriteString("null")
			return
		}
		b.Write(data)
	}
}

// jsNumber formats f as JavaScript's Number.prototype.toString does.
func jsNumber(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	if f == 0 {
		return "0"
	}
	abs := math.Abs(f)
	if abs >= 1e21 || abs < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		sign, digits := exp[:1], strings.TrimLeft(exp[1:], "0")
		if digits == "" {
			digits = "0"
		}
		return mant + "e" + sign + digits
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// writeString quotes s as JSON.stringify does: only '"', '\\' and control
// characters are escaped; everything else (including '<', '&', U+2028) is
// written as is.
func writeString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				if c < 0x20 {
					b.WriteString(`\u00`)
					b.WriteByte(hex[c>>4])
					b.WriteByte(hex[c&0xf])
				} else {
					b.WriteByte(c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString("\ufffd")
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// truthy is JavaScript's truthiness of a decoded JSON value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && !math.IsNaN(x)
	case int:
		return x != 0
	case string:
		return x != ""
	}
	return true
}
