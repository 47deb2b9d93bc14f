//go:build unix

package control_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/store"
)

// The run, stop, status and install tests drive the real saga-lsp binary,
// built once, with a real tmux (a private server per test: SAGA_TMUX_SOCKET)
// and real processes. `run` starts $SAGA_LSP_BIN, pointed at a stand-in
// worker (testdata/run/fakeworker) that takes the worker lock and writes
// the worker's events; one end-to-end test runs the real worker --dry-run.

func TestMain(m *testing.M) {
	testkit.RunHelper(map[string]func([]string) error{"hold": helperHold})
	testkit.Main(m)
}

// sagaLSP runs the binary in dir with env.
func sagaLSP(t *testing.T, dir string, env []string, args ...string) testkit.Result {
	t.Helper()
	return testkit.Run(t, dir, env, "", testkit.Binary(t), args...)
}

// tmuxEnv is a workspace, a session folder and a private tmux server.
type tmuxEnv struct {
	root, sessionDir, socket string
	env                      []string
}

func newTmuxEnv(t *testing.T) *tmuxEnv {
	t.Helper()
	// The tmux server comes after the temp dirs: it ends, with the workers
	// it hangs up, before they are removed.
	h := &tmuxEnv{root: testkit.GitRepo(t, "../../examples/workspace"), sessionDir: t.TempDir(), socket: testkit.TmuxServer(t)}
	h.env = append(testkit.CleanEnv(), "SAGA_TMUX_SOCKET="+h.socket, "SAGA_SESSION_DIR="+h.sessionDir,
		"SAGA_LSP_BIN="+testkit.Build(t, "./runs/control/testdata/run/fakeworker"), "SAGA_CLAUDE="+testkit.Build(t, "./testdata/standin/claude"))
	return h
}

// realWorker makes run start the real worker (the binary under test)
// instead of the stand-in, with its own Claude Code config dir (returned)
// and no gh.
func (h *tmuxEnv) realWorker(t *testing.T) string {
	t.Helper()
	var env []string
	for _, kv := range h.env {
		if !strings.HasPrefix(kv, "SAGA_LSP_BIN=") {
			env = append(env, kv)
		}
	}
	cfg := t.TempDir()
	h.env = append(env, "CLAUDE_CONFIG_DIR="+cfg, "SAGA_GH="+filepath.Join(cfg, "no-gh"))
	return cfg
}

func (h *tmuxEnv) saga(t *testing.T, extraEnv []string, args ...string) testkit.Result {
	t.Helper()
	return sagaLSP(t, h.root, append(slices.Clone(h.env), extraEnv...), args...)
}

func (h *tmuxEnv) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", h.socket}, args...)...).CombinedOutput()
	return string(out), err
}

func (h *tmuxEnv) hasSession(name string) bool {
	_, err := h.tmux("has-session", "-t", "="+name)
	return err == nil
}

func (h *tmuxEnv) getenv(k string) string {
	for _, kv := range slices.Backward(h.env) {
		if key, v, ok := strings.Cut(kv, "="); ok && key == k {
			return v
		}
	}
	return ""
}

