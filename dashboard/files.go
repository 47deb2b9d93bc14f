package dashboard

// Reading the few files a page shows beyond the workspace model — a
// story's journal, a worker's output — as the rest of saga-lsp reads
// files: regular files only (a FIFO never blocks a request), no symbolic
// link as the last component, bounded; a journal's folder must resolve
// inside the workspace. And showing them: terminal escapes removed, the
// journal's Markdown rendered from escaped text only.

import (
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/saga-ai/saga-lsp/store"
)

const (
	maxJournal = 1 << 20  // journal bytes shown
	maxTail    = 64 << 10 // output bytes shown
)

// openRegular opens path for reading as store.OpenRegular does — not
// through a link at its end, never waiting on a FIFO, regular files only.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := store.OpenRegular(path, os.O_RDONLY, 0, false)
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
		return false
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

// renderMarkdown renders the Markdown of a journal — headings, lists,
// fenced code, paragraphs, `code` and **strong** — from escaped text only:
// nothing in the source becomes markup but those.
func renderMarkdown(src string) markup {
	var b strings.Builder
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	var para []string
	list := ""
	flushPara := func() {
		if len(para) > 0 {
			b.WriteString("<p>" + inline(strings.Join(para, " ")) + "</p>\n")
			para = nil
		}
	}
	closeList := func() {
		if list != "" {
			b.WriteString("</" + list + ">\n")
			list = ""
		}
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "```"):
			flushPara()
			closeList()
			b.WriteString("<pre><code>")
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				b.WriteString(html.EscapeString(plainText(lines[i])) + "\n")
			}
			b.WriteString("</code></pre>\n")
		case t == "":
			flushPara()
			closeList()
		case strings.HasPrefix(t, "#"):
			flushPara()
			closeList()
			level := len(t) - len(strings.TrimLeft(t, "#"))
			text := strings.TrimSpace(t[level:])
			level = min(max(level+1, 3), 6) // the page's own headings come first
			class := ""
			if lower := strings.ToLower(text); strings.Contains(lower, "blocker") {
				class = ` class="blocker"`
			} else if strings.Contains(lower, "resolution") || strings.Contains(lower, "resolved") {
				class = ` class="resolution"`
			}
			fmt.Fprintf(&b, "<h%d%s>%s</h%d>\n", level, class, inline(text), level)
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* "):
			flushPara()
			if list != "ul" {
				closeList()
				b.WriteString("<ul>\n")
				list = "ul"
			}
			b.WriteString("<li>" + inline(t[2:]) + "</li>\n")
		case orderedItem(t) != "":
			flushPara()
			if list != "ol" {
				closeList()
				b.WriteString("<ol>\n")
				list = "ol"
			}
			b.WriteString("<li>" + inline(orderedItem(t)) + "</li>\n")
		default:
			closeList()
			para = append(para, t)
		}
	}
	flushPara()
	closeList()
	// Built only of escaped text and the tags above: it is markup.
	return markup(b.String())
}

// orderedItem is the text of "1. text", else "".
func orderedItem(t string) string {
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(t) && t[i] == '.' && t[i+1] == ' ' {
		return t[i+2:]
	}
	return ""
}

// inline escapes text, then marks `code` and **strong** spans.
func inline(text string) string {
	var b strings.Builder
	parts := strings.Split(text, "`")
	for i, p := range parts {
		esc := html.EscapeString(plainText(p))
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString("<code>" + esc + "</code>")
			continue
		}
		if i%2 == 1 { // an unpaired backtick
			b.WriteString("`")
		}
		strong := strings.Split(esc, "**")
		for j, s := range strong {
			if j%2 == 1 && j < len(strong)-1 {
				b.WriteString("<strong>" + s + "</strong>")
			} else {
				if j%2 == 1 {
					b.WriteString("**")
				}
				b.WriteString(s)
			}
		}
	}
	return b.String()
}
