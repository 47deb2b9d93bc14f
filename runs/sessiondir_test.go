//go:build unix

package runs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/runs/supervise"
)

// otherUsersDir is a folder owned by another user: made and given away
// when the tests run as root, else the root directory (root's).
func otherUsersDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return "/"
	}
	dir := filepath.Join(t.TempDir(), "theirs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The default session dir is the user's own, whatever $TMPDIR says: every
// process of the user finds the same one.
func TestDefaultSessionDir(t *testing.T) {
	want := "/tmp/saga-sessions-" + strconv.Itoa(os.Geteuid())
	t.Setenv("TMPDIR", t.TempDir())
	env := func(k string) string { return os.Getenv(k) }
	t.Setenv(EnvSessionDir, "")
	if got := SessionDir(env); got != want || DefaultSessionDir() != want {
		t.Errorf("SessionDir = %q, DefaultSessionDir = %q; want %q", got, DefaultSessionDir(), want)
	}
	t.Setenv(EnvSessionDir, "rel/dir")
	if got := SessionDir(env); !filepath.IsAbs(got) || !strings.HasSuffix(got, "/rel/dir") {
		t.Errorf("SessionDir with a relative $%s = %q", EnvSessionDir, got)
	}
	if LegacySessionDir(want) != "/tmp/saga-sessions" || LegacySessionDir("/var/x/sessions") != "" {
		t.Errorf("LegacySessionDir: %q, %q", LegacySessionDir(want), LegacySessionDir("/var/x/sessions"))
	}
}

// Attack 10: another local user pre-creates the session dir (world-writable,
// or theirs) to swap the victim's checks file. Such a folder is refused,
// naming the fix; one of the user's that others could only read is made
// private; a new one is made 0700 whatever the umask.
func TestSessionDirMustBeTheUsers(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	open := mk("world-writable", 0o777|os.ModeSticky)
	file := filepath.Join(base, "a-file")
	os.WriteFile(file, nil, 0o600)
	link := filepath.Join(base, "link")
	os.Symlink(mk("target", 0o700), link)
	for _, c := range []struct{ dir, says string }{
		{open, "chmod 700"},
		{mk("group-writable", 0o770), "chmod 700"},
		{otherUsersDir(t), "belongs to another user"},
		{file, "not a folder"},
		{link, "not a folder"},
	} {
		for name, check := range map[string]func(string) error{"CheckSessionDir": CheckSessionDir, "MakeSessionDir": MakeSessionDir} {
			err := check(c.dir)
			if !errors.Is(err, ErrUnsafeSessionDir) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), EnvSessionDir) {
				t.Errorf("%s(%s) = %v, want a refusal saying %q and naming %s", name, c.dir, err, c.says, EnvSessionDir)
			}
		}
	}
	// Runs there are never listed.
	writeEvents(t, open, "saga-story-a-1", ev(t, Event{Event: KindWorkerStart, PID: 1}))
	if rs := Runs(open, KindStory, "a"); len(rs) != 0 || len(ListRuns(open, KindStory)) != 0 || Latest(open, KindStory, "a") != nil {
		t.Errorf("runs listed from a world-writable folder: %v", rs)
	}

	readable := mk("readable", 0o755)
	if err := CheckSessionDir(readable); err != nil || mode(t, readable) != 0o700 {
		t.Errorf("CheckSessionDir(0755 of mine) = %v, mode %04o after", err, mode(t, readable))
	}
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	fresh := filepath.Join(base, "new", "sessions")
	if err := MakeSessionDir(fresh); err != nil || mode(t, fresh) != 0o700 {
		t.Errorf("MakeSessionDir = %v, mode %04o", err, mode(t, fresh))
	}
	if err := CheckSessionDir(filepath.Join(base, "missing")); err != nil {
		t.Errorf("CheckSessionDir of a missing folder = %v", err)
	}
}

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// Runs an earlier release started in its default (/tmp/saga-sessions) are
// still listed beside the new default's — but only from a folder of the
// user's that no one else can write.
func TestLegacySessionDirRead(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "saga-sessions-"+strconv.Itoa(os.Geteuid()))
	legacy := filepath.Join(tmp, "saga-sessions")
	if err := MakeSessionDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(legacy, 0o755); err != nil {
		t.Fatal(err)
	}
	old := writeEvents(t, legacy, "saga-story-a-100", `{"time":"2026-01-02T03:04:05Z","story":"a","session":"saga-story-a-100","event":"worker.start","pid":7}`)
	writeEvents(t, dir, "saga-story-a-200", ev(t, Event{Event: KindWorkerStart, PID: 8, Version: FormatVersion}))
	rs := Runs(dir, KindStory, "a")
	if len(rs) != 2 || rs[0].EventsFile != old || len(ListRuns(dir, KindStory)["a"]) != 2 {
		t.Fatalf("Runs = %+v", rs)
	}
	if r := ReadRun(old); r == nil || r.PID != 7 || r.Version != 0 {
		t.Errorf("the unversioned run: %+v", r)
	}
	if r := Latest(dir, KindStory, "a"); r == nil || r.PID != 8 || r.Version != FormatVersion {
		t.Errorf("Latest = %+v", r)
	}
	if mode(t, legacy) != 0o755 {
		t.Errorf("the legacy folder's mode changed to %04o: it is only read", mode(t, legacy))
	}
	for _, m := range []os.FileMode{0o777, 0o775} {
		os.Chmod(legacy, m)
		if rs := Runs(dir, KindStory, "a"); len(rs) != 1 {
			t.Errorf("legacy folder of mode %04o read: %+v", m, rs)
		}
	}
	if os.Geteuid() == 0 {
		os.Chmod(legacy, 0o755)
		os.Chown(legacy, 4242, 4242)
		if rs := Runs(dir, KindStory, "a"); len(rs) != 1 {
			t.Errorf("another user's legacy folder read: %+v", rs)
		}
	}
}

