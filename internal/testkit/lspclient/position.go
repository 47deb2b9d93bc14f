package lspclient

import (
	"net/url"
	"path/filepath"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Position and Range are LSP's, as the server has them.
type (
	Position = store.Position
	Range    = store.Range
)

// PositionAt is the position of byte offset off of text (UTF-16 columns).
func PositionAt(text string, off int) Position {
	p := jsonc.NewLineIndex([]byte(text)).Position(off)
	return Position{Line: p.Line, Character: p.Character}
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
