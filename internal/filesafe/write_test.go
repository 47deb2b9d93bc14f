//go:build unix

package filesafe

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// currentUmask reads the process umask; only non-parallel tests call it
// because reading it means setting it for an instant.
func currentUmask() os.FileMode {
	old := syscall.Umask(0o22)
	syscall.Umask(old)
	return os.FileMode(old)
}

// assertNoTemps fails if dir holds any temp file of WriteFileAtomic.
func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

func TestWriteFileAtomic(t *testing.T) {
	umask := currentUmask()
	tests := []struct {
		name     string
		existing []byte      // nil: no file before the write
		exMode   os.FileMode // mode of the existing file
		perm     os.FileMode
		data     []byte
		wantMode os.FileMode
	}{
		{name: "create", perm: 0o640, data: []byte(`{"a":1}`), wantMode: 0o640 &^ umask},
		{name: "create empty", perm: 0o644, data: []byte{}, wantMode: 0o644 &^ umask},
		{name: "replace keeps 0600", existing: []byte("old content, longer than new"), exMode: 0o600, perm: 0o644, data: []byte("new"), wantMode: 0o600},
		{name: "replace keeps 0755", existing: []byte("x"), exMode: 0o755, perm: 0o600, data: bytes.Repeat([]byte("y"), 100_000), wantMode: 0o755},
		{name: "replace keeps 0444", existing: []byte("ro"), exMode: 0o444, perm: 0o644, data: []byte("still replaced"), wantMode: 0o444},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "epic.json")
			if tc.existing != nil {
				if err := os.WriteFile(path, tc.existing, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tc.exMode); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteFileAtomic(path, tc.data, tc.perm); err != nil {
				t.Fatalf("WriteFileAtomic: %v", err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.data) {
				t.Errorf("content = %.40q..., want %.40q...", got, tc.data)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != tc.wantMode {
				t.Errorf("mode = %v, want %v", fi.Mode().Perm(), tc.wantMode)
			}
			assertNoTemps(t, dir)
		})
	}
}

func TestWriteFileAtomicReplacesInode(t *testing.T) {
	// Replacing by rename (not editing in place) is what keeps a reader that
	// already opened the old file from seeing a mix.
	dir := t.TempDir()
	path := filepath.Join(dir, "story.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := WriteFileAtomic(path, []byte("brand new"), 0o644); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := r.Read(buf)
	if string(buf[:n]) != "old" {
		t.Errorf("reader of the old file saw %q, want %q", buf[:n], "old")
	}
}

func TestWriteFileAtomicErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the path to write
		check func(t *testing.T, dir string)
	}{
		{
			name: "missing directory",
			setup: func(t *testing.T, dir string) string {
				return filepath.Join(dir, "missing", "epic.json")
			},
			check: func(t *testing.T, dir string) {
				if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("missing dir was created or stat failed oddly: %v", err)
				}
				entries, _ := os.ReadDir(dir)
				if len(entries) != 0 {
					t.Errorf("left behind: %v", entries)
				}
			},
		},
		{
			name: "path is a directory",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "tasks.json")
				if err := os.MkdirAll(filepath.Join(p, "child"), 0o755); err != nil {
					t.Fatal(err)
				}
				return p
			},
			check: func(t *testing.T, dir string) {
				fi, err := os.Stat(filepath.Join(dir, "tasks.json", "child"))
				if err != nil || !fi.IsDir() {
					t.Errorf("directory at path was disturbed: %v", err)
				}
				assertNoTemps(t, dir)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.setup(t, dir)
			err := WriteFileAtomic(path, []byte(`{"x":1}`), 0o644)
			if err == nil {
				t.Fatal("WriteFileAtomic succeeded, want error")
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the path", err)
			}
			tc.check(t, dir)
		})
	}
}

func TestCreateFileAtomic(t *testing.T) {
	umask := currentUmask()
	tests := []struct {
		name     string
		existing []byte
		wantErr  error
		want     []byte
	}{
		{name: "new file", want: []byte("created")},
		{name: "existing file", existing: []byte("keep me"), wantErr: fs.ErrExist, want: []byte("keep me")},
		{name: "existing empty file", existing: []byte{}, wantErr: fs.ErrExist, want: []byte{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "story.json")
			if tc.existing != nil {
				if err := os.WriteFile(path, tc.existing, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := CreateFileAtomic(path, []byte("created"), 0o640)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("CreateFileAtomic err = %v, want %v", err, tc.wantErr)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Errorf("content = %q, want %q", got, tc.want)
			}
			if tc.existing == nil {
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if want := 0o640 &^ umask; fi.Mode().Perm() != want {
					t.Errorf("mode = %v, want %v", fi.Mode().Perm(), want)
				}
				if n := fi.Sys().(*syscall.Stat_t).Nlink; n != 1 {
					t.Errorf("link count = %d, want 1 (temp link not removed)", n)
				}
			}
			assertNoTemps(t, dir)
		})
	}
}

func TestCreateFileAtomicRace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "task.json")
	const n = 20
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = CreateFileAtomic(path, []byte(fmt.Sprintf(`{"creator": %d}`, i)), 0o644)
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if winner >= 0 {
				t.Errorf("creators %d and %d both won", winner, i)
			}
			winner = i
		case !errors.Is(err, fs.ErrExist):
			t.Errorf("creator %d: %v, want fs.ErrExist", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no creator won")
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`{"creator": %d}`, winner); string(got) != want {
		t.Errorf("content = %q, want the winner's %q", got, want)
	}
	assertNoTemps(t, dir)
}

