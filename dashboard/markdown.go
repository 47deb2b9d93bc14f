package dashboard

// A journal's Markdown, rendered: the subset journals are written in —
// headings, paragraphs, lists, quotes, fenced code, GitHub's pipe tables,
// rules, and inline code, emphasis, strikethrough and http(s) links — by
// escape-by-construction code: every character of the source is escaped
// and only these constructs become tags, so raw HTML shows as the text it
// is. Not a library: a Markdown package's init ran at every start of
// saga-lsp, `saga-lsp hook` included, and cost that start 1.2 ms, over its
// budget (docs/architecture.md#dependencies).

import (
	"html"
	"regexp"
	"strings"
	"sync"

	"github.com/saga-ai/saga-lsp/internal/termtext"
)

// renderMarkdown renders a journal's Markdown, its text first made safe as
// every output a person reads is (termtext.Lines). The journal's headings
// come under the page's own (h3 and below), a blocker's and a
// resolution's marked by a class.
func renderMarkdown(src string) markup {
	p := patterns()
	lines := strings.Split(strings.ReplaceAll(termtext.Lines(src), "\r", ""), "\n")
	var b strings.Builder
	for i := 0; i < len(lines); {
		line := lines[i]
		t := strings.TrimSpace(line)
		switch {
		case t == "":
			i++
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence := t[:3]
			i++
			b.WriteString("<pre><code>")
			for ; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
				b.WriteString(html.EscapeString(lines[i]) + "\n")
			}
			b.WriteString("</code></pre>\n")
			i++
		case p.heading.MatchString(t):
			m := p.heading.FindStringSubmatch(t)
			level := min(max(len(m[1])+1, 3), 6)
			class := ""
			lower := strings.ToLower(m[2])
			if strings.Contains(lower, "blocker") {
				class = ` class="blocker"`
			} else if strings.Contains(lower, "resolution") || strings.Contains(lower, "resolved") {
				class = ` class="resolution"`
			}
			b.WriteString("<h" + string(rune('0'+level)) + class + ">" + inline(strings.TrimRight(m[2], " #")) + "</h" + string(rune('0'+level)) + ">\n")
			i++
		case p.rule.MatchString(t):
			b.WriteString("<hr>\n")
			i++
		case strings.HasPrefix(t, "<"):
			// Raw HTML: the text it is, up to a blank line.
			b.WriteString(`<p class="pre">`)
			for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
				b.WriteString(html.EscapeString(lines[i]) + "\n")
			}
			b.WriteString("</p>\n")
		case strings.Contains(t, "|") && i+1 < len(lines) && p.delimiter.MatchString(strings.TrimSpace(lines[i+1])):
			i = table(&b, lines, i)
		case p.bullet.MatchString(line) || p.ordered.MatchString(line):
			i = mdList(&b, lines, i)
		case strings.HasPrefix(t, ">"):
			var quoted []string
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), ">"); i++ {
				quoted = append(quoted, strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(lines[i]), ">"), " "))
			}
			b.WriteString("<blockquote>\n" + string(renderMarkdown(strings.Join(quoted, "\n"))) + "</blockquote>\n")
		default:
			var para []string
			for ; i < len(lines) && paragraphGoesOn(lines, i); i++ {
				para = append(para, inline(strings.TrimSpace(lines[i])))
			}
			b.WriteString("<p>" + strings.Join(para, "\n") + "</p>\n")
		}
	}
	return markup(b.String())
}

// patterns are the block and inline patterns, compiled on the first
// journal rendered, never at init (every start of saga-lsp would pay).
var patterns = sync.OnceValue(func() *mdPatterns {
	return &mdPatterns{
		heading:   regexp.MustCompile(`^(#{1,6})\s+(.*)$`),
		rule:      regexp.MustCompile(`^([-*_])(\s*[-*_]){2,}$`),
		delimiter: regexp.MustCompile(`^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$`),
		bullet:    regexp.MustCompile(`^\s*[-*+]\s+`),
		ordered:   regexp.MustCompile(`^\s*\d+[.)]\s+`),
		codeSpan:  regexp.MustCompile("^`([^`]+)`"),
		strong:    regexp.MustCompile(`^(\*\*|__)(\S(?:.*?\S)?)(\*\*|__)`),
		emphasis:  regexp.MustCompile(`^([*_])(\S(?:.*?\S)?)([*_])`),
		strike:    regexp.MustCompile(`^~~(\S(?:.*?\S)?)~~`),
		link:      regexp.MustCompile(`^\[([^\]]+)\]\((https?://[^\s)]+)\)`),
	}
})

