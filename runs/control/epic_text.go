package control

// The text form of an epic run's state: `saga-lsp status <epic>` prints it,
// and the language server's showPlan shows it under an epic's plan.

import (
	"fmt"
	"io"
	"strings"
)

// WriteText prints the epic's header (id and title), the run's summary,
// then one line per story: its state, tasks, what holds it or what it
// waits for, its branch and base, its PR.
func (s *EpicStatus) WriteText(w io.Writer, title string) error {
	var b strings.Builder
	header := s.ID
	if title != "" && title != s.ID {
		header += " — " + title
	}
	run := "no run"
	if s.Session != "" {
		run = fmt.Sprintf("runner %s (session %s)", s.State, s.Session)
	}
	fmt.Fprintf(&b, "%s\n%s · %s", header, s.String(), run)
	if s.Cost > 0 {
		fmt.Fprintf(&b, " · $%.2f", s.Cost)
	}
	b.WriteByte('\n')
	width := 0
	for _, st := range s.Stories {
		width = max(width, len(st.ID))
	}
	for _, st := range s.Stories {
		fmt.Fprintf(&b, "  %-*s %-9s %d/%d", width, st.ID, st.State, st.Done, st.Total)
		switch {
		case len(st.HeldBy) > 0:
			b.WriteString("  held by " + strings.Join(st.HeldBy, ", "))
			if len(st.Conflicts) > 0 {
				b.WriteString(" (conflicts: " + strings.Join(st.Conflicts, ", ") + ")")
			}
		case len(st.BlockedBy) > 0 && st.State == EpicWaiting:
			b.WriteString("  after " + strings.Join(st.BlockedBy, ", "))
		}
		if st.Branch != "" {
			b.WriteString("  " + st.Branch)
			if st.Base != "" {
				b.WriteString(" ← " + st.Base)
			}
		}
		if st.PR != "" {
			b.WriteString("  " + st.PR)
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
