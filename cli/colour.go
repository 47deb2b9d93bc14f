package cli

import (
	"golang.org/x/term"
)

// styles colour text output for a terminal; the zero value prints plain
// text.
type styles struct{ on bool }

// stylesFor colours output to w only when w is a terminal and neither
// NO_COLOR (any non-empty value, no-color.org) nor TERM=dumb asks for
// plain text: pipes, files and CI logs get no escape sequences.
func stylesFor(env *Env, w any) styles {
	return styles{on: isTerminal(w) && env.Getenv("NO_COLOR") == "" && env.Getenv("TERM") != "dumb"}
}

// isTerminal tells whether f is an open file on a terminal (one ioctl).
func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(fd.Fd()))
}

// SGR sequences: the three styles are all the CLI uses.
const (
	sgrBold   = "1"
	sgrRed    = "31"
	sgrYellow = "33"
)

func (s styles) paint(sgr, text string) string {
	if !s.on || text == "" {
		return text
	}
	return "\x1b[" + sgr + "m" + text + "\x1b[0m"
}

func (s styles) fileName(text string) string    { return s.paint(sgrBold, text) }
func (s styles) errorText(text string) string   { return s.paint(sgrRed, text) }
func (s styles) warningText(text string) string { return s.paint(sgrYellow, text) }
