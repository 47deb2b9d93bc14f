package lspclient

import (
	"net/url"
	"path/filepath"
	"strings"
	"unicode/utf16"
)

// Position is an LSP position: a line and a UTF-16 column, both from 0.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is an LSP range.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// PositionAt is the position of byte offset off of text.
func PositionAt(text string, off int) Position {
	line := strings.Count(text[:off], "\n")
	start := strings.LastIndexByte(text[:off], '\n') + 1
	col := 0
	for _, r := range text[start:off] {
		col += len(utf16.Encode([]rune{r}))
	}
	return Position{Line: line, Character: col}
}

// FileURI is the file URI of an absolute path.
func FileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// URIPath is the path a file URI names ("" for other URIs), so URIs compare
// however a server escapes them.
func URIPath(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	return filepath.Clean(filepath.FromSlash(u.Path))
}
