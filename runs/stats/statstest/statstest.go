// Package statstest is test-only: the fixture of 30 recorded runs whose
// counted outcome runs/stats' golden test computes by hand, written into a
// repository through the real record writers (runs.WriteRecord,
// runs.AddRun, runs.RecordPRState, runs.UpdateReview) as the worker, land
// and the review loop write them — used by the stats, CLI and dashboard
// tests, which must agree on it.
package statstest

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
)

// T0 is the fixture's first start.
var T0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// Run is one run of a fixture story: its start and length after T0, its
// end, whether it was a review round, what it cost and refused.
type Run struct {
	At, Took    time.Duration
	Status      string
	Review      bool
	Cost        float64
	CostUnknown int
	Refused     map[string]int
}

// StoryRuns is a fixture story's runs, its review rounds as the review
// loop counted them, and when its PR was recorded merged (0: open).
type StoryRuns struct {
	ID       string
	Runs     []Run
	Rounds   int
	MergedAt time.Duration
}

const h = time.Hour

func r(at time.Duration, status string, cost float64, refused map[string]int) Run {
	return Run{At: at, Took: 30 * time.Minute, Status: status, Cost: cost, Refused: refused}
}

func review(at time.Duration, cost float64, refused map[string]int) Run {
	x := r(at, runs.StatusCompleted, cost, refused)
	x.Review = true
	return x
}

// Stories are the fixture's 30 runs: epic shop (6 stories, 11 runs, one
// story never run), epic blog (2 stories, 15 runs) and fix-typo outside
// any epic (4 runs).
func Stories() []StoryRuns {
	ok, failed, timeout := runs.StatusCompleted, runs.StatusFailed, runs.StatusTimeout
	gotest, govet, npm, e2e := "go test ./...", "go vet ./...", "npm test", "npm run e2e"
	unknown := r(11*h, timeout, 3.00, map[string]int{e2e: 3})
	unknown.CostUnknown = 1
	feed3 := r(32*h, failed, 0.40, map[string]int{npm: 1})
	feed3.CostUnknown = 1
	return []StoryRuns{
		{ID: "shop--schema", Runs: []Run{r(0, ok, 1.00, nil)}, MergedAt: 2 * h},
		{ID: "shop--api", Runs: []Run{r(1*h, failed, 2.00, map[string]int{gotest: 2}), r(2*h, ok, 1.50, map[string]int{gotest: 1}), review(5*h, 0.50, nil)}, Rounds: 1, MergedAt: 8 * h},
		{ID: "shop--ui", Runs: []Run{r(1*h, ok, 1.20, nil), review(4*h, 0.40, nil), review(6*h, 0.40, map[string]int{npm: 1})}, Rounds: 2, MergedAt: 10 * h},
		{ID: "shop--e2e", Runs: []Run{unknown, r(13*h, ok, 1.00, map[string]int{e2e: 1})}, MergedAt: 15 * h},
		{ID: "shop--docs", Runs: []Run{r(0, ok, 0.30, nil), review(3*h, 0.20, nil)}, Rounds: 1},
		{ID: "shop--search"},
		{ID: "blog--post", Runs: []Run{
			r(24*h, failed, 0.50, map[string]int{govet: 1}), r(25*h, failed, 0.50, map[string]int{gotest: 2}), r(26*h, timeout, 0.50, nil),
			r(27*h, failed, 0.50, map[string]int{gotest: 1}), r(28*h, runs.StatusStopped, 0.50, nil), r(29*h, runs.StatusBlocked, 0.50, nil),
			r(30*h, failed, 0.50, map[string]int{gotest: 1, govet: 1}), r(31*h, ok, 0.50, nil), review(33*h, 0.25, nil), review(34*h, 0.25, nil),
		}, Rounds: 2, MergedAt: 36 * h},
		{ID: "blog--feed", Runs: []Run{
			r(30*h, failed, 0.40, map[string]int{npm: 2}), r(31*h, failed, 0.40, map[string]int{npm: 1}), feed3,
			r(33*h, timeout, 0.40, nil), r(34*h, runs.StatusBlocked, 0.40, nil),
		}},
		{ID: "fix-typo", Runs: []Run{r(2*h, ok, 0.10, nil), review(4*h, 0.05, nil), review(5*h, 0.05, nil), review(6*h, 0.05, map[string]int{"make lint": 1})}, Rounds: 3, MergedAt: 7 * h},
	}
}