// startJSON runs `run <story> --format json` and decodes its output.
func (h *tmuxEnv) startJSON(t *testing.T, extraEnv []string, args ...string) map[string]any {
	t.Helper()
	r := h.saga(t, extraEnv, append([]string{"run", "--format", "json"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("run: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil {
		t.Fatalf("run --format json: %v\n%s", err, r.Stdout)
	}
	return m
}

type event map[string]any

func readEvents(t *testing.T, path string) []event {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("events file: %v", err)
	}
	var evs []event
	for line := range strings.Lines(string(data)) {
		var e event
		if json.Unmarshal([]byte(line), &e) == nil {
			evs = append(evs, e)
		}
	}
	return evs
}

func findEvent(evs []event, kind, step string) event {
	for _, e := range slices.Backward(evs) {
		if e["event"] == kind && (step == "" || e["step"] == step) {
			return e
		}
	}
	return nil
}

func lockFree(t *testing.T, root, story string) bool {
	t.Helper()
	l, ok, err := filesafe.TryLock(root, runs.WorkerLockName(story))
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		l.Unlock()
	}
	return ok
}

const story = "add-logout-button"

func TestRunStartsWorkerInTmux(t *testing.T) {
	h := newTmuxEnv(t)
	r := h.saga(t, nil, "run", story, "--max-cycles", "3", "--model", "sonnet", "--dry-run")
	if r.Code != 0 {
		t.Fatalf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "session saga-story-"+story+"-") {
		t.Fatalf("run output:\n%s", r.Stdout)
	}
	session := strings.TrimPrefix(lines[0], "session ")
	out := filepath.Join(h.sessionDir, session+".log")
	if lines[1] != "output "+out {
		t.Errorf("second line %q, want %q", lines[1], "output "+out)
	}
	wantFollow := fmt.Sprintf("follow: saga-lsp follow %s  |  tmux -L %s attach -t %s  |  tail -f %s", story, h.socket, session, out)
	if lines[2] != wantFollow {
		t.Errorf("third line %q, want %q", lines[2], wantFollow)
	}
	if !h.hasSession(session) {
		t.Fatalf("tmux session %s does not exist", session)
	}
	// The worker got its argument vector and environment.
	evs := readEvents(t, out+".events.jsonl")
	args := findEvent(evs, "step", "args")
	wantArgs := fmt.Sprintf("worker %s --output-file %s --session %s --max-cycles 3 --model sonnet --base main --dry-run | SAGA_SESSION=%s SAGA_SESSION_DIR=%s",
		story, out, session, session, h.sessionDir)
	if args == nil || args["message"] != wantArgs {
		t.Errorf("worker args:\n got %v\nwant %s", args["message"], wantArgs)
	}
	if lockFree(t, h.root, story) {
		t.Error("the worker does not hold its lock")
	}
	// Its working directory is the root.
	pid := int(findEvent(evs, "worker.start", "")["pid"].(float64))
	if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); err == nil && cwd != h.root {
		t.Errorf("the worker runs in %s, want %s", cwd, h.root)
	}
}

// Older tmux versions get `env K=V argv…` (2.0–3.1: no new-session -e) or a
// single shell command with every word quoted (< 2.0). A wrapper reports the
// old version and hands the rest to the real tmux, which accepts both forms.
func TestRunOldTmux(t *testing.T) {
	real := testkit.NeedsTool(t, "tmux", "")
	for _, version := range []string{"3.1c", "2.9a", "1.8"} {
		t.Run(version, func(t *testing.T) {
			h := newTmuxEnv(t)
			bin := t.TempDir()
			log := filepath.Join(bin, "log")
			wrapper := "#!/bin/sh\nif [ \"$1\" = -V ]; then echo 'tmux " + version + "'; exit 0; fi\n" +
				"printf '%s\\n' \"$*\" >> " + runs.ShellQuote(log) + "\nexec " + runs.ShellQuote(real) + " \"$@\"\n"
			if err := os.WriteFile(filepath.Join(bin, "tmux"), []byte(wrapper), 0o755); err != nil {
				t.Fatal(err)
			}
			// A session folder whose name needs quoting.
			sd := filepath.Join(h.sessionDir, "it's a dir")
			r := h.saga(t, []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "SAGA_SESSION_DIR=" + sd},
				"run", story, "--model", "sonnet", "--format", "json")
			if r.Code != 0 {
				t.Fatalf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil {
				t.Fatal(err)
			}
			session, out := m["session"].(string), m["outputFile"].(string)
			args := findEvent(readEvents(t, m["eventsFile"].(string)), "step", "args")
			want := fmt.Sprintf("worker %s --output-file %s --session %s --model sonnet --base main | SAGA_SESSION=%s SAGA_SESSION_DIR=%s",
				story, out, session, session, sd)
			if args == nil || args["message"] != want {
				t.Errorf("worker args:\n got %v\nwant %s", args["message"], want)
			}
			calls := testkit.FileText(log)
			wantForm := map[string]string{"3.1c": " -- env SAGA_SESSION_DIR=", "2.9a": " -- env SAGA_SESSION_DIR=", "1.8": " exec env 'SAGA_SESSION_DIR="}[version]
			if !strings.Contains(calls, wantForm) || strings.Contains(calls, " -e ") {
				t.Errorf("tmux %s was called as:\n%s", version, calls)
			}
		})
	}
}