// A FIFO (or a link) where an events file should be never blocks a reader.
func TestEventsFileFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := EventsFile(OutputFile(dir, "saga-story-a-1"))
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := EventsFile(OutputFile(dir, "saga-story-a-2"))
	os.Symlink("/dev/zero", link)
	done := make(chan error, 1)
	go func() {
		if r := Latest(dir, KindStory, "a"); r != nil {
			done <- fmt.Errorf("Latest read %+v from a FIFO or a link", r)
			return
		}
		if _, err := (&Tail{Path: fifo}).Read(func(Event) {}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			done <- fmt.Errorf("Tail.Read(FIFO) = %v", err)
			return
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO events file blocked")
	}
}

// Every event and record written carries the format version; the
// unversioned ones of earlier releases still read.
func TestFormatVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.jsonl")
	w, err := OpenWriter(path, "a", "", "saga-story-a-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Emit(Event{Event: KindWorkerStart, PID: 1})
	w.Close()
	if err := Append(path, Event{Event: KindCheckEnd, Task: "t"}); err != nil {
		t.Fatal(err)
	}
	var n int
	(&Tail{Path: path}).Read(func(e Event) {
		n++
		if e.Version != FormatVersion {
			t.Errorf("%s written with version %d", e.Event, e.Version)
		}
	})
	if n != 2 {
		t.Errorf("%d events read", n)
	}
}

// A process is known by its pid and start time: a pid reused by another
// program is not the recorded run's.
func TestSameProcess(t *testing.T) {
	if _, known := supervise.ProcStart(os.Getpid()); !known {
		t.Skip("not Linux (or -tags portable): no process start times on this system")
	}
	start, ok := supervise.ProcStart(os.Getpid())
	if !ok || start == 0 || supervise.SelfStart() != start {
		t.Fatalf("supervise.ProcStart(self) = %d, %v", start, ok)
	}
	if !supervise.SameProcess(os.Getpid(), start) || supervise.SameProcess(os.Getpid(), start+1) || !supervise.SameProcess(os.Getpid(), 0) {
		t.Error("supervise.SameProcess")
	}
	if _, ok := supervise.ProcStart(1 << 30); ok {
		t.Error("supervise.ProcStart of no process")
	}
	// A run whose recorded start differs is not alive, though its pid is.
	self := filepath.Base(os.Args[0])
	r := &Run{PID: os.Getpid(), ProcStart: start + 1, Story: self}
	if r.Alive() {
		t.Error("a run of another start is alive")
	}
}