type mdPatterns struct {
	heading, rule, delimiter, bullet, ordered *regexp.Regexp
	// Inline constructs, in the order they are tried at each position.
	codeSpan, strong, emphasis, strike, link *regexp.Regexp
}

// paragraphGoesOn: line i continues a paragraph (not blank, no other
// block starting).
func paragraphGoesOn(lines []string, i int) bool {
	p := patterns()
	t := strings.TrimSpace(lines[i])
	return t != "" && !p.heading.MatchString(t) && !strings.HasPrefix(t, "```") && !strings.HasPrefix(t, "~~~") &&
		!p.bullet.MatchString(lines[i]) && !p.ordered.MatchString(lines[i]) && !strings.HasPrefix(t, ">") &&
		!(strings.Contains(t, "|") && i+1 < len(lines) && p.delimiter.MatchString(strings.TrimSpace(lines[i+1])))
}

// table writes the pipe table starting at line i (its header, then its
// delimiter row) and returns the line after it.
func table(b *strings.Builder, lines []string, i int) int {
	b.WriteString("<table>\n<thead>\n<tr>\n")
	for _, c := range cells(lines[i]) {
		b.WriteString("<th>" + inline(c) + "</th>\n")
	}
	b.WriteString("</tr>\n</thead>\n")
	i += 2
	if i < len(lines) && strings.Contains(lines[i], "|") {
		b.WriteString("<tbody>\n")
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != "" && strings.Contains(lines[i], "|"); i++ {
			b.WriteString("<tr>\n")
			for _, c := range cells(lines[i]) {
				b.WriteString("<td>" + inline(c) + "</td>\n")
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</tbody>\n")
	}
	b.WriteString("</table>\n")
	return i
}

// cells are a table row's cells, trimmed.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	parts := strings.Split(row, "|")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// mdList writes the list starting at line i (bulleted or numbered, as its
// first item) and returns the line after it.
func mdList(b *strings.Builder, lines []string, i int) int {
	p := patterns()
	marker, tag := p.bullet, "ul"
	if p.ordered.MatchString(lines[i]) {
		marker, tag = p.ordered, "ol"
	}
	b.WriteString("<" + tag + ">\n")
	for i < len(lines) && marker.MatchString(lines[i]) {
		item := []string{inline(strings.TrimSpace(marker.ReplaceAllString(lines[i], "")))}
		i++
		// Its continuation lines: indented, not another item.
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != "" && strings.HasPrefix(lines[i], " ") &&
			!marker.MatchString(lines[i]); i++ {
			item = append(item, inline(strings.TrimSpace(lines[i])))
		}
		b.WriteString("<li>" + strings.Join(item, "\n") + "</li>\n")
	}
	b.WriteString("</" + tag + ">\n")
	return i
}

// inline renders a line's inline constructs; everything else is escaped.
func inline(s string) string {
	p := patterns()
	var b strings.Builder
	for len(s) > 0 {
		if m := p.codeSpan.FindStringSubmatch(s); m != nil {
			b.WriteString("<code>" + html.EscapeString(m[1]) + "</code>")
			s = s[len(m[0]):]
			continue
		}
		if m := p.link.FindStringSubmatch(s); m != nil {
			b.WriteString(`<a href="` + html.EscapeString(m[2]) + `" rel="noreferrer noopener">` + inline(m[1]) + "</a>")
			s = s[len(m[0]):]
			continue
		}
		if m := p.strong.FindStringSubmatch(s); m != nil && m[1] == m[3] {
			b.WriteString("<strong>" + inline(m[2]) + "</strong>")
			s = s[len(m[0]):]
			continue
		}
		if m := p.strike.FindStringSubmatch(s); m != nil {
			b.WriteString("<del>" + inline(m[1]) + "</del>")
			s = s[len(m[0]):]
			continue
		}
		if m := p.emphasis.FindStringSubmatch(s); m != nil && m[1] == m[3] {
			b.WriteString("<em>" + inline(m[2]) + "</em>")
			s = s[len(m[0]):]
			continue
		}
		// One character, escaped.
		n := 1
		for n < len(s) && s[n]&0xc0 == 0x80 {
			n++
		}
		b.WriteString(html.EscapeString(s[:n]))
		s = s[n:]
	}
	return b.String()
}
