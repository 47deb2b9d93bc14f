package jsonc

import (
	"math"
	"testing"
	"unicode/utf8"
)

func TestLineIndexPosition(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		offset int
		want   Position
	}{
		{"start", "abc\ndef", 0, Position{0, 0}},
		{"ascii", "abc\ndef", 2, Position{0, 2}},
		{"at newline", "abc\ndef", 3, Position{0, 3}},
		{"next line", "abc\ndef", 4, Position{1, 0}},
		{"end", "abc\ndef", 7, Position{1, 3}},
		{"long ascii line", "0123456789abcdefghij\nx", 19, Position{0, 19}},
		{"crlf", "ab\r\ncd", 4, Position{1, 0}},
		{"crlf at cr", "ab\r\ncd", 2, Position{0, 2}},
		{"crlf between cr and lf", "ab\r\ncd", 3, Position{0, 2}},
		{"lone cr", "ab\rcd\re", 3, Position{1, 0}},
		{"lone cr line 2", "ab\rcd\re", 6, Position{2, 0}},
		{"cr cr", "a\r\rb", 3, Position{2, 0}},
		{"lf cr", "a\n\rb", 3, Position{2, 0}},
		{"trailing newline", "a\n", 2, Position{1, 0}},
		{"emoji", "😀x", 4, Position{0, 2}},
		{"after emoji", "😀x", 5, Position{0, 3}},
		{"inside emoji", "😀x", 2, Position{0, 0}},
		{"combining mark", "e\u0301x", 3, Position{0, 2}},
		{"cjk", "中文x", 6, Position{0, 2}},
		{"inside cjk", "中文x", 4, Position{0, 1}},
		{"invalid utf8", "a\xff\xfeb", 3, Position{0, 3}},
		{"truncated rune", "a\xe4\xb8", 3, Position{0, 3}}, // two invalid bytes
		{"mixed after ascii run", "abcdefghij😀k", 14, Position{0, 12}},
		{"clamp negative", "abc", -5, Position{0, 0}},
		{"clamp past end", "ab\ncd", 99, Position{1, 2}},
		{"empty", "", 0, Position{0, 0}},
	}
	for _, tt := range tests {
		li := NewLineIndex([]byte(tt.src))
		if got := li.Position(tt.offset); got != tt.want {
			t.Errorf("%s: Position(%d) in %q = %+v, want %+v", tt.name, tt.offset, tt.src, got, tt.want)
		}
	}
}

func TestLineIndexOffset(t *testing.T) {
	tests := []struct {
		name string
		src  string
		pos  Position
		want int
	}{
		{"start", "abc\ndef", Position{0, 0}, 0},
		{"ascii", "abc\ndef", Position{1, 2}, 6},
		{"past line end", "abc\ndef", Position{0, 10}, 3},
		{"past line end crlf", "abc\r\ndef", Position{0, 10}, 3},
		{"past line end lone cr", "abc\rdef", Position{0, 10}, 3},
		{"past last line end", "abc\ndef", Position{1, 10}, 7},
		{"line past end", "abc\ndef", Position{5, 0}, 7},
		{"negative line", "abc", Position{-1, 3}, 0},
		{"negative character", "abc\ndef", Position{1, -2}, 4},
		{"crlf next line", "ab\r\ncd", Position{1, 1}, 5},
		{"lone cr next line", "ab\rcd", Position{1, 1}, 4},
		{"emoji", "😀x", Position{0, 2}, 4},
		{"after emoji", "😀x", Position{0, 3}, 5},
		{"middle of surrogate pair", "😀x", Position{0, 1}, 0},
		{"combining mark", "e\u0301x", Position{0, 2}, 3},
		{"cjk", "中文x", Position{0, 1}, 3},
		{"invalid utf8", "a\xff\xfeb", Position{0, 3}, 3},
		{"long ascii then emoji", "abcdefghijkl😀m", Position{0, 15}, 17},
		{"empty", "", Position{0, 3}, 0},
		{"huge character", "abc\ndef", Position{0, math.MaxInt}, 3},
		{"huge character non-ASCII", "é\ndef", Position{0, math.MaxInt}, 2},
		{"huge line", "abc\ndef", Position{math.MaxInt, math.MaxInt}, 7},
		{"trailing newline last line", "a\n", Position{1, 0}, 2},
	}
	for _, tt := range tests {
		li := NewLineIndex([]byte(tt.src))
		if got := li.Offset(tt.pos); got != tt.want {
			t.Errorf("%s: Offset(%+v) in %q = %d, want %d", tt.name, tt.pos, tt.src, got, tt.want)
		}
	}
}

