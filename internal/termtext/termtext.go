// Package termtext makes text from a repository or a model safe to print on
// a terminal: the one escaping of what saga-lsp did not write itself
// (subjects, titles, file names, ids, messages quoting them, the agent's
// output) before it reaches a terminal or a log read on one; and the one
// place a count's noun gets its number (Count).
package termtext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escape returns s as one line that a terminal shows as text: every
// control character — C0 (newline, carriage return and tab included), DEL
// and C1 — becomes a Go-style escape (\n, \r, \t, \x1b, \u009b), as do the
// bytes of invalid UTF-8 (\xff: a terminal decoding Latin-1 would take
// 0x9b for CSI) and the bidirectional embeddings, overrides and isolates
// (\u202e: they reorder what follows on screen). Everything else is kept,
// backslashes included; text that needs none of this is returned as is.
func Escape(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		case unsafeRune(r):
			writeEscape(&b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

const hex = "0123456789abcdef"

// firstUnsafe is the index of the first byte Escape changes, -1 for none.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

func unsafeRune(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f) || // C0, DEL, C1
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) // bidi embeddings, overrides, isolates
}

func writeEscape(b *strings.Builder, r rune) {
	switch r {
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	default:
		if r < 0x80 {
			b.WriteString(`\x`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
			return
		}
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte(hex[(r>>shift)&0xf])
		}
	}
}

// Escapes is Escape of each string, for lists joined into one line.
func Escapes(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Escape(s)
	}
	return out
}

// Lines returns s as text a person reads line by line — a check's output,
// a log, a description: newlines and tabs are kept (a CRLF becomes a
// newline), and everything else Escape changes is escaped as Escape does,
// so no byte of it can move the cursor, recolour, retitle or reorder what a
// terminal shows. The one rule for output shown as lines, on a terminal,
// in a log and (HTML-escaped on top) in the dashboard.
func Lines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if !strings.ContainsFunc(s, func(r rune) bool { return r != '\n' && r != '\t' && (unsafeRune(r) || r == utf8.RuneError) }) {
		return s
	}
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		fields := strings.Split(p, "\t")
		for j, f := range fields {
			fields[j] = Escape(f)
		}
		parts[i] = strings.Join(fields, "\t")
	}
	return strings.Join(parts, "\n")
}

// Block is s as lines (Lines: tabs kept, everything else escaped), each
// after the first indented by indent: a multi-line message (a check's
// output quoted under what failed) shown as lines, none of which can pass
// for a line of its own.
func Block(s, indent string) string {
	lines := strings.Split(strings.TrimRight(Lines(s), "\n"), "\n")
	for i := 1; i < len(lines); i++ {
		lines[i] = indent + lines[i]
	}
	return strings.Join(lines, "\n")
}

// Count is n and its noun in the right number — "1 story", "2 stories",
// "0 stories": the one place output a person reads puts a count's word, so
// that none says "1 stories" or "task(s)".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
