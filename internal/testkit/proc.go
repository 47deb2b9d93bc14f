package testkit

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// WaitExit waits until the process pid has ended (a zombie counts as
// ended), at most timeout, and reports whether it did. The process need not
// be a child of the test: it is waited for as an event where the system
// offers one (a pidfd on Linux).
func WaitExit(pid int, timeout time.Duration) bool {
	if pid <= 0 {
		return true
	}
	return waitExit(pid, timeout)
}

// TmuxServer names a private tmux server (tmux -L NAME) for the test and
// ends it when the test ends, waiting for the processes it ran. The test is
// skipped without tmux.
func TmuxServer(tb testing.TB) string {
	tb.Helper()
	NeedsTool(tb, "tmux", "")
	socket := fmt.Sprintf("saga-test-%d-%d", os.Getpid(), tmuxSeq.Add(1))
	// Registered after the caller's temp dirs, so it runs before they are
	// removed.
	tb.Cleanup(func() {
		out, _ := exec.Command("tmux", "-L", socket, "list-panes", "-a", "-F", "#{pane_pid}").Output()
		exec.Command("tmux", "-L", socket, "kill-server").Run()
		tmp := os.Getenv("TMUX_TMPDIR")
		if tmp == "" {
			tmp = "/tmp"
		}
		os.Remove(filepath.Join(tmp, fmt.Sprintf("tmux-%d", os.Getuid()), socket)) // tmux leaves it behind
		for _, f := range strings.Fields(string(out)) {
			pid, _ := strconv.Atoi(f)
			WaitExit(pid, 10*time.Second)
		}
	})
	return socket
}

var tmuxSeq atomic.Int64

// helperEnv names the helper a re-executed test binary runs.
const helperEnv = "SAGA_TESTKIT_HELPER"

// RunHelper, called first in a TestMain, makes the test binary serve as
// helper processes for cross-process tests: in a process started by
// HelperCmd it runs the helper named there with the command's arguments and
// exits (1 with the error on stderr when it fails); in the test process it
// returns at once. Re-executing the test binary needs no toolchain at test
// time, and the helpers run the same, possibly race-instrumented, code.
func RunHelper(helpers map[string]func(args []string) error) {
	name := os.Getenv(helperEnv)
	if name == "" {
		return
	}
	fn, ok := helpers[name]
	err := fmt.Errorf("unknown helper %q", name)
	if ok {
		var args []string
		if i := slices.Index(os.Args, "--"); i >= 0 {
			args = os.Args[i+1:]
		}
		err = fn(args)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "helper %s: %v\n", name, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// HelperCmd is a command running the test binary as the helper name with
// args (see RunHelper).
func HelperCmd(name string, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	cmd := exec.Command(exe, append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), helperEnv+"="+name)
	return cmd
}

// StartHelper starts cmd with its stdin a pipe (closing it, or the end of
// this process, tells a helper to finish) and waits for want as the first
// line of its stdout. stderr collects the helper's stderr; read it after
// Wait. On an error the process has been killed and waited for. It does not
// fail the test, so goroutines may use it.
func StartHelper(cmd *exec.Cmd, want string) (stdin io.WriteCloser, stderr *bytes.Buffer, err error) {
	got, stdin, stderr, err := StartHelperLine(cmd)
	if err != nil {
		return nil, nil, err
	}
	if got != want {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, nil, fmt.Errorf("helper said %q, want %q; stderr: %s", got, want, stderr)
	}
	return stdin, stderr, nil
}

// StartHelperLine is StartHelper returning the first line, whatever it is.
func StartHelperLine(cmd *exec.Cmd) (line string, stdin io.WriteCloser, stderr *bytes.Buffer, err error) {
	if stdin, err = cmd.StdinPipe(); err != nil {
		return "", nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, nil, err
	}
	stderr = new(bytes.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return "", nil, nil, err
	}
	lines := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		lines <- strings.TrimSpace(s)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case got := <-lines:
		return got, stdin, stderr, nil
	case <-time.After(30 * time.Second):
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return "", nil, nil, fmt.Errorf("helper printed no line in 30 s; stderr: %s", stderr)
}

// Bwrap skips the test unless bubblewrap can confine a command here (it is
// installed and may create its namespaces, a user namespace among them), as
// the checks of tasks need.
func Bwrap(tb testing.TB) {
	tb.Helper()
	NeedsTool(tb, "bwrap", "Debian: apt-get install -y bubblewrap")
	if out, err := exec.Command("bwrap", "--unshare-user", "--cap-drop", "ALL", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
		"--ro-bind", "/", "/", "--", "/bin/sh", "-c", ":").CombinedOutput(); err != nil {
		Needs(tb, fmt.Sprintf("bwrap cannot create its namespaces here: %v %s", err, out))
	}
}
