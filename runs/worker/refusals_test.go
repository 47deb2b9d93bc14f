//go:build unix

package worker_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/worker"
)

// invocations reads every run the stand-in claude logged.
func invocations(t *testing.T, log string) []invocation {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []invocation
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var inv invocation
		if err := json.Unmarshal(sc.Bytes(), &inv); err != nil {
			t.Fatal(err)
		}
		out = append(out, inv)
	}
	return out
}

// promptOf is a run's -p argument.
func promptOf(inv invocation) string {
	for i, a := range inv.Args {
		if a == "-p" && i+1 < len(inv.Args) {
			return inv.Args[i+1]
		}
	}
	return ""
}

// A refused completion is told to the next run and retried; a task refused
// in --max-check-failures runs in a row ends the story failed (exit 1, not
// a timeout), with the check, its exit status and the last lines of its
// output in the log, the end event (status), the run record, the journal
// and the draft PR's description. Fixed on main — the check there, which
// the next run reads at its reference commit — the story is run again to
// completion, and its spend counts every run.
func TestRefusedCompletionToldAndRetried(t *testing.T) {
	testkit.Bwrap(t)
	f := newFixture(t, true)
	check := `test -f fixed.txt || { echo 'fixed.txt is missing'; exit 1; }`
	f.addStory("never", map[string]string{
		"build": `{"id": "build", "subject": "Build it", "description": "", "status": "pending", "blockedBy": [], "checks": [` + quote(check) + `]}`,
	})
	f.git("push", "-q", "origin", "main")
	log := filepath.Join(t.TempDir(), "claude.jsonl")
	t.Setenv("SAGA_STANDIN_LOG", log)
	t.Setenv("SAGA_STANDIN_COST_USD", "0.5")
	sessions := os.Getenv("SAGA_SESSION_DIR")
	session := func(n string) func(o *worker.Options) {
		return func(o *worker.Options) {
			o.Session = "saga-story-never-" + n
			o.OutputFile = runs.OutputFile(sessions, o.Session)
			f.out = o.OutputFile
		}
	}
	code, out := f.run("never", "all", session("1"))
	if code != runs.ExitFailed {
		t.Fatalf("exit %d, want %d (failed)\n%s", code, runs.ExitFailed, out)
	}
	for _, want := range []string{
		"error: task build: its check refused the completion in 3 runs in a row (--max-check-failures 3): `" + check + "` — exit status 1",
		"last lines of its output:\n           fixed.txt is missing",
		"then `saga-lsp run never`",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the worker's log lacks %q:\n%s", want, out)
		}
	}
	end := lastEnd(f.events())
	if end.Status != runs.StatusFailed || !strings.Contains(end.Message, "fixed.txt is missing") || !strings.Contains(end.Message, ".saga/stories/never/build.json") {
		t.Errorf("worker.end %+v", end)
	}
	// Three runs; the second and third were told why the last one's
	// completion was refused.
	invs := invocations(t, log)
	if len(invs) != 3 {
		t.Fatalf("%d runs, want 3", len(invs))
	}
	if p := promptOf(invs[0]); strings.Contains(p, "refused") {
		t.Errorf("the first run's prompt speaks of a refusal:\n%s", p)
	}
	for i, n := range []string{"1", "2"} {
		p := promptOf(invs[i+1])
		for _, want := range []string{"The last run's completion of these tasks was refused by their checks", "- task build (refused in " + n + " run(s) in a row; the story stops after 3): check `" + check + "` — exit status 1",
			"    fixed.txt is missing"} {
			if !strings.Contains(p, want) {
				t.Errorf("run %d's prompt lacks %q:\n%s", i+2, want, p)
			}
		}
	}
	// Each run tried the task again (it went back to pending between runs).
	tried := map[int]bool{}
	for _, e := range f.events() {
		if e.Event == runs.KindTaskStatus && e.Task == "build" && e.To == "in_progress" {
			tried[e.Cycle] = true
		}
	}
	if len(tried) != 3 {
		t.Errorf("the task was taken in runs %v, want all three", tried)
	}
	if j := f.journal("never"); !strings.Contains(j, "the story stops: task build: its check refused the completion in 3 runs in a row") || !strings.Contains(j, "fixed.txt is missing") {
		t.Errorf("journal:\n%s", j)
	}
	prs := f.ghPRs()
	body, _ := prs[0]["body"].(string)
	if len(prs) != 1 || prs[0]["isDraft"] != true || !strings.Contains(body, "### The story failed: a check kept refusing a task") || !strings.Contains(body, "    fixed.txt is missing") {
		t.Errorf("PR: draft %v\n%s", prs[0]["isDraft"], body)
	}
	rec, ok := runs.ReadRecord(f.root, "never")
	if !ok || rec.Status != runs.StatusFailed || !strings.Contains(rec.Why, "fixed.txt is missing") || rec.Spent != 1.5 {
		t.Errorf("run record %+v", rec)
	}
	// Its line in the record's history: every refusal by the check's
	// command — the stand-in tries a refused task 3 times a run, in 3 runs
	// — and the cost its runs reported (docs/landing.md#the-epics-outcome-counted).
	if h := rec.History; len(h) != 1 || h[0].Status != runs.StatusFailed || h[0].Cost != 1.5 || h[0].CostUnknown != 0 || h[0].Refused[check] != 9 || len(h[0].Refused) != 1 ||
		h[0].Session != "saga-story-never-1" || h[0].Started.IsZero() || h[0].Ended.Before(h[0].Started) || h[0].Review {
		t.Errorf("history after the first run %+v", rec.History)
	}
	st := testkit.Run(t, f.root, os.Environ(), "", f.sagaLSP, "status", "never")
	for _, want := range []string{"worker:   not running; last run failed (exit 1", "why:      worker failed: 0/1 tasks, 3 runs, exit 1 — task build: its check refused",
		"\n          fixed.txt is missing\n", "then `saga-lsp run never`"} {
		if !strings.Contains(st.Stdout, want) {
			t.Errorf("status lacks %q:\n%s%s", want, st.Stdout, st.Stderr)
		}
	}

	// The fix, on main: the check the next run reads at its reference commit.
	os.WriteFile(filepath.Join(f.root, ".saga", "stories", "never", "build.json"),
		[]byte(`{"id": "build", "subject": "Build it", "description": "", "status": "pending", "blockedBy": [], "checks": ["test -d saga-work"]}`+"\n"), 0o644)
	f.git("commit", "-qam", "fix the check of build")
	f.git("push", "-q", "origin", "main")
	code, out = f.run("never", "all", session("2"))
	if code != 0 {
		t.Fatalf("the run after the fix: exit %d\n%s", code, out)
	}
	prs = f.ghPRs()
	body, _ = prs[0]["body"].(string)
	if prs[0]["isDraft"] != false || strings.Contains(body, "The story failed") || !strings.Contains(body, "| build | `test -d saga-work` | ✓ passed |") {
		t.Errorf("PR after the fix: draft %v\n%s", prs[0]["isDraft"], body)
	}
	rec, _ = runs.ReadRecord(f.root, "never")
	if rec.Status != runs.StatusCompleted || rec.Spent != 2 || rec.Why != "" {
		t.Errorf("run record after the fix %+v", rec)
	}
	if h := rec.History; len(h) != 2 || h[0].Refused[check] != 9 || h[1].Status != runs.StatusCompleted || h[1].Cost != 0.5 || len(h[1].Refused) != 0 || h[1].Session != "saga-story-never-2" {
		t.Errorf("history after the fix %+v", rec.History)
	}
}

