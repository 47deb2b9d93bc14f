package plan

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/saga-ai/saga-lsp/internal/termtext"
)

// WriteText prints p as the EXECUTION PLAN block of `saga-lsp plan`.
//
// items must be the slice p was computed from: it supplies subjects,
// priorities and the "-- after" blockers. noun names the items (task(s)
// for a story, story/stories for an epic; the zero Noun means item(s)).
// maxParallel is only echoed; <= 0 means DefaultMaxParallel, as in Compute.
// Empty sections are omitted.
func (p Plan) WriteText(w io.Writer, title string, noun Noun, items []Item, maxParallel int) error {
	if maxParallel <= 0 {
		maxParallel = DefaultMaxParallel
	}
	if noun.Many == "" {
		noun = Noun{One: "item", Many: "items"}
	}
	g := newGraph(items)
	// One-line fields: a newline in a subject would break the block's
	// layout; then escaped like every name (termtext.Escape), the file's
	// text being the repository's.
	flat := strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ")
	line := func(s string) string { return termtext.Escape(flat.Replace(s)) }
	names := func(ids []string) string { return strings.Join(termtext.Escapes(ids), ", ") }

	var b strings.Builder
	rule := strings.Repeat("━", 36)
	b.WriteString(rule + "\n")
	if title != "" {
		fmt.Fprintf(&b, "EXECUTION PLAN — %s\n", line(title))
	} else {
		b.WriteString("EXECUTION PLAN\n")
	}
	b.WriteString(rule + "\n")
	planned := 0
	for _, wave := range p.Waves {
		planned += len(wave)
	}
	fmt.Fprintf(&b, "%s to execute: %d\n", capitalize(noun.Many), planned)
	fmt.Fprintf(&b, "Max parallel: %d per wave\n", maxParallel)

	if len(p.Waves) > 0 {
		b.WriteString("\n")
		labels := p.waveLabels()
		num := 0
		for i, wave := range p.Waves {
			fmt.Fprintf(&b, "%s (%s):\n", labels[i], noun.Count(len(wave)))
			for _, id := range wave {
				num++
				fmt.Fprintf(&b, "  %d. [%s]", num, termtext.Escape(id))
				v, ok := g.index[id]
				if !ok {
					b.WriteString("\n")
					continue
				}
				it := g.items[v]
				if s := line(it.Subject); s != "" {
					b.WriteString(" " + s)
				}
				if it.Priority != "" {
					fmt.Fprintf(&b, " (%s)", termtext.Escape(it.Priority))
				}
				if len(g.deps[v]) > 0 {
					fmt.Fprintf(&b, " -- after [%s]", names(g.names(g.deps[v])))
				}
				b.WriteString("\n")
				for _, w := range p.Waits {
					if w.ID == id {
						fmt.Fprintf(&b, "       waits for [%s]: %s\n", termtext.Escape(w.For), w.Why())
					}
				}
			}
		}
	}

	if len(p.Blocked) > 0 {
		b.WriteString("\nBLOCKED (unresolvable dependencies):\n")
		for _, bl := range p.Blocked {
			fmt.Fprintf(&b, "  [%s]", termtext.Escape(bl.ID))
			if v, ok := g.index[bl.ID]; ok {
				if s := line(g.items[v].Subject); s != "" {
					b.WriteString(" " + s)
				}
			}
			fmt.Fprintf(&b, " -- blocked by: %s\n", names(bl.By))
		}
	}

	if len(p.Broken) > 0 {
		b.WriteString("\nBROKEN (fix these files first; nothing they block can start):\n")
		for _, br := range p.Broken {
			fmt.Fprintf(&b, "  [%s] %s\n", termtext.Escape(br.ID), line(br.Problem))
		}
	}

	if len(p.Cycles) > 0 {
		b.WriteString("\nCYCLES:\n")
		for i, c := range p.Cycles {
			b.WriteString("  " + strings.Join(termtext.Escapes(c), " → "))
			if i < len(p.WeakLinks) {
				fmt.Fprintf(&b, "  (weakest link: %s → %s)", termtext.Escape(p.WeakLinks[i].From), termtext.Escape(p.WeakLinks[i].To))
			}
			b.WriteString("\n")
		}
	}

	if len(p.Completed) > 0 {
		fmt.Fprintf(&b, "\nCOMPLETED:\n  %d already completed: %s\n", len(p.Completed), names(p.Completed))
	}
	b.WriteString(rule + "\n")

	_, err := io.WriteString(w, b.String())
	return err
}

// Noun is the word for a plan's items, singular and plural.
type Noun struct{ One, Many string }

// Stories names an epic's items.
func Stories() Noun { return Noun{One: "story", Many: "stories"} }

// Count is n of them: "1 story", "2 stories" (termtext.Count).
func (n Noun) Count(k int) string { return termtext.Count(k, n.One, n.Many) }

// waveLabels names each sub-wave "WAVE n", or "WAVE na", "WAVE nb", … when
// wave n was split, so the number still means the dependency wave. A plan
// without WaveOf (e.g. decoded from JSON) is labelled 1, 2, 3, … instead.
func (p Plan) waveLabels() []string {
	nums := make([]int, len(p.Waves))
	parts := map[int]int{}
	for i, wave := range p.Waves {
		n, ok := 0, false
		if len(wave) > 0 {
			n, ok = p.WaveOf[wave[0]]
		}
		if !ok {
			labels := make([]string, len(p.Waves))
			for j := range labels {
				labels[j] = fmt.Sprintf("WAVE %d", j+1)
			}
			return labels
		}
		nums[i] = n
		parts[n]++
	}
	labels := make([]string, len(p.Waves))
	seen := map[int]int{}
	for i, n := range nums {
		if parts[n] == 1 {
			labels[i] = fmt.Sprintf("WAVE %d", n)
			continue
		}
		labels[i] = fmt.Sprintf("WAVE %d%s", n, letters(seen[n]))
		seen[n]++
	}
	return labels
}

// letters maps 0, 1, …, 25, 26, … to a, b, …, z, aa, … like spreadsheet
// columns, so --max-parallel 1 on a wide wave still gets distinct labels.
func letters(k int) string {
	var s []byte
	for k++; k > 0; k = (k - 1) / 26 {
		s = append([]byte{byte('a' + (k-1)%26)}, s...)
	}
	return string(s)
}

func capitalize(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}
