//go:build unix

package agentsim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// liveRun is a stand-in process whose stream-json lines are read as they come.
type liveRun struct {
	t     *testing.T
	cmd   *exec.Cmd
	lines chan string
	seen  []string
	err   bytes.Buffer
}

func startLive(t *testing.T, f *fixture, script string, args []string, extraEnv ...string) *liveRun {
	t.Helper()
	cmd := execStandin(f, script, args, extraEnv...)
	cmd.Stdout = nil
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	l := &liveRun{t: t, cmd: cmd, lines: make(chan string)}
	cmd.Stderr = &l.err
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			l.lines <- sc.Text()
		}
		close(l.lines)
	}()
	return l
}

// waitFor reads lines until one contains want.
func (l *liveRun) waitFor(want string) {
	l.t.Helper()
	for line := range l.lines {
		l.seen = append(l.seen, line)
		if strings.Contains(line, want) {
			return
		}
	}
	l.t.Fatalf("the run ended before a line with %q; stderr: %s\n%s", want, l.err.String(), strings.Join(l.seen, "\n"))
}

// finish signals the process, reads the rest and returns the exit code and
// the parsed stream.
func (l *liveRun) finish(sig syscall.Signal) (int, *result) {
	l.t.Helper()
	l.cmd.Process.Signal(sig)
	for line := range l.lines {
		l.seen = append(l.seen, line)
	}
	err := l.cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		l.t.Fatal(err)
	}
	r := &result{code: code, stdout: strings.Join(l.seen, "\n") + "\n", stderr: l.err.String()}
	r.lines = parseLines(l.t, r.stdout, []string{"stream-json"})
	return code, r
}

// userTexts are the text blocks of the stream's user lines.
func userTexts(r *result) []string {
	var out []string
	for _, l := range r.lines {
		if l["type"] != "user" {
			continue
		}
		for _, b := range l["message"].(map[string]any)["content"].([]any) {
			if block := b.(map[string]any); block["type"] == "text" {
				out = append(out, block["text"].(string))
			}
		}
	}
	return out
}

// SIGINT while a TaskCompleted hook runs: as 2.1.330 does, the hook is
// killed (a non-blocking outcome, so the completion is written), the call
// answers "User rejected tool use", the stream ends with the interrupt note
// and an error_during_execution result (terminal_reason aborted_tools),
// SessionEnd runs, Stop does not, and the exit code is 0.
func TestSIGINTDuringAToolEndsTheRunWithExitZero(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	fifo := filepath.Join(f.root, "hook-started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ends := filepath.Join(f.root, "ends.log")
	settings := settingsJSON(map[string][][2]string{
		"TaskCompleted": {{"", "cat >/dev/null; echo $$ > " + shellQuote(fifo) + "; sleep 30; echo finished >> " + shellQuote(ends)}},
		"Stop":          {{"", "cat >/dev/null; echo stop >> " + shellQuote(ends)}},
		"SessionEnd":    {{"", "cat >> " + shellQuote(ends) + "; echo >> " + shellQuote(ends)}},
	})
	l := startLive(t, f, "one", workerArgs(settings))
	// The hook says it started (opening the FIFO waits for it).
	data, err := os.ReadFile(fifo)
	if err != nil {
		t.Fatal(err)
	}
	code, r := l.finish(syscall.SIGINT)
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr %s", code, r.stderr)
	}
	calls := checkShapes(t, r, true)
	last := calls[len(calls)-1]
	if last.name != "TaskUpdate" || last.input["status"] != "completed" || !last.isError ||
		!strings.HasPrefix(last.content, "The user doesn't want to proceed with this tool use.") || last.result != "User rejected tool use" {
		t.Errorf("interrupted call %+v", last)
	}
	if got := userTexts(r); len(got) != 1 || got[0] != "[Request interrupted by user for tool use]" {
		t.Errorf("user texts %q", got)
	}
	res := resultLine(t, r)
	if res["subtype"] != "error_during_execution" || res["is_error"] != true || res["terminal_reason"] != "aborted_tools" ||
		res["stop_reason"] != "tool_use" || res["num_turns"] != float64(len(calls)+2) {
		t.Errorf("result %v", res)
	}
	if !strings.Contains(f.taskFile("1"), `"status": "completed"`) {
		t.Errorf("task 1 after an interrupted TaskCompleted hook:\n%s", f.taskFile("1"))
	}
	log := f.read("ends.log")
	if strings.Contains(log, "stop") || strings.Contains(log, "finished") || !strings.Contains(log, `"hook_event_name":"SessionEnd"`) {
		t.Errorf("hooks after the interrupt:\n%s", log)
	}
	var pid int
	if err := json.Unmarshal(bytes.TrimSpace(data), &pid); err != nil || syscall.Kill(pid, 0) == nil {
		t.Errorf("the interrupted hook (pid %s) is still there", data)
	}
}

