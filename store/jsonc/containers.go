package jsonc

import (
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// incomplete reports whether a member or element ended in a way that makes
// a following "expected ','" error mere noise: an unterminated string (the
// comma was probably swallowed) or a missing colon or value.
func incomplete(n *Node) bool {
	return n == nil || (n.Kind == String && !n.Closed)
}

func (p *parser) parseObject(depth int) *Node {
	src := p.src
	obj := p.newNode(Object, p.pos)
	obj.Closed = false
	p.pos++
	p.openObjects++
	mark := len(p.members)
	expectMember := true
	comma := -1         // offset of the comma after the last member, for "trailing comma"
	quietComma := false // the previous member was incomplete or junk was skipped: a missing comma is noise
	var seen map[string]struct{}
loop:
	for {
		p.skipSpace()
		if p.pos >= len(src) {
			if !p.unclosedAtEOF {
				p.unclosedAtEOF = true
				p.errorAt(len(src), len(src), msgCloseObject)
			}
			obj.end = int32(len(src))
			break
		}
		switch c := src[p.pos]; c {
		case '}':
			if comma >= 0 {
				p.errorAt(comma, comma+1, msgTrailingComma)
			}
			p.pos++
			obj.Closed = true
			obj.end = int32(p.pos)
			break loop
		case ']':
			if p.openArrays > 0 {
				// Most likely the '}' was forgotten and this closes an
				// enclosing array.
				p.errorAt(p.pos, p.pos+1, msgCloseObject)
				obj.end = int32(p.pos)
				break loop
			}
			p.errorAt(p.pos, p.pos+1, unexpected(c))
			p.pos++
		case ',':
			if expectMember {
				p.errorAt(p.pos, p.pos+1, unexpected(c))
			} else {
				comma = p.pos
				expectMember = true
			}
			p.pos++
		case ':':
			if !expectMember {
				p.errorAt(p.pos, p.pos+1, msgAfterMember)
				p.pos++
				continue
			}
			// A member without a key: skip the colon and its value.
			p.errorAt(p.pos, p.pos+1, msgKey)
			p.pos++
			p.skipSpace()
			p.parseValue(depth + 1)
			expectMember = false
			comma = -1
		case '{', '[':
			// A value where a key should be: skip it whole.
			end := skipNested(src, p.pos)
			p.errorAt(p.pos, end, msgKey)
			p.pos = end
			expectMember = false
			comma = -1
			quietComma = true
		default:
			if c != '"' && !p.keyLike(p.pos) {
				// Garbage, not a key someone forgot to quote: skip it.
				p.parseWord()
				continue
			}
			if !expectMember && !quietComma {
				p.errorAt(p.pos, p.tokenEnd(p.pos), msgComma)
			}
			m := p.parseMember(depth)
			p.checkDuplicate(mark, &m.Key, &seen)
			p.members = append(p.members, m)
			expectMember = false
			comma = -1
			quietComma = m.Key.colon < 0 || incomplete(m.Value)
		}
	}
	if k := len(p.members) - mark; k > 0 {
		var ms []Member
		if p.batch {
			ms = carve(&p.memberSlab, k, memberChunk)
		} else {
			ms = make([]Member, k)
		}
		copy(ms, p.members[mark:])
		obj.kids, obj.nkids = unsafe.Pointer(&ms[0]), int32(k)
		clear(p.members[mark:])
		p.members = p.members[:mark]
	}
	p.openObjects--
	return obj
}

// keyLike reports whether the word at i could be an unquoted key: it
// starts like an identifier, a number or a single-quoted string.
func (p *parser) keyLike(i int) bool {
	c := p.src[i]
	if c < utf8.RuneSelf {
		return c == '_' || c == '$' || c == '\'' || c == '-' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')
	}
	r, _ := utf8.DecodeRune(p.src[i:])
	return unicode.IsLetter(r)
}

// parseMember parses a key (quoted or not), the colon and the value.
func (p *parser) parseMember(depth int) Member {
	src := p.src
	m := Member{Key: Key{start: int32(p.pos), colon: -1}}
	if src[p.pos] == '"' {
		m.Key.set(p.scanString())
		m.Key.end = int32(p.pos)
	} else {
		start := p.pos
		end := p.wordEnd(start + 1)
		m.Key.end = int32(end)
		m.Key.set(validKey(p.text[start:end]), false)
		p.errorAt(start, end, msgUnquotedKey)
		p.checkUTF8(start, end)
		p.pos = end
	}
	p.skipSpace()
	if p.pos >= len(src) {
		p.errorAt(len(src), len(src), msgColon)
		return m
	}
	if src[p.pos] == ':' {
		m.Key.colon = int32(p.pos)
		p.pos++
		p.skipSpace()
		if p.pos < len(src) && startsValue(src[p.pos]) && lineBreakIn(src[m.Key.colon+1:p.pos]) && p.colonFollows(p.pos) {
			// `"a": ⏎ "b": 1`: the value of "a" is not typed yet and "b"
			// starts the next member. (Only looked for across a line break,
			// so that well-formed values are not scanned twice.)
			p.errorAt(p.pos, p.tokenEnd(p.pos), msgValue)
			return m
		}
		m.Value = p.parseValue(depth + 1)
		if m.Value == nil {
			end := min(p.pos+1, len(src))
			p.errorAt(p.pos, end, msgValue)
		}
		return m
	}
	c := src[p.pos]
	p.errorAt(p.pos, p.tokenEnd(p.pos), msgColon)
	if startsValue(c) && !p.colonFollows(p.pos) {
		m.Value = p.parseValue(depth + 1)
	}
	return m
}

// checkDuplicate reports key if an earlier member of the object being
// parsed (members from mark on) has the same key.
func (p *parser) checkDuplicate(mark int, key *Key, seen *map[string]struct{}) {
	prev := p.members[mark:]
	dup := false
	if len(prev) < duplicateMapAt {
		for i := range prev {
			if prev[i].Key.Str() == key.Str() {
				dup = true
				break
			}
		}
	} else {
		if *seen == nil {
			*seen = make(map[string]struct{}, 2*len(prev))
			for i := range prev {
				(*seen)[prev[i].Key.Str()] = struct{}{}
			}
		}
		_, dup = (*seen)[key.Str()]
		(*seen)[key.Str()] = struct{}{}
	}
	if !dup {
		return
	}
	if p.full() {
		p.errorAt(key.Start(), key.End(), "")
		return
	}
	p.errorAt(key.Start(), key.End(), "duplicate key "+quoteWord(key.Str()))
}

func (p *parser) parseArray(depth int) *Node {
	src := p.src
	arr := p.newNode(Array, p.pos)
	arr.Closed = false
	p.pos++
	p.openArrays++
	mark := len(p.elems)
	expectElem := true
	comma := -1
	quietComma := false
loop:
	for {
		p.skipSpace()
		if p.pos >= len(src) {
			if !p.unclosedAtEOF {
				p.unclosedAtEOF = true
				p.errorAt(len(src), len(src), msgCloseArray)
			}
			arr.end = int32(len(src))
			break
		}
		switch c := src[p.pos]; c {
		case ']':
			if comma >= 0 {
				p.errorAt(comma, comma+1, msgTrailingComma)
			}
			p.pos++
			arr.Closed = true
			arr.end = int32(p.pos)
			break loop
		case '}':
			if p.openObjects > 0 {
				p.errorAt(p.pos, p.pos+1, msgCloseArray)
				arr.end = int32(p.pos)
				break loop
			}
			p.errorAt(p.pos, p.pos+1, unexpected(c))
			p.pos++
		case ',':
			if expectElem {
				p.errorAt(p.pos, p.pos+1, msgValue)
			} else {
				comma = p.pos
				expectElem = true
			}
			p.pos++
		case ':':
			if expectElem {
				p.errorAt(p.pos, p.pos+1, unexpected(c))
			} else {
				p.errorAt(p.pos, p.pos+1, msgAfterElem)
			}
			p.pos++
		default:
			if !expectElem && !quietComma {
				p.errorAt(p.pos, p.tokenEnd(p.pos), msgComma)
			}
			v := p.parseValue(depth + 1) // not nil: c starts a value
			p.elems = append(p.elems, v)
			expectElem = false
			comma = -1
			quietComma = incomplete(v)
		}
	}
	if k := len(p.elems) - mark; k > 0 {
		var es []*Node
		if p.batch {
			es = carve(&p.elemSlab, k, elemChunk)
		} else {
			es = make([]*Node, k)
		}
		copy(es, p.elems[mark:])
		arr.kids, arr.nkids = unsafe.Pointer(&es[0]), int32(k)
		clear(p.elems[mark:])
		p.elems = p.elems[:mark]
	}
	p.openArrays--
	return arr
}