// tmux's server exits when its last session ends; a new-session asked
// for at that moment meets it exiting, and the client says "server exited
// unexpectedly" (an epic run of 200 stories met it when its one running
// worker ended as it started the next, and failed that story). The wrapper
// answers the first new-session as tmux then does; the start asks again.
func TestNewSessionWhileTheServerExits(t *testing.T) {
	real := testkit.NeedsTool(t, "tmux", "")
	h := newTmuxEnv(t)
	bin := t.TempDir()
	log, lost := filepath.Join(bin, "log"), filepath.Join(bin, "lost")
	wrapper := "#!/bin/sh\ncase \" $* \" in *' new-session '*) printf '%s\\n' \"$*\" >> " + runs.ShellQuote(log) + "\n" +
		"  if [ ! -e " + runs.ShellQuote(lost) + " ]; then : > " + runs.ShellQuote(lost) + "; echo 'server exited unexpectedly' >&2; exit 1; fi;;\nesac\n" +
		"exec " + runs.ShellQuote(real) + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "tmux"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	r := h.saga(t, []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, "run", story, "--format", "json")
	if r.Code != 0 {
		t.Fatalf("run after tmux lost its server: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil {
		t.Fatal(err)
	}
	if session, _ := m["session"].(string); !h.hasSession(session) {
		t.Errorf("no tmux session %s", session)
	}
	if calls := strings.Count(testkit.FileText(log), "new-session"); calls != 2 {
		t.Errorf("new-session asked %d times, want 2 (the lost one, then the session):\n%s", calls, testkit.FileText(log))
	}
}

func TestRunJSON(t *testing.T) {
	h := newTmuxEnv(t)
	m := h.startJSON(t, nil, story)
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
	if !slices.Equal(keys, []string{"base", "eventsFile", "outputFile", "pid", "session", "story"}) || m["base"] != "main" {
		t.Errorf("keys %v, base %v", keys, m["base"])
	}
	session, _ := m["session"].(string)
	if m["story"] != story || m["outputFile"] != filepath.Join(h.sessionDir, session+".log") ||
		m["eventsFile"] != m["outputFile"].(string)+".events.jsonl" {
		t.Errorf("run --format json: %v", m)
	}
	start := findEvent(readEvents(t, m["eventsFile"].(string)), "worker.start", "")
	if pid, _ := m["pid"].(float64); pid <= 0 || start == nil || start["pid"] != pid {
		t.Errorf("pid %v, worker.start %v", m["pid"], start)
	}
	if !h.hasSession(session) {
		t.Errorf("no tmux session %s", session)
	}
}

func TestRunRefusesSecondWorker(t *testing.T) {
	h := newTmuxEnv(t)
	first := h.startJSON(t, nil, story)
	r := h.saga(t, nil, "run", story)
	if r.Code != 1 || !strings.Contains(r.Stderr, "already running story "+story) ||
		!strings.Contains(r.Stderr, first["session"].(string)) {
		t.Errorf("second run: exit %d\n%s", r.Code, r.Stderr)
	}
	out, _ := h.tmux("list-sessions", "-F", "#{session_name}")
	if n := len(strings.Fields(out)); n != 1 {
		t.Errorf("%d sessions after the refused run:\n%s", n, out)
	}
	// Another story runs alongside.
	if m := h.startJSON(t, nil, "user-auth--api"); !h.hasSession(m["session"].(string)) {
		t.Error("no session for the second story")
	}
}

func TestRunRefusesWhileWorkerLockHeld(t *testing.T) {
	h := newTmuxEnv(t)
	l, err := filesafe.AcquireLock(context.Background(), h.root, "worker-"+story)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	r := h.saga(t, nil, "run", story)
	if r.Code != 1 || !strings.Contains(r.Stderr, fmt.Sprintf("pid %d", os.Getpid())) || !strings.Contains(r.Stderr, "saga-lsp stop "+story) {
		t.Errorf("run while locked: exit %d\n%s", r.Code, r.Stderr)
	}
	if out, _ := h.tmux("list-sessions"); strings.Contains(out, "saga-story-") {
		t.Errorf("a session was started:\n%s", out)
	}
}

func TestRunRefusesWhileSessionExists(t *testing.T) {
	h := newTmuxEnv(t)
	stale := "saga-story-" + story + "-1700000000000"
	if out, err := h.tmux("new-session", "-d", "-s", stale, "sleep", "60"); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	r := h.saga(t, nil, "run", story)
	if r.Code != 1 || !strings.Contains(r.Stderr, "tmux session "+stale) {
		t.Errorf("run with a session left: exit %d\n%s", r.Code, r.Stderr)
	}
	// stop ends it, although no worker runs in it.
	r = h.saga(t, nil, "stop", story)
	if r.Code != 0 || h.hasSession(stale) {
		t.Errorf("stop: exit %d, session left %v\n%s%s", r.Code, h.hasSession(stale), r.Stdout, r.Stderr)
	}
}

// With remain-on-exit, a finished worker's session stays (its pane dead):
// it does not count as running, and the next run clears it away.
func TestRunAfterRemainOnExit(t *testing.T) {
	h := newTmuxEnv(t)
	// The server keeps the environment it started with: every worker it
	// runs finishes at once.
	keep := exec.Command("tmux", "-L", h.socket, "new-session", "-d", "-s", "keep", "sleep", "60")
	keep.Env = append(slices.Clone(h.env), "FAKE_WORKER_MODE=done")
	if out, err := keep.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	if out, err := h.tmux("set-option", "-g", "remain-on-exit", "on"); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	first := h.startJSON(t, nil, story)
	if !testkit.WaitUntil(30*time.Second, func() bool {
		out, _ := h.tmux("list-panes", "-t", "="+first["session"].(string), "-F", "#{pane_dead}")
		return strings.TrimSpace(out) == "1"
	}) {
		t.Fatal("the finished worker's pane is not kept dead")
	}
	if r := h.saga(t, nil, "status", story); !strings.Contains(r.Stdout, "worker:   not running; last run completed (exit 0") {
		t.Errorf("status:\n%s", r.Stdout)
	}
	second := h.startJSON(t, nil, story, "--again") // the first completed
	if h.hasSession(first["session"].(string)) || !h.hasSession(second["session"].(string)) {
		t.Errorf("sessions after the second run: first %v, second %v", h.hasSession(first["session"].(string)), h.hasSession(second["session"].(string)))
	}
}

func TestRunBadStory(t *testing.T) {
	root := testkit.CopyTree(t, "../../examples/workspace")
	env := append(testkit.CleanEnv(), "SAGA_TMUX_SOCKET=saga-test-unused", "SAGA_SESSION_DIR="+t.TempDir(), "SAGA_LSP_BIN="+testkit.Build(t, "./runs/control/testdata/run/fakeworker"))
	for _, c := range []struct {
		name, want string
	}{
		{"Bad_Name", `invalid story name "Bad_Name"`},
		{"a--", `invalid story name "a--"`},
		{"no-such-story", `no story "no-such-story"`},
		{"../etc", `invalid story name`},
	} {
		r := sagaLSP(t, root, env, "run", c.name)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("run %s: exit %d\n%s", c.name, r.Code, r.Stderr)
		}
	}
	if r := sagaLSP(t, root, env, "run"); r.Code != 2 {
		t.Errorf("run without a story: exit %d", r.Code)
	}
}

