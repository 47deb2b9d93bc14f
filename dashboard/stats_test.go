package dashboard_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/stats"
	"github.com/saga-ai/saga-lsp/runs/stats/statstest"
)

// TestEpicOutcome: the epic page of the 30 recorded runs
// (runs/stats/statstest) shows the epic's outcome, counted, in a real
// browser — each figure's line as `saga-lsp stats <epic>` prints it, and
// the numbers of its JSON.
func TestEpicOutcome(t *testing.T) {
	root := statstest.Repo(t)
	bin := testkit.Binary(t)
	text := testkit.Run(t, root, os.Environ(), "", bin, "stats", "shop")
	js := testkit.Run(t, root, os.Environ(), "", bin, "stats", "shop", "--format", "json")
	if text.Code != 0 || js.Code != 0 {
		t.Fatalf("stats: exit %d, %d\n%s%s", text.Code, js.Code, text.Stderr, js.Stderr)
	}
	var cli stats.Figures
	if err := json.Unmarshal([]byte(js.Stdout), &cli); err != nil {
		t.Fatal(err)
	}

	s := serve(t, root)
	b := newBrowser(t)
	b.open(s.srv.URL()) // the token, then its cookie
	b.open(s.base + "/r/" + repoKeyOf(root) + "/epic/shop")
	b.screenshot(t, "epic-outcome")
	var page struct {
		Landed, Runs string
		Lines        [][2]string
	}
	b.Eval(`(() => { const dl = document.querySelector('#epic-figures');
		return {landed: dl.dataset.landed, runs: dl.dataset.runs,
			lines: Array.from(dl.querySelectorAll('div')).map(d => [d.querySelector('dt').textContent, d.querySelector('dd').textContent])}; })()`, &page)
	if page.Landed != fmt.Sprint(cli.Landed) || page.Runs != fmt.Sprint(cli.Runs) || cli.Landed != 4 || cli.Runs != 11 {
		t.Errorf("the page's figures: landed %s, runs %s; the CLI's JSON: %d, %d", page.Landed, page.Runs, cli.Landed, cli.Runs)
	}
	// Every line the CLI prints, the page shows, in the same order.
	var cliLines [][2]string
	for _, l := range strings.Split(strings.TrimSpace(text.Stdout), "\n")[1:] {
		name, value, _ := strings.Cut(strings.TrimSpace(l), ":")
		cliLines = append(cliLines, [2]string{name, strings.TrimSpace(value)})
	}
	if jsonOf(page.Lines) != jsonOf(cliLines) || len(cliLines) != 8 {
		t.Errorf("the page's lines:\n%s\nthe CLI's:\n%s", jsonOf(page.Lines), jsonOf(cliLines))
	}
	// The numbers of the CLI's JSON are the page's.
	all := jsonOf(page.Lines)
	for _, want := range []string{
		fmt.Sprintf("%d of %d (%d ran)", cli.Landed, cli.Stories, cli.Run),
		fmt.Sprintf("at least $%.2f ($%.2f over %d)", *cli.CostPerLanded, cli.LandedCost, cli.Landed),
		fmt.Sprintf("%.0f%% (%d of %d stories run)", *cli.FirstPassRate*100, cli.FirstPass, cli.FirstPassOf),
		fmt.Sprintf("%d (%.2f per landed story)", cli.ReviewRounds, *cli.RoundsPerLanded),
		fmt.Sprintf("`%s` %d×", cli.FailedChecks[0].Command, cli.FailedChecks[0].Count),
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the page lacks %q:\n%s", want, all)
		}
	}
}