// Files are the fixture's .saga files: the epics and one task per story.
func Files() map[string]string {
	files := map[string]string{
		".saga/epics/shop/epic.json": `{"id": "shop", "title": "Shop", "description": "", "children": [
  {"id": "shop--schema", "blockedBy": []}, {"id": "shop--api", "blockedBy": ["shop--schema"]}, {"id": "shop--ui", "blockedBy": ["shop--schema"]},
  {"id": "shop--e2e", "blockedBy": ["shop--api", "shop--ui"]}, {"id": "shop--docs", "blockedBy": []}, {"id": "shop--search", "blockedBy": ["shop--api"]}]}` + "\n",
		".saga/epics/blog/epic.json": `{"id": "blog", "title": "Blog", "description": "", "children": [
  {"id": "blog--post", "blockedBy": []}, {"id": "blog--feed", "blockedBy": ["blog--post"]}]}` + "\n",
	}
	for _, s := range Stories() {
		files[".saga/stories/"+s.ID+"/story.json"] = fmt.Sprintf(`{"id": %q, "title": "Story %s", "description": ""}`+"\n", s.ID, s.ID)
		files[".saga/stories/"+s.ID+"/work.json"] = `{"id": "work", "subject": "Work", "description": "", "status": "pending", "blockedBy": []}` + "\n"
	}
	return files
}

// Write records the fixture's runs in the repository at root (its .saga
// files written and the repository made by the caller), each run's record
// written as the worker writes it at the run's end, the PR recorded merged
// as land records it, the rounds as the review loop counts them.
func Write(root string) error {
	for _, s := range Stories() {
		for i, x := range s.Runs {
			if err := WriteRun(root, s.ID, i, x); err != nil {
				return err
			}
		}
		if s.Rounds > 0 {
			if err := runs.UpdateReview(root, s.ID, func(rr *runs.ReviewRecord) { rr.Rounds = s.Rounds }); err != nil {
				return err
			}
		}
		if s.MergedAt > 0 {
			if err := runs.RecordPRState(root, s.ID, runs.PRMerged, T0.Add(s.MergedAt)); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteRun writes the story's n-th run's record, carrying the last one's
// as the worker does.
func WriteRun(root, story string, n int, x Run) error {
	prev, _ := runs.ReadRecord(root, story)
	ended := T0.Add(x.At + x.Took)
	rec := prev
	rec.Story, rec.Session, rec.Status, rec.Ended = story, fmt.Sprintf("saga-story-%s-%d", story, n+1), x.Status, ended
	rec.Branch, rec.Base, rec.Cost, rec.Spent = runs.StoryBranch(story), "main", x.Cost, prev.Spent+x.Cost
	rec.PR, rec.PRState, rec.PRStateAt = "https://github.com/o/r/pull/"+fmt.Sprint(len(story)), runs.PROpen, ended
	runs.AddRun(&rec, runs.RunLine{Session: rec.Session, Started: T0.Add(x.At), Ended: ended, Status: x.Status, Review: x.Review,
		Cost: x.Cost, CostUnknown: x.CostUnknown, Refused: x.Refused})
	return runs.WriteRecord(root, rec)
}

// Repo is a new repository holding the fixture: its files, and its runs
// recorded (Write).
func Repo(tb testing.TB) string {
	tb.Helper()
	root, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	testkit.WriteFiles(tb, root, Files())
	testkit.InitRepo(tb, root)
	if err := Write(root); err != nil {
		tb.Fatal(err)
	}
	return root
}
