package jsonc

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

const (
	maxDepth  = 1000          // containers nested deeper than this are skipped, not parsed
	maxErrors = 100           // errors kept per document; a binary file must not yield millions
	maxSize   = math.MaxInt32 // bytes parsed per document: a Key's offsets are 32 bits

	// duplicateMapAt is the member count from which duplicate keys are found
	// with a map instead of a linear scan, keeping huge objects O(n).
	duplicateMapAt = 32

	lsb = 0x0101010101010101 // for SWAR: one in each byte
	msb = 0x8080808080808080 // for SWAR: the high bit of each byte
)

// Error messages, kept together so their wording stays consistent.
const (
	msgEmpty         = "empty document"
	msgTrailingData  = "trailing data after the top-level value"
	msgTooDeep       = "nesting deeper than 1000 levels"
	msgTooMany       = "too many errors"
	msgTooLarge      = "document over 2 GiB: the rest is not parsed"
	msgComment       = "comments are not allowed in JSON"
	msgOpenComment   = "unterminated comment"
	msgOpenString    = "unterminated string"
	msgControl       = "control character in string"
	msgBadUTF8       = "invalid UTF-8"
	msgBadEscape     = "invalid escape"
	msgBadUnicode    = "invalid unicode escape"
	msgBadNumber     = "invalid number"
	msgComma         = "expected ','"
	msgColon         = "expected ':'"
	msgValue         = "expected value"
	msgKey           = "expected key"
	msgUnquotedKey   = "object keys must be double-quoted"
	msgTrailingComma = "trailing comma"
	msgCloseObject   = "expected '}'"
	msgCloseArray    = "expected ']'"
	msgAfterMember   = "expected ',' or '}' after object member"
	msgAfterElem     = "expected ',' or ']' after array element"
)

// Parse parses src into a syntax tree. It never fails: problems are
// recorded in Document.Errors and the tree holds whatever was recovered.
//
// The Document keeps src (not a copy). Strings in the tree do not alias src
// but share one copy of it, so a single kept string keeps that copy alive:
// use strings.Clone for strings that outlive the Document in a cache.
func Parse(src []byte) *Document {
	var p parser
	return p.parse(src, string(src))
}

// ParseOwned is Parse for a caller that hands src over: src must never be
// modified afterwards, because the tree's strings alias it instead of a
// copy. Loading a workspace reads each file into a fresh buffer and keeps it
// unchanged, so it saves a copy of every file.
func ParseOwned(src []byte) *Document {
	var p parser
	return p.parse(src, unsafe.String(unsafe.SliceData(src), len(src)))
}

// A Batch parses many documents in turn, as ParseOwned does, for a caller
// that keeps them all, such as the load of a workspace. It reuses its
// scratch space from one document to the next and hands out every
// document's nodes, member lists and element lists from shared chunks, so
// nothing is sized by an estimate or rounded up per document: at 88,000
// files that is tens of megabytes. A chunk stays alive while any document
// carved from it does, so documents that are soon replaced should not come
// from a Batch. A Batch is used by one goroutine at a time; its zero value
// is ready.
type Batch struct {
	p parser
}

// ParseOwned parses src, which the caller hands over (see the function
// ParseOwned).
func (b *Batch) ParseOwned(src []byte) *Document {
	p := &b.p
	p.batch = true
	doc := p.parse(src, unsafe.String(unsafe.SliceData(src), len(src)))
	p.src, p.text = nil, ""
	return doc
}

// Chunk sizes of a Batch: 1,024 nodes are 26 whole pages.
const (
	nodeChunk   = 1024
	memberChunk = 2048
	elemChunk   = 4096
	docChunk    = 256
)

// docHolder is a document and its line index, allocated together.
type docHolder struct {
	doc   Document
	lines LineIndex
}

