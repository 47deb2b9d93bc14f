package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/runs/supervise"
	"github.com/saga-ai/saga-lsp/store"
)

// Checks run code the agent wrote (its tests, its build), so they run
// confined at least as tightly as the agent's Bash (sandbox.go): under
// bubblewrap, in their own user namespace without capabilities, with no
// network, no host sockets, no /tmp or runtime dir of the host, no
// credential stores, a scrubbed environment, the worktree and the story's
// caches writable and everything else read-only (the repository's git dir
// too, and the worktree's .git), in their own pid namespace so that nothing
// they start outlives them, within limits (limits.go), stdin /dev/null,
// output bounded. Where bubblewrap cannot confine them, they run unconfined
// only where the user allowed it (--allow-unconfined-checks); the result
// says so.

// Confinement modes of a Runner.
const (
	Confined   = "confined"   // under bubblewrap
	Unconfined = "unconfined" // sh -c, as the user allowed
	Refused    = "refused"    // cannot be confined, and unconfined checks not allowed
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
	Cache string // the story's caches (buildcache.CacheDir): writable, TMPDIR inside
	// Warm is what Cache starts warm from, read only (set by the caller;
	// none when zero).
	Warm buildcache.Warm
	Mode string // Confined, Unconfined or Refused
	// Why explains an Unconfined or Refused mode ("" when Confined).
	Why string
	// Env is the environment a check's is drawn from (checkEnv) and that
	// names the sockets and stores to hide; nil: this process's.
	Env   []string
	bwrap string
}

// Policy is whether the user allowed unconfined checks.
type Policy struct {
	// AllowUnconfined: checks run unconfined where bubblewrap cannot
	// confine them (--allow-unconfined-checks of run, worker and verify;
	// runs.EnvAllowUnconfinedChecks for the hook).
	AllowUnconfined bool
}

// AllowUnconfinedFlag is the flag that allows unconfined checks.
const AllowUnconfinedFlag = "--allow-unconfined-checks"

// NewRunner decides how checks in dir run: confined when bubblewrap can
// confine them here; else unconfined where p allows it; else refused.
func newRunner(ctx context.Context, dir, cache string, p Policy) *Runner {
	r := &Runner{Dir: dir, Cache: cache}
	bw, problem, fix := probe(ctx)
	switch {
	case problem == "":
		r.bwrap, r.Mode = bw, Confined
	case p.AllowUnconfined:
		r.Mode, r.Why = Unconfined, problem+"; running UNCONFINED as allowed ("+AllowUnconfinedFlag+"): with the network, the host's sockets and files, only the per-process limits"
	default:
		r.Mode, r.Why = Refused, refusal(problem, fix)
	}
	return r
}

// Probe tries the sandbox that confines checks here (bubblewrap and its
// namespaces on Linux, Seatbelt on macOS): its program, or what stops it
// (problem) and what to do (fix). runs/doctor reports it.
func Probe(ctx context.Context) (program, problem, fix string) { return probe(ctx) }

// Unconfinable says why checks cannot be confined here and what to do
// ("" when they can): what `run` refuses a story with checks for unless
// unconfined checks are allowed.
func Unconfinable(ctx context.Context) string {
	if _, problem, fix := probe(ctx); problem != "" {
		return refusal(problem, fix)
	}
	return ""
}

func refusal(problem, fix string) string {
	return fmt.Sprintf("%s, and unconfined checks are not allowed: %s — or run them unconfined with %s (run, worker, verify; %s=1 in a Claude Code session started by hand)",
		problem, fix, AllowUnconfinedFlag, runs.EnvAllowUnconfinedChecks)
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
	// Limit says which of its limits ended it ("" when none did).
	Limit string
	Mode  string
	// Protected: it ran with the protected files as they are at the
	// reference commit (the protected run), not on the full tree.
	Protected bool
}

// Run runs one check with `sh -c`, the given timeout and the default
// limits.
func (r *Runner) Run(ctx context.Context, command string, timeout time.Duration) Result {
	return r.RunLimited(ctx, command, timeout, store.CheckLimits{})
}

// RunLimited runs one check with `sh -c`, the given timeout and limits
// (zero ones: the defaults). It returns once the check has ended and its
// process group was killed (under bubblewrap the kernel then ends the rest
// of its pid namespace).
func (r *Runner) RunLimited(ctx context.Context, command string, timeout time.Duration, limits store.CheckLimits) Result {
	return r.run(ctx, command, timeout, limits, nil)
}

