package stats

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/internal/termtext"
)

// Line is one figure as every face says it: its name and its value.
type Line struct {
	Name, Value string
}

// TopChecks is how many of the checks that failed most the text names.
const TopChecks = 5

// Lines are the figures as text, one line each, the same in `stats` and on
// the dashboard's epic page.
func (f Figures) Lines() []Line {
	out := []Line{
		{"stories landed", fmt.Sprintf("%d of %d (%d ran)", f.Landed, f.Stories, f.Run)},
		{"runs", fmt.Sprintf("%d: %d first, %s, %s", f.Runs, f.FirstRuns, termtext.Count(f.Retries, "retry", "retries"), termtext.Count(f.ReviewRuns, "review round", "review rounds"))},
		{"spend", money(f.Spent)},
		{"cost per landed story", f.costText()},
		{"first-pass rate", ratio(f.FirstPass, f.FirstPassOf, f.FirstPassRate, [2]string{"story run", "stories run"})},
		{"review rounds", f.roundsText()},
		{"first start → land", f.toLandText()},
		{"checks that failed most", f.checksText()},
	}
	return out
}

func (f Figures) costText() string {
	if f.CostPerLanded == nil {
		return "none landed"
	}
	s := fmt.Sprintf("%s (%s over %d)", money(*f.CostPerLanded), money(f.LandedCost), f.Landed)
	if f.CostUnknown > 0 {
		s = "at least " + s + fmt.Sprintf("; %s reported no cost", termtext.Count(f.CostUnknown, "headless run", "headless runs"))
	}
	return s
}

func (f Figures) roundsText() string {
	s := fmt.Sprint(f.ReviewRounds)
	if f.RoundsPerLanded != nil {
		s += fmt.Sprintf(" (%.2f per landed story)", *f.RoundsPerLanded)
	}
	return s
}

func (f Figures) toLandText() string {
	if f.ToLandMedian == nil {
		return "none landed with a recorded start"
	}
	return fmt.Sprintf("median %s, longest %s (%d landed)", duration(*f.ToLandMedian), duration(*f.ToLandLongest), f.ToLandOf)
}

func (f Figures) checksText() string {
	if len(f.FailedChecks) == 0 {
		return "none refused"
	}
	var parts []string
	for i, c := range f.FailedChecks {
		if i == TopChecks {
			parts = append(parts, fmt.Sprintf("%d more", len(f.FailedChecks)-TopChecks))
			break
		}
		parts = append(parts, fmt.Sprintf("`%s` %d× (%s)", termtext.Escape(c.Command), c.Count, termtext.Count(c.Stories, "story", "stories")))
	}
	return strings.Join(parts, "; ")
}

func ratio(n, of int, r *float64, what [2]string) string {
	if r == nil {
		return "no " + what[1]
	}
	return fmt.Sprintf("%.0f%% (%d of %s)", *r*100, n, termtext.Count(of, what[0], what[1]))
}

func money(usd float64) string { return fmt.Sprintf("$%.2f", usd) }

// duration is seconds to the minute: "2d 3h 5m", "9h", "45m", "30s".
func duration(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	d = d.Round(time.Minute)
	days, h, m := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case days > 0 && h == 0 && m == 0:
		return fmt.Sprintf("%dd", days)
	case days > 0:
		return fmt.Sprintf("%dd %dh %dm", days, h, m)
	case h > 0 && m == 0:
		return fmt.Sprintf("%dh", h)
	case h > 0:
		return fmt.Sprintf("%dh %dm", h, m)
	}
	return fmt.Sprintf("%dm", m)
}

// Title is the scope's heading: "epic shop", "story x", "the workspace".
func (f Figures) Title() string {
	if f.Scope == ScopeWorkspace {
		return "the workspace"
	}
	return f.Scope + " " + f.ID
}

// WriteText writes the figures as `stats` prints them: the heading, a line
// per figure, and for the workspace a line per epic.
func (f Figures) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: the outcome counted from saga-lsp's run records (docs/landing.md#the-epics-outcome-counted)\n", termtext.Escape(f.Title()))
	for _, l := range f.Lines() {
		fmt.Fprintf(&b, "  %-24s %s\n", l.Name+":", l.Value)
	}
	if len(f.Epics) > 0 {
		b.WriteString("by epic:\n")
		for _, e := range f.Epics {
			fmt.Fprintf(&b, "  %s: %d of %d landed · cost per landed story %s · first pass %s · %d review rounds\n",
				termtext.Escape(e.ID), e.Landed, e.Stories, e.costShort(), ratioShort(e.FirstPass, e.FirstPassOf), e.ReviewRounds)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (f Figures) costShort() string {
	if f.CostPerLanded == nil {
		return "–"
	}
	if f.CostUnknown > 0 {
		return "≥ " + money(*f.CostPerLanded)
	}
	return money(*f.CostPerLanded)
}

func ratioShort(n, of int) string {
	if of == 0 {
		return "–"
	}
	return fmt.Sprintf("%d/%d", n, of)
}
