// Package glob owns the one glob syntax of task files (docs/format.md#checks,
// docs/format.md#paths): what a glob of "protect", "mayChangeTests" and
// "paths" matches (Match), whether one parses (Check), and whether two can
// match the same path (Overlap). A glob without a slash matches a file's name
// in any folder; one with a slash the whole path from the repository's root;
// `**` stands for any number of folders, a trailing `/` for everything below;
// within a name, `*`, `?`, `[…]` and `\` as path.Match reads them.
package glob

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// segments normalises g and splits it into path segments: "./" dropped, a
// trailing "/" made "/**", and a glob without a slash made "**/g" (a name in
// any folder).
func segments(g string) []string {
	g = strings.TrimPrefix(g, "./")
	if strings.HasSuffix(g, "/") {
		g += "**"
	}
	if !strings.Contains(g, "/") {
		return []string{"**", g}
	}
	return strings.Split(g, "/")
}

// Match tells whether one of globs matches rel, a slash-separated path
// relative to the repository's root.
func Match(globs []string, rel string) bool {
	parts := strings.Split(rel, "/")
	for _, g := range globs {
		if matchParts(segments(g), parts) {
			return true
		}
	}
	return false
}

func matchParts(pat, parts []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(parts); i++ {
				if matchParts(pat[1:], parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], parts[0]); !ok {
			return false
		}
		pat, parts = pat[1:], parts[1:]
	}
	return len(parts) == 0
}

// Check says why g is not a glob of a repository path, nil when it is: it
// must be relative, without "." or ".." folders and empty folders, and each
// name must parse (path.Match: an unclosed `[`, a trailing `\`).
func Check(g string) error {
	if strings.TrimSpace(g) == "" {
		return errors.New("a glob must name paths, not be empty or white space")
	}
	if strings.HasPrefix(g, "/") {
		return fmt.Errorf("glob %q is absolute: globs are relative to the repository's root", g)
	}
	for _, s := range segments(g) {
		switch s {
		case "":
			return fmt.Errorf("glob %q has an empty folder (//)", g)
		case ".", "..":
			return fmt.Errorf("glob %q has a %q folder: globs are relative to the repository's root, never above it", g, s)
		}
		if _, err := path.Match(s, ""); err != nil {
			return fmt.Errorf("glob %q does not parse: %q is not a pattern (an unclosed [ or a trailing \\)", g, s)
		}
	}
	return nil
}

// Overlap tells whether some path could match both a and b, and is
// conservative (docs/landing.md#conflicts-foreseen): it answers exactly for
// literals, `*`, `?` and `**`, and takes two character classes, or a class
// and `?`, to share a character — a false "yes" only serialises two
// stories, a false "no" lets them conflict. A glob that does not parse
// (Check) overlaps everything.
func Overlap(a, b string) bool { return Compile(a).Overlaps(Compile(b)) }

// Pattern is a glob read once, for many Overlaps.
type Pattern struct {
	Glob string
	bad  bool
	segs [][]token // nil for `**`
}

// Compile reads g for Overlaps.
func Compile(g string) Pattern {
	p := Pattern{Glob: g, bad: Check(g) != nil}
	if !p.bad {
		for _, s := range segments(g) {
			if s == "**" {
				p.segs = append(p.segs, nil)
			} else {
				p.segs = append(p.segs, tokens(s))
			}
		}
	}
	return p
}

// Overlaps is Overlap of two compiled globs.
func (p Pattern) Overlaps(q Pattern) bool {
	if p.bad || q.bad {
		return true
	}
	// Literal folders at the same place that differ: no common path (the
	// usual answer, found without the walk).
	for i := 0; i < len(p.segs) && i < len(q.segs); i++ {
		a, b := p.segs[i], q.segs[i]
		if a == nil || b == nil {
			break
		}
		la, oka := literal(a)
		lb, okb := literal(b)
		if !oka || !okb {
			break
		}
		if la != lb {
			return false
		}
	}
	return walk2(len(p.segs), len(q.segs),
		func(i int) bool { return p.segs[i] == nil },
		func(j int) bool { return q.segs[j] == nil },
		func(i, j int) bool { return nameOverlap(p.segs[i], q.segs[j]) })
}

// literal is a name pattern without wildcards, as its text.
func literal(ts []token) (string, bool) {
	rs := make([]rune, len(ts))
	for i, t := range ts {
		if t.kind != 'l' {
			return "", false
		}
		rs[i] = t.r
	}
	return string(rs), true
}

// walk2 tells whether two sequences with stars (an element that stands for
// any number of elements) can meet: the one search behind both folder and
// name overlap. star says whether an element of a (b) is a star; meet
// whether two elements that are not can stand for the same one.
func walk2(n, m int, starA, starB func(int) bool, meet func(i, j int) bool) bool {
	// memo: 0 unknown, 1 no, 2 yes; every step moves i or j forward.
	memo := make([]byte, (n+1)*(m+1))
	var walk func(i, j int) bool
	walk = func(i, j int) bool {
		k := i*(m+1) + j
		if memo[k] != 0 {
			return memo[k] == 2
		}
		var r bool
		switch {
		case i == n && j == m:
			r = true
		case i < n && starA(i):
			r = walk(i+1, j) || j < m && walk(i, j+1)
		case j < m && starB(j):
			r = walk(i, j+1) || i < n && walk(i+1, j)
		case i == n || j == m:
			r = false
		default:
			r = meet(i, j) && walk(i+1, j+1)
		}
		memo[k] = 1
		if r {
			memo[k] = 2
		}
		return r
	}
	return walk(0, 0)
}

// token is one element of a name pattern: a literal character, `?`, `*`,
// or a character class (kept whole, never decided).
type token struct {
	kind byte // 'l' literal, '?', '*', '['
	r    rune
}

func tokens(s string) []token {
	var out []token
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '*':
			if len(out) == 0 || out[len(out)-1].kind != '*' {
				out = append(out, token{kind: '*'})
			}
		case '?':
			out = append(out, token{kind: '?'})
		case '[':
			i++ // path.Match reads a `]` first in the class (after `^`) as a character
			if i < len(rs) && rs[i] == '^' {
				i++
			}
			if i < len(rs) && rs[i] == ']' {
				i++
			}
			for i < len(rs) && rs[i] != ']' {
				if rs[i] == '\\' {
					i++
				}
				i++
			}
			out = append(out, token{kind: '['})
		case '\\':
			if i+1 < len(rs) {
				i++
			}
			out = append(out, token{kind: 'l', r: rs[i]})
		default:
			out = append(out, token{kind: 'l', r: rs[i]})
		}
	}
	return out
}

// nameOverlap tells whether some name matches both patterns.
func nameOverlap(a, b []token) bool {
	return walk2(len(a), len(b),
		func(i int) bool { return a[i].kind == '*' },
		func(j int) bool { return b[j].kind == '*' },
		func(i, j int) bool { return charOverlap(a[i], b[j]) })
}

func charOverlap(x, y token) bool {
	if x.kind == 'l' && y.kind == 'l' {
		return x.r == y.r
	}
	return true // `?` or a class against anything: taken to share a character
}
