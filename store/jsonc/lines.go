package jsonc

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"sort"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// LineIndex converts between byte offsets and LSP positions: 0-based lines
// and 0-based characters counted in UTF-16 code units. "\n", "\r\n" and a
// lone "\r" each end a line. Invalid UTF-8 bytes count one unit each.
//
// A Document makes its index on first use (Document.Lines), and the index
// computes its line starts on first use too, so an index made for a buffer
// that is replaced before any position is asked for costs 40 bytes. A long
// line (a minified file) gets column marks every markStride bytes on first use, so a
// position costs at most markStride bytes of counting, never the whole line:
// placing 60,000 diagnostics on one 600 KB line stays linear. A LineIndex is
// safe for concurrent use.
type LineIndex struct {
	src    []byte
	stride int // bytes between column marks: 0 is markStride, < 0 none (tests compare both)
	table  atomic.Pointer[lineTable]
}

// lineTable is what a LineIndex builds on first use.
type lineTable struct {
	starts []int // byte offset of the start of each line; starts[0] == 0

	mu    sync.Mutex
	marks map[int][]colMark // by line, built on first use of a long line
}

// colMark is the UTF-16 column of a rune boundary in a long line.
type colMark struct{ off, col int }

// markStride is the distance between column marks in long lines.
const markStride = 1024

// Position is an LSP position: 0-based line and UTF-16 character.
type Position struct {
	Line, Character int
}

// NewLineIndex returns the index of src. It keeps src (not a copy).
func NewLineIndex(src []byte) *LineIndex {
	return &LineIndex{src: src}
}

func (li *LineIndex) lineStarts() []int {
	return li.lines().starts
}

// lines returns the table, building it on first use (concurrent first uses
// may each build one; one is kept).
func (li *LineIndex) lines() *lineTable {
	if t := li.table.Load(); t != nil {
		return t
	}
	t := &lineTable{starts: findLineStarts(li.src)}
	if !li.table.CompareAndSwap(nil, t) {
		t = li.table.Load()
	}
	return t
}

// findLineStarts returns the offset of each line's start.
func findLineStarts(src []byte) []int {
	if bytes.IndexByte(src, '\r') < 0 {
		// The common case: memchr-speed scans for '\n' only.
		starts := make([]int, 1, bytes.Count(src, []byte{'\n'})+1)
		for i := 0; ; {
			j := bytes.IndexByte(src[i:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			starts = append(starts, i)
		}
		return starts
	}
	starts := make([]int, 1, bytes.Count(src, []byte{'\n'})+bytes.Count(src, []byte{'\r'})+1)
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(src) && src[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return starts
}

// LineCount returns the number of lines; a final line break starts one more
// (empty) line, as in LSP.
func (li *LineIndex) LineCount() int {
	return len(li.lineStarts())
}

// lineOf returns the line containing offset (binary search).
func lineOf(starts []int, offset int) int {
	lo, hi := 0, len(starts) // starts[lo] <= offset < starts[hi]
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if starts[mid] <= offset {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// Position converts a byte offset to an LSP position. The offset is clamped
// into [0, len(src)]; an offset inside a multi-byte rune counts as that
// rune's start, and an offset between the '\r' and '\n' of a "\r\n" counts
// as the '\r' (LSP cannot address the middle of a line break).
func (li *LineIndex) Position(offset int) Position {
	starts := li.lineStarts()
	src := li.src
	offset = min(max(offset, 0), len(src))
	if offset > 0 && offset < len(src) && src[offset] == '\n' && src[offset-1] == '\r' {
		offset--
	}
	line := lineOf(starts, offset)
	start, end := li.lineBody(line)
	from, col := start, 0
	if ms := li.lineMarks(line, start, end); len(ms) > 0 {
		// The last mark at or before offset.
		if k := sort.Search(len(ms), func(k int) bool { return ms[k].off > offset }); k > 0 {
			from, col = ms[k-1].off, ms[k-1].col
		}
	}
	return Position{Line: line, Character: col + utf16Column(src, from, offset)}
}

// lineBody returns the span of a line without its line break.
func (li *LineIndex) lineBody(line int) (start, end int) {
	starts, src := li.lineStarts(), li.src
	start, end = starts[line], len(src)
	if line+1 < len(starts) {
		end = starts[line+1]
		// Drop the line break; '\r' only ever appears as (part of) one.
		if end > start && src[end-1] == '\n' {
			end--
		}
		if end > start && src[end-1] == '\r' {
			end--
		}
	}
	return start, end
}

// lineMarks returns the column marks of the line [start, end), building
// them on first use; nil for a short line.
func (li *LineIndex) lineMarks(line, start, end int) []colMark {
	stride := cmp.Or(li.stride, markStride)
	if stride < 0 || end-start < 2*stride {
		return nil
	}
	t := li.lines()
	t.mu.Lock()
	defer t.mu.Unlock()
	if ms, ok := t.marks[line]; ok {
		return ms
	}
	src := li.src
	var ms []colMark
	col, next := 0, start+stride
	for i := start; i < end; {
		if i >= next {
			ms = append(ms, colMark{off: i, col: col})
			next = i + stride
		}
		if src[i] < utf8.RuneSelf {
			col++
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:end])
		col += utf16Len(r)
		i += size
	}
	if t.marks == nil {
		t.marks = map[int][]colMark{}
	}
	t.marks[line] = ms
	return ms
}

// utf16Column counts the UTF-16 code units from start to offset.
func utf16Column(src []byte, start, offset int) int {
	// ASCII fast path, eight bytes at a time.
	i := start
	for i+8 <= offset && binary.LittleEndian.Uint64(src[i:])&0x8080808080808080 == 0 {
		i += 8
	}
	for i < offset && src[i] < utf8.RuneSelf {
		i++
	}
	col := i - start
	for i < offset {
		if src[i] < utf8.RuneSelf {
			col++
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		if i+size > offset {
			break // offset is inside this rune: count it as the rune's start
		}
		col += utf16Len(r)
		i += size
	}
	return col
}

func utf16Len(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// Offset converts an LSP position to a byte offset, clamping: a negative
// line or character counts as 0, a line past the end gives len(src), a
// character past the end of the line gives the end of the line (before its
// line break), and a character in the middle of a surrogate pair gives the
// start of that rune.
func (li *LineIndex) Offset(p Position) int {
	starts := li.lineStarts()
	src := li.src
	if p.Line < 0 {
		return 0
	}
	if p.Line >= len(starts) {
		return len(src)
	}
	start, end := li.lineBody(p.Line)
	if p.Character <= 0 {
		return start
	}
	from, col := start, 0
	if ms := li.lineMarks(p.Line, start, end); len(ms) > 0 {
		// The last mark at or before the character.
		if k := sort.Search(len(ms), func(k int) bool { return ms[k].col > p.Character }); k > 0 {
			from, col = ms[k-1].off, ms[k-1].col
		}
	}
	// ASCII fast path: characters are bytes.
	limit := from + min(p.Character-col, end-from) // no overflow for huge characters
	i := from
	for i+8 <= limit && binary.LittleEndian.Uint64(src[i:])&0x8080808080808080 == 0 {
		i += 8
	}
	for i < limit && src[i] < utf8.RuneSelf {
		i++
	}
	if i == limit {
		return limit
	}
	col += i - from
	for i < end && col < p.Character {
		if src[i] < utf8.RuneSelf {
			col++
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:end])
		w := utf16Len(r)
		if col+w > p.Character {
			break // in the middle of a surrogate pair
		}
		col += w
		i += size
	}
	return i
}
