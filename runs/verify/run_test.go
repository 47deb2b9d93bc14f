//go:build unix

package verify

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"golang.org/x/sys/unix"
)

// Checks run as real processes: under bubblewrap in a worktree-like folder
// (a git repository with Claude Code's configuration) with the story's
// caches beside it, on the host outside /tmp (a check's /tmp is a private
// tmpfs of its own), or unconfined with a PATH that has no bwrap.

// realTemp is a temp dir, symlinks resolved (the path bubblewrap binds).
func realTemp(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// hostTmp is a new directory in the host's /tmp, symlinks resolved,
// removed at the end: a place a check's sandbox replaces wholesale.
func hostTmp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "saga-verify-")
	if err != nil {
		testkit.Needs(t, fmt.Sprintf("a writable /tmp: %v", err))
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// sandbox is where checks run: dir a worktree-like git repository holding
// .claude/ and .mcp.json, cache the story's caches (with tmp/), outside a
// folder beside them that is neither — all on the host (hostDir).
type sandbox struct{ dir, cache, outside string }

func newSandbox(t *testing.T) sandbox {
	t.Helper()
	base := testkit.HostDir(t)
	s := sandbox{dir: filepath.Join(base, "wt"), cache: filepath.Join(base, "cache"), outside: filepath.Join(base, "outside")}
	testkit.WriteFiles(t, s.dir, map[string]string{".claude/settings.json": "{}\n", ".mcp.json": "{}\n"})
	testkit.InitRepo(t, s.dir)
	for _, d := range []string{filepath.Join(s.cache, "tmp"), s.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// confined is a Runner in s under bubblewrap (the test is skipped where
// bubblewrap cannot confine).
func confined(t *testing.T, s sandbox) *Runner {
	t.Helper()
	testkit.Bwrap(t)
	r := newRunner(context.Background(), s.dir, s.cache, Policy{})
	if r.Mode != Confined || r.Why != "" {
		t.Fatalf("newRunner: mode %q (%s), want %q", r.Mode, r.Why, Confined)
	}
	return r
}

// withoutBwrap sets PATH to a folder holding only progs (the test is
// skipped when one is missing), so that bwrap is not found.
func withoutBwrap(t *testing.T, progs ...string) string {
	t.Helper()
	dir := filepath.Join(realTemp(t), "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, prog := range progs {
		p := testkit.NeedsTool(t, prog, "")
		if err := os.Symlink(p, filepath.Join(dir, prog)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	return dir
}

// unconfined is a Runner in s without bubblewrap, as the user allowed
// (--allow-unconfined-checks).
func unconfined(t *testing.T, s sandbox) *Runner {
	t.Helper()
	withoutBwrap(t, "sh", "sleep", "setsid", "cat")
	r := newRunner(context.Background(), s.dir, s.cache, Policy{AllowUnconfined: true})
	if r.Mode != Unconfined {
		t.Fatalf("NewRunner without bwrap: mode %q, want %q", r.Mode, Unconfined)
	}
	return r
}

// A check's status, its output's tail, and what it may write, under
// bubblewrap.
func TestRunConfined(t *testing.T) {
	s := newSandbox(t)
	r := confined(t, s)
	tmp := hostTmp(t)
	note := "[… earlier output not shown]\n"
	var seq61to100 []string
	for i := 61; i <= 100; i++ {
		seq61to100 = append(seq61to100, strconv.Itoa(i))
	}
	var loudTail []string
	for range TailLines - 2 {
		loudTail = append(loudTail, "0123456789")
	}
	loudTail = append(loudTail, "01234", "LAST LINE") // 5000000 = 454545×11 + 5

	tests := []struct {
		name    string
		command string
		exit    int
		output  string   // exactly, unless contains is set
		has     []string // in the output
		check   func(t *testing.T)
	}{
		{name: "passing", command: "true"},
		{name: "failing: its status, stdout and stderr in order", command: "echo out; echo err >&2; exit 3",
			exit: 3, output: "out\nerr"},
		{name: "killed by a signal", command: "kill -TERM $$", exit: 128 + int(syscall.SIGTERM)},
		{name: "the last lines", command: "seq 1 100", output: note + strings.Join(seq61to100, "\n")},
		{name: "megabytes: only the tail kept", command: "yes 0123456789 | head -c 5000000; echo; echo LAST LINE; exit 1",
			exit: 1, output: note + strings.Join(loudTail, "\n")},
		{name: "a very long line cut", command: `head -c 2000 /dev/zero | tr '\0' x; echo; echo end`,
			output: strings.Repeat("x", maxLineBytes) + " [… line cut]\nend"},
		{name: "a cut inside a character keeps the text valid",
			command: `printf x; i=0; while [ $i -lt 300 ]; do printf 'é'; i=$((i+1)); done; echo`,
			output:  "x" + strings.Repeat("é", (maxLineBytes-1)/2) + " [… line cut]"},
		{name: "invalid UTF-8 replaced", command: `printf 'a\377b\n'`, output: "a\uFFFDb"},
		{name: "trailing blank lines dropped", command: `printf 'a\n\n\n'`, output: "a"},
		{name: "stdin is /dev/null: cat returns at once", command: "cat; stat -L -c %t:%T /proc/self/fd/0", output: "1:3"},
		{name: "the worktree, TMPDIR and the caches writable",
			command: `echo in > inside.txt && echo tmp > "$TMPDIR/t" && echo c > "$XDG_CACHE_HOME/c" && echo "$GOCACHE"`,
			output:  filepath.Join(s.cache, "go-build"),
			check: func(t *testing.T) {
				for _, p := range []string{filepath.Join(s.dir, "inside.txt"), filepath.Join(s.cache, "tmp", "t"), filepath.Join(s.cache, "c")} {
					if _, err := os.Stat(p); err != nil {
						t.Errorf("the check could not write %s: %v", p, err)
					}
				}
			}},
		{name: "outside the worktree read-only", command: fmt.Sprintf("echo out > '%s/escape.txt'", s.outside),
			exit: 2, has: []string{"Read-only file system"},
			check: func(t *testing.T) {
				if _, err := os.Stat(filepath.Join(s.outside, "escape.txt")); err == nil {
					t.Error("a check wrote outside the worktree")
				}
			}},
		{name: "another temp dir: the check's own /tmp, not the host's",
			command: fmt.Sprintf("test ! -e '%[1]s' && mkdir -p '%[1]s' && echo out > '%[1]s/escape.txt' && cat '%[1]s/escape.txt'", tmp),
			output:  "out",
			check: func(t *testing.T) {
				if _, err := os.Stat(filepath.Join(tmp, "escape.txt")); err == nil {
					t.Error("a check wrote in the host's /tmp")
				}
			}},
		{name: ".git read-only", command: "echo evil > .git/evil", exit: 2, has: []string{"Read-only file system"},
			check: func(t *testing.T) {
				if _, err := os.Stat(filepath.Join(s.dir, ".git", "evil")); err == nil {
					t.Error("a check wrote in .git")
				}
			}},
		{name: ".claude read-only", command: "echo evil > .claude/settings.json", exit: 2, has: []string{"Read-only file system"},
			check: func(t *testing.T) {
				if got := testkit.FileText(filepath.Join(s.dir, ".claude", "settings.json")); got != "{}\n" {
					t.Errorf(".claude/settings.json is %q", got)
				}
			}},
		{name: ".mcp.json read-only", command: "echo evil >> .mcp.json", exit: 2, has: []string{"Read-only file system"},
			check: func(t *testing.T) {
				if got := testkit.FileText(filepath.Join(s.dir, ".mcp.json")); got != "{}\n" {
					t.Errorf(".mcp.json is %q", got)
				}
			}},
		{name: "its own pid namespace: a few processes in /proc", command: `test "$(ls /proc | grep -c '^[0-9][0-9]*$')" -lt 10`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const timeout = time.Minute
			res := r.Run(context.Background(), tc.command, timeout)
			if res.Command != tc.command || res.Mode != Confined || res.Timeout != timeout || res.TimedOut || res.Problem != "" {
				t.Errorf("result %+v", res)
			}
			if res.ExitCode != tc.exit || res.Passed != (tc.exit == 0) {
				t.Errorf("exit %d, passed %v, want exit %d; output:\n%s", res.ExitCode, res.Passed, tc.exit, res.Output)
			}
			if res.Duration <= 0 || res.Duration >= timeout {
				t.Errorf("duration %s", res.Duration)
			}
			if tc.has == nil && res.Output != tc.output {
				t.Errorf("output:\n%q\nwant:\n%q", res.Output, tc.output)
			}
			for _, h := range tc.has {
				if !strings.Contains(res.Output, h) {
					t.Errorf("output lacks %q:\n%s", h, res.Output)
				}
			}
			if !utf8.ValidString(res.Output) {
				t.Errorf("output is not valid UTF-8: %q", res.Output)
			}
			if n := strings.Count(res.Output, "\n"); n > TailLines || len(res.Output) > (TailLines+1)*(maxLineBytes+len(" [… line cut]")+1) {
				t.Errorf("output not bounded: %d lines, %d bytes", n+1, len(res.Output))
			}
			if tc.check != nil {
				tc.check(t)
			}
		})
	}
}

// Unconfined (no bubblewrap, allowed): the same status and output, stdin
// /dev/null, the caches in the environment, which is allow-listed as a
// confined check's (no token; GOPROXY neither set nor kept: it has the
// network), and the host's files writable.
func TestRunUnconfined(t *testing.T) {
	s := newSandbox(t)
	r := unconfined(t, s)
	t.Setenv("GH_TOKEN", "secret")
	t.Setenv("GOPROXY", "direct")
	tests := []struct {
		name, command string
		exit          int
		output        string
	}{
		{name: "passing", command: "true"},
		{name: "failing", command: "echo out; echo err >&2; exit 3", exit: 3, output: "out\nerr"},
		{name: "killed by a signal", command: "kill -TERM $$", exit: 128 + int(syscall.SIGTERM)},
		{name: "stdin is /dev/null", command: "cat; read x || echo EOF", output: "EOF"},
		{name: "the caches", command: `echo "$GOCACHE"`, output: filepath.Join(s.cache, "go-build")},
		{name: "the environment allow-listed", command: `echo "${GH_TOKEN-unset} ${GOPROXY-unset} $TMPDIR"`,
			output: "unset unset " + filepath.Join(s.cache, "tmp")},
		{name: "writes anywhere", command: fmt.Sprintf("echo out > '%s/unconfined.txt'", s.outside)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := r.Run(context.Background(), tc.command, time.Minute)
			if res.Mode != Unconfined || res.ExitCode != tc.exit || res.Passed != (tc.exit == 0) || res.Output != tc.output || res.Problem != "" || res.TimedOut {
				t.Errorf("result %+v, want exit %d, output %q", res, tc.exit, tc.output)
			}
		})
	}
}

// A cache under a path the sandbox binds read-only (the checkout's .git,
// where caches of the previous version lived, buildcache.LegacyCachePath) stays
// writable while the rest of .git is read-only: the cache is bound last.
func TestRunConfinedInTheCheckout(t *testing.T) {
	testkit.Bwrap(t)
	root := realTemp(t)
	testkit.InitRepo(t, root)
	cache := filepath.Join(root, ".git", "saga-lsp", "cache", "s")
	if err := os.MkdirAll(filepath.Join(cache, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newRunner(context.Background(), root, cache, Policy{})
	if r.Mode != Confined {
		t.Fatalf("mode %q (%s)", r.Mode, r.Why)
	}
	res := r.Run(context.Background(), `echo tmp > "$TMPDIR/t" && echo c > "$XDG_CACHE_HOME/c" && echo in > inside.txt`, time.Minute)
	if !res.Passed {
		t.Errorf("the caches or the checkout are not writable: %s\n%s", res.Outcome(), res.Output)
	}
	res = r.Run(context.Background(), "echo evil > .git/evil; echo [hooks] >> .git/config", time.Minute)
	if res.Passed || strings.Count(res.Output, "Read-only file system") != 2 {
		t.Errorf("the git dir is writable: %s\n%s", res.Outcome(), res.Output)
	}
	if strings.Contains(testkit.FileText(filepath.Join(root, ".git", "config")), "[hooks]") {
		t.Error("a check changed .git/config")
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

// daemon is a `sleep` a check starts in the background, named by its
// argument, that would outlive the check.
type daemon struct{ arg, cmdline string }

func newDaemon() daemon {
	arg := strconv.Itoa(800000 + rand.IntN(100000))
	return daemon{arg: arg, cmdline: "sleep\x00" + arg + "\x00"}
}

// find waits until the daemon runs, or done is closed, and returns its pid
// (0 when done was closed first).
func (d daemon) find(t *testing.T, done <-chan struct{}) int {
	t.Helper()
	pid := 0
	testkit.WaitUntil(2*time.Minute, func() bool {
		if pids := processesRunning(d.cmdline); len(pids) > 0 {
			pid = pids[0]
			t.Cleanup(func() { d.kill(pid) })
			return true
		}
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
	return pid
}

// await is the result of a Run started in a goroutine, failing the test
// when it has not returned within limit (a Run that never returns is a
// check left running).
func await(t *testing.T, results <-chan Result, limit time.Duration) Result {
	t.Helper()
	select {
	case res := <-results:
		return res
	case <-time.After(limit):
		t.Fatalf("Run has not returned after %s", limit)
		return Result{}
	}
}

// kill ends the daemon if it is still running (when a test failed), so
// that no test leaves it behind.
func (d daemon) kill(pid int) {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && string(b) == d.cmdline {
		syscall.Kill(pid, syscall.SIGKILL)
		testkit.WaitExit(pid, 10*time.Second)
	}
}

// Nothing a check starts outlives it: a daemon (one leaving its process
// group too, under bubblewrap) is gone once Run has returned, whether the
// check ended by itself or was killed by its timeout.
func TestRunKillsWhatTheCheckStarted(t *testing.T) {
	for _, mode := range []string{Confined, Unconfined} {
		t.Run(mode, func(t *testing.T) {
			s := newSandbox(t)
			var r *Runner
			start := "sleep"
			if mode == Confined {
				r = confined(t, s)
				start = "setsid sleep" // out of the process group: only the pid namespace ends it
			} else {
				r = unconfined(t, s)
			}

			t.Run("ended by itself", func(t *testing.T) {
				d := newDaemon()
				gate := filepath.Join(s.dir, "gate")
				if err := unix.Mkfifo(gate, 0o600); err != nil {
					t.Fatal(err)
				}
				// The check waits at the gate until the test has seen its
				// daemon.
				command := fmt.Sprintf("%s %s & read x < gate; echo passed the gate", start, d.arg)
				results := make(chan Result, 1)
				done := make(chan struct{})
				go func() { results <- r.Run(context.Background(), command, 2*time.Minute); close(done) }()
				pid := d.find(t, done)
				if pid == 0 {
					res := await(t, results, 2*time.Minute)
					t.Fatalf("the check ended before its daemon was seen: %s\n%s", res.Outcome(), res.Output)
				}
				opened := testkit.WaitUntil(time.Minute, func() bool {
					f, err := os.OpenFile(gate, os.O_WRONLY|syscall.O_NONBLOCK, 0) // ENXIO until the check opens it
					if err != nil {
						return false
					}
					defer f.Close()
					_, err = f.WriteString("go\n")
					return err == nil
				})
				if !opened {
					t.Fatal("the check never opened its gate")
				}
				res := await(t, results, 2*time.Minute)
				if !res.Passed || res.Output != "passed the gate" {
					t.Errorf("%s (%s)\n%s", res.Outcome(), res.Problem, res.Output)
				}
				if !testkit.WaitExit(pid, 10*time.Second) {
					t.Errorf("the daemon (pid %d) outlived its check", pid)
				}
			})

			t.Run("killed by its timeout", func(t *testing.T) {
				// The timeout must not fire before the daemon was seen: on a
				// slow machine, try again with a longer one.
				for timeout := 2 * time.Second; ; timeout *= 2 {
					d := newDaemon()
					// "started" is printed before the daemon starts: a daemon
					// seen means the output holds it, however slow the shell.
					command := fmt.Sprintf("echo started; %s %s & wait", start, d.arg)
					results := make(chan Result, 1)
					done := make(chan struct{})
					began := time.Now()
					go func() { results <- r.Run(context.Background(), command, timeout); close(done) }()
					pid := d.find(t, done)
					res := await(t, results, 2*time.Minute)
					if pid == 0 {
						if timeout >= time.Minute {
							t.Fatalf("the daemon was never seen: %s\n%s", res.Outcome(), res.Output)
						}
						continue
					}
					if !res.TimedOut || res.Passed || res.ExitCode != -1 || res.Timeout != timeout || res.Output != "started" {
						t.Errorf("result %+v", res)
					}
					if res.Duration < timeout || time.Since(began) < timeout {
						t.Errorf("it ended after %s, before its timeout %s", res.Duration, timeout)
					}
					if want := fmt.Sprintf("timed out after %s (killed)", timeout); res.Outcome() != want {
						t.Errorf("outcome %q, want %q", res.Outcome(), want)
					}
					if !testkit.WaitExit(pid, 10*time.Second) {
						t.Errorf("the daemon (pid %d) outlived its check", pid)
					}
					return
				}
			})
		})
	}
}

// Unconfined, a daemon that left the check's process group is not killed,
// but Run does not wait for it beyond a grace: the check's result stands
// and says its output was cut.
func TestRunUnconfinedDaemonHoldingTheOutput(t *testing.T) {
	s := newSandbox(t)
	r := unconfined(t, s)
	d := newDaemon()
	if err := unix.Mkfifo(filepath.Join(s.dir, "ready"), 0o600); err != nil {
		t.Fatal(err)
	}
	results := make(chan Result, 1)
	done := make(chan struct{})
	go func() {
		// The check ends once the daemon has left its group (it writes to
		// the fifo after setsid).
		results <- r.Run(context.Background(), fmt.Sprintf("setsid sh -c 'echo > ready; exec sleep %s' & read x < ready; echo started", d.arg), time.Minute)
		close(done)
	}()
	res := await(t, results, 2*time.Minute)
	// It left the group: still running, so found after Run returned.
	pid := d.find(t, done)
	if pid == 0 {
		t.Fatal("the daemon was never seen")
	}
	if !res.Passed || res.Output != "started" || !strings.Contains(res.Problem, "kept its output open after it ended") {
		t.Errorf("result %+v", res)
	}
	if res.Duration < killGrace || res.Duration > killGrace+30*time.Second {
		t.Errorf("Run took %s, want the grace %s", res.Duration, killGrace)
	}
}

// A cancelled context ends the check at once; a check that cannot start
// says why; neither passes.
func TestRunInterruptedOrNotStarted(t *testing.T) {
	s := newSandbox(t)
	r := confined(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := r.Run(ctx, "sleep 600", time.Hour)
	if res.Passed || res.ExitCode != -1 || res.TimedOut || res.Problem != "interrupted" || res.Outcome() != "interrupted" {
		t.Errorf("interrupted: %+v", res)
	}
	if res.Duration > time.Minute {
		t.Errorf("an interrupted check took %s", res.Duration)
	}

	gone := &Runner{Dir: filepath.Join(s.dir, "missing"), Mode: Unconfined}
	res = gone.Run(context.Background(), "true", time.Minute)
	if res.Passed || res.ExitCode != -1 || !strings.HasPrefix(res.Problem, "could not start: ") || res.Outcome() != res.Problem {
		t.Errorf("not started: %+v", res)
	}
}

// Where bubblewrap cannot confine checks they run unconfined only where
// the user allowed it, and the result says so; otherwise they are refused,
// unrun, and the refusal names the fix and the flag. (bubblewrap missing,
// and one failing for want of user namespaces: confine_test.go,
// TestChecksRefusedWhereTheyCannotBeConfined.)
func TestNewRunnerPolicy(t *testing.T) {
	// Only the first line of what bubblewrap printed. (A message about user
	// namespaces gets their fix: confine_test.go.)
	const broken = "bubblewrap cannot confine commands here (bwrap: Can't mount proc on /newroot/proc: Operation not permitted)"
	tests := []struct {
		name   string
		policy Policy
		mode   string
		why    []string
	}{
		{name: "bwrap that cannot confine, unconfined checks not allowed", policy: Policy{}, mode: Refused,
			why: []string{broken, "and unconfined checks are not allowed: make `bwrap --unshare-user", AllowUnconfinedFlag, runs.EnvAllowUnconfinedChecks + "=1"}},
		{name: "bwrap that cannot confine, unconfined checks allowed", policy: Policy{AllowUnconfined: true}, mode: Unconfined,
			why: []string{broken, "; running UNCONFINED as allowed (" + AllowUnconfinedFlag + ")"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSandbox(t)
			// The only bwrap on PATH fails with a message of two lines, as
			// bubblewrap does in a container that masks /proc.
			bin := withoutBwrap(t)
			testkit.WriteFiles(t, bin, map[string]string{"bwrap": "#!/bin/sh\necho \"bwrap: Can't mount proc on /newroot/proc: Operation not permitted\" >&2\necho more >&2\nexit 1\n"})
			if err := os.Chmod(filepath.Join(bin, "bwrap"), 0o755); err != nil {
				t.Fatal(err)
			}
			r := newRunner(context.Background(), s.dir, s.cache, tc.policy)
			if r.Mode != tc.mode || r.Dir != s.dir || r.Cache != s.cache {
				t.Errorf("mode %q, want %q (%+v)", r.Mode, tc.mode, r)
			}
			for _, w := range tc.why {
				if !strings.Contains(r.Why, w) {
					t.Errorf("why %q lacks %q", r.Why, w)
				}
			}
			res := r.Run(context.Background(), "echo ran > ran.txt; echo \"$XDG_CACHE_HOME\"", time.Minute)
			if res.Mode != tc.mode {
				t.Errorf("the result's mode %q, want %q", res.Mode, tc.mode)
			}
			_, err := os.Stat(filepath.Join(s.dir, "ran.txt"))
			switch tc.mode {
			case Unconfined:
				if !res.Passed || res.Output != s.cache || err != nil {
					t.Errorf("an allowed unconfined check: %+v (ran.txt: %v)", res, err)
				}
			case Refused:
				if res.Passed || res.ExitCode != -1 || res.Problem != "not run: "+r.Why || res.Outcome() != res.Problem || !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a refused check: %+v (ran.txt: %v)", res, err)
				}
			}
		})
	}

	t.Run("bubblewrap works", func(t *testing.T) {
		s := newSandbox(t)
		r := confined(t, s) // Policy{}
		for _, p := range []Policy{{}, {AllowUnconfined: true}} {
			if r2 := newRunner(context.Background(), s.dir, s.cache, p); r2.Mode != Confined || r2.Why != "" || r2.bwrap != r.bwrap {
				t.Errorf("policy %+v: mode %q (%s)", p, r2.Mode, r2.Why)
			}
		}
	})
}
