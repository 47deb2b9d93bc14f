package dashboard

// Reading the few files a page shows beyond the workspace model — a
// story's journal, a worker's output — as the rest of saga-lsp reads
// files: regular files only (a FIFO never blocks a request), no symbolic
// link as the last component, bounded; a journal's folder must resolve
// inside the workspace. And showing them: terminal escapes removed, the
// journal's Markdown rendered (markdown.go), its raw HTML shown as text.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
)

const (
	maxJournal = 1 << 20  // journal bytes shown
	maxTail    = 64 << 10 // output bytes shown
)

// openRegular opens path for reading as filesafe.OpenRegular does — not
// through a link at its end, never waiting on a FIFO, regular files only.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := filesafe.OpenRegular(path, os.O_RDONLY, 0, false)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// within tells whether path (resolved) lies inside root (resolved).
func within(root, path string) bool {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		// A path that is gone (a worktree copy a reset just removed, while
		// the snapshot still names it) is no link: where its nearest
		// existing folder lies says. A dangling link is there, and refused.
		if _, lerr := os.Lstat(path); !errors.Is(lerr, fs.ErrNotExist) || filepath.Dir(path) == path {
			return false
		}
		return within(root, filepath.Dir(path))
	}
	rel, err := filepath.Rel(r, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// readInside reads the workspace file at rel (slash-separated, relative to
// root), at most max bytes: never outside the workspace, through a
// symbolic link, or from anything but a regular file.
func readInside(root, rel string, max int64) (data []byte, truncated bool, err error) {
	clean := filepath.Clean(filepath.FromSlash(rel))
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return nil, false, fmt.Errorf("%s leaves the workspace", rel)
	}
	abs := filepath.Join(root, clean)
	if !within(root, filepath.Dir(abs)) {
		return nil, false, fmt.Errorf("%s leaves the workspace", rel)
	}
	f, _, err := openRegular(abs)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, max+1))
	if int64(len(data)) > max {
		data, truncated = data[:max], true
	}
	return data, truncated, err
}

// tail is the last max bytes of the file at path, from a line's start.
func tail(path string, max int64) (text string, truncated bool, err error) {
	f, fi, err := openRegular(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	off := int64(0)
	if fi.Size() > max {
		off, truncated = fi.Size()-max, true
	}
	data, err := io.ReadAll(io.NewSectionReader(f, off, max))
	if err != nil {
		return "", false, err
	}
	if truncated {
		if i := strings.IndexByte(string(data), '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return plainText(string(data)), truncated, nil
}

// plainText removes terminal escape sequences and control characters
// (tabs and line breaks stay; a carriage return keeps what followed it on
// its line) and replaces invalid UTF-8.
func plainText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	line := b.Len()
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b: // ESC: CSI, OSC or a two-byte sequence
			i++
			if i >= len(s) {
				continue
			}
			switch s[i] {
			case '[':
				i++
				for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
					i++
				}
				i++
			case ']':
				for i < len(s) && s[i] != 0x07 && !(s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\') {
					i++
				}
				if i < len(s) && s[i] == 0x1b {
					i++
				}
				i++
			default:
				i++
			}
		case c == '\n':
			b.WriteByte(c)
			line = b.Len()
			i++
		case c == '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
				continue
			}
			// What follows overwrites the line, as on a terminal.
			str := b.String()[:line]
			b.Reset()
			b.WriteString(str)
			i++
		case c == '\t' || c >= 0x20 && c != 0x7f:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r >= 0x80 && r < 0xa0 { // C1 controls
				i += n
				continue
			}
			b.WriteString(s[i : i+n])
			i += n
		default:
			i++
		}
	}
	return b.String()
}
