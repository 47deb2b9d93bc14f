package runs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeEvents writes an events file of session with the given lines (JSON
// objects, or anything else to test the reader).
func writeEvents(t *testing.T, dir, session string, lines ...string) string {
	t.Helper()
	path := EventsFile(OutputFile(dir, session))
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func ev(t *testing.T, e Event) string {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The fold: what status, the language server and the epic runner all read
// off one events file.
func TestReadRunFolds(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := "saga-story-shop--cart-1767323045000"
	path := writeEvents(t, dir, s,
		ev(t, Event{Time: t0, Story: "shop--cart", Session: s, Event: KindWorkerStart, PID: 42, Bash: "sandboxed"}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindStep, Step: StepLock, Message: "holding the lock"}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindStep, Step: StepHydrate, TaskList: "saga__shop--cart__1", TaskListDir: "/c/tasks/saga__shop--cart__1", Done: Int(1), Total: Int(3)}),
		"not json",
		ev(t, Event{Story: "other", Session: s, Event: KindTaskStatus, Task: "x", To: "completed"}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindRunStart, Cycle: 1}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindTaskStatus, Task: "t1", From: "pending", To: "completed"}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindRunEnd, Cycle: 1, ExitCode: Int(0), Cost: Float(0.25), Done: Int(2), Total: Int(3)}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindCheckEnd, Task: "t1", Command: "go test ./...", ExitCode: Int(1), Passed: Bool(false), DurationMs: Int64(30)}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindWorkerEnd, Status: StatusBlocked, ExitCode: Int(3), PR: "https://x/pr/1"}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindTaskStatus, Task: "t2", To: "completed"}),
	)
	r := ReadRun(path)
	if r == nil {
		t.Fatal("ReadRun = nil")
	}
	want := Run{Story: "shop--cart", Session: s, EventsFile: path, OutputFile: OutputFile(dir, s), Started: t0, PID: 42,
		Locked: true, Ended: true, State: StatusBlocked, Step: StepEnd, Cycle: 1, Done: 2, Total: 3, Cost: 0.25,
		PR: "https://x/pr/1", TaskList: "saga__shop--cart__1", TaskListDir: "/c/tasks/saga__shop--cart__1", Bash: "sandboxed"}
	got := *r
	if got.ExitCode == nil || *got.ExitCode != 3 {
		t.Errorf("ExitCode = %v, want 3", got.ExitCode)
	}
	if got.Tasks["t1"] != "completed" || got.Tasks["x"] != "" || got.Tasks["t2"] != "" {
		t.Errorf("Tasks = %v: want t1 completed only (x is another story's, t2 came after the end)", got.Tasks)
	}
	if c := got.Checks["t1"]; c.Passed || c.ExitCode != 1 || c.Command != "go test ./..." {
		t.Errorf("Checks = %+v", got.Checks)
	}
	if got.Message != "worker blocked: 2/3 tasks, 1 run" {
		t.Errorf("Message = %q", got.Message)
	}
	got.ExitCode, got.Tasks, got.Checks, got.Message = nil, nil, nil, ""
	if !equalRun(got, want) {
		t.Errorf("ReadRun =\n%+v\nwant\n%+v", got, want)
	}
}

func equalRun(a, b Run) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// The lock decides starting → running: a refused lock is not past it.
func TestRunLockedState(t *testing.T) {
	r := NewRun("/x/saga-story-a-1.log.events.jsonl")
	if r.Story != "a" || r.Session != "saga-story-a-1" || r.State != StateStarting {
		t.Fatalf("NewRun = %+v", r)
	}
	r.Apply(Event{Event: KindWorkerStart, PID: 7})
	r.Apply(Event{Event: KindStep, Step: StepLock, Level: LevelWarn, Message: "another worker"})
	if r.Locked || r.State != StateStarting {
		t.Fatalf("after a refused lock: %+v", r)
	}
	r.Apply(Event{Event: KindStep, Step: StepLock})
	if !r.Locked || r.State != StateRunning {
		t.Fatalf("after the lock: %+v", r)
	}
	r.Died()
	if !r.Ended || r.State != StatusFailed || !strings.Contains(r.Message, "pid 7") {
		t.Fatalf("Died: %+v", r)
	}
}

