package control

// The text form of `saga-lsp status`: TaskList's lines for tasks, one line
// per story grouped by epic.

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/termtext"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// esc escapes what a repository, a model or a run wrote for the terminal
// (termtext.Escape): every field of the text form but the numbers.
func esc(s string) string { return termtext.Escape(s) }

// WriteText prints the status: one story with header and tasks, or every
// story grouped by epic (with tasks when they were asked for).
func (s *Status) WriteText(w io.Writer) error {
	var b strings.Builder
	if s.single && len(s.Stories) == 1 {
		writeStoryText(&b, s.Stories[0])
	} else {
		s.writeListText(&b)
	}
	if s.verbose {
		for _, st := range s.Stories {
			for _, r := range st.IgnoredRuns {
				fmt.Fprintf(&b, "ignored:  %s: GitHub Actions run %d %s — %s\n", esc(st.ID), r.ID, esc(r.URL), esc(r.Why))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeStoryText(b *strings.Builder, st StoryStatus) {
	fmt.Fprintf(b, "%s — %s\n", esc(st.ID), esc(st.Title))
	from := ""
	switch st.From {
	case readmodel.FromWorktree:
		from = " (from the worktree)"
	case readmodel.FromBranch:
		from = " (from " + runs.StoryBranch(st.ID) + ")"
	case readmodel.FromOrigin:
		from = " (from origin/" + runs.StoryBranch(st.ID) + ")"
	}
	// Two named fields, one value each: what its tasks say, and what its
	// last run says (docs/commands.md#a-storys-state).
	fmt.Fprintf(b, "status:   %s, %d/%d tasks done%s\n", esc(st.Status), st.Done, st.Total, from)
	if st.State != st.Status && st.State != readmodel.StoryPending {
		fmt.Fprintf(b, "run:      %s\n", esc(st.State))
	}
	if st.Epic != "" {
		fmt.Fprintf(b, "epic:     %s\n", esc(st.Epic))
	}
	if st.PR != "" {
		state := ""
		if st.PRState != "" {
			state = " (" + strings.ToLower(st.PRState) + ", as last seen)"
		}
		fmt.Fprintf(b, "PR:       %s%s\n", esc(st.PR), esc(state))
	} else if np := st.NoPR; np != nil {
		fmt.Fprintf(b, "PR:       none yet — %s; %s\n", esc(np.Why), esc(np.Next))
		if np.Detail != "" {
			fmt.Fprintf(b, "          (the worker: %s)\n", esc(np.Detail))
		}
	}
	if st.Review != nil {
		// The needs-you line is the next step's ("next:"), said once.
		fmt.Fprintf(b, "review:   %s\n", st.Review.Text())
	}
	if st.Branch != "" {
		fmt.Fprintf(b, "branch:   %s\n", esc(st.Branch))
	}
	if bm := st.BaseMoved; bm != nil {
		fmt.Fprintf(b, "base:     %s\n", esc(bm.Text(st.ID)))
	}
	if l := st.Land; l != nil {
		fmt.Fprintf(b, "land:     %s: %s\n", esc(l.State), esc(l.Why))
	}
	if st.Worktree != "" {
		fmt.Fprintf(b, "worktree: %s\n", esc(st.Worktree))
	}
	if a := st.Actions; a != nil {
		fmt.Fprintf(b, "worker:   %s\n", a.Text())
		if st.Why != "" {
			fmt.Fprintf(b, "why:      %s\n", termtext.Block(st.Why, "          "))
		}
	} else {
		fmt.Fprintf(b, "worker:   %s\n", workerText(st.Worker, true))
	}
	if st.Worker.Why != "" && st.Actions == nil {
		fmt.Fprintf(b, "why:      %s\n", termtext.Block(st.Worker.Why, "          "))
	}
	if d := st.DryRun; d != nil {
		fmt.Fprintf(b, "dry run:  %s\n", dryText(st.ID, d))
	}
	if st.Next.Text != "" {
		fmt.Fprintf(b, "next:     %s\n", esc(st.Next.Text))
	}
	if len(st.Protected) > 0 {
		files := make([]string, len(st.Protected))
		for i, p := range st.Protected {
			files[i] = esc(p.Path) + " (" + esc(p.Change) + ")"
		}
		fmt.Fprintf(b, "protected files changed: %s — the PR stays a draft; revert them, or allow it with \"mayChangeTests\" in a task on the base\n", strings.Join(files, ", "))
	}
	if st.Worker.OutputFile != "" {
		fmt.Fprintf(b, "output:   %s\n", esc(st.Worker.OutputFile))
	}
	if len(st.Tasks) > 0 {
		b.WriteString("\n")
		writeTasksText(b, st.Tasks, "")
	} else if st.Total == 0 {
		fmt.Fprintf(b, "\nno tasks: add one with `saga-lsp new task %s <id> --subject …`\n", esc(st.ID))
	}
}

// writeTasksText prints TaskList's text form:
// #<id> [<status>] <subject> [blocked by #a, #b]; a broken task file
// #<id> [broken: <code>] <its finding>.
func writeTasksText(b *strings.Builder, tasks []TaskStatus, indent string) {
	for _, t := range tasks {
		if t.Broken != nil {
			fmt.Fprintf(b, "%s#%s [broken: %s] %s\n", indent, esc(t.ID), t.Broken.Code, esc(t.Broken.Problem))
			continue
		}
		status := t.Status
		if status == "" {
			status = "unknown"
		}
		fmt.Fprintf(b, "%s#%s [%s] %s", indent, esc(t.ID), esc(status), esc(t.Subject))
		if len(t.BlockedBy) > 0 {
			b.WriteString(" [blocked by #" + strings.Join(termtext.Escapes(t.BlockedBy), ", #") + "]")
		}
		if c := t.Check; c != nil {
			if c.Passed {
				b.WriteString(" · ✓ checks")
			} else {
				how := fmt.Sprintf("exit status %d", c.ExitCode)
				if c.TimedOut {
					how = "timed out"
				}
				fmt.Fprintf(b, " · ✗ check failed: %s (%s)", esc(c.Command), how)
			}
		}
		b.WriteString("\n")
	}
}

func (s *Status) writeListText(b *strings.Builder) {
	if len(s.Stories) == 0 {
		b.WriteString("no stories: create one with `saga-lsp new story <name> --title …`\n")
		return
	}
	width, swidth := 0, 0
	for _, st := range s.Stories {
		width = max(width, len(esc(st.ID)))
		swidth = max(swidth, len(esc(st.Status))+2)
	}
	group := "\x00"
	for _, st := range s.Stories {
		if st.Epic != group {
			if group != "\x00" {
				b.WriteString("\n")
			}
			group = st.Epic
			switch title, ok := s.epicTitles[st.Epic]; {
			case st.Epic == "":
				b.WriteString("(no epic)\n")
			case ok && title != "":
				fmt.Fprintf(b, "%s — %s\n", esc(st.Epic), esc(title))
			default:
				fmt.Fprintf(b, "%s\n", esc(st.Epic))
			}
		}
		dry := ""
		if st.DryRun != nil {
			dry = "  · " + esc(st.DryRun.Text())
		}
		if st.NoPR != nil {
			dry += "; no PR yet (`saga-lsp status " + esc(st.ID) + "` says why)"
		}
		if st.BaseMoved != nil {
			dry += "; base moved (`saga-lsp restack " + esc(st.ID) + "`)"
		}
		switch r := st.Review; {
		case r != nil && r.NeedsYou != "":
			dry += "; review: needs you (`saga-lsp status " + esc(st.ID) + "` says why)"
		case r != nil && st.Next.Action == readmodel.NextAddressReview:
			dry += "; review: " + r.Text()
		}
		fmt.Fprintf(b, "  %-*s %-*s %s  %s%s\n", width, esc(st.ID), swidth, "["+esc(st.Status)+"]",
			strconv.Itoa(st.Done)+"/"+strconv.Itoa(st.Total), workerText(st.Worker, false), dry)
		if len(st.Tasks) > 0 {
			writeTasksText(b, st.Tasks, "      ")
		}
	}
}

// workerText describes the worker state; long adds session and start time.
func workerText(w WorkerInfo, long bool) string {
	var parts []string
	if w.PID > 0 && (w.Running || long) {
		parts = append(parts, "pid "+strconv.Itoa(w.PID))
	}
	if long && w.Session != "" {
		parts = append(parts, "session "+esc(w.Session))
	}
	if long && w.Started != "" {
		if t, err := time.Parse(time.RFC3339, w.Started); err == nil {
			parts = append(parts, "started "+clock(t))
		}
	}
	if long && w.DryRun && (w.State == runs.StateRunning || w.State == runs.StateStarting) {
		parts = append(parts, "dry run")
	}
	if long && w.Bash != "" {
		parts = append(parts, "Bash "+w.Bash)
	}
	if long && w.Cost > 0 {
		parts = append(parts, fmt.Sprintf("$%.2f", w.Cost))
	}
	if w.Cycle > 0 {
		parts = append(parts, "cycle "+strconv.Itoa(w.Cycle))
	}
	details := ""
	if len(parts) > 0 {
		details = " (" + strings.Join(parts, ", ") + ")"
	}
	switch w.State {
	case runs.StateRunning, runs.StateStarting:
		return esc(w.State) + details
	case StateIdle:
		return "not running"
	case StateDied:
		if !long {
			return "not running; last run died"
		}
		return "not running; the last run ended without a result (killed?)" + details
	}
	if !long && w.DryRun {
		// Its end is the dry run's, which the line says apart: "last run
		// completed" would read as the story's.
		return "not running"
	}
	if w.ExitCode != nil {
		parts = append([]string{"exit " + strconv.Itoa(*w.ExitCode)}, parts...)
	}
	if !long {
		parts = parts[:min(len(parts), 1)]
	}
	details = ""
	if len(parts) > 0 {
		details = " (" + strings.Join(parts, ", ") + ")"
	}
	if w.DryRun {
		return "not running; last run: a dry run, " + esc(w.State) + details
	}
	return "not running; last run " + esc(w.State) + details
}

// dryText says what a story's dry run left: never the story's own result.
func dryText(story string, d *readmodel.DryState) string {
	var where []string
	for _, w := range []string{d.Branch, d.Worktree} {
		if w != "" {
			where = append(where, esc(w))
		}
	}
	text := esc(d.State)
	if d.Total > 0 {
		text += fmt.Sprintf(" · %d/%d tasks", d.Done, d.Total)
	}
	if len(where) > 0 {
		text += " on " + strings.Join(where, " in ")
	}
	return text + " — the simulated agent's work, never the story's; `saga-lsp reset " + esc(story) + "` or `saga-lsp clean` removes it"
}

// clock shows a time of today as 15:04:05, else with its date.
func clock(t time.Time) string {
	t = t.Local()
	if y, m, d := time.Now().Date(); t.Year() == y && t.Month() == m && t.Day() == d {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04")
}