func TestRunWithoutTmux(t *testing.T) {
	root := testkit.CopyTree(t, "../../examples/workspace")
	var env []string
	for _, kv := range testkit.CleanEnv() {
		if !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+t.TempDir(), "SAGA_LSP_BIN="+testkit.Build(t, "./runs/control/testdata/run/fakeworker"), "SAGA_SESSION_DIR="+t.TempDir())
	r := sagaLSP(t, root, env, "run", story)
	for _, want := range []string{"not starting story " + story, "tmux is not installed", "claude is not installed", "git is not installed"} {
		if r.Code != 1 || !strings.Contains(r.Stderr, want) {
			t.Errorf("run without tmux, claude and git: exit %d, want 1 and %q\n%s", r.Code, want, r.Stderr)
		}
	}
}

func TestRunWorkerDiesAtOnce(t *testing.T) {
	h := newTmuxEnv(t)
	r := h.saga(t, []string{"FAKE_WORKER_MODE=crash"}, "run", story)
	if r.Code != 1 || !strings.Contains(r.Stderr, "fake worker: boom") || !strings.Contains(r.Stderr, "exited at once") {
		t.Errorf("crashing worker: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if out, _ := h.tmux("list-sessions"); strings.Contains(out, "saga-story-") {
		t.Errorf("session left:\n%s", out)
	}
}

func TestRunWorkerFailsAtOnce(t *testing.T) {
	h := newTmuxEnv(t)
	r := h.saga(t, []string{"FAKE_WORKER_MODE=fail"}, "run", story)
	if r.Code != 1 || !strings.Contains(r.Stderr, "exited at once with code 1") || !strings.Contains(r.Stderr, "fake worker for "+story) {
		t.Errorf("failing worker: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestRunWorkerFinishesAtOnce(t *testing.T) {
	h := newTmuxEnv(t)
	r := h.saga(t, []string{"FAKE_WORKER_MODE=done"}, "run", story)
	if r.Code != 0 || !strings.Contains(r.Stdout, "already finished") {
		t.Errorf("quick worker: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestStopSendsSIGINT(t *testing.T) {
	h := newTmuxEnv(t)
	m := h.startJSON(t, nil, story)
	session := m["session"].(string)
	r := h.saga(t, nil, "stop", story, "--format", "json")
	if r.Code != 0 {
		t.Fatalf("stop: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatalf("stop --format json: %v\n%s", err, r.Stdout)
	}
	if res["stopped"] != true || res["pid"] != m["pid"] || res["state"] != "stopped" || res["exitCode"] != 1.0 ||
		res["outputFile"] != m["outputFile"] || res["forced"] != false {
		t.Errorf("stop result: %v", res)
	}
	// The worker's own cleanup ran (it got SIGINT, not a hang-up).
	evs := readEvents(t, m["eventsFile"].(string))
	if end := findEvent(evs, "worker.end", ""); end == nil || end["status"] != "stopped" {
		t.Errorf("worker.end: %v", end)
	}
	if findEvent(evs, "step", "end") == nil {
		t.Error("no cleanup step in the events")
	}
	if h.hasSession(session) {
		t.Error("the session is still there")
	}
	if !lockFree(t, h.root, story) {
		t.Error("the worker lock is still held")
	}
	// Nothing left to stop.
	r = h.saga(t, nil, "stop", story)
	if r.Code != 1 || !strings.Contains(r.Stderr, "no worker is running for story "+story) {
		t.Errorf("second stop: exit %d\n%s", r.Code, r.Stderr)
	}
}

func TestStopText(t *testing.T) {
	h := newTmuxEnv(t)
	m := h.startJSON(t, nil, story)
	r := h.saga(t, nil, "stop", story)
	want := fmt.Sprintf("stopped story %s: pid %d ended stopped (exit 1)\noutput %s\n", story, int(m["pid"].(float64)), m["outputFile"])
	if r.Code != 0 || r.Stdout != want {
		t.Errorf("stop: exit %d\n got %q\nwant %q\n%s", r.Code, r.Stdout, want, r.Stderr)
	}
}

func TestStopNothingRunning(t *testing.T) {
	h := newTmuxEnv(t)
	r := h.saga(t, nil, "stop", story)
	if r.Code != 1 || !strings.Contains(r.Stderr, "no worker is running for story "+story) {
		t.Errorf("stop: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := h.saga(t, nil, "stop", "Not_A_Story"); r.Code != 2 {
		t.Errorf("stop with an invalid name: exit %d\n%s", r.Code, r.Stderr)
	}
}

// A worker that ignores SIGINT has its session killed after the wait.
func TestStopKillsStubbornWorker(t *testing.T) {
	h := newTmuxEnv(t)
	m := h.startJSON(t, []string{"FAKE_WORKER_MODE=stubborn"}, story)
	pid := int(m["pid"].(float64))
	res, err := control.StopStory(context.Background(), control.StopOptions{
		Setup: control.Setup{Root: h.root, Env: h.getenv}, Story: story, Wait: 300 * time.Millisecond})
	if err != nil {
		t.Fatalf("StopStory: %v", err)
	}
	if !res.Stopped || !res.Forced || res.PID != pid || !slices.Equal(res.Sessions, []string{m["session"].(string)}) {
		t.Errorf("StopStory: %+v", res)
	}
	if !testkit.WaitExit(pid, 2*time.Second) {
		t.Errorf("worker %d still runs", pid)
	}
	if !lockFree(t, h.root, story) {
		t.Error("the worker lock is still held")
	}
}

// The real worker, stopped in the middle of a (stand-in) claude run: it
// ends the run, cleans up and reports worker.end stopped.
func TestStopRealWorker(t *testing.T) {
	h := newTmuxEnv(t)
	dir := t.TempDir()
	claude := filepath.Join(dir, "claude")
	if err := os.WriteFile(claude, []byte("#!/bin/sh\ncase \"$*\" in --version) echo '2.1.330 (Claude Code)'; exit 0;; esac\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range h.env {
		if !strings.HasPrefix(kv, "SAGA_LSP_BIN=") {
			env = append(env, kv)
		}
	}
	h.env = append(env, "CLAUDE_CONFIG_DIR="+dir, "SAGA_GH="+filepath.Join(dir, "no-gh"), "SAGA_CLAUDE="+claude)
	m := h.startJSON(t, nil, story)
	eventsFile := m["eventsFile"].(string)
	if !testkit.WaitUntil(30*time.Second, func() bool { return findEvent(readEvents(t, eventsFile), "run.start", "") != nil }) {
		t.Fatalf("no run started:\n%s", testkit.FileText(m["outputFile"].(string)))
	}
	r := h.saga(t, nil, "stop", story)
	if r.Code != 0 {
		t.Fatalf("stop: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	end := findEvent(readEvents(t, eventsFile), "worker.end", "")
	if end == nil || end["status"] != "stopped" || end["exitCode"] != 1.0 {
		t.Errorf("worker.end %v\n%s", end, testkit.FileText(m["outputFile"].(string)))
	}
	if h.hasSession(m["session"].(string)) || !lockFree(t, h.root, story) {
		t.Error("session or lock left after stop")
	}
}

func TestStatusShowsRunningWorker(t *testing.T) {
	h := newTmuxEnv(t)
	m := h.startJSON(t, nil, story)
	r := h.saga(t, nil, "status", story, "--format", "json")
	if r.Code != 0 {
		t.Fatalf("status: exit %d\n%s", r.Code, r.Stderr)
	}
	var st struct {
		Stories []struct {
			ID     string
			Worker map[string]any
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || len(st.Stories) != 1 {
		t.Fatalf("status json: %v\n%s", err, r.Stdout)
	}
	w := st.Stories[0].Worker
	if w["running"] != true || w["state"] != "running" || w["pid"] != m["pid"] || w["session"] != m["session"] ||
		w["outputFile"] != m["outputFile"] || w["cycle"] != 1.0 || w["exitCode"] != nil {
		t.Errorf("worker: %v", w)
	}
	r = h.saga(t, nil, "status")
	if want := fmt.Sprintf("running (pid %d, cycle 1)", int(m["pid"].(float64))); !strings.Contains(r.Stdout, want) {
		t.Errorf("status lists no %q:\n%s", want, r.Stdout)
	}
}

// The real worker with its built-in agent, end to end: run → worker.end →
// status shows every task completed (from the worktree).
func TestRunEndToEndDryRun(t *testing.T) {
	h := newTmuxEnv(t)
	h.realWorker(t)
	claudeLog := filepath.Join(t.TempDir(), "claude.jsonl")
	h.env = append(h.env, "SAGA_STANDIN_LOG="+claudeLog)
	waitEnd := func(m map[string]any) event {
		t.Helper()
		eventsFile := m["eventsFile"].(string)
		var end event
		if !testkit.WaitUntil(60*time.Second, func() bool {
			end = findEvent(readEvents(t, eventsFile), "worker.end", "")
			return end != nil
		}) {
			t.Fatalf("no worker.end after 60 s; output:\n%s", testkit.FileText(m["outputFile"].(string)))
		}
		if end["status"] != "completed" || end["exitCode"] != 0.0 {
			t.Fatalf("worker.end %v; output:\n%s", end, testkit.FileText(m["outputFile"].(string)))
		}
		return end
	}
	type storyJSON struct {
		State, Status string
		Done, Total   int
		Branch        string
		Worker        map[string]any
		DryRun        *struct{ State, Branch, Worktree string }
		Tasks         []struct{ ID, Status string }
	}
	status := func() storyJSON {
		t.Helper()
		r := h.saga(t, nil, "status", story, "--format", "json")
		var st struct{ Stories []storyJSON }
		if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || len(st.Stories) != 1 {
			t.Fatalf("status: %v\n%s%s", err, r.Stdout, r.Stderr)
		}
		return st.Stories[0]
	}

	// A dry run lives apart: its branch and worktree are its own, and the
	// story is as it was — pending, 0/2 — with the dry attempt labelled.
	waitEnd(h.startJSON(t, nil, story, "--dry-run", "--max-cycles", "5"))
	if _, err := os.Stat(store.DryWorktreeDir(h.root, story)); err != nil {
		t.Fatalf("no dry-run worktree: %v", err)
	}
	if _, err := os.Stat(store.WorktreeDir(h.root, story)); err == nil {
		t.Fatal("a dry run made the story's own worktree")
	}
	if out := testkit.Git(t, h.root, "for-each-ref", "--format=%(refname:short)", "refs/heads/story/", "refs/heads/saga-dry/"); strings.TrimSpace(out) != "saga-dry/"+story {
		t.Fatalf("branches after a dry run: %q", out)
	}
	s := status()
	if s.State != "pending" || s.Status != "pending" || s.Done != 0 || s.Total != 2 || s.DryRun == nil ||
		s.DryRun.State != "completed" || s.DryRun.Branch != "saga-dry/"+story || s.DryRun.Worktree != ".saga/worktrees/"+story+".dry" {
		t.Errorf("status after a dry run: %+v (dry %+v)", s, s.DryRun)
	}
	r := h.saga(t, nil, "status", story)
	if !strings.Contains(r.Stdout, "status:   pending, 0/2 tasks done") || !strings.Contains(r.Stdout, "dry run:  completed · 2/2 tasks on saga-dry/"+story) {
		t.Errorf("status text after a dry run:\n%s", r.Stdout)
	}
	if data, _ := os.ReadFile(claudeLog); len(data) != 0 {
		t.Fatalf("a dry run ran claude:\n%s", data)
	}

	// A real run after it runs the agent, on story/<story>, from the base,
	// its worker at the default priority.
	versionLog := filepath.Join(t.TempDir(), "version.jsonl")
	m := h.startJSON(t, []string{runs.EnvWorkerNice + "=", "SAGA_STANDIN_VERSION_LOG=" + versionLog}, story, "--max-cycles", "5")
	end := waitEnd(m)
	if end["cycles"] == 0.0 {
		t.Errorf("the real run ran no agent: %v", end)
	}
	if data, _ := os.ReadFile(claudeLog); len(data) == 0 {
		t.Fatalf("the real run after a dry run did not run claude; output:\n%s", testkit.FileText(m["outputFile"].(string)))
	}
	assertBackground(t, claudeLog)
	assertStartedInForeground(t, versionLog)
	if hydrate := findEvent(readEvents(t, m["eventsFile"].(string)), "step", "hydrate"); hydrate == nil || !strings.Contains(fmt.Sprint(hydrate["message"]), "2 tasks") {
		t.Errorf("hydrate: %v", hydrate)
	}
	if strings.Contains(testkit.FileText(m["outputFile"].(string)), "hydrate: 2 tasks (2 done)") {
		t.Errorf("the real run took the dry run's statuses:\n%s", testkit.FileText(m["outputFile"].(string)))
	}
	s = status()
	if s.State != "completed" || s.Status != "completed" || s.Done != 2 || s.Worker["dryRun"] != false || s.Branch != "story/"+story {
		t.Errorf("status after the real run: %+v", s)
	}
	r = h.saga(t, nil, "status", story)
	if !strings.Contains(r.Stdout, "(from the worktree)") || !strings.Contains(r.Stdout, "#write-tests [completed]") || !strings.Contains(r.Stdout, "dry run:  completed") {
		t.Errorf("status text:\n%s", r.Stdout)
	}

	// clean takes what the dry run left and nothing of the story's.
	c := h.saga(t, nil, "clean", story, "--yes")
	if _, err := os.Stat(store.DryWorktreeDir(h.root, story)); err == nil || strings.TrimSpace(testkit.Git(t, h.root, "for-each-ref", "refs/heads/saga-dry/")) != "" {
		t.Errorf("clean left the dry run's worktree or branch:\n%s%s", c.Stdout, c.Stderr)
	}
	if !strings.Contains(c.Stdout, "removed worktree .saga/worktrees/"+story+".dry (dry run:") {
		t.Errorf("clean output:\n%s", c.Stdout)
	}
	if _, err := os.Stat(store.WorktreeDir(h.root, story)); err != nil {
		t.Errorf("clean took the story's own worktree: %v", err)
	}
}