// Tail hands over complete lines only, keeps a partial line for the next
// read, and starts again when the file shrinks.
func TestTailIncremental(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "saga-story-a-1.log.events.jsonl")
	var bad []string
	tl := Tail{Path: path, Bad: func(line, why string) { bad = append(bad, why) }}
	var got []string
	read := func() { tl.Read(func(e Event) { got = append(got, e.Event) }) }
	appendStr := func(s string) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	appendStr(`{"event":"worker.start"}` + "\n" + `{"event":"st`)
	read()
	if strings.Join(got, ",") != "worker.start" {
		t.Fatalf("first read: %v", got)
	}
	appendStr(`ep"}` + "\n")
	read()
	if strings.Join(got, ",") != "worker.start,step" {
		t.Fatalf("second read: %v", got)
	}
	if err := os.WriteFile(path, []byte(`{"event":"run.start"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read()
	if strings.Join(got, ",") != "worker.start,step,run.start" || len(bad) != 1 {
		t.Fatalf("after a rewrite: %v, bad %v", got, bad)
	}
}

func TestListRunsAndLatest(t *testing.T) {
	dir := t.TempDir()
	writeEvents(t, dir, "saga-story-a-200", ev(t, Event{Event: KindWorkerStart, PID: 2}))
	writeEvents(t, dir, "saga-story-a-100", ev(t, Event{Event: KindWorkerStart, PID: 1}))
	writeEvents(t, dir, "saga-story-a--b-50", ev(t, Event{Event: KindWorkerStart, PID: 3}))
	writeEvents(t, dir, "saga-epic-shop-10", ev(t, Event{Event: KindEpicStart, PID: 4}))
	os.WriteFile(filepath.Join(dir, "saga-story-a-300.log"), nil, 0o644) // an output file only
	all := ListRuns(dir, KindStory)
	if len(all["a"]) != 2 || all["a"][0].Millis != 100 || len(all["a--b"]) != 1 || len(all["shop"]) != 0 {
		t.Fatalf("ListRuns = %+v", all)
	}
	if r := Latest(dir, KindStory, "a"); r == nil || r.PID != 2 {
		t.Fatalf("Latest = %+v", r)
	}
	if r := Latest(dir, KindEpic, "shop"); r == nil || r.PID != 4 || r.Epic != "shop" || !r.Locked {
		t.Fatalf("Latest epic = %+v", r)
	}
	if r := RunOf(dir, "a", 1); r == nil || r.PID != 1 {
		t.Fatalf("RunOf = %+v", r)
	}
}

// Writer stamps events and appends whole lines.
func TestWriterStamps(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	path := EventsFile(OutputFile(dir, "saga-story-a-1"))
	w, err := OpenWriter(path, "a", "", "saga-story-a-1", func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	w.Emit(Event{Event: KindWorkerStart, PID: 9})
	w.Close()
	if err := Append(path, Event{Story: "a", Session: "saga-story-a-1", Event: KindCheckEnd, Task: "t", Passed: Bool(true)}); err != nil {
		t.Fatal(err)
	}
	r := ReadRun(path)
	if r == nil || r.PID != 9 || !r.Started.Equal(now) || !r.Checks["t"].Passed {
		t.Fatalf("ReadRun = %+v", r)
	}
}

// The worker's command line: flags round-trip through Register and Args.
func TestWorkerFlagsRoundTrip(t *testing.T) {
	in := WorkerFlags{MaxCycles: 3, MaxTime: 0.5, Model: "sonnet", PermissionMode: "plan", Base: "dev",
		KeepTasks: true, DryRun: true, AllowUnsandboxedBash: true, MaxCost: 1.25}
	if err := in.Validate(); err != nil {
		t.Fatal(err)
	}
	args := in.Args()
	var out WorkerFlags
	fs := newTestFlagSet()
	out.Register(fs, "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Errorf("round trip: %+v → %q → %+v", in, args, out)
	}
	for _, bad := range []WorkerFlags{{MaxCycles: -1}, {MaxTime: -1}, {MaxCost: -1}, {Model: "-x"}, {Base: "a b"}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	d := WorkerFlags{}.WithDefaults()
	if d.MaxCycles != DefaultMaxCycles || d.MaxDuration() != time.Hour || d.Model != DefaultModel {
		t.Errorf("defaults: %+v", d)
	}
}

// An epic run's events fold into each story's record: started, ended, held
// (by whom, and the conflicting files when that is why).
func TestReadRunEpicStories(t *testing.T) {
	dir := t.TempDir()
	s := "saga-epic-shop-10"
	path := writeEvents(t, dir, s,
		ev(t, Event{Epic: "shop", Session: s, Event: KindEpicStart, PID: 4, MaxParallel: 2}),
		ev(t, Event{Epic: "shop", Story: "shop--a", Session: "saga-story-shop--a-11", Event: KindStoryStart, Base: "main"}),
		ev(t, Event{Epic: "shop", Story: "shop--a", Session: s, Event: KindStoryEnd, Status: StatusFailed}),
		ev(t, Event{Epic: "shop", Story: "shop--b", Session: s, Event: KindStoryHeld, By: []string{"shop--a"}}),
		ev(t, Event{Epic: "shop", Story: "shop--d", Session: s, Event: KindStoryHeld, By: []string{"shop--b", "shop--c"}, Files: []string{"cart.go", "api/my notes.md"}}),
	)
	r := ReadRun(path)
	if r == nil || r.Epic != "shop" || r.State != StateRunning || r.MaxParallel != 2 || r.Session != s {
		t.Fatalf("ReadRun = %+v", r)
	}
	want := map[string]StoryRecord{
		"shop--a": {Session: "saga-story-shop--a-11", Base: "main", Status: StatusFailed},
		"shop--b": {Status: "held", HeldBy: []string{"shop--a"}},
		"shop--d": {Status: "held", HeldBy: []string{"shop--b", "shop--c"}, Conflicts: []string{"cart.go", "api/my notes.md"}},
	}
	for id, w := range want {
		g := r.Stories[id]
		if g.Session != w.Session || g.Base != w.Base || g.Status != w.Status || !slices.Equal(g.HeldBy, w.HeldBy) || !slices.Equal(g.Conflicts, w.Conflicts) {
			t.Errorf("%s: %+v, want %+v", id, g, w)
		}
	}
}

// pr.missing: why a run has no PR, until an event names one.
func TestFoldPRMissing(t *testing.T) {
	r := NewRun(filepath.Join(t.TempDir(), "x.events.jsonl"))
	r.Apply(Event{Event: KindWorkerStart, Story: "s"})
	r.Apply(Event{Event: KindPRMissing, Step: StepPR, Reason: NoPRLoggedOut, Message: "gh is not authenticated"})
	if r.NoPR == nil || *r.NoPR != (NoPR{Reason: NoPRLoggedOut, Message: "gh is not authenticated"}) {
		t.Fatalf("after pr.missing: %+v", r.NoPR)
	}
	r.Apply(Event{Event: KindStep, Step: StepPR, PR: "https://example.invalid/pull/1"})
	if r.NoPR != nil || r.PR == "" {
		t.Fatalf("after a PR: %+v %q", r.NoPR, r.PR)
	}
	r.Apply(Event{Event: KindPRMissing, Reason: NoPRGH})
	if r.NoPR != nil {
		t.Errorf("a run with a PR has no missing one: %+v", r.NoPR)
	}
}
