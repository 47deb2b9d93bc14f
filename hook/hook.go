// Package hook is saga-lsp's Claude Code face: `saga-lsp hook`, the command
// hook Claude Code runs (SessionStart context, PreToolUse write scope,
// PostToolUse status sync, TaskCompleted checks), and `saga-lsp install`,
// which registers it in a settings.json. A hook must never hang, never
// block a run by accident and answer in milliseconds (but for the checks a
// task asks for).
package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
)

// The Claude Code command hook (`saga-lsp hook`): one JSON payload on stdin,
// dispatched on hook_event_name. A hook must never hang, never block a run
// by accident and answer in milliseconds, so every path here ends in exit
// status 0 — problems are one warning line on stderr ("saga-lsp hook: …") —
// but two that stop something on purpose: a PreToolUse deny (printed as
// JSON, exit 0) and a TaskCompleted whose check failed (exit 2, the
// refusal on stderr for the model).

const (
	// MaxHookPayload is the largest payload the hook reads; a larger one is
	// ignored with a warning.
	MaxHookPayload = 1 << 20
)

// limits bound how long one invocation waits: for stdin to close (when it
// never closes, the hook goes on with what it read) and for the story lock
// in PostToolUse.
type limits struct {
	read, lock time.Duration
}

// defaultLimits keep the hook well inside its shortest registration's
// timeout (claudecode.HookTimeout, 30 s), with the work after them. The
// read bounds only a stdin that stays open without a whole payload line
// (Claude Code writes one, then closes it: the hook goes on at once). It
// was 2 s: on a loaded machine (60 hooks at once beside other test
// packages, in CI) a payload came later than that, and its status update
// was lost.
func defaultLimits() limits { return limits{read: 10 * time.Second, lock: 5 * time.Second} }

// HookPayload is the part of Claude Code's hook input the hook reads.
type HookPayload struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	Source         string          `json:"source"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response"`
	TaskID         string          `json:"task_id"` // TaskCompleted
}

// hookRun carries one invocation's environment and outputs.
type hookRun struct {
	ctx    context.Context
	env    func(string) string
	stdout io.Writer
	stderr io.Writer
	limits limits
	checks Checker // nil: a completion that may have checks is refused
}

func (h *hookRun) warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	// One line, whatever the message holds (paths can hold newlines).
	msg = strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(msg)
	fmt.Fprintf(h.stderr, "saga-lsp hook: %s\n", msg)
}

// getenv returns the trimmed value of an environment variable.
func (h *hookRun) getenv(key string) string {
	if h.env == nil {
		return ""
	}
	return strings.TrimSpace(h.env(key))
}

// Hook runs the Claude Code hook: it reads one JSON payload from in (at
// most MaxHookPayload bytes, waiting a bounded time for the end),
// and handles SessionStart, PreToolUse, PostToolUse and TaskCompleted,
// whose checks it leaves to checks. env looks up environment variables
// (os.Getenv in production). It returns the exit status: 2 when a
// completion is refused, else 0.
func Hook(ctx context.Context, in io.Reader, env func(string) string, stdout, stderr io.Writer, checks Checker) (code int) {
	return run(ctx, in, env, stdout, stderr, defaultLimits(), checks)
}

func run(ctx context.Context, in io.Reader, env func(string) string, stdout, stderr io.Writer, l limits, checks Checker) (code int) {
	h := &hookRun{ctx: ctx, env: env, stdout: stdout, stderr: stderr, limits: l, checks: checks}
	defer func() {
		if r := recover(); r != nil {
			h.warnf("internal error (ignored): %v", r)
			code = 0
		}
	}()
	data, err := readPayload(ctx, in, MaxHookPayload, l.read)
	switch {
	case errors.Is(err, errPayloadTooLarge):
		h.warnf("payload larger than 1 MiB ignored")
		return 0
	case errors.Is(err, errPayloadTimeout) && len(bytes.TrimSpace(data)) == 0:
		h.warnf("no payload on stdin within %s; nothing to do", l.read)
		return 0
	case err != nil && !errors.Is(err, errPayloadTimeout):
		h.warnf("read stdin: %v", err)
		return 0
	}
	p, err := ParseHookPayload(data)
	if err != nil {
		h.warnf("%v", err)
		return 0
	}
	switch p.HookEventName {
	case claudecode.EventSessionStart:
		h.sessionStart(p)
	case claudecode.EventPreToolUse:
		h.preToolUse(p)
	case claudecode.EventPostToolUse:
		h.postToolUse(p)
	case claudecode.EventTaskCompleted:
		return h.taskCompleted(p, data)
	case "":
		h.warnf("payload has no hook_event_name; nothing to do")
	default:
		h.warnf("event %q is not handled; nothing to do (saga-lsp handles SessionStart, PreToolUse, PostToolUse and TaskCompleted)", p.HookEventName)
	}
	return 0
}

