package runs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// foldsRepo is a repository folder (its .git a folder: the read cache is
// inside the test's temp dir) and a session dir with an ended run, whose
// events set every kind of field a fold keeps, and a run still going.
func foldsRepo(t *testing.T) (root, ended, going string) {
	t.Helper()
	root, dir := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := "saga-story-shop--cart-1767323045000"
	ended = writeEvents(t, dir, s,
		ev(t, Event{Time: t0, Story: "shop--cart", Session: s, Event: KindWorkerStart, PID: 42, Bash: "sandboxed"}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindStep, Step: StepLock}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindStep, Step: StepWorktree, Branch: "story/shop--cart", Base: "main", Worktree: "/w/.saga/worktrees/shop--cart"}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindStep, Step: StepHydrate, TaskList: "l", TaskListDir: "/c/l", Done: Int(0), Total: Int(3)}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindRunStart, Cycle: 1}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindTaskStatus, Task: "t1", From: "pending", To: "in_progress"}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindTaskStatus, Task: "t1", From: "in_progress", To: "completed"}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindTaskStatus, Task: "t2", From: "pending", To: "in_progress"}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindCheckEnd, Task: "t1", Command: "go test ./...", ExitCode: Int(0), Passed: Bool(true), DurationMs: Int64(30)}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindPRMissing, Step: StepPR, Reason: NoPRLoggedOut, Message: "gh is not authenticated"}),
		ev(t, Event{Story: "shop--cart", Session: s, Event: KindWorkerEnd, Status: StatusFailed, ExitCode: Int(1), Cost: Float(0.5)}),
	)
	g := "saga-story-shop--pay-1767323046000"
	going = writeEvents(t, dir, g,
		ev(t, Event{Time: t0, Story: "shop--pay", Session: g, Event: KindWorkerStart, PID: 43}),
		ev(t, Event{Story: "shop--pay", Session: g, Event: KindStep, Step: StepLock}),
	)
	return root, ended, going
}

// An ended run's fold, kept by one reader, is what the next reader gets
// without reading its events — equal in every field, the unexported
// progress included; a run still going is never kept.
func TestRunFoldsKept(t *testing.T) {
	root, ended, going := foldsRepo(t)
	first := LoadRunCache(root)
	want, wantGoing := first.Read(ended), first.Read(going)
	if want == nil || !want.Ended || wantGoing == nil || wantGoing.Ended {
		t.Fatalf("the folds: %+v, %+v", want, wantGoing)
	}
	if err := first.Save(); err != nil {
		t.Fatal(err)
	}

	// The events file made unreadable: a second reader gets the kept fold
	// only if it does not read the file.
	if err := os.Chmod(ended, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(ended, 0o644)
	if os.Geteuid() == 0 {
		// root reads it anyway: the fold is told apart by a field the file
		// does not hold, written into the kept one.
		kept := readFolds(t, root)
		k := kept.Runs[ended]
		k.Run.Message = "from the kept fold"
		kept.Runs[ended] = k
		writeFolds(t, root, kept)
		want.Message = "from the kept fold"
	}
	second := LoadRunCache(root)
	got := second.Read(ended)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the kept fold:\n got %+v\nwant %+v", got, want)
	}
	if d, total, current := got.Progress(); d != 1 || total != 3 || current != "t2" {
		t.Errorf("the kept fold's progress: %d/%d, %q", d, total, current)
	}
	if _, ok := readFolds(t, root).Runs[going]; ok {
		t.Error("a run still going was kept")
	}
}

// A kept fold is read again from its events file when the file changed,
// or when another saga-lsp build kept it.
func TestRunFoldsStale(t *testing.T) {
	root, ended, _ := foldsRepo(t)
	c := LoadRunCache(root)
	c.Read(ended)
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	kept := readFolds(t, root)
	k := kept.Runs[ended]
	k.Run.Message = "from the kept fold"
	kept.Runs[ended] = k
	writeFolds(t, root, kept)
	if r := LoadRunCache(root).Read(ended); r.Message != "from the kept fold" {
		t.Fatalf("the kept fold was not read: %q", r.Message)
	}

	kept.Build = "another build"
	writeFolds(t, root, kept)
	if r := LoadRunCache(root).Read(ended); r.Message == "from the kept fold" {
		t.Error("another build's fold was read")
	}

	kept.Build = thisBuild()
	writeFolds(t, root, kept)
	f, err := os.OpenFile(ended, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(ev(t, Event{Story: "shop--cart", Event: KindTaskStatus, Task: "t3", To: "completed"}) + "\n")
	f.Close()
	if r := LoadRunCache(root).Read(ended); r.Message == "from the kept fold" {
		t.Error("the fold of an events file that changed since was read")
	}
}

func readFolds(t *testing.T, root string) runFoldsFile {
	t.Helper()
	dir, err := ReadCacheDir(root)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, runFoldsName))
	if err != nil {
		t.Fatal(err)
	}
	var f runFoldsFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func writeFolds(t *testing.T, root string, f runFoldsFile) {
	t.Helper()
	dir, err := ReadCacheDir(root)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, runFoldsName), data, 0o600); err != nil {
		t.Fatal(err)
	}
}
