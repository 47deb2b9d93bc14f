package store

import (
	"fmt"
	"strings"
)

// MaxNameBytes bounds the names saga-lsp creates — task ids, story and epic
// names — in bytes. Each becomes a file or folder name ("<id>.json", and a
// temp file ".<id>.json.tmp-<pid>-<random>" beside it while it is written), and
// file systems refuse names over 255 bytes: 200 leaves room for the rest.
const MaxNameBytes = 200

// CheckNameLength refuses a name over MaxNameBytes with a message saying
// what to do; what names the kind of name ("task id", "story name").
func CheckNameLength(what, name string) error {
	if len(name) <= MaxNameBytes {
		return nil
	}
	shown := name
	if len(shown) > 40 {
		shown = shown[:40] + "…"
	}
	return fmt.Errorf("%s %q is %d bytes long; names are at most %d bytes, because each becomes a file name "+
		"(at most 255 bytes with its suffix): pick a shorter name", what, shown, len(name), MaxNameBytes)
}

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
