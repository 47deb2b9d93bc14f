package jsonc

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strconv"
	"unicode"
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

func (p *parser) parse(src []byte, text string) *Document {
	var doc *Document
	if p.batch {
		doc = &carve(&p.docs, 1, docChunk)[0]
	} else {
		doc = &Document{}
	}
	doc.Src = src

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
	docs       []Document

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
		n.end = int32(strayEnd)
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
	n.start = int32(start)
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
			n.Bool = true
			return p.finishLiteral(n, 4)
		}
	case 'f':
		if p.literal("false") {
			n := p.newNode(Bool, p.pos)
			return p.finishLiteral(n, 5)
		}
	case 'n':
		if p.literal("null") {
			n := p.newNode(Null, p.pos)
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
	n.end = int32(p.pos)
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
	n.end = int32(end)
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
	n.end = int32(i)
	n.kids, n.nkids = unsafe.Pointer(unsafe.StringData(p.text[start:i])), int32(i-start) // Raw
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
	n.end = int32(end)
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
