// The Bash tool: a command run with /bin/bash -c in the working directory,
// unconfined or in the bubblewrap sandbox, with Claude Code's results.

package agentsim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/runs/supervise"
)

// Bash command timeouts (the input's timeout is in milliseconds).
const (
	defaultBashTimeout = 2 * time.Minute
	maxBashTimeout     = 10 * time.Minute
)

// bashTool runs a Bash command (its permission already granted): sandboxed
// when the sandbox is on (dangerouslyDisableSandbox is ignored when
// allowUnsandboxedCommands is false, and refused before this otherwise),
// else unconfined; CLAUDE_ENV_FILE's exports first. stdout and stderr are
// one stream, trailing newlines trimmed. A non-zero exit is an error
// "Exit code N\n<output>". A command that outlives its timeout is killed
// (the real CLI moves it to the background instead). The placeholder files
// the sandbox's mounts create are removed after the command — but not when
// an interrupt stopped it, as with the real CLI.
func (s *session) bashTool(in *obj) toolResult {
	command := in.str("command")
	script := command
	if s.envFile != "" {
		if data, err := os.ReadFile(s.envFile); err == nil && len(bytes.TrimSpace(data)) > 0 {
			script = string(data) + "\n" + command
		}
	}
	timeout := defaultBashTimeout
	if v, ok := in.get("timeout"); ok {
		if ms, isNum := v.(float64); isNum && ms > 0 {
			timeout = min(time.Duration(ms)*time.Millisecond, maxBashTimeout)
		}
	}
	ctx, cancel := context.WithTimeout(s.ictx, timeout)
	defer cancel()
	var cmd *exec.Cmd
	var placeholders []string
	if s.sandbox.on {
		bwrap, err := s.bwrapPath()
		if err != nil {
			return errResult(err.Error())
		}
		var args []string
		if args, placeholders, err = s.bwrapCommand(script); err != nil {
			return errResult(err.Error())
		}
		cmd = exec.CommandContext(ctx, bwrap, args...)
	} else {
		cmd = exec.CommandContext(ctx, "/bin/bash", "-c", script)
	}
	cmd.Dir = s.cwd
	cmd.Env = append(append([]string(nil), s.environ...), "CLAUDECODE=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = supervise.OwnGroup()
	cmd.Cancel = func() error { supervise.KillGroup(cmd.Process.Pid); return nil }
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if !s.interrupted.Load() {
		for _, p := range placeholders {
			if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() && st.Size() == 0 {
				os.Remove(p)
			}
		}
	}
	output := strings.TrimRight(out.String(), "\n")
	code := 0
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		code = 143
		output = strings.TrimLeft(output+fmt.Sprintf("\nCommand timed out after %s", timeout), "\n")
	case errors.As(err, &ee):
		code = ee.ExitCode()
		if code < 0 {
			code = 137 // 128 + SIGKILL, as a shell reports a killed command
		}
	case err != nil:
		return errResult(err.Error())
	}
	if code != 0 {
		text := fmt.Sprintf("Exit code %d", code)
		if output != "" {
			text += "\n" + output
		}
		return toolResult{structured: "Error: " + text, text: text, isError: true}
	}
	res := newObj("stdout", output, "stderr", "", "interrupted", false, "isImage", false,
		"noOutputExpected", silentCommand(command, s.getenv("HOME")))
	if v, _ := in.get("dangerouslyDisableSandbox"); v == true {
		res.set("dangerouslyDisableSandbox", true)
	}
	text := output
	if text == "" {
		text = "(Bash completed with no output)"
	}
	return toolResult{structured: res, text: text}
}

// silentCommand: every part of the command is one that prints nothing when
// it works (Claude Code's noOutputExpected).
func silentCommand(command, home string) bool {
	line := parseShell(command, home)
	for _, seg := range line.segments {
		if len(seg.words) == 0 || !isWriteCommand(seg.words[0]) {
			return false
		}
	}
	return len(line.segments) > 0
}
