//go:build unix

package control_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
)

// Attack 10: another local user pre-creates the session dir, world-writable
// (or their own), to swap the victim's checks file or plant FIFOs. Every
// command refuses it, naming the fix; nothing is started or read there.
func TestSharedSessionDirRefused(t *testing.T) {
	h := newTmuxEnv(t)
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o777|os.ModeSticky)
	dirs := map[string]string{shared: "chmod 700"}
	if os.Geteuid() == 0 {
		theirs := filepath.Join(t.TempDir(), "theirs")
		os.Mkdir(theirs, 0o700)
		if err := os.Chown(theirs, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		dirs[theirs] = "belongs to another user"
	}
	for dir, says := range dirs {
		env := []string{"SAGA_SESSION_DIR=" + dir}
		for _, args := range [][]string{{"run", story}, {"status"}, {"follow", story}, {"stop", story}, {"clean"}, {"run", "user-auth"}, {"status", "user-auth"}} {
			r := h.saga(t, env, args...)
			if r.Code == 0 || !strings.Contains(r.Stderr, says) || !strings.Contains(r.Stderr, "SAGA_SESSION_DIR") {
				t.Errorf("%v in %s: exit %d, want a refusal saying %q and naming SAGA_SESSION_DIR\n%s%s", args, dir, r.Code, says, r.Stdout, r.Stderr)
			}
		}
		if des, _ := os.ReadDir(dir); len(des) != 0 {
			t.Errorf("files written to %s: %v", dir, des)
		}
	}
	if out, _ := h.tmux("list-sessions"); strings.Contains(out, runs.StorySessionPrefix) || strings.Contains(out, runs.EpicSessionPrefix) {
		t.Errorf("a run was started:\n%s", out)
	}
}

// FIFOs and links where a run's files should be never hang status, follow
// or clean.
func TestSessionDirSpecialFiles(t *testing.T) {
	h := newTmuxEnv(t)
	for _, name := range []string{
		"saga-story-" + story + "-1700000000000.log.events.jsonl",
		"saga-story-" + story + "-1700000000000.log",
		"saga-epic-user-auth-1700000000000.log.events.jsonl",
	} {
		if err := syscall.Mkfifo(filepath.Join(h.sessionDir, name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink("/dev/zero", filepath.Join(h.sessionDir, "saga-story-"+story+"-1600000000000.log.events.jsonl"))
	os.MkdirAll(filepath.Join(h.sessionDir, "checks"), 0o700)
	syscall.Mkfifo(filepath.Join(h.sessionDir, "checks", "s--"+story+"--t.lock"), 0o600)
	for _, args := range [][]string{{"status"}, {"status", story}, {"status", "user-auth"}, {"follow", story}, {"clean"}, {"clean", "--yes"}} {
		start := time.Now()
		r := h.saga(t, nil, args...)
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("%v took %s (exit %d)", args, took, r.Code)
		}
		if args[0] == "follow" && (r.Code != 1 || !strings.Contains(r.Stderr, "not a regular file")) {
			t.Errorf("follow: exit %d\n%s", r.Code, r.Stderr)
		}
	}
	if r := runs.Latest(h.sessionDir, runs.KindStory, story); r != nil {
		t.Errorf("a run read from a FIFO: %+v", r)
	}
}