// SIGINT while the model is "thinking": the stream ends with "[Request
// interrupted by user]" and an aborted_streaming result; exit 0.
func TestSIGINTWhileWaitingForTheModel(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	ends := filepath.Join(f.root, "ends.log")
	settings := settingsJSON(map[string][][2]string{"SessionEnd": {{"", recordHook(ends)}}})
	l := startLive(t, f, "slow", workerArgs(settings), "SAGA_STANDIN_DELAY_MS=600000")
	l.waitFor(`"subtype":"init"`)
	code, r := l.finish(syscall.SIGINT)
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr %s", code, r.stderr)
	}
	if calls := checkShapes(t, r, true); len(calls) != 0 {
		t.Errorf("calls %v", calls)
	}
	if got := userTexts(r); len(got) != 1 || got[0] != "[Request interrupted by user]" {
		t.Errorf("user texts %q", got)
	}
	res := resultLine(t, r)
	if res["subtype"] != "error_during_execution" || res["terminal_reason"] != "aborted_streaming" ||
		res["stop_reason"] != nil || res["num_turns"] != 2.0 {
		t.Errorf("result %v", res)
	}
	if ends, _ := readJSONLines(t, ends); len(ends) != 1 || ends[0]["reason"] != "other" {
		t.Errorf("SessionEnd payloads %v", ends)
	}
}

// SIGTERM stops the run at once: exit 143, no result line, as 2.1.330.
func TestSlowIsStoppedBySIGTERM(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	l := startLive(t, f, "slow", workerArgs(`{}`), "SAGA_STANDIN_DELAY_MS=600000")
	l.waitFor(`"subtype":"init"`)
	code, r := l.finish(syscall.SIGTERM)
	if code != ExitCanceled {
		t.Errorf("exit %d, want %d", code, ExitCanceled)
	}
	if strings.Contains(r.stdout, `"type":"result"`) {
		t.Errorf("a killed run wrote a result line")
	}
}

// SIGINT while a sandboxed command runs: the command is killed and, as
// with 2.1.330, the placeholder files of the sandbox's mounts stay in the
// working directory (a normal end removes them: see testdata/bash).
func TestSIGINTLeavesSandboxPlaceholders(t *testing.T) {
	needSandbox(t)
	f := newFixture(t)
	fifo := filepath.Join(f.root, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	settings := `{"sandbox":{"enabled":true,"autoAllowBashIfSandboxed":true,"allowUnsandboxedCommands":false,"filesystem":{"allowWrite":["` + f.root + `"]}}}`
	l := startLive(t, f, "idle", []string{"-p", "SIMAGENT bash echo started > " + fifo + "; sleep 30", "--output-format", "stream-json",
		"--verbose", "--permission-mode", "acceptEdits", "--setting-sources", "user", "--settings", settings})
	if _, err := os.ReadFile(fifo); err != nil {
		t.Fatal(err)
	}
	code, r := l.finish(syscall.SIGINT)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr)
	}
	if res := resultLine(t, r); res["terminal_reason"] != "aborted_tools" {
		t.Errorf("result %v", res)
	}
	for _, p := range []string{".bashrc", ".bash_profile", ".gitconfig", ".mcp.json", ".claude/settings.json", ".claude/agents"} {
		if _, err := os.Stat(filepath.Join(f.project, p)); err != nil {
			t.Errorf("placeholder %s: %v", p, err)
		}
	}
}
