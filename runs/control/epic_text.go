package control

// The text form of an epic run's state: `saga-lsp status <epic>` prints it,
// and the language server's showPlan shows it under an epic's plan.

import (
	"fmt"
	"io"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/termtext"
)

// WriteText prints the epic's header (id and title), the run's summary,
// then one line per story: its state, tasks, what holds it or what it
// waits for, its branch and base, its PR.
func (s *EpicStatus) WriteText(w io.Writer, title string) error {
	var b strings.Builder
	header := esc(s.ID)
	if title != "" && title != s.ID {
		header += " — " + esc(title)
	}
	run := "no run"
	if s.Session != "" {
		run = fmt.Sprintf("runner %s (session %s)", esc(s.State), esc(s.Session))
	}
	fmt.Fprintf(&b, "%s\n%s · %s", header, s.String(), run)
	if s.Cost > 0 {
		fmt.Fprintf(&b, " · $%.2f", s.Cost)
	}
	b.WriteByte('\n')
	width := 0
	for _, st := range s.Stories {
		width = max(width, len(esc(st.ID)))
	}
	for _, st := range s.Stories {
		fmt.Fprintf(&b, "  %-*s %-9s %d/%d", width, esc(st.ID), esc(st.State), st.Done, st.Total)
		switch {
		case len(st.HeldBy) > 0:
			b.WriteString("  held by " + strings.Join(termtext.Escapes(st.HeldBy), ", "))
			if len(st.Conflicts) > 0 {
				b.WriteString(" (conflicts: " + strings.Join(termtext.Escapes(st.Conflicts), ", ") + ")")
			}
		case len(st.BlockedBy) > 0 && st.State == EpicWaiting:
			b.WriteString("  after " + strings.Join(termtext.Escapes(st.BlockedBy), ", "))
		}
		if st.Branch != "" {
			b.WriteString("  " + esc(st.Branch))
			if st.Base != "" {
				b.WriteString(" ← " + esc(st.Base))
			}
		}
		if st.PR != "" {
			b.WriteString("  " + esc(st.PR))
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
