package cli_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/stats"
	"github.com/saga-ai/saga-lsp/runs/stats/statstest"
)

// TestStatsGolden: `stats` of the 30 recorded runs (runs/stats/statstest;
// their figures computed by hand in runs/stats' TestFiguresByHand), for an
// epic, a story and the workspace, as text and JSON (goldens in
// testdata/stats); the JSON is the figures runs/stats counts.
func TestStatsGolden(t *testing.T) {
	root := statstest.Repo(t)
	for _, c := range []struct{ name, arg string }{{"epic", "shop"}, {"story", "shop--api"}, {"workspace", ""}} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"stats"}
			if c.arg != "" {
				args = append(args, c.arg)
			}
			text := run(t, root, args...)
			js := run(t, root, append(args, "--format", "json")...)
			if text.Code != 0 || js.Code != 0 || text.Stderr != "" || js.Stderr != "" {
				t.Fatalf("exit %d, %d:\n%s%s%s", text.Code, js.Code, text.Stderr, js.Stderr, text.Stdout)
			}
			testkit.Golden(t, filepath.Join("testdata", "stats", c.name+".txt"), text.Stdout)
			testkit.Golden(t, filepath.Join("testdata", "stats", c.name+".json"), js.Stdout)
			var got stats.Figures
			if err := json.Unmarshal([]byte(js.Stdout), &got); err != nil {
				t.Fatal(err)
			}
			if got.Runs == 0 || !strings.Contains(text.Stdout, "cost per landed story:") {
				t.Errorf("figures %+v\n%s", got, text.Stdout)
			}
			if c.name == "workspace" && (got.Runs != 30 || got.Landed != 6 || !reflect.DeepEqual(got.FailedChecks[0], stats.CheckCount{Command: "go test ./...", Count: 7, Stories: 2})) {
				t.Errorf("the workspace's figures are not the hand-computed ones: %+v", got)
			}
		})
	}
	// Usage mistakes.
	if r := run(t, root, "stats", "shop", "blog"); r.Code != 2 || !strings.Contains(r.Stderr, `unexpected argument "blog"`) {
		t.Errorf("two names: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := run(t, root, "stats", "shopp"); r.Code != 2 || !strings.Contains(r.Stderr, `shop`) {
		t.Errorf("a typo: exit %d\n%s", r.Code, r.Stderr)
	}
}
