//go:build linux

package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
)

// BenchmarkStats1000 is the budget "1,000 runs' stats render ≤ 1 s": an
// epic of 1,000 stories, each with its run record of 3 runs (3,000 run
// lines in 1,000 records: some failed with refused checks, review rounds,
// two thirds landed), counted by `saga-lsp stats <epic> --format json` as
// a process (stats-ms), and the dashboard's epic page, which shows the
// same figures, served whole (epic-page-ms: request → last byte, the
// server's rendering; the page's graph is BenchmarkDashboardEpicGraph's).
func BenchmarkStats1000(b *testing.B) {
	bin := builtBinary(b)
	const n = 1000
	var children [][2]any
	for i := range n {
		children = append(children, [2]any{fmt.Sprintf("big--s%04d", i), []string(nil)})
	}
	root := epicRepo(b, "big", children, 1)
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	for i := range n {
		sid := children[i][0].(string)
		rec := runs.Record{Story: sid, Branch: runs.StoryBranch(sid), Base: "main", PR: fmt.Sprintf("https://github.com/o/r/pull/%d", i+1)}
		for k := range 3 {
			line := runs.RunLine{Session: fmt.Sprintf("saga-story-%s-%d", sid, k), Started: t0.Add(time.Duration(i*3+k) * time.Minute),
				Status: runs.StatusCompleted, Cost: 0.25, Review: k == 2}
			if k == 0 && i%4 == 0 {
				line.Status, line.Refused = runs.StatusFailed, map[string]int{fmt.Sprintf("go test ./pkg%d/...", i%7): 2}
			}
			line.Ended = line.Started.Add(30 * time.Second)
			rec.Session, rec.Status, rec.Ended, rec.Cost, rec.Spent = line.Session, line.Status, line.Ended, line.Cost, rec.Spent+line.Cost
			runs.AddRun(&rec, line)
		}
		rec.Review = &runs.ReviewRecord{Rounds: 1}
		rec.PRState, rec.PRStateAt = runs.PROpen, rec.Ended
		if i%3 != 0 {
			rec.PRState, rec.PRStateAt = runs.PRMerged, rec.Ended.Add(time.Hour)
		}
		must(b, runs.WriteRecord(root, rec))
	}
	env := append(os.Environ(), "SAGA_SESSION_DIR="+b.TempDir(), "SAGA_TMUX_SOCKET="+filepath.Join(b.TempDir(), "no-tmux"))
	d := startDashboard(b, bin, root, env)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: time.Minute}
	get := func(u string) string {
		res, err := client.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("GET %s: %s %v", u, res.Status, err)
		}
		return string(body)
	}
	get(d.url) // the token, then its cookie
	page := d.base + "/r/" + filepath.Base(root) + "/epic/big"
	var statsMs, pageMs []float64
	for b.Loop() {
		cmd := exec.Command(bin, "stats", "big", "--format", "json")
		cmd.Dir, cmd.Env = root, env
		start := time.Now()
		out, err := cmd.Output()
		statsMs = append(statsMs, time.Since(start).Seconds()*1e3)
		if err != nil {
			b.Fatalf("stats: %v\n%s", err, out)
		}
		var f struct{ Stories, Landed, Runs int }
		if json.Unmarshal(out, &f) != nil || f.Stories != n || f.Landed != 666 || f.Runs != 3*n {
			b.Fatalf("stats: %.300s", out)
		}
		start = time.Now()
		body := get(page)
		pageMs = append(pageMs, time.Since(start).Seconds()*1e3)
		if !strings.Contains(body, `id="epic-figures" data-landed="666" data-runs="3000"`) {
			b.Fatalf("the epic page lacks the figures")
		}
	}
	b.ReportMetric(median(statsMs), "stats-ms")
	b.ReportMetric(median(pageMs), "epic-page-ms")
}