func (p *parser) parse(src []byte, text string) *Document {
	var holder *docHolder
	if p.batch {
		holder = &carve(&p.docs, 1, docChunk)[0]
	} else {
		holder = &docHolder{}
	}
	holder.lines.src = src
	doc := &holder.doc
	doc.Src = src
	doc.Lines = &holder.lines

	p.src, p.text, p.pos = src, text, 0
	p.errs, p.dropped, p.droppedAt = nil, false, 0
	limit := cmp.Or(p.maxSize, maxSize)
	if len(src) > limit {
		p.src, p.text = src[:limit], text[:limit]
	}
	p.openObjects, p.openArrays, p.unclosedAtEOF = 0, 0, false
	if p.members == nil {
		p.members = make([]Member, 0, 16)
		p.elems = make([]*Node, 0, 8)
	}
	if !p.batch {
		// One node per string that is not a key (a colon follows each
		// key), object and array, plus a few for other literals: counted
		// with memchr-speed scans, so the slab of a document wastes little;
		// small chunks are added when literals (or colons inside strings)
		// make it fall short.
		strs := bytes.Count(src, []byte{'"'})/2 - bytes.Count(src, []byte{':'})
		est := max(strs, 0) + bytes.Count(src, []byte{'{'}) + bytes.Count(src, []byte{'['}) + 1
		p.nodes = make([]Node, 0, min(est, 4096))
	}
	doc.Root = p.parseDocument()
	if len(src) > limit {
		p.errorAt(limit, len(src), msgTooLarge)
	}
	doc.Errors = p.finishErrors()
	return doc
}

// carve hands out n zeroed elements from the chunk *slab, starting a new
// chunk of size elements when it is full; n larger than a quarter chunk
// gets its own allocation, so a chunk's tail wastes little. The result's
// capacity is n: appending to it never writes into the chunk.
func carve[T any](slab *[]T, n, size int) []T {
	if n > size/4 {
		return make([]T, n)
	}
	s := *slab
	if len(s)+n > cap(s) {
		s = make([]T, 0, size)
	}
	*slab = s[:len(s)+n]
	return s[len(s) : len(s)+n : len(s)+n]
}

type parser struct {
	src []byte
	// text is src as one string: unescaped strings and number literals are
	// substrings of it, so the whole document costs one string allocation.
	text string
	pos  int

	errs      []Error
	dropped   bool // more than maxErrors errors were found
	droppedAt int  // Start of the first error not kept

	// Open containers, to decide whether a closing bracket of the other kind
	// closes an enclosing container or is a stray.
	openObjects, openArrays int
	unclosedAtEOF           bool // reported once, not once per open level

	maxSize int // bytes parsed; 0 is maxSize (tests lower it)

	// batch: the parser belongs to a Batch; nodes, member and element lists
	// and documents come from the chunks below, kept between documents.
	batch bool
	nodes []Node // current slab: nodes are handed out from chunks, not allocated one by one
	// Chunks of a Batch.
	memberSlab []Member
	elemSlab   []*Node
	docs       []docHolder

	members []Member // scratch stack of members of the objects being parsed
	elems   []*Node  // scratch stack of elements of the arrays being parsed
	buf     []byte   // scratch for decoding strings with escapes
}

func (p *parser) parseDocument() *Node {
	src := p.src
	if bytes.HasPrefix(src, []byte("\xEF\xBB\xBF")) {
		p.pos = 3
	}
	strayStart, strayEnd := -1, -1
	for {
		p.skipSpace()
		if p.pos >= len(src) {
			break
		}
		c := src[p.pos]
		if c == '}' || c == ']' || c == ',' || c == ':' {
			if strayStart < 0 {
				strayStart = p.pos
			}
			p.errorAt(p.pos, p.pos+1, unexpected(c))
			p.pos++
			strayEnd = p.pos
			continue
		}
		root := p.parseValue(1)
		p.skipSpace()
		if p.pos < len(src) {
			end := len(src)
			for end > p.pos && isSpace(src[end-1]) {
				end--
			}
			p.errorAt(p.pos, end, msgTrailingData)
		}
		return root
	}
	if strayStart >= 0 {
		n := p.newNode(Invalid, strayStart)
		n.End = strayEnd
		return n
	}
	p.errorAt(0, 0, msgEmpty)
	return nil
}

