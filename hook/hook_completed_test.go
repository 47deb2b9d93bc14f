package hook

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"golang.org/x/tools/txtar"
)

// The TaskCompleted hook, run as the real binary on a real repository: story
// s committed on main (testdata/checks.txtar), its worktree on story/s.

type checksFixture struct {
	repo, wt string
	sessions string // SAGA_SESSION_DIR
	program  string // the hook program run; "" for saga-lsp
}

func newChecksFixture(t *testing.T) *checksFixture {
	t.Helper()
	base := hookBaseDir(t)
	f := &checksFixture{repo: filepath.Join(base, "repo"), sessions: filepath.Join(base, "sessions")}
	ar, err := txtar.ParseFile(filepath.Join("testdata", "checks.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range ar.Files {
		hookWriteFile(t, filepath.Join(f.repo, file.Name), file.Data)
	}
	testkit.InitRepo(t, f.repo)
	hookWriteFile(t, filepath.Join(f.repo, ".git", "info", "exclude"), []byte(".saga/worktrees/\n"))
	f.wt = testkit.Worktree(t, f.repo, ".saga/worktrees/s", "story/s")
	return f
}

// env is the hook's environment in a session started by hand in the
// worktree (no worker): extra entries are added or replace these.
func (f *checksFixture) env(extra map[string]string) map[string]string {
	env := map[string]string{"SAGA_SESSION_DIR": f.sessions, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.DevNull}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

func (f *checksFixture) payload(t *testing.T, task any, set map[string]any) []byte {
	t.Helper()
	m := map[string]any{"task_id": task, "cwd": f.wt, "transcript_path": filepath.Join(f.sessions, "no-transcript.jsonl")}
	for k, v := range set {
		m[k] = v
	}
	return []byte(hookPayloadFrom(t, "taskcompleted.json", m))
}

// complete runs one hook process and bounds it: a hook that hangs fails
// the test instead of stalling it.
func (f *checksFixture) complete(t *testing.T, payload []byte, env map[string]string) (stderr string, code int) {
	t.Helper()
	cmd := hookProc(t, env)
	if f.program != "" {
		cmd = hookProcOf(f.program, env)
	}
	stop := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer stop.Stop()
	out, errs, code, err := procResult(cmd, payload)
	if err != nil {
		t.Fatalf("hook: %v", err)
	}
	if out != "" {
		t.Errorf("stdout %q, want nothing (Claude Code reads only the exit status and stderr)", out)
	}
	return errs, code
}

func (f *checksFixture) git(t *testing.T, args ...string) string {
	t.Helper()
	return testkit.Git(t, f.wt, args...)
}

func TestTaskCompletedChecks(t *testing.T) {
	testkit.Bwrap(t)
	f := newChecksFixture(t)
	// Outside the worktree: the repository's git dir, read-only to a check
	// (the rest of a temp dir is the check's private /tmp).
	outside := filepath.Join(f.repo, ".git", "escape.txt")
	hookWriteFile(t, filepath.Join(f.wt, "outside-path"), []byte(outside))
	tests := []struct {
		name    string
		task    string
		prepare func(t *testing.T)
		code    int
		want    []string // in stderr
		not     []string
		check   func(t *testing.T)
	}{
		{name: "passing", task: "pass", prepare: func(t *testing.T) { hookWriteFile(t, filepath.Join(f.wt, "built.txt"), []byte("ok\n")) }},
		{name: "failing: the command, its status, its output", task: "fail", code: 2,
			want: []string{"task fail cannot be completed yet", "check: echo first line; echo to stderr >&2; exit 3", "result: exit status 3",
				"last lines of its output:\nfirst line\nto stderr\n", "mark the task completed again"},
			check: func(t *testing.T) {
				if _, err := os.Stat(filepath.Join(f.wt, "never-ran.txt")); err == nil {
					t.Error("a check after the failing one ran")
				}
			}},
		{name: "timing out", task: "slow", code: 2, want: []string{"check: echo started; sleep 600", "result: timed out after 1s (killed)", "started"}},
		{name: "no checks", task: "none"},
		{name: "megabytes of output are cut to the last lines", task: "loud", code: 2,
			want: []string{"[… earlier output not shown]", "[… line cut]", "LAST LINE", "exit status 1"}},
		{name: "stdin is at its end", task: "stdin"},
		{name: "confined: the worktree and TMPDIR writable, the rest read-only", task: "confined", code: 2,
			want: []string{"Read-only file system", "exit 1", "git 1", "result: exit status 1"},
			check: func(t *testing.T) {
				if _, err := os.Stat(outside); err == nil {
					t.Errorf("a check wrote outside the worktree: %s", outside)
				}
				if _, err := os.Stat(filepath.Join(f.wt, "inside.txt")); err != nil {
					t.Errorf("the first check could not write in the worktree: %v", err)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.prepare != nil {
				tc.prepare(t)
			}
			stderr, code := f.complete(t, f.payload(t, tc.task, nil), f.env(nil))
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if tc.code == 0 && stderr != "" {
				t.Errorf("a passing completion printed:\n%s", stderr)
			}
			if n := strings.Count(stderr, "\n"); n > verify.TailLines+12 || len(stderr) > 32<<10 {
				t.Errorf("stderr is not bounded: %d lines, %d bytes", n, len(stderr))
			}
			if tc.check != nil {
				tc.check(t)
			}
		})
	}
}

// A check that would outlive the hook's registered timeout (what the worker
// registered: SAGA_CHECKS_TIMEOUT) fails before Claude Code kills the hook
// — which would let the completion through. The timeout leaves the check
// 10 s beyond the hook's margin: with 2 s, a hook started on a loaded
// machine (a fresh-clone CI run) found the time spent before its check ran.
func TestTaskCompletedWithinTheRegisteredTimeout(t *testing.T) {
	testkit.Bwrap(t)
	f := newChecksFixture(t)
	stderr, code := f.complete(t, f.payload(t, "outlives", nil), f.env(map[string]string{"SAGA_CHECKS_TIMEOUT": "20"}))
	if code != 2 || !strings.Contains(stderr, "(killed): the hook's registered timeout left it ") || !strings.Contains(stderr, "s of its 10m0s\n") {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
	stderr, code = f.complete(t, f.payload(t, "pass", nil), f.env(map[string]string{"SAGA_CHECKS_TIMEOUT": "5"}))
	if code != 2 || !strings.Contains(stderr, "result: not run: the time for the task's checks ran out") {
		t.Errorf("a budget below the margin: exit %d:\n%s", code, stderr)
	}
}

// A daemon a check starts is killed with it: nothing it started outlives
// the hook.
func TestTaskCompletedKillsWhatChecksStart(t *testing.T) {
	testkit.Bwrap(t)
	f := newChecksFixture(t)
	for _, mode := range []string{"confined", "unconfined"} {
		t.Run(mode, func(t *testing.T) {
			marker := strconv.Itoa(800000 + rand.IntN(100000)) // sleep's argument names the daemon
			hookWriteFile(t, filepath.Join(f.wt, "sleep-for"), []byte(marker))
			env := f.env(nil)
			if mode == "unconfined" {
				env["PATH"] = noBwrapPath(t)
				env[runs.EnvAllowUnconfinedChecks] = "1"
			}
			stderr, code := f.complete(t, f.payload(t, "daemon", nil), env)
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, stderr)
			}
			if mode == "unconfined" && !strings.Contains(stderr, "UNCONFINED") {
				t.Errorf("an unconfined check does not say so:\n%s", stderr)
			}
			for _, pid := range processesRunning("sleep\x00" + marker + "\x00") {
				if !testkit.WaitExit(pid, 10*time.Second) {
					t.Errorf("the daemon (pid %d) outlived its check", pid)
				}
			}
		})
	}
}

// processesRunning lists the pids whose command line is cmdline.
func processesRunning(cmdline string) []int {
	var pids []int
	des, _ := os.ReadDir("/proc")
	for _, de := range des {
		pid, err := strconv.Atoi(de.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", de.Name(), "cmdline")); err == nil && string(b) == cmdline {
			pids = append(pids, pid)
		}
	}
	return pids
}

// pathOf is a PATH holding only progs (a test skips when one is missing):
// without bwrap, or without git.
func pathOf(t *testing.T, progs ...string) string {
	t.Helper()
	dir := filepath.Join(hookBaseDir(t), "bin")
	os.MkdirAll(dir, 0o755)
	for _, prog := range progs {
		p := testkit.NeedsTool(t, prog, "")
		if err := os.Symlink(p, filepath.Join(dir, prog)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// noBwrapPath is a PATH with git and a check's tools, without bwrap.
func noBwrapPath(t *testing.T) string {
	return pathOf(t, "git", "sleep", "touch", "grep", "head", "tr", "yes")
}

// The checks that count are the fork point's: editing the worktree's copy,
// committing the edit on the story branch, or adding checks there changes
// nothing; a task the branch added takes the checks of the commit that
// added it.
func TestTaskCompletedTamperedChecks(t *testing.T) {
	testkit.Bwrap(t)
	f := newChecksFixture(t)
	weak := []byte(`{"id": "fail", "subject": "Fails", "description": "", "status": "pending", "blockedBy": [], "checks": []}` + "\n")
	failFile := filepath.Join(f.wt, ".saga", "stories", "s", "fail.json")
	refused := func(t *testing.T, task, want string) {
		t.Helper()
		stderr, code := f.complete(t, f.payload(t, task, nil), f.env(nil))
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, want 2 naming %q:\n%s", code, want, stderr)
		}
	}
	hookWriteFile(t, failFile, weak)
	refused(t, "fail", "exit status 3")
	f.git(t, "commit", "-qam", "weaken the gate")
	refused(t, "fail", "exit status 3")
	// Added on the story branch: the first version counts.
	late := filepath.Join(f.wt, ".saga", "stories", "s", "late.json")
	hookWriteFile(t, late, []byte(`{"id": "late", "subject": "L", "description": "", "status": "pending", "blockedBy": [], "checks": ["exit 5"]}`+"\n"))
	f.git(t, "add", "-A")
	f.git(t, "commit", "-qm", "plan a task on the branch")
	hookWriteFile(t, late, []byte(`{"id": "late", "subject": "L", "description": "", "status": "pending", "blockedBy": [], "checks": ["true"]}`+"\n"))
	f.git(t, "commit", "-qam", "weaken it")
	refused(t, "late", "exit status 5")
	// Checks added after the fork do not count either way.
	hookWriteFile(t, filepath.Join(f.wt, ".saga", "stories", "s", "none.json"),
		[]byte(`{"id": "none", "subject": "No checks", "description": "", "status": "pending", "blockedBy": [], "checks": ["false"]}`+"\n"))
	if stderr, code := f.complete(t, f.payload(t, "none", nil), f.env(nil)); code != 0 {
		t.Errorf("checks added in the worktree counted: exit %d\n%s", code, stderr)
	}
	// The worker's fork point (SAGA_FORK_POINT) wins over the merge-base.
	main := testkit.Git(t, f.repo, "rev-parse", "main")
	hookWriteFile(t, filepath.Join(f.repo, ".saga", "stories", "s", "fail.json"), weak)
	testkit.Git(t, f.repo, "commit", "-qam", "the user drops the checks on the base")
	f.git(t, "merge", "-q", "--no-edit", "main")
	if stderr, code := f.complete(t, f.payload(t, "fail", nil), f.env(nil)); code != 0 {
		t.Errorf("after the base dropped the checks and the branch took the base in: exit %d\n%s", code, stderr)
	}
	stderr, code := f.complete(t, f.payload(t, "fail", nil), f.env(map[string]string{"SAGA_FORK_POINT": main}))
	if code != 2 || !strings.Contains(stderr, "exit status 3") {
		t.Errorf("SAGA_FORK_POINT=%s not used: exit %d\n%s", main, code, stderr)
	}
}

// What the hook cannot decide lets the completion through, with a warning
// where something looks wrong, and fast: nothing runs.
func TestTaskCompletedBadInput(t *testing.T) {
	f := newChecksFixture(t)
	elsewhere := hookBaseDir(t)
	tests := []struct {
		name    string
		payload []byte
		env     map[string]string
		stderr  string // substring; "" = silent
	}{
		{"no task_id", f.payload(t, nil, map[string]any{"task_id": nil}), nil, "TaskCompleted payload has no task_id; the completion is not checked"},
		{"a path-like task id", f.payload(t, "../fail", nil), nil, `task id "../fail" is not a SAGA task id`},
		{"a task id that is an object", f.payload(t, map[string]any{"id": "fail"}, nil), nil, "no task_id"},
		{"a runtime TaskCreate task", f.payload(t, "7", nil), nil, ""},
		{"outside a story context", f.payload(t, "fail", map[string]any{"cwd": elsewhere}), nil, ""},
		{"a task list of another story", f.payload(t, "fail", nil), map[string]string{"CLAUDE_CODE_TASK_LIST_ID": "saga__other__1", "SAGA_STORY_ID": "s"}, "not story s's"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stderr, code := f.complete(t, tc.payload, f.env(tc.env))
			if code != 0 {
				t.Errorf("exit %d, want 0:\n%s", code, stderr)
			}
			if tc.stderr == "" && stderr != "" || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q, want %q", stderr, tc.stderr)
			}
		})
	}
}

// In a worker's run the hook takes the checks from the worker's reading
// (SAGA_CHECKS_FILE, for SAGA_FORK_POINT) without git, reports each result
// into the run's events file, and confines the checks as the run's Bash.
func TestTaskCompletedInAWorkerRun(t *testing.T) {
	testkit.Bwrap(t)
	f := newChecksFixture(t)
	fork := testkit.Git(t, f.repo, "rev-parse", "main")
	manifest := filepath.Join(f.sessions, "saga-story-s-1.checks.json")
	m := &verify.Manifest{Story: "s", ForkPoint: fork, Tasks: map[string]verify.TaskChecks{
		"fail": {Commands: []string{"echo from the manifest; exit 4"}, TimeoutSeconds: 30, From: fork},
		"none": {From: fork},
	}}
	if err := runs.WriteChecksManifest(manifest, m); err != nil {
		t.Fatal(err)
	}
	events := filepath.Join(f.sessions, "saga-story-s-1.log.events.jsonl")
	hookWriteFile(t, events, nil)
	env := f.env(map[string]string{"SAGA_STORY_ID": "s", "SAGA_PROJECT_DIR": f.wt, "SAGA_SESSION": "saga-story-s-1",
		"SAGA_CHECKS_FILE": manifest, "SAGA_FORK_POINT": fork, "SAGA_EVENTS_FILE": events, "SAGA_BASH": runs.BashSandboxed,
		"PATH": pathOf(t, "bwrap", "git")}) // git only compares the tree with the fork point: the checks are the manifest's
	stderr, code := f.complete(t, f.payload(t, "fail", nil), env)
	if code != 2 || !strings.Contains(stderr, "check: echo from the manifest; exit 4") || !strings.Contains(stderr, "from the manifest\n") {
		t.Errorf("exit %d, want 2 from the manifest's check:\n%s", code, stderr)
	}
	if stderr, code := f.complete(t, f.payload(t, "none", nil), env); code != 0 || stderr != "" {
		t.Errorf("a task without checks: exit %d %q", code, stderr)
	}
	if stderr, code := f.complete(t, f.payload(t, "slow", nil), env); code != 0 || stderr != "" {
		t.Errorf("a task the manifest does not list is not the story's: exit %d %q", code, stderr)
	}
	run := runs.ReadRun(events)
	if run == nil || run.Checks["fail"].Command != "echo from the manifest; exit 4" || run.Checks["fail"].Passed || run.Checks["fail"].ExitCode != 4 ||
		!strings.Contains(run.Checks["fail"].Message, "exit status 4\nfrom the manifest") {
		t.Errorf("check.end not in the events file: %+v", run)
	}
	// A manifest for another fork point is not trusted: git decides.
	env["SAGA_FORK_POINT"], env["PATH"] = "0000000000000000000000000000000000000000", os.Getenv("PATH")
	stderr, code = f.complete(t, f.payload(t, "none", nil), env)
	if code != 0 || !strings.Contains(stderr, "reading the checks with git") {
		t.Errorf("exit %d, want 0 with a warning:\n%s", code, stderr)
	}
}

// saga-lsp-hook, the program the worker registers, settles a task without
// checks from the worker's manifest itself and hands one with checks to the
// saga-lsp beside it, which runs them (docs/hooks.md#the-hook-program);
// alone, without that saga-lsp, it refuses every completion it cannot
// settle rather than let it through unchecked.
func TestHookProgramHandsChecksToSagaLSP(t *testing.T) {
	testkit.Bwrap(t)
	f := newChecksFixture(t)
	f.program = runs.HookProgram(testkit.Binary(t))
	if filepath.Base(f.program) != runs.HookBinary {
		t.Fatalf("no saga-lsp-hook beside %s", testkit.Binary(t))
	}
	fork := testkit.Git(t, f.repo, "rev-parse", "main")
	manifest := filepath.Join(f.sessions, "saga-story-s-1.checks.json")
	m := &runs.ChecksManifest{Story: "s", ForkPoint: fork, Tasks: map[string]runs.TaskChecks{
		"fail": {Commands: []string{"echo from the manifest; exit 4"}, TimeoutSeconds: 30, From: fork},
		"none": {From: fork},
	}}
	if err := runs.WriteChecksManifest(manifest, m); err != nil {
		t.Fatal(err)
	}
	env := f.env(map[string]string{"SAGA_STORY_ID": "s", "SAGA_PROJECT_DIR": f.wt, "SAGA_SESSION": "saga-story-s-1",
		"SAGA_CHECKS_FILE": manifest, "SAGA_FORK_POINT": fork, "SAGA_BASH": runs.BashSandboxed})
	stderr, code := f.complete(t, f.payload(t, "fail", nil), env)
	if code != 2 || !strings.Contains(stderr, "check: echo from the manifest; exit 4") || !strings.Contains(stderr, "from the manifest\n") {
		t.Errorf("exit %d, want 2 from the manifest's check run by saga-lsp:\n%s", code, stderr)
	}
	// A session by hand: git reads the checks, in saga-lsp.
	stderr, code = f.complete(t, f.payload(t, "fail", nil), f.env(nil))
	if code != 2 || !strings.Contains(stderr, "result: exit status 3") {
		t.Errorf("by hand: exit %d, want 2 from the committed check:\n%s", code, stderr)
	}

	// saga-lsp-hook alone.
	alone := filepath.Join(t.TempDir(), filepath.Base(f.program))
	data, err := os.ReadFile(f.program)
	if err != nil {
		t.Fatal(err)
	}
	hookWriteFile(t, alone, data)
	if err := os.Chmod(alone, 0o755); err != nil {
		t.Fatal(err)
	}
	f.program = alone
	if stderr, code := f.complete(t, f.payload(t, "none", nil), env); code != 0 || stderr != "" {
		t.Errorf("alone, a task without checks in the manifest: exit %d %q, want 0", code, stderr)
	}
	for _, c := range []struct {
		name string
		env  map[string]string
	}{{"a task with checks", env}, {"a session by hand", f.env(nil)}} {
		stderr, code := f.complete(t, f.payload(t, "fail", nil), c.env)
		if code != 2 || !strings.Contains(stderr, "task fail cannot be completed: its checks cannot run") || !strings.Contains(stderr, "no saga-lsp of the same build is beside") {
			t.Errorf("alone, %s: exit %d, want 2 (fail closed):\n%s", c.name, code, stderr)
		}
	}
}

// Without bubblewrap a check runs unconfined only where the user allowed
// it (SAGA_ALLOW_UNCONFINED_CHECKS=1, which a worker started with
// --allow-unconfined-checks sets); otherwise the completion is refused,
// saying what to do — unconfined Bash does not imply unconfined checks.
func TestTaskCompletedWithoutBubblewrap(t *testing.T) {
	f := newChecksFixture(t)
	path := noBwrapPath(t)
	for _, env := range []map[string]string{{"SAGA_BASH": runs.BashOff}, {"SAGA_BASH": runs.BashUnsandboxed}, {runs.EnvAllowUnconfinedChecks: "0"}, nil} {
		env = f.env(env)
		env["PATH"] = path
		stderr, code := f.complete(t, f.payload(t, "fail", nil), env)
		if code != 2 || !strings.Contains(stderr, "result: not run: bubblewrap (bwrap) is not installed, and unconfined checks are not allowed: install it (apt-get install bubblewrap") ||
			!strings.Contains(stderr, "--allow-unconfined-checks") {
			t.Errorf("%v: exit %d:\n%s", env, code, stderr)
		}
	}
	stderr, code := f.complete(t, f.payload(t, "fail", nil), f.env(map[string]string{"PATH": path, runs.EnvAllowUnconfinedChecks: "1"}))
	if code != 2 || !strings.Contains(stderr, "exit status 3") || !strings.Contains(stderr, "note: bubblewrap (bwrap) is not installed; running UNCONFINED as allowed (--allow-unconfined-checks)") {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
}

// Registered twice (the worker's settings and a user install), the hook
// runs a completion's checks once: the second process takes the first's
// result, whether it arrives while they run or after. A retry of the
// completion (the transcript has grown) runs them again.
func TestTaskCompletedRegisteredTwice(t *testing.T) {
	testkit.Bwrap(t)
	f := newChecksFixture(t)
	transcript := filepath.Join(f.sessions, "transcript.jsonl")
	hookWriteFile(t, transcript, []byte(`{"type":"user"}`+"\n"))
	payload := f.payload(t, "counted", map[string]any{"transcript_path": transcript})
	ran := filepath.Join(f.wt, "ran.txt")
	ranTimes := func() int {
		b, _ := os.ReadFile(ran)
		return bytes.Count(b, []byte("ran\n"))
	}
	both := func(env map[string]string) []string {
		var wg sync.WaitGroup
		out := make([]string, 2)
		for i := range out {
			wg.Go(func() {
				stderr, code := f.complete(t, payload, env)
				if code != 2 {
					t.Errorf("hook %d: exit %d, want 2:\n%s", i, code, stderr)
				}
				out[i] = stderr
			})
		}
		wg.Wait()
		return out
	}
	out := both(f.env(nil))
	if n := ranTimes(); n != 1 {
		t.Fatalf("the checks ran %d times for one completion", n)
	}
	full, short := out[0], out[1]
	if !strings.Contains(full, "result: exit status 1") {
		full, short = short, full
	}
	if !strings.Contains(full, "result: exit status 1") || !strings.Contains(short, "the other saga-lsp hook registered for TaskCompleted reported it in full") {
		t.Errorf("stderr of the two hooks:\n%s\n---\n%s", full, short)
	}
	// The model retries: the transcript grew.
	hookWriteFile(t, transcript, []byte(`{"type":"user"}`+"\n"+`{"type":"assistant"}`+"\n"))
	both(f.env(nil))
	if n := ranTimes(); n != 2 {
		t.Fatalf("after a retry the checks ran %d times in all, want 2", n)
	}
	// One arriving while the other runs (and no transcript to tell): it
	// waits for the result. The first's check holds while the file hold
	// exists, which goes once the second has tried the lock and tries it
	// again (it opens the lock file to try it).
	payload = f.payload(t, "counted", map[string]any{"transcript_path": filepath.Join(f.sessions, "none")})
	hold := filepath.Join(f.wt, "hold")
	hookWriteFile(t, hold, nil)
	first := hookProc(t, f.env(nil))
	first.Stdin = bytes.NewReader(payload)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	if !testkit.WaitUntil(time.Minute, func() bool { return ranTimes() == 3 }) {
		t.Fatal("the first hook never ran the check")
	}
	var lock string
	for _, base := range runs.CheckSharesOf(f.sessions, "s") {
		if strings.HasSuffix(base, "--counted") {
			lock = base + ".lock"
		}
	}
	if lock == "" {
		t.Fatalf("no check lock of s/counted in %s", f.sessions)
	}
	tried := testkit.Opened(t, lock)
	second := hookProc(t, f.env(nil))
	var stderrBuf bytes.Buffer
	second.Stdin, second.Stderr = bytes.NewReader(payload), &stderrBuf
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- second.Wait() }()
	for i, what := range []string{"tried the lock", "tried it again"} {
		select {
		case <-tried:
		case err := <-ended:
			t.Fatalf("the second hook ended (%v) before it %s, with the first still holding it:\n%s", err, what, stderrBuf.String())
		case <-time.After(2 * time.Minute):
			t.Fatalf("the second hook never %s", what)
		}
		if i == 0 {
			tried = testkit.Opened(t, lock)
		}
	}
	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
	err := <-ended
	stderr, code := stderrBuf.String(), second.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("the second hook: %v", err)
	}
	if err := first.Wait(); err == nil || ranTimes() != 3 || code != 2 || !strings.Contains(stderr, "reported it in full") {
		t.Errorf("the second hook: exit %d, runs %d (want 3):\n%s", code, ranTimes(), stderr)
	}
}
