package lsp

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// wantLine is the unread rest of a want line; what it cannot read fails the
// test as malformed.
type wantLine struct {
	t    *testing.T
	rest string
}

func (l *wantLine) malformed(format string, args ...any) {
	l.t.Helper()
	l.t.Fatalf("malformed want line: "+format, args...)
}

// word reads a bare word: up to a space, a comma or a semicolon (which alone
// are words).
func (l *wantLine) word(what string) string {
	l.t.Helper()
	l.rest = strings.TrimLeft(l.rest, " ")
	n := strings.IndexAny(l.rest, " ,;")
	switch {
	case n == 0:
		n = 1
	case n < 0:
		n = len(l.rest)
	}
	w := l.rest[:n]
	if w == "" || w[0] == '"' || w[0] == '`' {
		l.malformed("want %s at %q", what, l.rest)
	}
	l.rest = l.rest[n:]
	return w
}

// maybe reads the word w if it is next.
func (l *wantLine) maybe(w string) bool {
	rest := strings.TrimLeft(l.rest, " ")
	if after, ok := strings.CutPrefix(rest, w); ok && (after == "" || strings.ContainsRune(" ,;", rune(after[0])) || w == "," || w == ";") {
		l.rest = after
		return true
	}
	return false
}

// keyword reads the word w, which must be next.
func (l *wantLine) keyword(w string) {
	l.t.Helper()
	if !l.maybe(w) {
		l.malformed("want %s at %q", w, strings.TrimLeft(l.rest, " "))
	}
}

func (l *wantLine) arrow() {
	l.t.Helper()
	l.keyword("=>")
}

func (l *wantLine) end() {
	l.t.Helper()
	if rest := strings.TrimLeft(l.rest, " "); rest != "" {
		l.malformed("unexpected %q", rest)
	}
}

// literal reads a Go string literal and returns its value.
func (l *wantLine) literal(what string) string {
	l.t.Helper()
	l.rest = strings.TrimLeft(l.rest, " ")
	q, err := strconv.QuotedPrefix(l.rest)
	if err != nil || q[0] == '\'' {
		l.malformed("want %s (a Go string literal) at %q", what, l.rest)
	}
	l.rest = l.rest[len(q):]
	s, _ := strconv.Unquote(q)
	return s
}

// place reads `<file> <needle>[#n][+off]`.
func (l *wantLine) place() place {
	l.t.Helper()
	p := l.span()
	p.off = l.number("+")
	l.separated()
	return p
}

// span reads `<file> <needle>[#n]`.
func (l *wantLine) span() place {
	l.t.Helper()
	p := place{rel: l.word("a file")}
	p.needle = l.literal("a needle")
	p.n = l.number("#")
	if !strings.HasPrefix(l.rest, "+") {
		l.separated()
	}
	return p
}

// needle reads `<needle>[#n]`.
func (l *wantLine) needle() (needle string, n int) {
	l.t.Helper()
	needle = l.literal("a needle")
	n = l.number("#")
	l.separated()
	return needle, n
}

// number reads prefix and a number right after it, if prefix is next; 0 if
// it is not.
func (l *wantLine) number(prefix string) int {
	l.t.Helper()
	rest, ok := strings.CutPrefix(l.rest, prefix)
	if !ok {
		return 0
	}
	digits := rest[:len(rest)-len(strings.TrimLeft(rest, "0123456789"))]
	n, err := strconv.Atoi(digits)
	if err != nil {
		l.malformed("want a number after %s at %q", prefix, l.rest)
	}
	l.rest = rest[len(digits):]
	return n
}

// separated fails unless the next character ends a word.
func (l *wantLine) separated() {
	l.t.Helper()
	if l.rest != "" && !strings.ContainsRune(" ,;", rune(l.rest[0])) {
		l.malformed("unexpected %q", l.rest)
	}
}

// list reads one or more literals separated by commas.
func (l *wantLine) list(what string) []string {
	l.t.Helper()
	var out []string
	for more := true; more; more = l.maybe(",") {
		out = append(out, l.literal(what))
	}
	return out
}

// offsets reads `+a..+b`: byte offsets from the start of a needle.
func (l *wantLine) offsets() (from, to int) {
	l.t.Helper()
	w := l.word("offsets +a..+b")
	m := offsetsPattern.FindStringSubmatch(w)
	if m == nil {
		l.malformed("offsets %q are not +a..+b", w)
	}
	from, _ = strconv.Atoi(m[1])
	to, _ = strconv.Atoi(m[2])
	return from, to
}

var offsetsPattern = regexp.MustCompile(`^\+(\d+)\.\.\+(\d+)$`)