// finishErrors sorts the errors (a few are recorded after errors inside the
// token they cover) and appends the "too many errors" marker.
func (p *parser) finishErrors() []Error {
	errs := p.errs
	slices.SortStableFunc(errs, func(a, b Error) int { return a.Start - b.Start })
	if p.dropped {
		at := p.droppedAt
		if len(errs) > 0 && errs[len(errs)-1].Start > at {
			at = errs[len(errs)-1].Start
		}
		errs = append(errs, Error{Start: at, End: at, Message: msgTooMany})
	}
	return errs
}

func (p *parser) full() bool { return len(p.errs) >= maxErrors }

func (p *parser) errorAt(start, end int, msg string) {
	if p.full() {
		if !p.dropped {
			p.dropped = true
			p.droppedAt = start
		}
		return
	}
	p.errs = append(p.errs, Error{Start: start, End: end, Message: msg})
}

func (p *parser) newNode(k Kind, start int) *Node {
	var n *Node
	if p.batch {
		n = &carve(&p.nodes, 1, nodeChunk)[0]
	} else {
		if len(p.nodes) == cap(p.nodes) {
			// Earlier chunks stay alive through the pointers handed out.
			p.nodes = make([]Node, 0, min(max(cap(p.nodes)/2, 8), 4096))
		}
		p.nodes = p.nodes[:len(p.nodes)+1]
		n = &p.nodes[len(p.nodes)-1]
	}
	n.Kind = k
	n.Start = start
	n.Closed = true
	return n
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// skipSpace skips whitespace and comments, reporting the comments.
func (p *parser) skipSpace() {
	src := p.src
	i := p.pos
	for i < len(src) {
		c := src[i]
		if c == ' ' || c == '\n' || c == '\r' || c == '\t' {
			i++
			continue
		}
		if c == '/' && i+1 < len(src) && (src[i+1] == '/' || src[i+1] == '*') {
			i = p.skipComment(i)
			continue
		}
		break
	}
	p.pos = i
}

func (p *parser) skipComment(i int) int {
	src := p.src
	if src[i+1] == '/' {
		end := i + 2
		for end < len(src) && src[end] != '\n' && src[end] != '\r' {
			end++
		}
		p.errorAt(i, end, msgComment)
		return end
	}
	j := bytes.Index(src[i+2:], []byte("*/"))
	if j < 0 {
		p.errorAt(i, len(src), msgOpenComment)
		return len(src)
	}
	end := i + 2 + j + 2
	p.errorAt(i, end, msgComment)
	return end
}

// isDelim reports whether the byte at i ends a bare word or number.
func (p *parser) isDelim(i int) bool {
	switch p.src[i] {
	case ' ', '\n', '\r', '\t', '{', '}', '[', ']', ',', ':', '"':
		return true
	case '/':
		return i+1 < len(p.src) && (p.src[i+1] == '/' || p.src[i+1] == '*')
	}
	return false
}

func (p *parser) wordEnd(i int) int {
	for i < len(p.src) && !p.isDelim(i) {
		i++
	}
	return i
}

// tokenEnd returns the end of the token at i, for error ranges.
func (p *parser) tokenEnd(i int) int {
	src := p.src
	switch src[i] {
	case '"':
		return stringEnd(src, i)
	case '{', '}', '[', ']', ',', ':':
		return i + 1
	}
	return p.wordEnd(i + 1)
}

// stringEnd returns the end of the string starting at the quote at i: past
// the closing quote, or at the end of the line or input when unterminated.
func stringEnd(src []byte, i int) int {
	for i++; i < len(src); i++ {
		switch src[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 < len(src) && src[i+1] != '\n' && src[i+1] != '\r' {
				i++
			}
		case '\n', '\r':
			return i
		}
	}
	return len(src)
}

// colonFollows reports whether the string or word at i is followed by ':',
// i.e. it is the key of a new member rather than a value.
func (p *parser) colonFollows(i int) bool {
	src := p.src
	if src[i] == '{' || src[i] == '[' {
		return false
	}
	j := p.tokenEnd(i)
	for j < len(src) && isSpace(src[j]) {
		j++
	}
	return j < len(src) && src[j] == ':'
}

func lineBreakIn(b []byte) bool {
	return bytes.IndexByte(b, '\n') >= 0 || bytes.IndexByte(b, '\r') >= 0
}

func startsValue(c byte) bool {
	return c != '}' && c != ']' && c != ',' && c != ':'
}

func unexpected(c byte) string {
	switch c {
	case '}':
		return "unexpected '}'"
	case ']':
		return "unexpected ']'"
	case ',':
		return "unexpected ','"
	case ':':
		return "unexpected ':'"
	}
	return "unexpected " + strconv.QuoteRune(rune(c))
}

// parseValue parses the value at p.pos (after whitespace). It returns nil,
// consuming nothing, at EOF or at '}', ']', ',' and ':'; anything else
// yields a node and consumes at least one byte.
func (p *parser) parseValue(depth int) *Node {
	src := p.src
	if p.pos >= len(src) {
		return nil
	}
	switch c := src[p.pos]; c {
	case '"':
		return p.parseString()
	case '{':
		if depth > maxDepth {
			return p.skipDeep()
		}
		return p.parseObject(depth)
	case '[':
		if depth > maxDepth {
			return p.skipDeep()
		}
		return p.parseArray(depth)
	case '}', ']', ',', ':':
		return nil
	case '-', '+', '.', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return p.parseNumber()
	case 't':
		if p.literal("true") {
			n := p.newNode(Bool, p.pos)
			n.Raw, n.Bool = "true", true
			return p.finishLiteral(n, 4)
		}
	case 'f':
		if p.literal("false") {
			n := p.newNode(Bool, p.pos)
			n.Raw = "false"
			return p.finishLiteral(n, 5)
		}
	case 'n':
		if p.literal("null") {
			n := p.newNode(Null, p.pos)
			n.Raw = "null"
			return p.finishLiteral(n, 4)
		}
	}
	return p.parseWord()
}

func (p *parser) literal(s string) bool {
	end := p.pos + len(s)
	return end <= len(p.src) && string(p.src[p.pos:end]) == s && (end == len(p.src) || p.isDelim(end))
}

func (p *parser) finishLiteral(n *Node, size int) *Node {
	p.pos += size
	n.End = p.pos
	return n
}

// skipDeep skips a container nested beyond maxDepth without recursing, and
// returns an Invalid node covering it.
func (p *parser) skipDeep() *Node {
	start := p.pos
	end := skipNested(p.src, start)
	p.errorAt(start, end, msgTooDeep)
	p.pos = end
	n := p.newNode(Invalid, start)
	n.End = end
	return n
}

// skipNested returns the end of the container whose opening bracket is at
// i, counting brackets outside strings and comments (of either kind: it only
// has to be linear and stop somewhere sensible), or len(src).
func skipNested(src []byte, i int) int {
	depth := 0
	for i < len(src) {
		switch src[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '"':
			i = stringEnd(src, i)
			continue
		case '/':
			if i+1 < len(src) && src[i+1] == '/' {
				for i < len(src) && src[i] != '\n' && src[i] != '\r' {
					i++
				}
				continue
			}
			if i+1 < len(src) && src[i+1] == '*' {
				j := bytes.Index(src[i+2:], []byte("*/"))
				if j < 0 {
					return len(src)
				}
				i += 2 + j + 2
				continue
			}
		}
		i++
	}
	return len(src)
}

// parseNumber parses a number, or a word that starts like one ("+1", ".5",
// "01", "1.", "12px"), which is kept as a Number with an error.
func (p *parser) parseNumber() *Node {
	src := p.src
	start := p.pos
	i := start
	ok := true
	if i < len(src) && src[i] == '-' {
		i++
	}
	switch {
	case i < len(src) && src[i] == '0':
		i++
	case i < len(src) && src[i] >= '1' && src[i] <= '9':
		i++
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	default:
		ok = false
	}
	if ok && i < len(src) && src[i] == '.' {
		i++
		if i < len(src) && isDigit(src[i]) {
			for i < len(src) && isDigit(src[i]) {
				i++
			}
		} else {
			ok = false
		}
	}
	if ok && i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if i < len(src) && isDigit(src[i]) {
			for i < len(src) && isDigit(src[i]) {
				i++
			}
		} else {
			ok = false
		}
	}
	if !ok || (i < len(src) && !p.isDelim(i)) {
		ok = false
		i = p.wordEnd(max(i, start+1))
	}
	n := p.newNode(Number, start)
	n.End = i
	n.Raw = p.text[start:i]
	if !ok {
		p.errorAt(start, i, msgBadNumber)
		p.checkUTF8(start, i)
	}
	p.pos = i
	return n
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parseWord turns a bare word or a run of garbage into an Invalid node.
func (p *parser) parseWord() *Node {
	start := p.pos
	end := p.wordEnd(start + 1)
	n := p.newNode(Invalid, start)
	n.End = end
	p.pos = end
	r, size := utf8.DecodeRune(p.src[start:end])
	switch {
	case r == utf8.RuneError && size == 1:
		// Reported by checkUTF8 below.
	case p.full():
		p.errorAt(start, end, "")
	case unicode.IsLetter(r) || r == '_' || r == '$':
		p.errorAt(start, end, "invalid literal "+quoteWord(p.text[start:end]))
	default:
		p.errorAt(start, end, "unexpected character "+strconv.QuoteRune(r))
	}
	p.checkUTF8(start, end)
	return n
}

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
	n.End, n.Str, n.Closed = p.pos, str, closed
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
			obj.End = len(src)
			break
		}
		switch c := src[p.pos]; c {
		case '}':
			if comma >= 0 {
				p.errorAt(comma, comma+1, msgTrailingComma)
			}
			p.pos++
			obj.Closed = true
			obj.End = p.pos
			break loop
		case ']':
			if p.openArrays > 0 {
				// Most likely the '}' was forgotten and this closes an
				// enclosing array.
				p.errorAt(p.pos, p.pos+1, msgCloseObject)
				obj.End = p.pos
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
		obj.members, obj.nmembers = &ms[0], int32(k)
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
		m.Key.Str, m.Key.closed = p.scanString()
		m.Key.end = int32(p.pos)
	} else {
		start := p.pos
		end := p.wordEnd(start + 1)
		m.Key.end = int32(end)
		m.Key.Str = validKey(p.text[start:end])
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
			if prev[i].Key.Str == key.Str {
				dup = true
				break
			}
		}
	} else {
		if *seen == nil {
			*seen = make(map[string]struct{}, 2*len(prev))
			for i := range prev {
				(*seen)[prev[i].Key.Str] = struct{}{}
			}
		}
		_, dup = (*seen)[key.Str]
		(*seen)[key.Str] = struct{}{}
	}
	if !dup {
		return
	}
	if p.full() {
		p.errorAt(key.Start(), key.End(), "")
		return
	}
	p.errorAt(key.Start(), key.End(), "duplicate key "+quoteWord(key.Str))
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
			arr.End = len(src)
			break
		}
		switch c := src[p.pos]; c {
		case ']':
			if comma >= 0 {
				p.errorAt(comma, comma+1, msgTrailingComma)
			}
			p.pos++
			arr.Closed = true
			arr.End = p.pos
			break loop
		case '}':
			if p.openObjects > 0 {
				p.errorAt(p.pos, p.pos+1, msgCloseArray)
				arr.End = p.pos
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
		if p.batch {
			arr.Elems = carve(&p.elemSlab, k, elemChunk)
		} else {
			arr.Elems = make([]*Node, k)
		}
		copy(arr.Elems, p.elems[mark:])
		clear(p.elems[mark:])
		p.elems = p.elems[:mark]
	}
	p.openArrays--
	return arr
}
