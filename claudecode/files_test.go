//go:build unix

package claudecode

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/store"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

func pending(ids ...string) []Task {
	out := make([]Task, len(ids))
	for i, id := range ids {
		out[i] = Task{ID: id, Subject: "subject " + id, Status: StatusPending}
	}
	return out
}

// makeReadOnly makes dir unwritable, also for root (through the immutable
// attribute), or skips the test.
func makeReadOnly(t *testing.T, dir string) {
	t.Helper()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	probe := filepath.Join(dir, "probe")
	f, err := os.Create(probe)
	if err != nil {
		return // unwritable
	}
	_ = f.Close()
	_ = os.Remove(probe)
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		testkit.Needs(t, fmt.Sprintf("a folder made read-only for root too: chattr +i %s failed (%v %s)", dir, err, out))
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", dir).Run() })
}

func TestHydrateFailures(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		tasks   []Task
		wantIn  []string // substrings of the error (file names are relative to dir)
		created bool     // whether dir may exist afterwards
	}{
		{"directory squats on a task file",
			func(t *testing.T, dir string) {
				if err := os.MkdirAll(filepath.Join(dir, "b.json"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			pending("a", "b", "c"), []string{"b.json"}, true},
		{"read-only list directory",
			func(t *testing.T, dir string) {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, ".lock"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
				makeReadOnly(t, dir)
			},
			pending("a"), []string{".lock.lock"}, true},
		{"read-only list directory without .lock",
			func(t *testing.T, dir string) {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				makeReadOnly(t, dir)
			},
			pending("a"), []string{".lock"}, true},
		{"parent is a file",
			func(t *testing.T, dir string) {
				if err := os.MkdirAll(filepath.Dir(filepath.Dir(dir)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Dir(dir), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			pending("a"), []string{"tasks"}, false},
		{"id not a sanitised name", nil,
			[]Task{{ID: "a.b", Subject: "s", Status: StatusPending}}, []string{`"a.b"`}, false},
		{"empty id", nil, pending(""), []string{`task id ""`}, false},
		{"duplicate id", nil, pending("a", "b", "a"), []string{`"a" given twice`}, false},
		{"invalid status", nil,
			append(pending("a"), Task{ID: "z", Subject: "s", Status: "deleted"}), []string{"z.json", `status "deleted"`}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := ListDir(t.TempDir(), "saga__s__1")
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			err := Hydrate(within(t, 2*time.Second), dir, tc.tasks)
			if err == nil {
				t.Fatal("Hydrate succeeded, want an error")
			}
			t.Log(err)
			for _, w := range tc.wantIn {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			if !tc.created {
				if _, err := os.Lstat(dir); err == nil {
					t.Errorf("a rejected hydration created %s", dir)
				}
				return
			}
			// No temp file or lock is left behind.
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp.") || strings.HasSuffix(e.Name(), ".lock") && e.IsDir() {
					t.Errorf("left behind: %s", e.Name())
				}
			}
		})
	}
}

func TestHydrateOverExistingAndEmpty(t *testing.T) {
	dir := ListDir(t.TempDir(), "saga__s__2")
	if err := Hydrate(within(t, 5*time.Second), dir, nil); err != nil {
		t.Fatalf("Hydrate of no tasks: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".lock")); err != nil {
		t.Errorf("no .lock after an empty hydration: %v", err)
	}
	if err := Hydrate(within(t, 5*time.Second), dir, pending("1", "2")); err != nil {
		t.Fatal(err)
	}
	second := pending("2")
	second[0].Status = StatusCompleted
	if err := Hydrate(within(t, 5*time.Second), dir, second); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir)
	if err != nil || len(got) != 2 || got["2"].Status != StatusCompleted || got["1"].Status != StatusPending {
		t.Errorf("Read after re-hydration = %v, %v", got, err)
	}
	// Hydrate waits for the list lock, up to its ctx.
	release, err := acquireListLock(within(t, 5*time.Second), dir, claudeTiming())
	if err != nil {
		t.Fatal(err)
	}
	err = Hydrate(within(t, 100*time.Millisecond), dir, pending("3"))
	release()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Hydrate while the list is locked = %v, want DeadlineExceeded", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "3.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Hydrate wrote without the lock: %v", err)
	}
}

func TestRead(t *testing.T) {
	dir := ListDir(t.TempDir(), "saga__s__3")
	if got, err := Read(dir); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("Read of a missing dir = %v, %v; want an empty map, nil", got, err)
	}
	if err := Hydrate(within(t, 5*time.Second), dir, pending("a", "ok2", "7")); err != nil {
		t.Fatal(err)
	}
	valid := func(id string) string {
		return fmt.Sprintf(`{"id":%q,"subject":"s","description":"","status":"pending","blocks":[],"blockedBy":[]}`, id)
	}
	files := []struct {
		name, content string
	}{
		{"mismatch.json", valid("other")},
		{"bad.json", `{"id":"bad",`},
		{"missing.json", `{"id":"missing","subject":"s","description":"","status":"pending","blockedBy":[]}`},
		{"deleted.json", `{"id":"deleted","subject":"s","description":"","status":"deleted","blocks":[],"blockedBy":[]}`},
		{"x.txt", valid("x")},
		{"x.json.tmp.0123abcd", valid("x")},
		{".highwatermark", "12"},
		{"a.b.json", valid("a.b")}, // Claude Code would look for a-b.json
		{".json", valid("")},
		{"empty.json", ""},
		{"unknown-keys.json", `{"id":"unknown-keys","subject":"s","description":"","status":"completed","blocks":[],"blockedBy":[],"x":1}`},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"a.json.lock", ".lock.lock", "d.json", "sub"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for id, task := range got {
		ids = append(ids, id)
		if task.ID != id {
			t.Errorf("Read[%q].ID = %q", id, task.ID)
		}
	}
	slices.Sort(ids)
	if want := []string{"7", "a", "ok2", "unknown-keys"}; !slices.Equal(ids, want) {
		t.Errorf("Read ids = %q, want %q", ids, want)
	}
	if got["unknown-keys"].Status != StatusCompleted || FromClaudeTask(got["unknown-keys"]) != StatusCompleted {
		t.Errorf("unknown-keys = %+v", got["unknown-keys"])
	}
}

// A task list the agent could reach (unconfined Bash) with a FIFO and a
// link to /dev/zero among its tasks: Read and Update neither block nor
// read without end; the FIFO and the link are not tasks.
func TestReadSpecialFiles(t *testing.T) {
	dir := ListDir(t.TempDir(), "saga__s__4")
	if err := Hydrate(within(t, 5*time.Second), dir, pending("a", "b")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "a.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "a.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "b.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "b.json")); err != nil {
		t.Fatal(err)
	}
	done := make(chan map[string]Task, 1)
	go func() { got, _ := Read(dir); done <- got }()
	select {
	case got := <-done:
		if len(got) != 0 {
			t.Errorf("Read = %v, want no tasks", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Read hung on a FIFO")
	}
	for _, id := range []string{"a", "b"} {
		err := Update(within(t, 5*time.Second), dir, id, func(t *Task) error { t.Status = StatusCompleted; return nil })
		if err == nil {
			t.Errorf("Update %s: no error", id)
		}
	}
}

func TestReadUnreadableDir(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(file); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("Read of a file = %v, want an error naming it", err)
	}
}

func TestRemove(t *testing.T) {
	cfg := t.TempDir()
	dir := ListDir(cfg, "saga__s__4")
	if err := Hydrate(within(t, 5*time.Second), dir, pending("a")); err != nil {
		t.Fatal(err)
	}
	sibling := ListDir(cfg, "saga__s__5")
	if err := Hydrate(within(t, 5*time.Second), sibling, pending("a")); err != nil {
		t.Fatal(err)
	}
	if err := Remove(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Remove left %s: %v", dir, err)
	}
	if err := Remove(dir); err != nil {
		t.Errorf("Remove of a missing dir = %v, want nil", err)
	}
	if _, err := os.Stat(filepath.Join(sibling, "a.json")); err != nil {
		t.Errorf("Remove touched another list: %v", err)
	}
	for _, bad := range []string{"", ".", "/", filepath.Join(cfg, "tasks"), filepath.Join(cfg, "tasks") + "/", filepath.Join(cfg, "x.y"), ".."} {
		if err := Remove(bad); err == nil {
			t.Errorf("Remove(%q) = nil, want a refusal", bad)
		}
	}
	if _, err := os.Stat(sibling); err != nil {
		t.Errorf("a refused Remove deleted something: %v", err)
	}
}

func TestUpdate(t *testing.T) {
	dir := ListDir(t.TempDir(), "saga__s__6")
	if err := Hydrate(within(t, 5*time.Second), dir, pending("t", "other")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "t.json")
	mtime := func() time.Time {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}
	sentinel := errors.New("no thanks")
	tests := []struct {
		name    string
		id      string
		fn      func(*Task) error
		wantErr error  // errors.Is
		errText string // or a substring
		check   func(t *testing.T, task Task)
	}{
		{"status change", "t", func(t *Task) error { t.Status = StatusInProgress; return nil }, nil, "",
			func(t *testing.T, task Task) {
				if task.Status != StatusInProgress {
					t.Errorf("status = %q", task.Status)
				}
			}},
		{"metadata merge and owner", "t", func(t *Task) error {
			t.Metadata = map[string]any{"k": "v"}
			t.Owner = "agent"
			return nil
		}, nil, "",
			func(t *testing.T, task Task) {
				if task.Metadata["k"] != "v" || task.Owner != "agent" || task.Status != StatusInProgress {
					t.Errorf("task = %+v", task)
				}
			}},
		{"fn error writes nothing", "t", func(t *Task) error { t.Status = StatusCompleted; return sentinel }, sentinel, "", nil},
		{"invalid status writes nothing", "t", func(t *Task) error { t.Status = "deleted"; return nil }, nil, `status "deleted"`, nil},
		{"id change refused", "t", func(t *Task) error { t.ID = "u"; return nil }, nil, "id cannot change", nil},
		{"missing task", "nope", func(*Task) error { return nil }, fs.ErrNotExist, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(path)
			err := Update(within(t, 5*time.Second), dir, tc.id, tc.fn)
			switch {
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Update = %v, want %v", err, tc.wantErr)
				}
			case tc.errText != "":
				if err == nil || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("Update = %v, want an error with %q", err, tc.errText)
				}
			case err != nil:
				t.Fatal(err)
			}
			after, _ := os.ReadFile(path)
			if tc.check == nil {
				if string(before) != string(after) {
					t.Errorf("a failed Update changed the file")
				}
				return
			}
			task, err := Decode(after)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, task)
			if want, _ := Encode(task); string(want) != string(after) {
				t.Errorf("not in the stored format: %q", after)
			}
		})
	}
	// An update that changes nothing does not rewrite the file.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if err := Update(within(t, 5*time.Second), dir, "t", func(*Task) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if !mtime().Equal(old) {
		t.Error("a no-op Update rewrote the file")
	}
	// A file whose id is not its name is not the task.
	if err := os.WriteFile(filepath.Join(dir, "other.json"), []byte(`{"id":"x","subject":"s","description":"","status":"pending","blocks":[],"blockedBy":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Update(within(t, 5*time.Second), dir, "other", func(*Task) error { return nil }); err == nil || !strings.Contains(err.Error(), `holds id "x"`) {
		t.Errorf("Update of a mismatched file = %v", err)
	}
	// Nothing but the tasks and .lock is left.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); n != ".lock" && !strings.HasSuffix(n, ".json") {
			t.Errorf("left behind: %s", n)
		}
	}
}

// TestUpdateConcurrent: 20 goroutines update different fields and metadata
// keys of one task at once; every change survives.
func TestUpdateConcurrent(t *testing.T) {
	dir := ListDir(t.TempDir(), "saga__s__7")
	if err := Hydrate(within(t, 5*time.Second), dir, pending("t")); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 20, 5
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				err := Update(within(t, 60*time.Second), dir, "t", func(task *Task) error {
					bump(task, fmt.Sprintf("w%02d", w))
					bump(task, "total")
					switch w {
					case 0:
						task.Owner = "agent-0"
					case 1:
						task.ActiveForm = "Working"
					case 2:
						task.Subject = "renamed"
					case 3:
						task.Description = "described"
					case 4:
						task.Status = StatusInProgress
					default:
						task.Blocks = append(task.Blocks, fmt.Sprintf("b%02d-%d", w, r))
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	task := got["t"]
	if task.Owner != "agent-0" || task.ActiveForm != "Working" || task.Subject != "renamed" || task.Description != "described" || task.Status != StatusInProgress {
		t.Errorf("a field update was lost: %+v", task)
	}
	if task.Metadata["total"] != float64(workers*rounds) {
		t.Errorf("total = %v, want %d", task.Metadata["total"], workers*rounds)
	}
	for w := range workers {
		if k := fmt.Sprintf("w%02d", w); task.Metadata[k] != float64(rounds) {
			t.Errorf("metadata[%s] = %v, want %d", k, task.Metadata[k], rounds)
		}
	}
	if want := (workers - 5) * rounds; len(task.Blocks) != want {
		t.Errorf("%d blocks, want %d", len(task.Blocks), want)
	}
}

// story200 is a 200-task story: chains of ten with a few cross links, all
// fields filled.
func story200() *store.Story {
	s := &store.Story{ID: "bench"}
	for i := range 200 {
		t := &store.Task{
			ID:          fmt.Sprintf("task-%03d", i),
			Subject:     fmt.Sprintf("Task %d: do the thing", i),
			Description: strings.Repeat("Describe the work in enough detail to be self-contained. ", 8),
			ActiveForm:  fmt.Sprintf("Doing task %d", i),
			Status:      []string{"pending", "in_progress", "completed"}[i%3],
			Guidance:    "Follow the existing patterns.",
			DoneWhen:    "Tests pass.",
		}
		if i%10 != 0 {
			t.BlockedBy = refs(fmt.Sprintf("task-%03d", i-1))
		}
		if i >= 20 && i%7 == 0 {
			t.BlockedBy = append(t.BlockedBy, store.Ref{ID: fmt.Sprintf("task-%03d", i-20)})
		}
		s.Tasks = append(s.Tasks, t)
	}
	return s
}

// BenchmarkHydrate200 measures the budget of docs/architecture.md#budgets (≤ 50 ms): convert a
// 200-task story and hydrate it into a new list directory.
func BenchmarkHydrate200(b *testing.B) {
	s := story200()
	base := b.TempDir()
	ctx := context.Background()
	i := 0
	for b.Loop() {
		dir := ListDir(base, ListID("bench", int64(i)))
		i++
		if err := Hydrate(ctx, dir, FromStory(s)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHydrate200Floor is the disk's floor for BenchmarkHydrate200, to
// be read in the same run: 200 files of the same size written with plain
// os.WriteFile into a new directory (no encoding, lock, fsync or rename).
func BenchmarkHydrate200Floor(b *testing.B) {
	var data [][]byte
	for _, task := range FromStory(story200()) {
		enc, err := Encode(task)
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, enc)
	}
	base := b.TempDir()
	i := 0
	for b.Loop() {
		dir := filepath.Join(base, fmt.Sprint(i))
		i++
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for j, d := range data {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("task-%03d.json", j)), d, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
}
