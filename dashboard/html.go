package dashboard

// Writing HTML safely by construction. A page is written by Go code, not a
// template engine: text and attribute values go through hw.t and hw.a,
// which escape them; markup goes through hw.m, which takes a markup — a
// string type only constants convert to implicitly, so data can never be
// written as markup without an explicit, greppable markup(…) conversion
// (there is one: the journal, rendered in markdown.go).
//
// Why not html/template: the pages were written this way when every
// saga-lsp process, the hook included, paid at start for what the binary
// linked; they exist, tested, and html/template's execution would add its
// reflection (+2.6 MB) for no context it would escape better: the pages put
// data in two contexts only, element text and double-quoted attribute
// values, where escaping & < > " ' is all that is needed; no data is ever
// written into a script, a style, an event handler or a URL scheme
// (docs/architecture.md#dependencies).

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/termtext"
)

// markup is HTML written as it is.
type markup string

// hw writes a page; the first write error is kept and ends the writing.
// With sums, what it writes is summed in parts (parts.go); without w, it
// is only summed.
type hw struct {
	w    io.Writer
	err  error
	sums *pageSums
}

func (h *hw) write(s string) {
	if h.err != nil {
		return
	}
	if h.sums != nil {
		h.sums.add(s)
	}
	if h.w != nil {
		_, h.err = io.WriteString(h.w, s)
	}
}

// lines writes text a person reads as lines — output, a description —
// with its newlines and tabs kept and everything else termtext.Lines
// escapes escaped, then HTML-escaped; the element around it keeps the
// lines (<pre>, or the class "pre").
func (h *hw) lines(s string) { h.t(termtext.Lines(s)) }

// firstLine is a one-line summary of text shown as lines elsewhere (a
// run's message in a table cell): its first line, "…" when more follow.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i]) + " …"
	}
	return s
}

// m writes markup.
func (h *hw) m(s markup) { h.write(string(s)) }

// t writes text, escaped.
func (h *hw) t(s string) { h.escape(s, true) }

// escape writes s with & and ' escaped and NUL replaced, and < > " too
// when all is set.
func (h *hw) escape(s string, all bool) {
	start := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch c := s[i]; {
		case c == '&':
			esc = "&amp;"
		case c == '\'':
			esc = "&#39;"
		case c == 0:
			esc = "\uFFFD"
		case all && c == '<':
			esc = "&lt;"
		case all && c == '>':
			esc = "&gt;"
		case all && c == '"':
			esc = "&#34;"
		default:
			continue
		}
		h.write(s[start:i])
		h.write(esc)
		start = i + 1
	}
	h.write(s[start:])
}

// tf writes formatted text, escaped.
func (h *hw) tf(format markup, args ...any) { h.t(fmt.Sprintf(string(format), args...)) }

// d writes a number.
func (h *hw) d(n int) { h.write(strconv.Itoa(n)) }

// a writes ` name="value"`, the value escaped.
func (h *hw) a(name markup, value string) {
	h.write(" ")
	h.write(string(name))
	h.write(`="`)
	h.t(value)
	h.write(`"`)
}

// aq writes ` name='value'`: in single quotes, only & and ' need escaping
// (NUL replaced), and a value of JSON keeps its double quotes — a
// 200-story epic's graph data was half its page as &#34;, parsed again at
// every live update (docs/architecture.md#an-epic-of-200-stories).
func (h *hw) aq(name markup, value string) {
	h.write(" ")
	h.write(string(name))
	h.write(`='`)
	h.escape(value, false)
	h.write(`'`)
}

// flag writes ` name` when on (a boolean attribute).
func (h *hw) flag(name markup, on bool) {
	if on {
		h.write(" ")
		h.write(string(name))
	}
}

// escapeHTML is s escaped as hw.t writes it.
func escapeHTML(s string) string {
	var b stringsBuilder
	h := &hw{w: &b}
	h.t(s)
	return string(b)
}

// stringsBuilder is an io.Writer collecting a string.
type stringsBuilder []byte

func (b *stringsBuilder) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}

func (b *stringsBuilder) WriteString(s string) (int, error) {
	*b = append(*b, s...)
	return len(s), nil
}