// A stacked story (its base a blocker's branch, forked before the story's
// definition changed on main) runs with its definition as main has it now
// — the run's reference commit is main's tip, brought into the branch —
// while its code stacks on the blocker's work.
func TestStackedStoryReadsItsDefinitionAtMain(t *testing.T) {
	f := newFixture(t, false)
	f.addStory("later", map[string]string{
		"t": `{"id": "t", "subject": "T", "description": "", "status": "pending", "blockedBy": []}`,
	})
	f.git("checkout", "-q", "-b", "story/first")
	os.WriteFile(filepath.Join(f.root, "first-work.txt"), []byte("the blocker's work\n"), 0o644)
	f.git("add", "first-work.txt")
	f.git("commit", "-qm", "the blocker's work")
	f.git("checkout", "-q", "main")
	story := filepath.Join(f.root, ".saga", "stories", "later", "story.json")
	os.WriteFile(story, []byte(`{"id": "later", "title": "Checked story", "description": "Work with checks, as fixed on main."}`+"\n"), 0o644)
	f.git("commit", "-qam", "fix the story's description on main")
	log := filepath.Join(t.TempDir(), "claude.jsonl")
	t.Setenv("SAGA_STANDIN_LOG", log)
	code, out := f.run("later", "idle", func(o *worker.Options) { o.MaxCycles = 1; o.Base = "story/first" })
	if code != runs.ExitLimit {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if p := promptOf(firstInvocation(t, log)); !strings.Contains(p, "Work with checks, as fixed on main.") {
		t.Errorf("the prompt has not main's definition:\n%s", p)
	}
	if _, err := os.Stat(filepath.Join(f.root, ".saga", "worktrees", "later", "first-work.txt")); err != nil {
		t.Errorf("the story does not stack on its blocker's work: %v", err)
	}
}

// A worker started by hand, without --output-file, keeps its events in the
// session dir as a started one does: its runs' refusals reach the next
// run, and the story ends failed after --max-check-failures, not timeout.
func TestHandStartedWorkerSeesRefusals(t *testing.T) {
	testkit.Bwrap(t)
	f := newFixture(t, true)
	f.addStory("never", map[string]string{
		"build": `{"id": "build", "subject": "Build it", "description": "", "status": "pending", "blockedBy": [], "checks": ["exit 1"]}`,
	})
	f.git("push", "-q", "origin", "main")
	code, out := f.run("never", "all", func(o *worker.Options) { o.Session, o.OutputFile = "saga-story-never-hand", "" })
	if code != runs.ExitFailed || !strings.Contains(out, "its check refused the completion in 3 runs in a row") {
		t.Fatalf("exit %d, want %d (failed) after 3 refusals\n%s", code, runs.ExitFailed, out)
	}
	events := runs.EventsFile(runs.OutputFile(os.Getenv("SAGA_SESSION_DIR"), "saga-story-never-hand"))
	if r := runs.ReadRun(events); r == nil || r.State != runs.StatusFailed {
		t.Errorf("the session dir's record of the run: %+v", r)
	}
}
