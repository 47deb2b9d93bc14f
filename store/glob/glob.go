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
func Overlap(a, b string) bool {
	if Check(a) != nil || Check(b) != nil {
		return true
	}
	p, q := segments(a), segments(b)
	memo := map[[2]int]bool{}
	var walk func(i, j int) bool
	walk = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var r bool
		switch {
		case i == len(p) && j == len(q):
			r = true
		case i < len(p) && p[i] == "**":
			r = walk(i+1, j) || j < len(q) && walk(i, j+1)
		case j < len(q) && q[j] == "**":
			r = walk(i, j+1) || i < len(p) && walk(i+1, j)
		case i == len(p) || j == len(q):
			r = false
		default:
			r = nameOverlap(tokens(p[i]), tokens(q[j])) && walk(i+1, j+1)
		}
		memo[key] = r
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
	memo := map[[2]int]bool{}
	var walk func(i, j int) bool
	walk = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var r bool
		switch {
		case i == len(a) && j == len(b):
			r = true
		case i < len(a) && a[i].kind == '*':
			r = walk(i+1, j) || j < len(b) && walk(i, j+1)
		case j < len(b) && b[j].kind == '*':
			r = walk(i, j+1) || i < len(a) && walk(i+1, j)
		case i == len(a) || j == len(b):
			r = false
		default:
			r = charOverlap(a[i], b[j]) && walk(i+1, j+1)
		}
		memo[key] = r
		return r
	}
	return walk(0, 0)
}

func charOverlap(x, y token) bool {
	if x.kind == 'l' && y.kind == 'l' {
		return x.r == y.r
	}
	return true // `?` or a class against anything: taken to share a character
}
