//go:build unix

package worker_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsnotify/fsnotify"
	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/worker"
)

// Verified completion in worker runs (docs/worker.md#verified-completion), with the stand-in
// agent: its TaskCompleted goes through the real hook.

// addStory commits a story with tasks (id → task JSON) on main.
func (f *fixture) addStory(story string, tasks map[string]string) {
	f.t.Helper()
	dir := filepath.Join(f.root, ".saga", "stories", story)
	files := map[string]string{"story.json": `{"id": "` + story + `", "title": "Checked story", "description": "Work with checks."}` + "\n"}
	for id, task := range tasks {
		files[id+".json"] = task + "\n"
	}
	for name, data := range files {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			f.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
	f.git("add", "-A")
	f.git("commit", "-qm", "plan "+story)
}

func (f *fixture) checkEvents() []runs.Event {
	var out []runs.Event
	for _, e := range f.events() {
		if e.Event == runs.KindCheckEnd {
			out = append(out, e)
		}
	}
	return out
}

func (f *fixture) journal(story string) string {
	data, _ := os.ReadFile(filepath.Join(f.root, ".saga", "worktrees", story, ".saga", "stories", story, "journal.md"))
	return string(data)
}

// The simulated agent's completion is refused while the check fails (its
// first attempt), and accepted once it passes (its second): the task is
// completed, the events hold both results, and the final re-run's digest
// is in the journal. The hydrated description lists the check.
func TestCompletionRefusedUntilCheckPasses(t *testing.T) {
	testkit.Bwrap(t)
	f := newFixture(t, false)
	check := `grep -q '^Attempt 2\.' saga-work/gated/build.md`
	f.addStory("gated", map[string]string{
		"build": `{"id": "build", "subject": "Build it", "description": "Build.", "status": "pending", "blockedBy": [], "checks": [` + quote(check) + `]}`,
	})
	code, out := f.run("gated", "all", func(o *worker.Options) { o.KeepTasks = true })
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if st := f.worktreeStatuses("gated"); st["build"] != "completed" {
		t.Errorf("statuses %v", st)
	}
	var results []string
	for _, e := range f.checkEvents() {
		results = append(results, e.Task+" "+e.Command+" "+map[bool]string{true: "passed", false: "failed"}[*e.Passed])
	}
	want := []string{"build " + check + " failed", "build " + check + " passed", "build " + check + " passed"}
	if !slices.Equal(results, want) {
		t.Errorf("check results %q, want %q (hook refuses, hook accepts, final re-run)\n%s", results, want, out)
	}
	work, _ := os.ReadFile(filepath.Join(f.root, ".saga", "worktrees", "gated", "saga-work", "gated", "build.md"))
	if !strings.Contains(string(work), "Attempt 2.") {
		t.Errorf("the agent did not try again:\n%s", work)
	}
	if j := f.journal("gated"); !strings.Contains(j, "every task's checks passed on the final tree") || !strings.Contains(j, "| build | `"+check+"` | ✓ passed |") {
		t.Errorf("journal:\n%s", j)
	}
	// What the model read of the task names the check.
	var list string
	for _, e := range f.events() {
		if e.TaskListDir != "" {
			list = e.TaskListDir
		}
	}
	tasks, err := claudecode.Read(list)
	if err != nil || !strings.Contains(tasks["build"].Description, "Checks (each must exit 0") || !strings.Contains(tasks["build"].Description, "- "+check) {
		t.Errorf("hydrated description: %q %v", tasks["build"].Description, err)
	}
}

// A check that never passes leaves the task unfinished: the simulated
// agent gives up after three refusals in a run, the task is retried in the
// next runs, and the story ends failed — not a timeout — once it was
// refused in --max-check-failures runs in a row.
func TestFailingCheckLeavesTaskUnfinished(t *testing.T) {
	testkit.Bwrap(t)
	f := newFixture(t, false)
	f.addStory("never", map[string]string{
		"build": `{"id": "build", "subject": "Build it", "description": "", "status": "pending", "blockedBy": [], "checks": ["echo not yet; exit 1"]}`,
	})
	code, out := f.run("never", "all", func(o *worker.Options) { o.MaxCheckFailures = 2 })
	if code != runs.ExitFailed {
		t.Fatalf("exit %d, want %d (failed)\n%s", code, runs.ExitFailed, out)
	}
	if end := lastEnd(f.events()); end.Status != runs.StatusFailed || *end.Cycles != 2 || !strings.Contains(end.Message, "refused the completion in 2 runs in a row (--max-check-failures 2)") {
		t.Errorf("worker.end %+v", end)
	}
	if st := f.worktreeStatuses("never"); st["build"] != "pending" {
		t.Errorf("statuses %v", st)
	}
	evs := f.checkEvents()
	if len(evs) < 3 || *evs[0].Passed || *evs[0].ExitCode != 1 || !strings.Contains(evs[0].Message, "not yet") {
		t.Errorf("check events %+v", evs)
	}
	if strings.Contains(f.journal("never"), "final tree") {
		t.Errorf("the final re-run ran without every task completed")
	}
}

// Before `gh pr ready` every task's checks run again on the final tree: a
// later task broke an earlier one, so the PR stays a draft, the run fails,
// the journal names the task and command, and the task goes back to
// pending. Once fixed on the base, the next run passes and the digest goes
// into the PR body.
func TestFinalChecksGatePRReady(t *testing.T) {
	testkit.Bwrap(t)
	f := newFixture(t, true)
	breaks := `test ! -e saga-work/stack/second.md`
	f.addStory("stack", map[string]string{
		"first":  `{"id": "first", "subject": "First", "description": "", "status": "pending", "blockedBy": [], "checks": [` + quote(breaks) + `]}`,
		"second": `{"id": "second", "subject": "Second", "description": "", "status": "pending", "blockedBy": ["first"], "checks": ["test -f saga-work/stack/second.md"]}`,
	})
	f.git("push", "-q", "origin", "main")
	code, out := f.run("stack", "all", nil)
	if code != runs.ExitFailed {
		t.Fatalf("exit %d, want %d\n%s", code, runs.ExitFailed, out)
	}
	prs := f.ghPRs()
	if len(prs) != 1 || prs[0]["isDraft"] != true {
		t.Fatalf("the PR went ready: %v", prs)
	}
	if end := lastEnd(f.events()); end.Status != runs.StatusFailed {
		t.Errorf("worker.end %+v", end)
	}
	if st := f.worktreeStatuses("stack"); st["first"] != "pending" || st["second"] != "completed" {
		t.Errorf("statuses %v", st)
	}
	j := f.journal("stack")
	if !strings.Contains(j, "the final run of the checks failed") || !strings.Contains(j, "task first: `"+breaks+"` exit status 1") {
		t.Errorf("journal:\n%s", j)
	}
	pushed := testkit.Git(t, f.origin, "show", "story/stack:.saga/stories/stack/journal.md")
	if !strings.Contains(pushed, "the final run of the checks failed") {
		t.Errorf("the journal entry was not committed and pushed:\n%s", pushed)
	}

	// The user fixes the check on the base and merges it into the branch.
	os.WriteFile(filepath.Join(f.root, ".saga", "stories", "stack", "first.json"),
		[]byte(`{"id": "first", "subject": "First", "description": "", "status": "pending", "blockedBy": [], "checks": ["test -d saga-work"]}`+"\n"), 0o644)
	f.git("commit", "-qam", "fix the check of first")
	f.git("push", "-q", "origin", "main")
	f.gitIn(filepath.Join(f.root, ".saga", "worktrees", "stack"), "merge", "-q", "--no-edit", "main")
	code, out = f.run("stack", "all", nil)
	if code != 0 {
		t.Fatalf("second run: exit %d\n%s", code, out)
	}
	prs = f.ghPRs()
	body, _ := prs[0]["body"].(string)
	if prs[0]["isDraft"] != false || !strings.Contains(body, "### Checks (run by saga-lsp on the final tree)") ||
		!strings.Contains(body, "| first | `test -d saga-work` | ✓ passed |") || !strings.Contains(body, "| second | `test -f saga-work/stack/second.md` | ✓ passed |") ||
		!strings.HasPrefix(body, "Work with checks.") {
		t.Errorf("PR after the second run: draft %v\n%s", prs[0]["isDraft"], body)
	}
}

// A completion made while the run is being stopped may have skipped its
// checks (Claude Code lets it through when it kills the hook): the worker
// puts such a task back to pending.
func TestInterruptedCompletionNotVerified(t *testing.T) {
	testkit.Bwrap(t)
	f := newFixture(t, false)
	f.addStory("halt", map[string]string{
		"a": `{"id": "a", "subject": "A", "description": "", "status": "pending", "blockedBy": [], "checks": ["true"]}`,
		"b": `{"id": "b", "subject": "B", "description": "", "status": "pending", "blockedBy": ["a"], "checks": ["true"]}`,
	})
	t.Setenv("SAGA_STANDIN_SCRIPT", "slow")
	t.Setenv("SAGA_STANDIN_DELAY_MS", "300")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Stop the worker (as SIGINT does) once the agent completed a.
	events := f.out + ".events.jsonl"
	os.MkdirAll(filepath.Dir(events), 0o755)
	os.WriteFile(events, nil, 0o644)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(events); err != nil {
		t.Fatal(err)
	}
	go func() {
		tail := runs.Tail{Path: events}
		for range w.Events {
			tail.Read(func(e runs.Event) {
				if e.Event == runs.KindTaskStatus && e.Task == "a" && e.To == "completed" && e.Source == runs.SourceClaude {
					cancel()
				}
			})
		}
	}()
	code := worker.Run(ctx, worker.Options{Story: "halt", Dir: f.root, Self: f.sagaLSP, Process: runs.Process{OutputFile: f.out, Stdout: os.Stderr},
		WorkerFlags: runs.WorkerFlags{MaxCycles: 5, MaxTime: 1}})
	if code != runs.ExitFailed {
		t.Fatalf("exit %d", code)
	}
	if st := f.worktreeStatuses("halt"); st["a"] != "pending" {
		t.Errorf("statuses %v: a was completed by the interrupted run", st)
	}
	if j := f.journal("halt"); !strings.Contains(j, "completed while the run was being stopped, so their checks may not have run; back to pending: a") {
		t.Errorf("journal:\n%s", j)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The worker registers the TaskCompleted hook with a timeout covering the
// longest task's checks, and gives the hook the fork point, its reading of
// the checks (in the session dir) and how Bash runs.
func TestChecksRegistration(t *testing.T) {
	f := newFixture(t, false)
	f.addStory("reg", map[string]string{
		"a": `{"id": "a", "subject": "A", "description": "", "status": "pending", "blockedBy": [], "checks": ["true", "true"], "checkTimeout": 90}`,
		"b": `{"id": "b", "subject": "B", "description": "", "status": "pending", "blockedBy": [], "checks": ["true"]}`,
		"c": `{"id": "c", "subject": "C", "description": "", "status": "pending", "blockedBy": []}`,
	})
	fork := f.git("rev-parse", "main")
	log := filepath.Join(t.TempDir(), "claude.log")
	t.Setenv("SAGA_STANDIN_LOG", log)
	if code, out := f.run("reg", "idle", func(o *worker.Options) { o.MaxCycles = 1 }); code != runs.ExitLimit {
		t.Fatalf("exit %d\n%s", code, out)
	}
	inv := firstInvocation(t, log)
	var settings struct {
		Hooks map[string][]struct {
			Matcher string
			Hooks   []struct {
				Type, Command string
				Timeout       int
			}
		}
	}
	json.Unmarshal([]byte(inv.Args[slices.Index(inv.Args, "--settings")+1]), &settings)
	tc := settings.Hooks["TaskCompleted"]
	if len(tc) != 1 || tc[0].Matcher != "" || len(tc[0].Hooks) != 1 || tc[0].Hooks[0].Command != filepath.Join(filepath.Dir(f.sagaLSP), runs.HookBinary)+" hook" || tc[0].Hooks[0].Timeout != 600+60 {
		t.Errorf("TaskCompleted registration %+v, want timeout 660 (b: one check of 600 s, and the margin)", tc)
	}
	env := inv.Env
	if env["SAGA_FORK_POINT"] != fork || env["SAGA_CHECKS_TIMEOUT"] != "660" || env["SAGA_BASH"] == "" ||
		!strings.HasPrefix(env["SAGA_CHECKS_FILE"], os.Getenv("SAGA_SESSION_DIR")+"/") {
		t.Errorf("environment %v", env)
	}
	m, err := runs.ReadChecksManifest(env["SAGA_CHECKS_FILE"])
	if err != nil || m.ForkPoint != fork || len(m.Tasks) != 3 || len(m.Tasks["a"].Commands) != 2 || m.Tasks["a"].TimeoutSeconds != 90 || len(m.Tasks["c"].Commands) != 0 {
		t.Errorf("the checks file: %+v %v", m, err)
	}
}

// A stacked story (its worker's base is a blocker's branch) takes its
// checks at the epic's base's tip (the run's reference commit), never from
// the blocker's branch, whose agent may have changed them.
func TestStackedStoryChecksFromTheEpicBase(t *testing.T) {
	f := newFixture(t, false)
	f.addStory("later", map[string]string{
		"t": `{"id": "t", "subject": "T", "description": "", "status": "pending", "blockedBy": [], "checks": ["exit 3"]}`,
	})
	fork := f.git("rev-parse", "main")
	// The blocker's branch: its agent weakened the later story's check.
	f.git("checkout", "-q", "-b", "story/first")
	os.WriteFile(filepath.Join(f.root, ".saga", "stories", "later", "t.json"),
		[]byte(`{"id": "t", "subject": "T", "description": "", "status": "pending", "blockedBy": [], "checks": []}`+"\n"), 0o644)
	f.git("commit", "-qam", "the blocker's agent at work")
	f.git("checkout", "-q", "main")
	for _, record := range []bool{true, false} {
		if record {
			if err := runs.WriteRecord(f.root, runs.Record{Story: "first", Status: runs.StatusCompleted, Base: "main"}); err != nil {
				t.Fatal(err)
			}
		} else {
			// Without the blocker's run record: the default branch.
			f.git("worktree", "remove", "--force", filepath.Join(f.root, ".saga", "worktrees", "later"))
			f.git("branch", "-D", "story/later")
			if err := os.Remove(filepath.Join(f.root, ".git", "saga-lsp", "runs", "first.json")); err != nil {
				t.Fatal(err)
			}
		}
		code, out := f.run("later", "idle", func(o *worker.Options) { o.MaxCycles = 1; o.Base = "story/first" })
		if code != runs.ExitLimit {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if !strings.Contains(out, "checks: 1 task(s) with checks, as committed at "+fork[:12]+" (main's tip when the run started)") {
			t.Errorf("record %v: the checks were not read at main's tip:\n%s", record, out)
		}
	}
}

// invocation is one line of the stand-in claude's SAGA_STANDIN_LOG.
type invocation struct {
	Args []string          `json:"args"`
	Cwd  string            `json:"cwd"`
	Env  map[string]string `json:"env"`
}

// firstInvocation reads the first run the stand-in claude logged.
func firstInvocation(t *testing.T, log string) invocation {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var inv invocation
	line, _, _ := strings.Cut(string(data), "\n")
	if err := json.Unmarshal([]byte(line), &inv); err != nil {
		t.Fatal(err)
	}
	return inv
}
