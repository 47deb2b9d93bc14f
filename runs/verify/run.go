package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"golang.org/x/sys/unix"
)

// Checks run code the agent wrote (its tests, its build), so they run
// confined like the agent's Bash: under bubblewrap, the worktree and the
// story's caches writable, everything else read-only (the repository's git
// dir too, and the worktree's .git), in their own pid namespace so that
// nothing they start outlives them, stdin /dev/null, output bounded. Where
// bubblewrap is missing, a check runs unconfined only where the user allowed
// unconfined commands; the result says so.

// Confinement modes of a Runner.
const (
	Confined   = "confined"   // under bubblewrap
	Unconfined = "unconfined" // sh -c, as the user allowed
	Refused    = "refused"    // no bubblewrap, and unconfined commands not allowed
)

// Output limits: what a check prints is kept as its last tailBytes, of which
// the last TailLines lines (each cut at maxLineBytes) go to the model.
const (
	TailLines    = 40
	tailBytes    = 64 << 10
	maxLineBytes = 500
)

// killGrace bounds how long a check's output pipes are read after it was
// killed (a process outside its group may hold them).
const killGrace = 2 * time.Second

// Runner runs checks in one directory.
type Runner struct {
	Dir   string // the worktree (or checkout) the checks run in
	Cache string // the story's caches (runs.CacheDir): writable, TMPDIR inside
	Mode  string // Confined, Unconfined or Refused
	// Why explains an Unconfined or Refused mode ("" when Confined).
	Why   string
	bwrap string
}

// Policy is who may allow unconfined checks when bubblewrap is missing.
type Policy struct {
	// Bash is how the worker's run uses Bash (runs.Bash*), "" outside a
	// worker run.
	Bash string
	// Human: a person runs the checks by hand (`saga-lsp verify`).
	Human bool
}

// NewRunner decides how checks in dir run: confined when bubblewrap works;
// otherwise unconfined when the user opted into unconfined Bash for the
// run (runs.BashUnsandboxed), runs them by hand, or runs Claude Code without
// a worker; else refused.
func NewRunner(ctx context.Context, dir, cache string, p Policy) *Runner {
	r := &Runner{Dir: dir, Cache: cache}
	why := ""
	if bw, err := exec.LookPath("bwrap"); err != nil {
		why = "bubblewrap (bwrap) is not installed"
	} else if out, err := exec.CommandContext(ctx, bw, "--ro-bind", "/", "/", "--unshare-pid", "--die-with-parent", "--", "/bin/sh", "-c", ":").CombinedOutput(); err != nil {
		why = fmt.Sprintf("bubblewrap cannot confine commands here (%s)", firstLine(string(out), err))
	} else {
		r.bwrap, r.Mode = bw, Confined
		return r
	}
	switch {
	case p.Bash == runs.BashUnsandboxed:
		r.Mode, r.Why = Unconfined, why+"; running UNCONFINED as the run allows unconfined Bash (--allow-unsandboxed-bash)"
	case p.Human:
		r.Mode, r.Why = Unconfined, why+"; running UNCONFINED"
	case p.Bash == "":
		r.Mode, r.Why = Unconfined, why+"; running UNCONFINED (a Claude Code session outside a worker run)"
	default:
		r.Mode, r.Why = Refused, why+" and this run does not allow unconfined commands: install bubblewrap, or run the story with --allow-unsandboxed-bash"
	}
	return r
}

// Result is one check's run.
type Result struct {
	Command  string
	ExitCode int // -1 when killed by the timeout or not run
	Duration time.Duration
	Passed   bool
	TimedOut bool
	Timeout  time.Duration // the timeout it ran under
	// Output is the last TailLines lines of what it printed.
	Output string
	// Problem says why it did not run or was cut short ("" when it ran to
	// its end).
	Problem string
	Mode    string
}