// run runs one check, on the view v when it is not nil (the protected
// run): under bubblewrap mounted over the worktree, unconfined in its
// whole mirror.
func (r *Runner) run(ctx context.Context, command string, timeout time.Duration, limits store.CheckLimits, v *mounted) Result {
	res := Result{Command: command, ExitCode: -1, Timeout: timeout, Mode: r.Mode, Protected: v != nil}
	if r.Mode == Refused {
		res.Problem = "not run: " + r.Why
		return res
	}
	limits = limits.WithDefaults()
	cmd, info, gate, err := r.command(command, v, limits, timeout)
	if err != nil {
		res.Problem = fmt.Sprintf("could not start: %v", err)
		return res
	}
	defer gate.Close()
	if info != nil {
		defer info.Close()
	}
	tail := &tailBuffer{}
	cmd.Stdout, cmd.Stderr = tail, tail
	cmd.SysProcAttr = supervise.ChildGroup()
	cmd.WaitDelay = killGrace
	start := time.Now()
	err = cmd.Start()
	for _, f := range cmd.ExtraFiles {
		f.Close() // the child's ends
	}
	if err != nil {
		res.Problem = fmt.Sprintf("could not start: %v", err)
		return res
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() {
		// Wait for the exit without reaping, so the group id stays the
		// leader's (never reused) while the rest of the group is killed.
		supervise.AwaitExit(pid)
		close(exited)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	fired := make(chan string, 1)
	res.Problem = r.release(pid, info, gate, exited, limits, timeout, fired)
	if res.Problem == "" {
		select {
		case <-exited:
		case <-timer.C:
			res.TimedOut = true
		case <-ctx.Done():
			res.Problem = "interrupted"
		case res.Limit = <-fired:
		}
	}
	supervise.KillGroup(pid) // what it left running, or all of it
	<-exited
	err = cmd.Wait()
	res.Duration = time.Since(start)
	res.Output = tail.lines(TailLines)
	if res.TimedOut || res.Problem != "" || cmd.ProcessState == nil {
		return res
	}
	res.ExitCode = supervise.ExitStatus(cmd.ProcessState)
	res.Passed = res.ExitCode == 0 && res.Limit == ""
	if res.Limit == "" {
		res.Limit = limitExit(res.ExitCode, limits, timeout)
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		res.Problem = "a process it started kept its output open after it ended; the output was cut"
	}
	return res
}

// release lets the check waiting at its gate run once its limits are set,
// and starts the watchdog of a confined one. It returns why the check
// could not run ("" when it runs).
func (r *Runner) release(pid int, info, gate *os.File, exited <-chan struct{}, limits store.CheckLimits, timeout time.Duration, fired chan<- string) string {
	first := pid
	if info != nil {
		// bubblewrap reports its first process in the check's namespaces
		// once they are set up, then waits at the gate; it reports nothing
		// when it cannot set them up.
		got := make(chan int, 1)
		go func() {
			var v struct {
				ChildPid int `json:"child-pid"`
			}
			json.NewDecoder(info).Decode(&v)
			got <- v.ChildPid
		}()
		select {
		case first = <-got:
		case <-exited:
			first = 0
		case <-time.After(timeout):
			return "not run: bubblewrap did not set up the check's sandbox within its timeout"
		}
		if first <= 0 {
			return "not run: bubblewrap could not set up the check's sandbox (its output says why)"
		}
	}
	if err := setLimits(first, limits, timeout); err != nil {
		return fmt.Sprintf("not run: %v", err)
	}
	if _, err := gate.Write([]byte("\n")); err != nil {
		return fmt.Sprintf("not run: %v", err)
	}
	gate.Close()
	if info != nil {
		go newWatchdog(first, limits).run(exited, fired)
	}
	return ""
}

// command is the process of one check, held at a gate (a pipe it reads
// first) until release: sh -c confined (under bubblewrap, which also
// reports its first process on info; under Seatbelt), or plain; on the
// view v when it is not nil (the protected run). Its ExtraFiles are the
// child's ends.
func (r *Runner) command(command string, v *mounted, limits store.CheckLimits, timeout time.Duration) (cmd *exec.Cmd, info, gate *os.File, err error) {
	src := r.Env
	if src == nil {
		src = os.Environ()
	}
	gateR, gate, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if r.Mode == Unconfined {
		// fd 3 is the gate: the shell waits for a line on it, then runs the
		// check with its limits in place.
		cmd = exec.Command("/bin/sh", "-c", limitsScript(limits, timeout)+gated, "saga-check", command)
		cmd.Dir, cmd.Env, cmd.ExtraFiles = r.Dir, checkEnv(src, r.Cache, r.Warm, false), []*os.File{gateR}
		if v != nil {
			cmd.Dir = v.dir
		}
		return cmd, nil, gate, nil
	}
	return r.confined(command, src, gateR, gate, limits, timeout, v)
}

// gated is the shell script of a check's first shell past its limits: wait
// for the gate's line on fd 3, then run the check ("$1").
const gated = `read -r _ <&3; exec 3<&-; exec /bin/sh -c "$1"`

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
