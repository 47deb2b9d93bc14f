package store

import (
	"bufio"
	"bytes"
	"strings"
)

// JournalBlocker reads a story journal (journal.md: "## <time> <kind>"
// headings, each followed by text) and reports whether it ends in an
// unresolved blocker: the last decision/blocker/resolution heading is a
// blocker. text is that entry's first line. blockers counts blocker entries,
// so a caller can tell a new one from an old one.
func JournalBlocker(journal []byte) (blocked bool, text string, blockers int) {
	sc := bufio.NewScanner(bytes.NewReader(journal))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var inBlocker bool
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if h, ok := strings.CutPrefix(line, "## "); ok {
			lower := strings.ToLower(h)
			switch {
			case strings.Contains(lower, "resolution") || strings.Contains(lower, "resolved") || strings.Contains(lower, "unblocked"):
				blocked, text, inBlocker = false, "", false
			case strings.Contains(lower, "blocker"):
				blocked, text, inBlocker = true, "", true
				blockers++
			default:
				inBlocker = false
			}
			continue
		}
		if inBlocker && text == "" && line != "" {
			text = line
		}
	}
	return blocked, text, blockers
}

// JournalDecisions are the journal's decision entries ("## <time>
// decision" headings), each its text with lines joined by spaces, oldest
// first; an entry without text is left out.
func JournalDecisions(journal []byte) []string {
	sc := bufio.NewScanner(bytes.NewReader(journal))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var out []string
	var cur []string
	in := false
	flush := func() {
		if in && len(cur) > 0 {
			out = append(out, strings.Join(cur, " "))
		}
		cur, in = nil, false
	}
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if h, ok := strings.CutPrefix(line, "## "); ok {
			flush()
			in = strings.Contains(strings.ToLower(h), "decision")
			continue
		}
		if in && line != "" {
			cur = append(cur, line)
		}
	}
	flush()
	return out
}

// JournalAnswers are the journal's answer entries ("## <time> answer
// <task id>" headings: an agent's answer to a review task that asked a
// question, docs/review.md#what-goes-out), the text of each by task id, its
// lines kept; a later entry for a task replaces an earlier one.
func JournalAnswers(journal []byte) map[string]string {
	sc := bufio.NewScanner(bytes.NewReader(journal))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	out := map[string]string{}
	id := ""
	var cur []string
	flush := func() {
		if text := strings.TrimSpace(strings.Join(cur, "\n")); id != "" && text != "" {
			out[id] = text
		}
		id, cur = "", nil
	}
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(strings.TrimSpace(line), "## "); ok {
			flush()
			if f := strings.Fields(h); len(f) == 3 && strings.EqualFold(f[1], "answer") && ValidCanonical(f[2]) {
				id = f[2]
			}
			continue
		}
		if id != "" {
			cur = append(cur, line)
		}
	}
	flush()
	return out
}
