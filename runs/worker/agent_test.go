//go:build unix

package worker_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/runs/worker"
)

// Attack 9: the worker is killed (kill -9, the OOM killer) while its agent
// works. The agent dies with it: it never works on unsupervised.
func TestAgentDiesWithWorker(t *testing.T) {
	f := newFixture(t, false)
	// Each step of the stand-in's script takes 20 s: the agent outlives
	// the test unless something ends it.
	worker, out := f.startSlow("add-logout-button", "20000", "run 1:")
	var agent int
	for _, e := range f.events() {
		if e.Event == runs.KindRunStart {
			agent = e.PID
		}
	}
	if agent <= 0 || !filesafe.ProcessAlive(agent) {
		t.Fatalf("no live agent (pid %d) recorded:\n%s", agent, out)
	}
	if err := worker.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	worker.Wait()
	if !testkit.WaitExit(agent, 10*time.Second) {
		syscall.Kill(agent, syscall.SIGKILL)
		t.Fatalf("the agent (pid %d) goes on after its worker was killed", agent)
	}
}

// startGroup starts `sh -c script` as an agent would run: its own process
// group, with what it spawns in it.
func startGroup(t *testing.T, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return cmd
}

// groupAlive tells whether any process of the group lives (a zombie
// counts as gone).
func groupAlive(pgid int) bool {
	des, _ := os.ReadDir("/proc")
	for _, de := range des {
		pid, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid && filesafe.ProcessAlive(pid) {
			return true
		}
	}
	return false
}

// Attack 9, the rerun: an agent an earlier worker left alive (a worker
// killed where the kernel does not end its child, or an earlier release's)
// is ended, with what it spawned, before a new agent starts in the same
// worktree. A process that merely got the recorded pid again (another
// start time) is left alone.
func TestStrayAgentEndedBeforeRerun(t *testing.T) {
	if _, ok := supervise.ProcStart(os.Getpid()); !ok {
		t.Skip("not Linux (or -tags portable): no process start times on this system")
	}
	f := newFixture(t, false)
	sessions := filepath.Dir(f.out)
	if err := runs.MakeSessionDir(sessions); err != nil {
		t.Fatal(err)
	}
	stray := startGroup(t, "sleep 300 & sleep 300; wait")
	bystander := startGroup(t, "sleep 300")
	// The group's child is there before the worker looks.
	if !testkit.WaitUntil(30*time.Second, func() bool {
		out, _ := exec.Command("pgrep", "-g", strconv.Itoa(stray.Process.Pid)).Output()
		return strings.Count(string(out), "\n") >= 3
	}) {
		t.Fatal("the stray agent's children did not start")
	}
	record := func(ms int64, pid int, start uint64) {
		session := "saga-story-add-logout-button-" + strconv.FormatInt(ms, 10)
		path := runs.EventsFile(runs.OutputFile(sessions, session))
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, e := range []runs.Event{
			{Story: "add-logout-button", Session: session, Event: runs.KindWorkerStart, PID: 1 << 30},
			{Story: "add-logout-button", Session: session, Event: runs.KindRunStart, Cycle: 1, PID: pid, ProcStart: start},
		} {
			if err := runs.Append(path, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	start, _ := supervise.ProcStart(stray.Process.Pid)
	record(1700000000000, stray.Process.Pid, start)
	other, _ := supervise.ProcStart(bystander.Process.Pid)
	record(1700000001000, bystander.Process.Pid, other+1)

	code, out := f.run("add-logout-button", "all", nil)
	if code != 0 {
		t.Fatalf("worker: exit %d\n%s", code, out)
	}
	if groupAlive(stray.Process.Pid) {
		t.Errorf("the earlier run's agent (group %d) still runs beside the new one", stray.Process.Pid)
	}
	if !groupAlive(bystander.Process.Pid) {
		t.Error("the process that has the pid of another earlier agent was killed")
	}
	// Killed before the new run started, and said so.
	killed, started := -1, -1
	for i, e := range f.events() {
		switch {
		case e.Event == runs.KindStep && strings.Contains(e.Message, "killed the agent of the earlier run") && strings.Contains(e.Message, strconv.Itoa(stray.Process.Pid)):
			killed = i
		case e.Event == runs.KindRunStart && started < 0:
			started = i
		}
	}
	if killed < 0 || started < killed {
		t.Errorf("the kill (event %d) is not reported before the first run (event %d):\n%s", killed, started, out)
	}
}

// What the agent leaves running in its process group (a server started in
// the background) ends with it, once it exits.
func TestAgentGroupEndsWithIt(t *testing.T) {
	f := newFixture(t, false)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "bg.pid")
	claude := filepath.Join(dir, "claude")
	script := "#!/bin/sh\n" + versionAnswer + "sleep 300 >/dev/null 2>&1 &\necho $! > " + pidFile + "\nexit 0\n"
	if err := os.WriteFile(claude, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out := f.run("add-logout-button", "all", func(o *worker.Options) { o.Claude = claude; o.MaxCycles = 1 })
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the agent did not run (exit %d): %v\n%s", code, err, out)
	}
	bg, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if bg <= 0 || !testkit.WaitExit(bg, 5*time.Second) {
		syscall.Kill(bg, syscall.SIGKILL)
		t.Errorf("the agent's background process (pid %d) outlived it", bg)
	}
}

// Attack 10 at the worker: it keeps the checks its hook runs in the session
// dir, so it refuses one that others could write, before any agent runs.
func TestWorkerRefusesSharedSessionDir(t *testing.T) {
	f := newFixture(t, false)
	shared := filepath.Join(t.TempDir(), "shared")
	os.Mkdir(shared, 0o777)
	os.Chmod(shared, 0o777|os.ModeSticky)
	t.Setenv("SAGA_SESSION_DIR", shared)
	log := filepath.Join(t.TempDir(), "claude.log")
	t.Setenv("SAGA_STANDIN_LOG", log)
	code, out := f.run("add-logout-button", "all", func(o *worker.Options) { o.OutputFile = filepath.Join(shared, "run.log") })
	if code != runs.ExitFailed || !strings.Contains(out, "chmod 700") || !strings.Contains(out, "SAGA_SESSION_DIR") {
		t.Errorf("worker in a shared session dir: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(log); err == nil {
		t.Error("an agent ran")
	}
	if des, _ := os.ReadDir(shared); len(des) != 0 {
		t.Errorf("files written to the shared folder: %v", des)
	}
}
