package readmodel

// The text form of an epic run's state: `saga-lsp status <epic>` prints it,
// and the language server's showPlan shows it under an epic's plan; and
// its JSON form, status's --format json.

import (
	"fmt"
	"io"
	"strings"

	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/store"
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
	switch {
	case s.Session != "" && s.DryRun:
		run = fmt.Sprintf("last run: a dry run, %s (session %s; simulated, not the stories' progress)", esc(s.State), esc(s.Session))
	case s.Session != "":
		run = fmt.Sprintf("runner %s (session %s)", esc(s.State), esc(s.Session))
	}
	fmt.Fprintf(&b, "%s\n%s · %s", header, s.String(), run)
	if s.Cost > 0 {
		fmt.Fprintf(&b, " · $%.2f spent (every run of its stories)", s.Cost)
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
			b.WriteString("  " + esc(HeldText(s.ID, st)))
		case len(st.WaitsFor) > 0 && st.State == EpicWaiting:
			b.WriteString("  " + WaitsText(st))
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
		if st.Dry != nil {
			b.WriteString("  · " + esc(st.Dry.Text()))
		}
		if st.Cost > 0 {
			fmt.Fprintf(&b, "  $%.2f", st.Cost)
		}
		if a := st.Actions; a != nil {
			b.WriteString("  " + a.Text())
		}
		b.WriteByte('\n')
		if st.Why != "" && st.State != "completed" && (st.State != EpicRunning || st.Actions != nil) {
			fmt.Fprintf(&b, "  %-*s ↳ %s\n", width, "", termtext.Block(st.Why, strings.Repeat(" ", width+5)))
		}
		if np := st.NoPR; np != nil {
			fmt.Fprintf(&b, "  %-*s ↳ no PR yet: %s — %s\n", width, "", esc(np.Why), esc(np.Next))
		}
		if bm := st.BaseMoved; bm != nil {
			fmt.Fprintf(&b, "  %-*s ↳ %s\n", width, "", esc(bm.Text(st.ID)))
		}
		for _, f := range st.Foreseen {
			fmt.Fprintf(&b, "  %-*s ↳ %s (foreseen before it started; landing resolves it)\n", width, "", esc(f.String()))
		}
		if l := st.Land; l != nil {
			fmt.Fprintf(&b, "  %-*s ↳ land: %s: %s\n", width, "", esc(l.State), esc(l.Why))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// HeldText says what holds a story of the epic and the next step: the
// blockers that did not complete (`saga-lsp status <blocker>` says why),
// or the files their branches conflict in.
func HeldText(epic string, st EpicStory) string {
	if len(st.HeldBy) == 0 {
		return ""
	}
	return "held by " + strings.Join(st.HeldBy, ", ") + ": " + HeldNext(epic, st)
}

// HeldNext is the next step for a held story.
func HeldNext(epic string, st EpicStory) string {
	if len(st.Conflicts) > 0 {
		return fmt.Sprintf("their branches conflict in %s — merge them by hand (or finish one on the base first), then `saga-lsp run %s`",
			strings.Join(st.Conflicts, ", "), epic)
	}
	return fmt.Sprintf("`saga-lsp status %s` says why they stopped; fix that, then `saga-lsp run %s` runs them and then %s", strings.Join(st.HeldBy, "`, `saga-lsp status "), epic, st.ID)
}

// WriteJSON prints the state as `status <epic> --format json` does.
func (s *EpicStatus) WriteJSON(w io.Writer) error {
	b, err := store.MarshalIndent(map[string]any{"epic": s})
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
