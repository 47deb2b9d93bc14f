package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Statuses a stored task may have. Claude Code's "deleted" is an update
// command that removes the file, never a stored status.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
)

// Task is one task as Claude Code stores it in <list dir>/<id>.json.
type Task struct {
	ID, Subject, Description string
	ActiveForm               string         // omitted when ""
	Status                   string         // pending | in_progress | completed
	Owner                    string         // omitted when ""
	Blocks                   []string       // always written ([] when empty)
	BlockedBy                []string       // always written
	Metadata                 map[string]any // omitted when empty
}

// ValidStatus reports whether s may be stored as a task's status.
func ValidStatus(s string) bool {
	return s == StatusPending || s == StatusInProgress || s == StatusCompleted
}

// MarshalJSON writes t compactly, keys in Claude Code's order
// {"id","subject","description","activeForm"?,"status","owner"?,"blocks",
// "blockedBy","metadata"?}, strings escaped as JSON.stringify escapes them.
// (json.Marshal re-escapes <, > and & in the result unless the caller's
// Encoder has SetEscapeHTML(false); Encode is the stored form.)
func (t Task) MarshalJSON() ([]byte, error) {
	e := encoder{}
	if err := e.task(&t); err != nil {
		return nil, err
	}
	return e.b, nil
}

// Encode returns the bytes Claude Code would store for t:
// JSON.stringify(t, null, 2) with its key order, no trailing newline, and
// JSON.stringify's escaping (", \ and control characters only: <, >, &,
// U+2028 and U+2029 stay raw). Metadata object keys come in the order a
// JavaScript object built with them in sorted order keeps: array-index keys
// ("0", "17") first in numeric order, then the others sorted bytewise, so
// the file is a fixed point of Claude Code's read-then-write. An invalid
// status is an error: Claude Code would skip such a file.
func Encode(t Task) ([]byte, error) {
	e := encoder{indent: true, b: make([]byte, 0, 256+len(t.Description)+len(t.Subject))}
	if err := e.task(&t); err != nil {
		return nil, err
	}
	return e.b, nil
}

// Decode parses a stored task the way Claude Code's reader validates it:
// id, subject, description (strings), status (one of the three), blocks and
// blockedBy (arrays of strings) are required; activeForm and owner must be
// strings and metadata an object when present. Unknown keys are dropped.
// Blocks and BlockedBy are never nil in the result.
func Decode(data []byte) (Task, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Task{}, fmt.Errorf("decode task: %w", err)
	}
	if raw == nil {
		return Task{}, fmt.Errorf("decode task: not a JSON object")
	}
	var t Task
	var err error
	get := func(key string, required bool, dst *string) {
		if err != nil {
			return
		}
		v, ok := raw[key]
		if !ok {
			if required {
				err = fmt.Errorf("decode task: missing %q", key)
			}
			return
		}
		if len(v) == 0 || v[0] != '"' {
			err = fmt.Errorf("decode task: %q is not a string", key)
			return
		}
		if e := json.Unmarshal(v, dst); e != nil {
			err = fmt.Errorf("decode task: %q: %w", key, e)
		}
	}
	list := func(key string, dst *[]string) {
		if err != nil {
			return
		}
		v, ok := raw[key]
		if !ok {
			err = fmt.Errorf("decode task: missing %q", key)
			return
		}
		var elems []json.RawMessage
		if len(v) == 0 || v[0] != '[' {
			err = fmt.Errorf("decode task: %q is not an array", key)
			return
		}
		if e := json.Unmarshal(v, &elems); e != nil {
			err = fmt.Errorf("decode task: %q: %w", key, e)
			return
		}
		out := make([]string, len(elems))
		for i, el := range elems {
			if len(el) == 0 || el[0] != '"' {
				err = fmt.Errorf("decode task: %q[%d] is not a string", key, i)
				return
			}
			if e := json.Unmarshal(el, &out[i]); e != nil {
				err = fmt.Errorf("decode task: %q[%d]: %w", key, i, e)
				return
			}
		}
		*dst = out
	}
	get("id", true, &t.ID)
	get("subject", true, &t.Subject)
	get("description", true, &t.Description)
	get("activeForm", false, &t.ActiveForm)
	get("status", true, &t.Status)
	get("owner", false, &t.Owner)
	list("blocks", &t.Blocks)
	list("blockedBy", &t.BlockedBy)
	if err != nil {
		return Task{}, err
	}
	if !ValidStatus(t.Status) {
		return Task{}, fmt.Errorf("decode task: status %q is not pending, in_progress or completed", t.Status)
	}
	if v, ok := raw["metadata"]; ok {
		if len(v) == 0 || v[0] != '{' {
			return Task{}, fmt.Errorf("decode task: %q is not an object", "metadata")
		}
		if err := json.Unmarshal(v, &t.Metadata); err != nil {
			return Task{}, fmt.Errorf("decode task: metadata: %w", err)
		}
	}
	return t, nil
}

// encoder writes JSON as JSON.stringify does: compact, or with indent, two
// spaces per level.
type encoder struct {
	b      []byte
	indent bool
}

func (e *encoder) newline(depth int) {
	if !e.indent {
		return
	}
	e.b = append(e.b, '\n')
	for range depth {
		e.b = append(e.b, ' ', ' ')
	}
}

// key starts member i of an object at depth (the members' depth).
func (e *encoder) key(i, depth int, k string) {
	if i > 0 {
		e.b = append(e.b, ',')
	}
	e.newline(depth)
	e.b = appendString(e.b, k)
	e.b = append(e.b, ':')
	if e.indent {
		e.b = append(e.b, ' ')
	}
}