// ParseHookPayload decodes a hook payload: one JSON object. A member of an
// unexpected type is read as absent rather than failing the whole payload,
// so a future change to a field the hook does not need cannot break it.
func ParseHookPayload(data []byte) (*HookPayload, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("empty payload on stdin; Claude Code sends one JSON object")
	}
	if trimmed[0] != '{' {
		return nil, errors.New("payload is not a JSON object; Claude Code sends one JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return nil, fmt.Errorf("payload is not valid JSON: %v", err)
	}
	str := func(key string) string {
		var s string
		if raw, ok := m[key]; ok && json.Unmarshal(raw, &s) != nil {
			return ""
		}
		return s
	}
	p := &HookPayload{
		SessionID:     str("session_id"),
		Cwd:           str("cwd"),
		HookEventName: str("hook_event_name"),
		Source:        str("source"),
		ToolName:      str("tool_name"),
		ToolInput:     m["tool_input"],
		ToolResponse:  m["tool_response"],
		TaskID:        taskIDFromJSON(m["task_id"]),
	}
	p.TranscriptPath = str("transcript_path")
	if _, ok := m["hook_event_name"]; ok && p.HookEventName == "" {
		return nil, errors.New("payload's hook_event_name is not a string")
	}
	return p, nil
}

var (
	errPayloadTooLarge = errors.New("payload too large")
	errPayloadTimeout  = errors.New("stdin not closed in time")
)

// readPayload reads in until EOF, more than limit bytes (errPayloadTooLarge),
// or timeout/ctx end (errPayloadTimeout, with what was read). It does not
// wait for EOF once the bytes read form one complete JSON object followed by
// a newline, which is all Claude Code sends: a writer that keeps the pipe
// open costs nothing then.
//
// The read runs on its own goroutine because a blocked Read cannot be
// interrupted portably; after a timeout that goroutine stays blocked until
// the writer closes the pipe (the hook process exits long before).
func readPayload(ctx context.Context, in io.Reader, limit int, timeout time.Duration) ([]byte, error) {
	if in == nil {
		return nil, nil
	}
	type chunk struct {
		b   []byte
		err error
	}
	ch := make(chan chunk)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			buf := make([]byte, 8<<10) // payloads are usually well under 1 KiB
			n, err := in.Read(buf)
			select {
			case ch <- chunk{buf[:n], err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var data []byte
	for {
		select {
		case c := <-ch:
			data = append(data, c.b...)
			if len(data) > limit {
				return nil, errPayloadTooLarge
			}
			if c.err == io.EOF {
				return data, nil
			}
			if c.err != nil {
				return data, c.err
			}
			if completeObject(data) {
				return data, nil
			}
		case <-timer.C:
			return data, errPayloadTimeout
		case <-ctx.Done():
			return data, errPayloadTimeout
		}
	}
}

// completeObject reports whether data is one whole JSON object ending in a
// newline (the framing Claude Code uses).
func completeObject(data []byte) bool {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return false
	}
	t := bytes.TrimSpace(data)
	return len(t) > 1 && t[0] == '{' && t[len(t)-1] == '}' && json.Valid(t)
}

// hookCwd is the directory relative paths and context detection start from:
// the payload's cwd, else CLAUDE_PROJECT_DIR, else the process's own.
func (h *hookRun) hookCwd(p *HookPayload) string {
	if p.Cwd != "" {
		return p.Cwd
	}
	if d := h.getenv(claudecode.EnvProjectDir); d != "" {
		return d
	}
	d, _ := os.Getwd()
	return d
}

// writeJSON prints v as one line of JSON without HTML escaping.
func (h *hookRun) writeJSON(v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		h.warnf("encode output: %v", err)
		return
	}
	if _, err := h.stdout.Write(b.Bytes()); err != nil {
		h.warnf("write output: %v", err)
	}
}
