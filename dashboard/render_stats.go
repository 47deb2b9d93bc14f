package dashboard

import (
	"strconv"

	"github.com/saga-ai/saga-lsp/runs/stats"
)

// outcome writes the epic's outcome, counted (runs/stats: the lines
// `saga-lsp stats <epic>` prints, from the same run records; nothing asks
// GitHub to draw them).
func (h *hw) outcome(f stats.Figures) {
	h.partOpen("section", "outcome")
	h.m(" class=\"outcome\" aria-labelledby=\"outcome-h\">\n  <h2 id=\"outcome-h\">Outcome, counted <small class=\"path\">from saga-lsp's run records: <code>saga-lsp stats ")
	h.t(f.ID)
	h.m("</code></small></h2>\n  <dl class=\"figures\" id=\"epic-figures\"")
	h.a("data-landed", strconv.Itoa(f.Landed))
	h.a("data-runs", strconv.Itoa(f.Runs))
	h.m(">\n")
	for _, l := range f.Lines() {
		h.m("    <div><dt>")
		h.t(l.Name)
		h.m("</dt><dd>")
		h.t(l.Value)
		h.m("</dd></div>\n")
	}
	h.m("  </dl>\n")
	h.partClose("section")
	h.m("\n")
}
