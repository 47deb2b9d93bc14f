package jsonc

import (
	"encoding/binary"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// quoteWord quotes a word for a message, shortened to keep messages short.
func quoteWord(s string) string {
	const maxLen = 24
	if len(s) > maxLen {
		cut := maxLen
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "..."
	}
	return strconv.Quote(s)
}

// checkUTF8 reports each run of invalid UTF-8 in src[start:end].
func (p *parser) checkUTF8(start, end int) {
	src := p.src
	for i := start; i < end; {
		if src[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:end])
		if r != utf8.RuneError || size != 1 {
			i += size
			continue
		}
		j := invalidRunEnd(src[:end], i)
		p.errorAt(i, j, msgBadUTF8)
		i = j
	}
}

// invalidRunEnd returns the end of the run of invalid UTF-8 bytes at i.
func invalidRunEnd(src []byte, i int) int {
	for i++; i < len(src) && src[i] >= utf8.RuneSelf; i++ {
		if r, size := utf8.DecodeRune(src[i:]); r != utf8.RuneError || size != 1 {
			break
		}
	}
	return i
}

// validKey returns s with each invalid UTF-8 byte replaced by U+FFFD, as
// strings are decoded.
func validKey(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		b = utf8.AppendRune(b, r)
		i += size
	}
	return string(b)
}

// parseString parses the string whose opening quote is at p.pos into a
// node.
func (p *parser) parseString() *Node {
	start := p.pos
	str, closed := p.scanString()
	n := p.newNode(String, start)
	n.end, n.Closed = int32(p.pos), closed
	n.setStr(str)
	return n
}

// scanString decodes the string whose opening quote is at p.pos and moves
// past it. The fast path covers strings without escapes, control
// characters or invalid UTF-8.
func (p *parser) scanString() (str string, closed bool) {
	src := p.src
	start := p.pos
	i := start + 1
	// Skip eight plain bytes at a time: no quote, backslash, control
	// character or non-ASCII byte among them.
	for i+8 <= len(src) {
		x := binary.LittleEndian.Uint64(src[i:])
		q := x ^ (lsb * '"')
		b := x ^ (lsb * '\\')
		if ((q-lsb)&^q|(b-lsb)&^b|(x-lsb*0x20)&^x|x)&msb != 0 {
			break
		}
		i += 8
	}
	for i < len(src) {
		c := src[i]
		if c == '"' {
			p.pos = i + 1
			return p.text[start+1 : i], true
		}
		if c == '\\' || c < 0x20 {
			break
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			i += size
			continue
		}
		i++
	}
	return p.scanStringSlow(start, i)
}

// scanStringSlow decodes the rest of a string from i, where the fast path
// stopped. It resolves escapes the way encoding/json does (bad surrogates
// become U+FFFD) and ends the string at the end of the line when the
// closing quote is missing.
func (p *parser) scanStringSlow(start, i int) (str string, closed bool) {
	src := p.src
	buf := append(p.buf[:0], src[start+1:i]...)
loop:
	for i < len(src) {
		c := src[i]
		switch {
		case c == '"':
			closed = true
			i++
			break loop
		case c == '\\':
			if i+1 >= len(src) {
				buf = append(buf, '\\')
				i++
				break loop
			}
			switch e := src[i+1]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
				i += 2
			case 'b':
				buf = append(buf, '\b')
				i += 2
			case 'f':
				buf = append(buf, '\f')
				i += 2
			case 'n':
				buf = append(buf, '\n')
				i += 2
			case 'r':
				buf = append(buf, '\r')
				i += 2
			case 't':
				buf = append(buf, '\t')
				i += 2
			case 'u':
				r, ok := hex4(src, i+2)
				if !ok {
					p.errorAt(i, i+2+hexPrefix(src, i+2), msgBadUnicode)
					buf = append(buf, '\\', 'u')
					i += 2
					continue
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2, ok := rune(-1), false
					if i+1 < len(src) && src[i] == '\\' && src[i+1] == 'u' {
						r2, ok = hex4(src, i+2)
					}
					if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				buf = utf8.AppendRune(buf, r)
			case '\n', '\r':
				// A backslash at the end of the line: the line break below
				// ends the string.
				buf = append(buf, '\\')
				i++
			default:
				_, size := utf8.DecodeRune(src[i+1:])
				p.errorAt(i, i+1+size, msgBadEscape)
				buf = append(buf, '\\')
				i++ // the escaped character is decoded as itself
			}
		case c == '\n' || c == '\r':
			break loop
		case c < 0x20:
			p.errorAt(i, i+1, msgControl)
			buf = append(buf, c)
			i++
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			i++
		default:
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size == 1 {
				j := invalidRunEnd(src, i)
				p.errorAt(i, j, msgBadUTF8)
				for ; i < j; i++ {
					buf = utf8.AppendRune(buf, utf8.RuneError)
				}
				continue
			}
			buf = append(buf, src[i:i+size]...)
			i += size
		}
	}
	if !closed {
		p.errorAt(start, i, msgOpenString)
	}
	p.buf = buf[:0]
	p.pos = i
	return string(buf), closed
}

func hex4(src []byte, i int) (rune, bool) {
	if i+4 > len(src) {
		return 0, false
	}
	var r rune
	for _, c := range src[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// hexPrefix counts the hex digits (at most 4) at i.
func hexPrefix(src []byte, i int) int {
	k := 0
	for k < 4 && i+k < len(src) {
		c := src[i+k]
		if !isDigit(c) && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			break
		}
		k++
	}
	return k
}
