package store

import (
	"strings"
)

// ValidID reports whether s is an individual id: lowercase letters and digits
// in groups joined by single dashes (`^[a-z0-9]+(-[a-z0-9]+)*$`).
func ValidID(s string) bool {
	if s == "" {
		return false
	}
	prevDash := true // a leading dash is as bad as a double one
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			prevDash = false
		case c == '-':
			if prevDash {
				return false
			}
			prevDash = true
		default:
			return false
		}
	}
	return !prevDash
}

// ValidCanonical reports whether s is a canonical name: one or more ids joined
// by "--", the hierarchy separator.
func ValidCanonical(s string) bool {
	if s == "" {
		return false
	}
	for part := range strings.SplitSeq(s, "--") {
		if !ValidID(part) {
			return false
		}
	}
	return true
}

// EpicOf returns the epic a canonical story name places the story in (the part
// before the first "--"), or "" for a standalone story.
func EpicOf(canonical string) string {
	epic, _, ok := strings.Cut(canonical, "--")
	if !ok {
		return ""
	}
	return epic
}

// Slugify turns s into the nearest valid id (canonical=false) or canonical
// name (canonical=true): lowercase, other characters to single dashes, and,
// for canonical names, "--" kept as the separator. It returns "" when nothing
// usable is left.
func Slugify(s string, canonical bool) string {
	if !canonical {
		return slugPart(s)
	}
	var parts []string
	for p := range strings.SplitSeq(s, "--") {
		if p = slugPart(p); p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "--")
}

func slugPart(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
	}
	return b.String()
}