// Run runs one check with `sh -c` and the given timeout. It returns once
// the check has ended and its process group was killed (under bubblewrap
// the kernel then ends the rest of its pid namespace).
func (r *Runner) Run(ctx context.Context, command string, timeout time.Duration) Result {
	res := Result{Command: command, ExitCode: -1, Timeout: timeout, Mode: r.Mode}
	if r.Mode == Refused {
		res.Problem = "not run: " + r.Why
		return res
	}
	cmd := r.command(command)
	tail := &tailBuffer{}
	cmd.Stdout, cmd.Stderr = tail, tail
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = killGrace
	start := time.Now()
	if err := cmd.Start(); err != nil {
		res.Problem = fmt.Sprintf("could not start: %v", err)
		return res
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() {
		// Wait for the exit without reaping, so the group id stays the
		// leader's (never reused) while the rest of the group is killed.
		var info unix.Siginfo
		for {
			if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); !errors.Is(err, unix.EINTR) {
				break
			}
		}
		close(exited)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-exited:
	case <-timer.C:
		res.TimedOut = true
	case <-ctx.Done():
		res.Problem = "interrupted"
	}
	syscall.Kill(-pid, syscall.SIGKILL) // what it left running, or all of it
	<-exited
	err := cmd.Wait()
	res.Duration = time.Since(start)
	res.Output = tail.lines(TailLines)
	if res.TimedOut || res.Problem != "" || cmd.ProcessState == nil {
		return res
	}
	res.ExitCode = cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.ExitCode = 128 + int(ws.Signal())
	}
	res.Passed = res.ExitCode == 0
	if errors.Is(err, exec.ErrWaitDelay) {
		res.Problem = "a process it started kept its output open after it ended; the output was cut"
	}
	return res
}

// command is the process of one check: sh -c under bubblewrap, or plain.
func (r *Runner) command(command string) *exec.Cmd {
	env := os.Environ()
	if r.Cache != "" {
		env = append(env, runs.CacheEnv(r.Cache)...)
	}
	if r.Mode == Unconfined {
		cmd := exec.Command("/bin/sh", "-c", command)
		cmd.Dir, cmd.Env = r.Dir, env
		return cmd
	}
	args := []string{"--new-session", "--die-with-parent", "--unshare-pid",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--bind", r.Dir, r.Dir}
	// What would change the agent's powers or the user's later commands
	// stays read-only even inside the worktree: git's own files and Claude
	// Code's configuration.
	for _, n := range []string{".git", ".claude", ".mcp.json"} {
		if p := filepath.Join(r.Dir, n); exists(p) {
			args = append(args, "--ro-bind", p, p)
		}
	}
	// The caches after those: they live in the repository's git dir
	// (runs.CachePath), which is the checkout's .git when the checks run
	// in the checkout itself — a later read-only bind of .git would cover
	// them.
	if r.Cache != "" {
		args = append(args, "--bind", r.Cache, r.Cache, "--setenv", "TMPDIR", filepath.Join(r.Cache, "tmp"))
	}
	args = append(args, "--chdir", r.Dir, "--", "/bin/sh", "-c", command)
	cmd := exec.Command(r.bwrap, args...)
	cmd.Dir, cmd.Env = r.Dir, env
	return cmd
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func firstLine(out string, err error) string {
	if line, _, _ := strings.Cut(strings.TrimSpace(out), "\n"); line != "" {
		return line
	}
	return err.Error()
}

// tailBuffer keeps the last tailBytes written to it, and how much was cut.
type tailBuffer struct {
	mu      sync.Mutex
	buf     []byte
	dropped int64
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= tailBytes {
		t.dropped += int64(len(t.buf) + len(p) - tailBytes)
		t.buf = append(t.buf[:0], p[len(p)-tailBytes:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - tailBytes; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// lines is the last n lines kept, each cut at maxLineBytes, after a note
// of what came before when anything did.
func (t *tailBuffer) lines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	text := strings.TrimRight(strings.ToValidUTF8(string(t.buf), "\uFFFD"), "\n")
	if text == "" {
		return ""
	}
	all := strings.Split(text, "\n")
	if t.dropped > 0 && len(all) > 1 {
		all = all[1:] // the first line kept may be cut
	}
	before := len(all) > n || t.dropped > 0
	if len(all) > n {
		all = all[len(all)-n:]
	}
	var b bytes.Buffer
	if before {
		b.WriteString("[… earlier output not shown]\n")
	}
	for i, l := range all {
		if len(l) > maxLineBytes {
			l = strings.ToValidUTF8(l[:maxLineBytes], "") + " [… line cut]"
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	return b.String()
}
