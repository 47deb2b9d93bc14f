package plan

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/saga-ai/saga-lsp/internal/termtext"
)

// stateStyle is how a state is drawn: fill and border colours.
type stateStyle struct{ state, fill, stroke string }

// stateStyles covers the task statuses, "broken", and the epic runner's
// story states, in the order their styles are written. A state not listed
// is drawn plain.
var stateStyles = [...]stateStyle{
	{"pending", "#f1f3f5", "#868e96"},
	{"waiting", "#f1f3f5", "#868e96"},
	{"ready", "#e7f5ff", "#1c7ed6"},
	{"in_progress", "#fff3bf", "#f08c00"},
	{"running", "#fff3bf", "#f08c00"},
	{"completed", "#d3f9d8", "#2f9e44"},
	{"failed", "#ffe3e3", "#e03131"},
	{StateBroken, "#ffe3e3", "#e03131"},
	{"blocked", "#ffe8cc", "#e8590c"},
	{"timeout", "#ffe8cc", "#e8590c"},
	{"stopped", "#e9ecef", "#495057"},
	{"held", "#f3d9fa", "#9c36b5"},
}

// styleOf is the style of a state; false for a state not in stateStyles.
func styleOf(state string) (stateStyle, bool) {
	for _, s := range stateStyles {
		if s.state == state {
			return s, true
		}
	}
	return stateStyle{}, false
}

const (
	textColour     = "#212529"
	criticalColour = "#1864ab" // the critical path: thick, blue
	cycleColour    = "#c92a2a" // a cycle's edges: dashed, red, labelled
	maxTitle       = 60        // runes of a title shown in a node
)

// WriteMermaid writes the dependency graph of items as a Mermaid flowchart
// (`flowchart TD`): a node per item labelled with its id, its state and
// its title, an edge from each blocker to what it blocks, nodes styled by
// state, the critical path thick (edges) and outlined (nodes), a cycle's
// edges dotted, red and labelled "cycle". states gives each item's state by id;
// an item it does not name gets the state States derives. Node ids are
// generated (n1, n2, …, in input order) so that no item id can clash with
// Mermaid's syntax; labels are quoted and escaped.
func WriteMermaid(w io.Writer, items []Item, states map[string]string) error {
	d := newDrawing(items, states)
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	node := func(v int) string { return "n" + strconv.Itoa(v+1) }
	for v := range d.g.ids {
		lines := d.label(v)
		for i, l := range lines {
			lines[i] = mermaidText(l)
		}
		fmt.Fprintf(&b, "  %s[\"%s\"]\n", node(v), strings.Join(lines, "<br/>"))
	}
	var critical, cyclic []string
	for i, e := range d.edges {
		arrow := "-->"
		switch {
		case e.cycle:
			arrow = "-. cycle .->"
			cyclic = append(cyclic, strconv.Itoa(i))
		case e.critical:
			arrow = "==>"
			critical = append(critical, strconv.Itoa(i))
		}
		fmt.Fprintf(&b, "  %s %s %s\n", node(e.from), arrow, node(e.to))
	}
	for _, s := range stateStyles {
		var vs []string
		for v, st := range d.states {
			if st == s.state {
				vs = append(vs, node(v))
			}
		}
		if vs != nil {
			fmt.Fprintf(&b, "  classDef %s fill:%s,stroke:%s,color:%s\n", s.state, s.fill, s.stroke, textColour)
			fmt.Fprintf(&b, "  class %s %s\n", strings.Join(vs, ","), s.state)
		}
	}
	if len(d.critical) > 0 {
		vs := make([]string, len(d.critical))
		for i, v := range d.critical {
			vs[i] = node(v)
		}
		// After the state classes, so that its stroke wins.
		fmt.Fprintf(&b, "  classDef critical stroke:%s,stroke-width:4px\n", criticalColour)
		fmt.Fprintf(&b, "  class %s critical\n", strings.Join(vs, ","))
	}
	if critical != nil {
		fmt.Fprintf(&b, "  linkStyle %s stroke:%s,stroke-width:4px\n", strings.Join(critical, ","), criticalColour)
	}
	if cyclic != nil {
		fmt.Fprintf(&b, "  linkStyle %s stroke:%s,color:%s\n", strings.Join(cyclic, ","), cycleColour, cycleColour)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteDot writes the dependency graph of items as a Graphviz digraph:
// the same nodes, edges and marks as WriteMermaid (fillcolor by state, the
// critical path bold and blue, a cycle's edges dashed, red and labelled).
// Node ids are the item ids, quoted.
func WriteDot(w io.Writer, items []Item, states map[string]string) error {
	d := newDrawing(items, states)
	var b strings.Builder
	b.WriteString("digraph plan {\n")
	b.WriteString("  rankdir=TB;\n")
	fmt.Fprintf(&b, "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", fontname=\"Helvetica\", fontcolor=%q];\n", textColour)
	b.WriteString("  edge [fontname=\"Helvetica\"];\n")
	for v, id := range d.g.ids {
		lines := d.label(v)
		for i, l := range lines {
			lines[i] = strings.ReplaceAll(l, "&", "&amp;")
		}
		fmt.Fprintf(&b, "  %s [label=%s", dotID(id), dotQuote(strings.Join(lines, "\n")))
		if s, ok := styleOf(d.states[v]); ok {
			fmt.Fprintf(&b, ", fillcolor=%q", s.fill)
			if !d.onPath[v] {
				fmt.Fprintf(&b, ", color=%q", s.stroke)
			}
		}
		if d.onPath[v] {
			fmt.Fprintf(&b, ", color=%q, penwidth=3", criticalColour)
		}
		b.WriteString("];\n")
	}
	for _, e := range d.edges {
		fmt.Fprintf(&b, "  %s -> %s", dotID(d.g.ids[e.from]), dotID(d.g.ids[e.to]))
		switch {
		case e.cycle:
			fmt.Fprintf(&b, " [style=dashed, color=%q, fontcolor=%q, label=\"cycle\"]", cycleColour, cycleColour)
		case e.critical:
			fmt.Fprintf(&b, " [color=%q, penwidth=3]", criticalColour)
		}
		b.WriteString(";\n")
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// label is a node's text, a line each: "id · state", then the title
// (flattened to one line and shortened) when there is one; what is left of
// control characters escaped (termtext.Escape), as on a terminal, which may
// show the graph's text. Not yet escaped for either format.
func (d *drawing) label(v int) []string {
	lines := []string{termtext.Escape(d.g.ids[v] + " · " + oneLine(d.states[v]))}
	if title := oneLine(d.g.items[v].Subject); title != "" {
		if r := []rune(title); len(r) > maxTitle {
			title = strings.TrimSpace(string(r[:maxTitle-1])) + "…"
		}
		lines = append(lines, termtext.Escape(title))
	}
	return lines
}

// oneLine makes s one line: control characters (newlines, tabs) become
// spaces and runs of white space one space.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}

// mermaidText escapes free text for a double-quoted Mermaid label with
// Mermaid's entity codes (#NN;): the quote that would end it, the # that
// starts a code, % (directives), the backtick (markdown strings) and the
// HTML specials <, > and & (labels are HTML).
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '"', '#', '%', '`', '<', '>', '&':
			fmt.Fprintf(&b, "#%d;", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// dotID is an item's id as a DOT node id: escaped (termtext.Escape), then
// quoted.
func dotID(id string) string { return dotQuote(termtext.Escape(id)) }

// dotQuote quotes s as a DOT string: backslashes doubled (so that the
// text forms no label escape such as \N or \l), quotes escaped, a newline
// written as the label line break \n.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
