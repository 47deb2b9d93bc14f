package chaos

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"unicode/utf8"
)

// EditorPos is the LSP position of a byte offset, as an editor computes
// it: "\n", "\r\n" and "\r" end lines; characters are UTF-16 units, an
// invalid byte one unit.
func EditorPos(text string, off int) (line, char int) {
	for i := 0; i < off; {
		switch {
		case text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n':
			line, char = line+1, 0
			i += 2
		case text[i] == '\n' || text[i] == '\r':
			line, char = line+1, 0
			i++
		default:
			r, size := utf8.DecodeRuneInString(text[i:])
			char++
			if r >= 0x10000 {
				char++
			}
			i += size
		}
	}
	return line, char
}

// Boundary moves off back to a place an editor can address: not inside a
// rune or between the '\r' and '\n' of a line break.
func Boundary(text string, off int) int {
	for off > 0 && off < len(text) && (!utf8.RuneStart(text[off]) || (text[off] == '\n' && text[off-1] == '\r')) {
		off--
	}
	return off
}

// lineEnd is the offset of the end of the line holding off, before its
// line break.
func lineEnd(text string, off int) int {
	for off < len(text) && text[off] != '\n' && text[off] != '\r' {
		off++
	}
	return off
}

var editTexts = []string{"", "x", " ", "\n", "\r\n", "\r", `"`, `{`, `}`, `[`, `],`, `"blockedBy": ["a"]`, "é", "😀", "中文", "\t", `\`, "\u2028"}

// Edit makes one random didChange content change (JSON) for a buffer
// holding text, and returns the text an editor then holds: a range edit, a
// whole-document one, a range given end first, positions past the end of a
// line or of the document (clamped), or an invalid range (refused: the text
// stays; refused is true).
func Edit(r *rand.Rand, text string) (change, next string, refused bool) {
	pos := func(off int) string {
		l, c := EditorPos(text, off)
		return fmt.Sprintf(`{"line":%d,"character":%d}`, l, c)
	}
	a, b := Boundary(text, r.IntN(len(text)+1)), Boundary(text, r.IntN(len(text)+1))
	if a > b {
		a, b = b, a
	}
	if r.IntN(4) == 0 {
		b = Boundary(text, min(len(text), a+r.IntN(4)))
	}
	newText := ""
	for range r.IntN(3) {
		newText += editTexts[r.IntN(len(editTexts))]
	}
	apply := func(a, b int) string { return text[:a] + newText + text[b:] }
	rangeJSON := func(s, e string) string {
		return fmt.Sprintf(`{"range":{"start":%s,"end":%s},"text":%s}`, s, e, quote(newText))
	}
	switch r.IntN(8) {
	case 0: // the whole document
		return fmt.Sprintf(`{"text":%s}`, quote(newText+text)), newText + text, false
	case 1: // end before start: taken in order
		return rangeJSON(pos(b), pos(a)), apply(a, b), false
	case 2: // past the end of the line: clamped to it
		l, c := EditorPos(text, a)
		end := lineEnd(text, a)
		return rangeJSON(fmt.Sprintf(`{"line":%d,"character":%d}`, l, c+500+r.IntN(1<<20)), pos(max(end, b))), apply(end, max(end, b)), false
	case 3: // past the end of the document: clamped to it
		return rangeJSON(pos(a), fmt.Sprintf(`{"line":%d,"character":0}`, 100000+r.IntN(1<<30))), apply(a, len(text)), false
	case 4: // invalid: refused
		bad := []string{`{"line":-1,"character":0}`, `{"line":0,"character":-5}`, `{"line":1.5,"character":0}`,
			`{"line":2147483648,"character":0}`, `{"line":"1","character":0}`, `{"line":0}`, `[0,0]`, `null`, `{"line":1e400,"character":0}`}
		return rangeJSON(pos(a), bad[r.IntN(len(bad))]), text, true
	}
	return rangeJSON(pos(a), pos(b)), apply(a, b), false
}

func quote(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}