func TestLineCount(t *testing.T) {
	for src, want := range map[string]int{
		"": 1, "a": 1, "a\n": 2, "a\r\n": 2, "a\r": 2, "a\n\n": 3, "a\r\r\n\n": 4, "\r\n\r\n": 3,
	} {
		if got := NewLineIndex([]byte(src)).LineCount(); got != want {
			t.Errorf("LineCount(%q) = %d, want %d", src, got, want)
		}
	}
}

// TestLineIndexRoundTrip checks every rune boundary of a mixed document.
func TestLineIndexRoundTrip(t *testing.T) {
	src := []byte("{\r\n  \"emoji\": \"😀😀\",\n  \"accent\": \"e\u0301\",\r  \"cjk\": \"中文\",\n  \"bad\": \"\xff\xfe\"\r\n}\n")
	li := NewLineIndex(src)
	prev := Position{-1, 0}
	for o := 0; o <= len(src); {
		p := li.Position(o)
		if got := li.Offset(p); got != o {
			t.Errorf("Offset(Position(%d) = %+v) = %d", o, p, got)
		}
		if p.Line < prev.Line || (p.Line == prev.Line && p.Character <= prev.Character) {
			t.Errorf("positions not increasing at %d: %+v after %+v", o, p, prev)
		}
		prev = p
		if o == len(src) {
			break
		}
		size := 1
		if src[o] == '\r' && o+1 < len(src) && src[o+1] == '\n' {
			size = 2
		} else {
			_, size = utf8.DecodeRune(src[o:])
		}
		// Offsets inside the rune (or CRLF) map to its start.
		for inside := o + 1; inside < o+size; inside++ {
			if got := li.Position(inside); got != p {
				t.Errorf("Position(%d) inside rune at %d = %+v, want %+v", inside, o, got, p)
			}
		}
		o += size
	}
	if want := (Position{6, 0}); prev != want {
		t.Errorf("end position %+v, want %+v", prev, want)
	}
	if li.LineCount() != 7 {
		t.Errorf("LineCount %d", li.LineCount())
	}
}

// TestLineIndexConcurrent: a document's index is made on first use, which
// may come from several goroutines at once (readers of one snapshot; run
// with -race): each gets the same index, and the right position.
func TestLineIndexConcurrent(t *testing.T) {
	var b Batch
	for _, d := range []*Document{Parse(readFixture(t, "task.json")), b.ParseOwned(readFixture(t, "task.json"))} {
		if d.lines.Load() != nil {
			t.Fatal("a line index was made before any position was asked for")
		}
		type got struct {
			li *LineIndex
			p  Position
		}
		done := make(chan got)
		for range 4 {
			go func() {
				li := d.Lines()
				done <- got{li, li.Position(len(d.Src) - 1)}
			}()
		}
		var first *LineIndex
		for range 4 {
			g := <-done
			if g.p.Line != 10 {
				t.Errorf("position %+v", g.p)
			}
			if first == nil {
				first = g.li
			} else if g.li != first {
				t.Error("concurrent first uses kept two line indexes")
			}
		}
		if d.Lines() != first {
			t.Error("a later use made another line index")
		}
	}
}

// TestLineIndexLongLine: on a 600 KB line (a minified file) positions with
// column marks equal those counted from the line start.
func TestLineIndexLongLine(t *testing.T) {
	var b []byte
	for i := 0; len(b) < 600<<10; i++ {
		switch i % 7 {
		case 0:
			b = append(b, "😀"...)
		case 3:
			b = append(b, 0xff) // invalid UTF-8: one unit
		case 5:
			b = append(b, "中"...)
		default:
			b = append(b, `"t-00001", `...)
		}
	}
	src := append(append([]byte("{\n"), b...), "\r\n}"...)
	marked, plain := NewLineIndex(src), &LineIndex{src: src, stride: -1}
	for o := 0; o <= len(src); o += 1 + o%6133 {
		p := marked.Position(o)
		if want := plain.Position(o); p != want {
			t.Fatalf("Position(%d) = %+v, want %+v", o, p, want)
		}
		if got, want := marked.Offset(p), plain.Offset(p); got != want {
			t.Fatalf("Offset(%+v) = %d, want %d", p, got, want)
		}
	}
	for _, c := range []int{0, 1, 1023, 1024, 1025, 100000, 1 << 30} {
		p := Position{Line: 1, Character: c}
		if got, want := marked.Offset(p), plain.Offset(p); got != want {
			t.Fatalf("Offset(%+v) = %d, want %d", p, got, want)
		}
	}
}
