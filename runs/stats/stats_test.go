package stats_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/store"

	tw "github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/stats"
	"github.com/saga-ai/saga-lsp/runs/stats/statstest"
)

// want is a figure set computed by hand.
type want struct {
	stories, run, landed, runs, first, retries, reviewRuns int
	spent, landedCost, perLanded                           float64
	costUnknown, firstPass, firstPassOf, rounds            int
	roundsPerLanded                                        float64
	toLandOf                                               int
	median, longest                                        time.Duration
	checks                                                 []stats.CheckCount
}

func check(t *testing.T, name string, f stats.Figures, w want) {
	t.Helper()
	got := want{f.Stories, f.Run, f.Landed, f.Runs, f.FirstRuns, f.Retries, f.ReviewRuns, f.Spent, f.LandedCost, deref(f.CostPerLanded),
		f.CostUnknown, f.FirstPass, f.FirstPassOf, f.ReviewRounds, deref(f.RoundsPerLanded), f.ToLandOf,
		time.Duration(deref(f.ToLandMedian) * float64(time.Second)), time.Duration(deref(f.ToLandLongest) * float64(time.Second)), f.FailedChecks}
	if !reflect.DeepEqual(got, w) {
		t.Errorf("%s:\n got %+v\nwant %+v", name, got, w)
	}
	if w.firstPassOf > 0 && *f.FirstPassRate != float64(w.firstPass)/float64(w.firstPassOf) {
		t.Errorf("%s: first-pass rate %v", name, *f.FirstPassRate)
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestFiguresByHand: the 30 recorded runs' figures, each computed by hand
// from statstest.Stories (the arithmetic in the comments).
func TestFiguresByHand(t *testing.T) {
	root := statstest.Repo(t)
	ws := tw.Load(t, root)
	r := &stats.Reader{Root: root}
	const h = time.Hour

	shop := stats.Of(r, ws, "shop", store.NameEpic)
	check(t, "shop", shop, want{
		stories: 6, run: 5, // shop--search never ran
		landed: 4,            // schema, api, ui, e2e merged; docs open
		runs:   11, first: 5, // 1 + 3 + 3 + 2 + 2 runs; 5 stories' first
		retries: 2, reviewRuns: 4, // api's 2nd, e2e's 2nd; api 1 + ui 2 + docs 1 review rounds
		spent:      11.50,                  // 1.00 + (2.00+1.50+0.50) + (1.20+0.40+0.40) + (3.00+1.00) + (0.30+0.20)
		landedCost: 11.00, perLanded: 2.75, // 1.00 + 4.00 + 2.00 + 4.00 = 11.00; ÷ 4
		costUnknown: 1,                 // e2e's first run: a headless run without a cost
		firstPass:   3, firstPassOf: 5, // schema, ui, docs; not api (refused), e2e (timeout)
		rounds: 4, roundsPerLanded: 0.75, // api 1 + ui 2 + docs 1; landed: (1 + 2) ÷ 4
		toLandOf: 4, median: 5*h + 30*time.Minute, // schema 2h−0, api 8h−1h, ui 10h−1h, e2e 15h−11h: 2, 4, 7, 9 → (4+7)/2
		longest: 9 * h,
		checks:  []stats.CheckCount{{"npm run e2e", 4, 1}, {"go test ./...", 3, 1}, {"npm test", 1, 1}}, // e2e 3+1; api 2+1; ui 1
	})

	blog := stats.Of(r, ws, "blog", store.NameEpic)
	check(t, "blog", blog, want{
		stories: 2, run: 2, landed: 1, // post merged, feed not
		runs: 15, first: 2, retries: 11, reviewRuns: 2, // post 10 (7 retried, 2 review), feed 5 (4 retried)
		spent:      6.50, // post 8×0.50 + 2×0.25 = 4.50; feed 5×0.40 = 2.00
		landedCost: 4.50, perLanded: 4.50,
		costUnknown: 0,                 // feed's unknown run is not a landed story's
		firstPass:   0, firstPassOf: 2, // post's first failed, feed's too
		rounds: 2, roundsPerLanded: 2,
		toLandOf: 1, median: 12 * h, longest: 12 * h, // post 36h − 24h
		checks: []stats.CheckCount{{"go test ./...", 4, 1}, {"npm test", 4, 1}, {"go vet ./...", 2, 1}}, // post 2+1+1; feed 2+1+1; post 1+1
	})

	all := stats.Of(r, ws, "", store.NameEpic)
	check(t, "workspace", all, want{
		stories: 9, run: 8, landed: 6, // shop 4 + blog 1 + fix-typo
		runs: 30, first: 8, retries: 13, reviewRuns: 9, // 11 + 15 + 4; 2 + 11 + 0; 4 + 2 + 3
		spent:      18.25,                  // 11.50 + 6.50 + (0.10 + 3×0.05)
		landedCost: 15.75, perLanded: 2.63, // 11.00 + 4.50 + 0.25; ÷ 6 = 2.625 → to the cent (half away from zero)
		costUnknown: 1,
		firstPass:   4, firstPassOf: 8, // 3 + 0 + fix-typo
		rounds: 9, roundsPerLanded: 8.0 / 6, // 4 + 2 + 3; landed: 3 + 2 + 3
		toLandOf: 6, median: 6 * h, longest: 12 * h, // 2, 4, 5 (fix-typo 7h−2h), 7, 9, 12 → (5+7)/2
		checks: []stats.CheckCount{{"go test ./...", 7, 2}, {"npm test", 5, 2}, {"npm run e2e", 4, 1}, {"go vet ./...", 2, 1}, {"make lint", 1, 1}},
	})
	if len(all.Epics) != 2 || all.Epics[0].ID != "blog" || all.Epics[1].ID != "shop" || jsonOf(all.Epics[1]) != jsonOf(shop) {
		t.Errorf("the workspace's epics: %s", jsonOf(all.Epics))
	}

	one := stats.Of(r, ws, "shop--search", store.NameStory)
	// A story with no run: counted in stories, nowhere else.
	check(t, "shop--search", one, want{stories: 1, perLanded: -1, roundsPerLanded: -1, median: -time.Second, longest: -time.Second, checks: []stats.CheckCount{}})
}

// A record of saga-lsp before run lines: its spend, landing and rounds
// count; its runs, first pass and time to land are not known.
func TestRecordWithoutHistory(t *testing.T) {
	s := stats.FromRecord(runs.Record{Story: "old", Status: runs.StatusCompleted, Spent: 1.25, PRState: runs.PRMerged, PRStateAt: statstest.T0,
		Review: &runs.ReviewRecord{Rounds: 2}})
	if !s.Record || s.History || s.Runs != 0 || s.Spent != 1.25 || !s.Landed || s.ReviewRounds != 2 || s.FirstPass != nil || s.ToLand != nil {
		t.Errorf("%+v", s)
	}
}

// AddRun keeps the first run and the newest past runs.MaxHistory.
func TestHistoryBounded(t *testing.T) {
	var rec runs.Record
	for i := range runs.MaxHistory + 5 {
		runs.AddRun(&rec, runs.RunLine{Session: "s" + string(rune('0'+i%10)), Cost: float64(i)})
	}
	if len(rec.History) != runs.MaxHistory || rec.HistoryDropped != 5 || rec.History[0].Cost != 0 || rec.History[1].Cost != 6 || rec.History[runs.MaxHistory-1].Cost != float64(runs.MaxHistory+4) {
		t.Errorf("%d lines, %d dropped, first %v, second %v", len(rec.History), rec.HistoryDropped, rec.History[0].Cost, rec.History[1].Cost)
	}
	s := stats.FromRecord(runs.Record{Story: "x", History: rec.History, HistoryDropped: rec.HistoryDropped})
	if s.Runs != runs.MaxHistory+5 || s.Retries != runs.MaxHistory+4 {
		t.Errorf("runs %d, retries %d", s.Runs, s.Retries)
	}
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestMemoCountsAgainWhenARecordChanges: a Memo serves a scope's figures
// while the record folder is unchanged, and counts again once a record is
// written (WriteRecord's rename) or the folder changed too lately to tell.
// The folder's time is set back rather than waited for.
func TestMemoCountsAgainWhenARecordChanges(t *testing.T) {
	root := statstest.Repo(t)
	ws := tw.Load(t, root)
	dir, err := runs.RecordDir(root)
	if err != nil {
		t.Fatal(err)
	}
	back := time.Hour
	settled := func() { // each time to another moment, as time moves on
		t.Helper()
		back -= time.Minute
		past := time.Now().Add(-back)
		if err := os.Chtimes(dir, past, past); err != nil {
			t.Fatal(err)
		}
	}
	var memo stats.Memo
	var cache runs.RunCache
	spent := func(m *stats.Memo) float64 {
		return stats.Of(&stats.Reader{Root: root, Runs: &cache, Memo: m}, ws, "shop", store.NameEpic).Spent
	}
	settled()
	before := spent(&memo)

	// A record changed in place (no rename: the folder keeps its stamp) is
	// not seen through the memo — what shows that it serves — and is
	// without it.
	rec, ok := runs.ReadRecord(root, "shop--schema")
	if !ok {
		t.Fatal("no record of shop--schema")
	}
	rec.Cost += 100
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shop--schema.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := spent(&memo); got != before {
		t.Errorf("through the memo, the folder unchanged: spent %v, want the figures kept (%v)", got, before)
	}
	after := spent(nil)
	if after == before {
		t.Fatalf("the record's cost change moved nothing (%v): the test shows nothing", after)
	}

	// A record written: the folder changed just now, so the memo counts
	// (and keeps nothing it cannot trust), and again once it settled.
	rec.Cost += 100
	if err := runs.WriteRecord(root, rec); err != nil {
		t.Fatal(err)
	}
	want := spent(nil)
	if got := spent(&memo); got != want || got == after {
		t.Errorf("the folder changed just now: spent %v, want %v", got, want)
	}
	settled()
	if got := spent(&memo); got != want {
		t.Errorf("the folder changed and settled: spent %v, want %v", got, want)
	}

	// Another scope's stories: counted apart.
	if got, want := stats.Of(&stats.Reader{Root: root, Runs: &cache, Memo: &memo}, ws, "shop--schema", store.NameStory).Stories, 1; got != want {
		t.Errorf("the story's scope through the memo: %d stories, want %d", got, want)
	}
}