func (e *encoder) task(t *Task) error {
	if !ValidStatus(t.Status) {
		return fmt.Errorf("encode task %q: status %q is not pending, in_progress or completed", t.ID, t.Status)
	}
	i := 0
	field := func(k, v string) {
		e.key(i, 1, k)
		e.b = appendString(e.b, v)
		i++
	}
	e.b = append(e.b, '{')
	field("id", t.ID)
	field("subject", t.Subject)
	field("description", t.Description)
	if t.ActiveForm != "" {
		field("activeForm", t.ActiveForm)
	}
	field("status", t.Status)
	if t.Owner != "" {
		field("owner", t.Owner)
	}
	e.key(i, 1, "blocks")
	e.strings(t.Blocks, 1)
	i++
	e.key(i, 1, "blockedBy")
	e.strings(t.BlockedBy, 1)
	i++
	if len(t.Metadata) > 0 {
		e.key(i, 1, "metadata")
		if err := e.object(t.Metadata, 1); err != nil {
			return fmt.Errorf("encode task %q: metadata: %w", t.ID, err)
		}
	}
	e.newline(0)
	e.b = append(e.b, '}')
	return nil
}

// strings writes an array of strings at depth (the array's own depth); nil
// is [] (JavaScript has no nil arrays).
func (e *encoder) strings(ss []string, depth int) {
	if len(ss) == 0 {
		e.b = append(e.b, '[', ']')
		return
	}
	e.b = append(e.b, '[')
	for i, s := range ss {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.newline(depth + 1)
		e.b = appendString(e.b, s)
	}
	e.newline(depth)
	e.b = append(e.b, ']')
}

func (e *encoder) object(m map[string]any, depth int) error {
	if len(m) == 0 {
		e.b = append(e.b, '{', '}')
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sortKeysJS(keys)
	e.b = append(e.b, '{')
	for i, k := range keys {
		e.key(i, depth+1, k)
		if err := e.value(m[k], depth+1); err != nil {
			return fmt.Errorf("%q: %w", k, err)
		}
	}
	e.newline(depth)
	e.b = append(e.b, '}')
	return nil
}

func (e *encoder) array(n int, elem func(i int) error, depth int) error {
	if n == 0 {
		e.b = append(e.b, '[', ']')
		return nil
	}
	e.b = append(e.b, '[')
	for i := range n {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.newline(depth + 1)
		if err := elem(i); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
	}
	e.newline(depth)
	e.b = append(e.b, ']')
	return nil
}

// value writes a metadata value. The common shapes (what encoding/json
// decodes into any, plus strings, string maps and integers) are written
// directly; anything else goes through encoding/json and back into any.
// Numbers are written as JavaScript prints the double they parse to.
func (e *encoder) value(v any, depth int) error {
	switch x := v.(type) {
	case nil:
		e.b = append(e.b, "null"...)
	case bool:
		e.b = strconv.AppendBool(e.b, x)
	case string:
		e.b = appendString(e.b, x)
	case float64:
		e.b = appendFloat(e.b, x, 64)
	case float32:
		e.b = appendFloat(e.b, float64(x), 32)
	case int:
		e.b = appendFloat(e.b, float64(x), 64)
	case int64:
		e.b = appendFloat(e.b, float64(x), 64)
	case int32:
		e.b = strconv.AppendInt(e.b, int64(x), 10)
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return fmt.Errorf("invalid number %q", string(x))
		}
		e.b = appendFloat(e.b, f, 64)
	case map[string]any:
		if x == nil {
			e.b = append(e.b, "null"...)
			return nil
		}
		return e.object(x, depth)
	case map[string]string:
		if x == nil {
			e.b = append(e.b, "null"...)
			return nil
		}
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return e.object(m, depth)
	case []any:
		if x == nil {
			e.b = append(e.b, "null"...)
			return nil
		}
		return e.array(len(x), func(i int) error { return e.value(x[i], depth+1) }, depth)
	case []string:
		if x == nil {
			e.b = append(e.b, "null"...)
			return nil
		}
		e.strings(x, depth)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var back any
		if err := d.Decode(&back); err != nil {
			return err
		}
		return e.value(back, depth)
	}
	return nil
}

// sortKeysJS orders object keys as a JavaScript object keeps keys inserted
// in sorted order: array indices (canonical decimal integers below 2^32-1)
// first, numerically, then the rest bytewise.
func sortKeysJS(keys []string) {
	slices.SortFunc(keys, func(a, b string) int {
		ia, aIdx := arrayIndex(a)
		ib, bIdx := arrayIndex(b)
		switch {
		case aIdx && bIdx:
			return cmpU64(ia, ib)
		case aIdx:
			return -1
		case bIdx:
			return 1
		}
		return strings.Compare(a, b)
	})
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// arrayIndex reports whether k is a JavaScript array index: "0", or digits
// without a leading zero, below 2^32-1.
func arrayIndex(k string) (uint64, bool) {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, n < math.MaxUint32
}

// appendFloat writes f as JavaScript's Number#toString does (the algorithm
// encoding/json follows too), except that NaN and ±Inf become null and -0
// becomes 0, as in JSON.stringify.
func appendFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == 0 {
		return append(b, '0')
	}
	abs := math.Abs(f)
	format := byte('f')
	if bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
		bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// 1e-07 → 1e-7, as JavaScript writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as JSON.stringify does: only ", \ and the control
// characters below U+0020 are escaped (\b \f \n \r \t by name, the rest as
// \u00xx in lowercase hex); everything else, U+2028/U+2029 and <, >, &
// included, is written raw. Bytes that are not UTF-8 become U+FFFD, as a
// UTF-8 reader of the file would see them.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
