package jsonc

import (
	"encoding/json"
	"os"
	"testing"
)

func loadTask(b *testing.B) []byte {
	b.Helper()
	src, err := os.ReadFile("testdata/task.json")
	if err != nil {
		b.Fatal(err)
	}
	return src
}

func BenchmarkParse(b *testing.B) {
	src := loadTask(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		d := Parse(src)
		if len(d.Errors) != 0 {
			b.Fatal(d.Errors)
		}
	}
}

func BenchmarkUnmarshalStdlib(b *testing.B) {
	src := loadTask(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(src, &v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseValue is Parse followed by Value, the path taken for JSON
// Schema validation, against the same stdlib baseline.
func BenchmarkParseValue(b *testing.B) {
	src := loadTask(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Parse(src).Root.Value()
	}
}

func BenchmarkPosition(b *testing.B) {
	src := loadTask(b)
	li := NewLineIndex(src)
	// Offsets spread over the document, including the non-ASCII line.
	offsets := make([]int, 0, 64)
	for o := 0; o < len(src); o += len(src) / 61 {
		offsets = append(offsets, o)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = li.Position(offsets[i%len(offsets)])
		i++
	}
}

func BenchmarkOffset(b *testing.B) {
	src := loadTask(b)
	li := NewLineIndex(src)
	n := li.LineCount()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = li.Offset(Position{Line: i % n, Character: 37})
		i++
	}
}

func BenchmarkNewLineIndex(b *testing.B) {
	src := loadTask(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = NewLineIndex(src).LineCount()
	}
}
