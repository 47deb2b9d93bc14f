package lsp

import (
	"maps"
	"path/filepath"
	"strings"

	"go.lsp.dev/uri"

	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Snapshot is an immutable view: the workspace as disk plus open documents
// say at one moment. Every change makes a new Snapshot sharing the unchanged
// parts; requests read the one current when they arrived.
type Snapshot struct {
	Root   string           // workspace root (holds .saga/); "" before initialize
	WS     *store.Workspace // parsed files, with overlays in place of disk
	Docs   map[uri.URI]*Document
	Loaded bool // the disk scan has finished
}

// Document is an open editor buffer.
type Document struct {
	URI     uri.URI
	Path    string // absolute file path
	Rel     string // slash path relative to Root; "" when outside it
	Version int32
	Text    []byte
	File    *store.File // the parsed buffer (nil when not a .saga file)
	lines   *jsonc.LineIndex
	// warnedRefusal: the user was told that an edit of this buffer was
	// refused (once per opening).
	warnedRefusal bool
}

// name is how messages name the buffer: its workspace path, else its path.
func (d *Document) name() string {
	if d.Rel != "" {
		return d.Rel
	}
	return d.Path
}

// Lines returns the buffer's line index.
func (d *Document) Lines() *jsonc.LineIndex {
	if d.File != nil && d.File.Doc != nil {
		return d.File.Doc.Lines()
	}
	return d.lines
}

func emptySnapshot(root string) *Snapshot {
	return &Snapshot{Root: root, WS: store.Build(root, nil, nil), Docs: map[uri.URI]*Document{}}
}

// clone returns a copy of s with its own Docs map.
func (s *Snapshot) clone() *Snapshot {
	c := *s
	c.Docs = maps.Clone(s.Docs)
	return &c
}

// RelOf maps a file path to its slash path relative to the root, or "".
func (s *Snapshot) RelOf(path string) string {
	if s.Root == "" {
		return ""
	}
	rel, err := filepath.Rel(s.Root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	return filepath.ToSlash(rel)
}

// URIOf gives the file URI of a root-relative path.
func (s *Snapshot) URIOf(rel string) uri.URI {
	return uri.File(filepath.Join(s.Root, filepath.FromSlash(rel)))
}

// FileAt returns the parsed file for a document URI (the open buffer when
// there is one), with its rel path.
func (s *Snapshot) FileAt(u uri.URI) *store.File {
	if d := s.Docs[u]; d != nil {
		return d.File
	}
	rel := s.RelOf(u.FsPath())
	if rel == "" {
		return nil
	}
	return s.WS.File(rel)
}

// DocByRel finds an open document by its rel path.
func (s *Snapshot) DocByRel(rel string) *Document {
	for _, d := range s.Docs {
		if d.Rel == rel {
			return d
		}
	}
	return nil
}

// Version returns the editor version of the file at rel, or -1 when it is
// not open.
func (s *Snapshot) Version(rel string) int32 {
	if d := s.DocByRel(rel); d != nil {
		return d.Version
	}
	return -1
}