func TestUpdateFile(t *testing.T) {
	errValidate := errors.New("invalid story")
	tests := []struct {
		name      string
		existing  []byte // nil: missing
		fn        func(old []byte) ([]byte, error)
		wantErr   error
		wantOld   []byte // what fn must receive
		wantNil   bool   // fn must receive nil (missing file)
		want      []byte // nil: file must not exist afterwards
		rewritten bool   // the file must be a new inode
	}{
		{
			name:     "modify",
			existing: []byte(`{"n":1}`),
			fn:       func(old []byte) ([]byte, error) { return []byte(`{"n":2}`), nil },
			wantOld:  []byte(`{"n":1}`), want: []byte(`{"n":2}`), rewritten: true,
		},
		{
			name:     "fn error leaves file untouched",
			existing: []byte(`{"n":1}`),
			fn:       func(old []byte) ([]byte, error) { return []byte("garbage"), errValidate },
			wantErr:  errValidate, wantOld: []byte(`{"n":1}`), want: []byte(`{"n":1}`),
		},
		{
			name:     "unchanged is not rewritten",
			existing: []byte(`{"n":1}`),
			fn:       func(old []byte) ([]byte, error) { return bytes.Clone(old), nil },
			wantOld:  []byte(`{"n":1}`), want: []byte(`{"n":1}`),
		},
		{
			name:    "missing file gets nil and is created",
			fn:      func(old []byte) ([]byte, error) { return []byte(`{"n":0}`), nil },
			wantNil: true, want: []byte(`{"n":0}`),
		},
		{
			name:    "missing file and nil result writes nothing",
			fn:      func(old []byte) ([]byte, error) { return nil, nil },
			wantNil: true,
		},
		{
			name:    "missing file and fn error writes nothing",
			fn:      func(old []byte) ([]byte, error) { return []byte("x"), errValidate },
			wantErr: errValidate, wantNil: true,
		},
		{
			name:     "existing empty file is not nil",
			existing: []byte{},
			fn:       func(old []byte) ([]byte, error) { return []byte("filled"), nil },
			wantOld:  []byte{}, want: []byte("filled"), rewritten: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "story.json")
			var before os.FileInfo
			if tc.existing != nil {
				if err := os.WriteFile(path, tc.existing, 0o600); err != nil {
					t.Fatal(err)
				}
				var err error
				if before, err = os.Stat(path); err != nil {
					t.Fatal(err)
				}
			}
			calls := 0
			err := UpdateFile(path, func(old []byte) ([]byte, error) {
				calls++
				if tc.wantNil != (old == nil) {
					t.Errorf("fn got old == nil: %v, want %v", old == nil, tc.wantNil)
				}
				if !tc.wantNil && !bytes.Equal(old, tc.wantOld) {
					t.Errorf("fn got %q, want %q", old, tc.wantOld)
				}
				return tc.fn(old)
			})
			if calls != 1 {
				t.Errorf("fn called %d times, want 1", calls)
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("UpdateFile err = %v, want %v", err, tc.wantErr)
			}
			got, err := os.ReadFile(path)
			switch {
			case tc.want == nil:
				if !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("file exists (%q, %v), want none", got, err)
				}
			case err != nil:
				t.Fatal(err)
			case !bytes.Equal(got, tc.want):
				t.Errorf("content = %q, want %q", got, tc.want)
			}
			if before != nil {
				after, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if os.SameFile(before, after) == tc.rewritten {
					t.Errorf("file rewritten = %v, want %v", !os.SameFile(before, after), tc.rewritten)
				}
				if after.Mode().Perm() != 0o600 {
					t.Errorf("mode = %v, want the existing 0600", after.Mode().Perm())
				}
			}
			assertNoTemps(t, dir)
		})
	}
}

// TestStaleTempRemovedByNextWrite: the next atomic write in a folder
// removes the temp files of writers that are gone — their pid dead and
// their lock free — and keeps every other: a live writer's, one whose pid
// lives (this process), one whose lock is held (a writer in another pid
// namespace), and names that only look alike.
func TestStaleTempRemovedByNextWrite(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "task.json")

	killed := testkit.HelperCmd("temp", target)
	dead := startHelperLine(t, killed)
	if err := killed.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = killed.Wait() // reaped: its pid is no longer a process
	live := startHelperLine(t, testkit.HelperCmd("temp", target))

	// A dead pid, but its lock held by a live process.
	deadPid := killed.Process.Pid
	otherNS := fmt.Sprintf(".task.json.tmp-%d-abc", deadPid)
	mine := fmt.Sprintf(".task.json.tmp-%d-abc", os.Getpid())
	lookalikes := []string{".task.json.tmp-x-1", "task.json.tmp-1-1", ".notes.tmp", fmt.Sprintf(".fifo.tmp-%d-1", deadPid)}
	for _, name := range append([]string{otherNS, mine}, lookalikes[:3]...) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, lookalikes[3]), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := startHelperLine(t, testkit.HelperCmd("flock", filepath.Join(dir, otherNS))); got != "locked" {
		t.Fatalf("flock helper said %q", got)
	}

	if err := WriteFileAtomic(filepath.Join(dir, "other.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := append([]string{"other.json", live, mine}, lookalikes...)
	if flocks {
		want = append(want, otherNS) // its flock says a writer lives
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("after the next write: %q\nwant %q (only %s removed)", names, want, dead)
	}
}

// TestSpecialFilesDoNotBlock: a FIFO where a task file or a worktree's .git
// file should be is refused at once — an update or a lock never waits for
// a writer that will not come.
func TestSpecialFilesDoNotBlock(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "task.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	err := UpdateFile(fifo, func(old []byte) ([]byte, error) { return []byte("{}"), nil })
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("UpdateFile of a FIFO: %v", err)
	}
	repo := filepath.Join(dir, "repo")
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(repo, ".git"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(t.Context(), repo, "story-x"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("lock under a FIFO .git: %v", err)
	}
}
