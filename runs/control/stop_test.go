//go:build unix

package control_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/supervise"
)

// Attack 8: the agent writes `pid N` into its worker lock. stop signals
// only what the session dir recorded as the story's worker (pid, start
// time, command line): the worker stops, the process the lock names does
// not.

// bystander is a process of the user's that a forged lock names: with
// looksLike its command line even carries "worker <story>".
func bystander(t *testing.T, looksLike bool) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if looksLike {
		cmd = exec.Command("sh", "-c", "sleep 300; :", "worker", story)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// forgeLock writes what the agent writes into a lock file another process
// holds (the flock stays with the inode).
func forgeLock(t *testing.T, file string, pid int) {
	t.Helper()
	if err := os.WriteFile(file, []byte("pid "+strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func alive(cmd *exec.Cmd) bool {
	return cmd.ProcessState == nil && filesafe.ProcessAlive(cmd.Process.Pid)
}

// Without tmux (a worker started directly): the lock's pid was all stop
// had, so it killed the bystander and the worker went on.
func TestStopIgnoresForgedLockPID(t *testing.T) {
	h := newTmuxEnv(t)
	session := runs.KindSessionName(runs.KindStory, story, time.Now())
	out := runs.OutputFile(h.sessionDir, session)
	worker := exec.Command(h.getenv("SAGA_LSP_BIN"), "worker", story, "--output-file", out, "--session", session)
	worker.Dir = h.root
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { worker.Process.Kill() })
	exited := make(chan error, 1)
	go func() { exited <- worker.Wait() }()
	if !testkit.WaitUntil(30*time.Second, func() bool { r := runs.ReadRun(runs.EventsFile(out)); return r != nil && r.Locked }) {
		t.Fatalf("the worker never took its lock:\n%s", testkit.FileText(out))
	}
	victim := bystander(t, true)
	// A run of an earlier worker that died, whose pid the bystander now
	// has: the same pid and command line, another start time.
	start, _ := supervise.ProcStart(victim.Process.Pid)
	stale := runs.EventsFile(runs.OutputFile(h.sessionDir, runs.KindSessionName(runs.KindStory, story, time.Now().Add(-time.Hour))))
	if err := os.WriteFile(stale, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	runs.Append(stale, runs.Event{Story: story, Event: runs.KindWorkerStart, PID: victim.Process.Pid, ProcStart: start + 1})
	forgeLock(t, runs.WorkerLockFile(h.root, story), victim.Process.Pid)

	res, err := control.StopStory(context.Background(), control.StopOptions{Setup: control.Setup{Root: h.root, Env: h.getenv}, Story: story, Wait: 20 * time.Second})
	if err != nil {
		t.Fatalf("StopStory: %v", err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker goes on after stop")
	}
	if res.PID != worker.Process.Pid || res.State != runs.StatusStopped {
		t.Errorf("StopStory: %+v, want the worker (pid %d) stopped", res, worker.Process.Pid)
	}
	if !alive(victim) {
		t.Error("stop killed the process the forged lock named")
	}
}

// With the worker in tmux: its pane is signalled, the bystander is not.
func TestStopInTmuxIgnoresForgedLockPID(t *testing.T) {
	h := newTmuxEnv(t)
	m := h.startJSON(t, nil, story)
	victim := bystander(t, false)
	forgeLock(t, runs.WorkerLockFile(h.root, story), victim.Process.Pid)
	r := h.saga(t, nil, "stop", story)
	if r.Code != 0 {
		t.Fatalf("stop: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if want := "pid " + strconv.Itoa(int(m["pid"].(float64))) + " ended stopped"; !strings.Contains(r.Stdout, want) {
		t.Errorf("stop says %q, want %q", r.Stdout, want)
	}
	if !alive(victim) {
		t.Error("stop killed the process the forged lock named")
	}
}

// A held lock no recorded run vouches for is not signalled: stop says so
// and names the holder's lock file. The same for an epic's runner.
func TestStopRefusesUnverifiedHolder(t *testing.T) {
	h := newTmuxEnv(t)
	for _, c := range []struct {
		kind runs.Kind
		id   string
		lock string
		stop func(context.Context, control.StopOptions) (*control.Stopped, error)
	}{
		{runs.KindStory, story, runs.WorkerLockName(story), control.StopStory},
		{runs.KindEpic, "shop", runs.EpicLockName("shop"), control.StopEpic},
	} {
		l, err := filesafe.AcquireLock(context.Background(), h.root, c.lock)
		if err != nil {
			t.Fatal(err)
		}
		victim := bystander(t, false)
		file := filepath.Join(filepath.Dir(runs.WorkerLockFile(h.root, story)), c.lock+".lock")
		forgeLock(t, file, victim.Process.Pid)
		_, err = c.stop(context.Background(), control.StopOptions{Setup: control.Setup{Root: h.root, Env: h.getenv}, Story: c.id, Wait: time.Second})
		if err == nil || !strings.Contains(err.Error(), "was not signalled") || !strings.Contains(err.Error(), file) {
			t.Errorf("stop %s %s: %v", c.kind, c.id, err)
		}
		if !alive(victim) {
			t.Errorf("stop %s %s killed the process the forged lock named", c.kind, c.id)
		}
		l.Unlock()
	}
}
