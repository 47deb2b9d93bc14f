package agentsim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// toolResult is what a tool call gave: the structured result (the
// stream's tool_use_result and PostToolUse's tool_response) and the text the
// model sees. isError marks a failed call; its structured result is the
// string "Error: <text>".
type toolResult struct {
	structured any
	text       string
	blocks     []any // content blocks the model sees instead of text (ToolSearch's tool_reference blocks)
	isError    bool
	denied     bool // blocked by a hook or the permission check
}

// call is one tool call by the simulated model: the assistant tool_use
// line, input validation, the tool's own checks, PreToolUse hooks, the
// permission check, the tool, PostToolUse hooks (successful calls only),
// and the user tool_result line.
func (s *session) call(tool string, input *obj, lead string) (toolResult, error) {
	if err := s.pause(); err != nil {
		return toolResult{}, err
	}
	msgID, err := s.newTurn()
	if err != nil {
		return toolResult{}, err
	}
	if lead != "" {
		s.emitAssistant(msgID, newObj("type", "text", "text", lead))
		s.lastText = lead
	}
	id := newID("toolu_")
	s.emitAssistant(msgID, newObj("type", "tool_use", "id", id, "name", tool, "input", input))
	res := s.execute(tool, id, input)
	if s.ctx.Err() != nil {
		return toolResult{}, errCanceled
	}
	if s.interrupted.Load() {
		// What an interrupted tool call answers, whatever the tool did.
		res = toolResult{structured: "User rejected tool use", isError: true,
			text: "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."}
	}
	var content any = res.text
	if res.blocks != nil {
		content = res.blocks
	}
	block := newObj("tool_use_id", id, "type", "tool_result", "content", content)
	if res.isError {
		block.set("is_error", true)
	}
	s.emit(newObj("type", "user", "message", newObj("role", "user", "content", []any{block}),
		"parent_tool_use_id", nil, "session_id", s.sessionID, "uuid", newUUID(), "timestamp", timestamp(),
		"tool_use_result", res.structured))
	if s.interrupted.Load() {
		return res, errInterruptedTool
	}
	return res, nil
}

func (s *session) execute(tool, id string, input *obj) toolResult {
	fail := func(text string) toolResult {
		return toolResult{structured: "Error: " + text, text: "<tool_use_error>" + text + "</tool_use_error>", isError: true}
	}
	if !s.available[tool] {
		text := "Error: No such tool available: " + tool
		return toolResult{structured: text, text: "<tool_use_error>" + text + "</tool_use_error>", isError: true}
	}
	if res, ok := s.validationError(tool, input); !ok {
		return res
	}
	if msg := s.checkInput(tool, input); msg != "" {
		if tool == "Read" { // 2.1.330 does not mark Read's refusals as tool_use_error
			return toolResult{structured: "Error: " + msg, text: msg, isError: true}
		}
		return fail(msg)
	}
	pre := s.preToolUse(tool, id, input)
	if s.interrupted.Load() {
		return toolResult{}
	}
	if pre.blocked {
		s.denials = append(s.denials, newObj("tool_name", tool, "tool_use_id", id, "tool_input", input))
		return toolResult{structured: "Error: " + pre.message, text: pre.message, isError: true, denied: true}
	}
	if pre.updatedInput != nil {
		if res, ok := s.validationError(tool, pre.updatedInput); !ok {
			return res
		}
		input = pre.updatedInput
	}
	if !pre.allow {
		if d := s.permission(tool, input); d != nil {
			s.denials = append(s.denials, newObj("tool_name", tool, "tool_use_id", id, "tool_input", input))
			line := newObj("type", "system", "subtype", "permission_denied", "tool_name", tool, "tool_use_id", id)
			if d.reasonType != "" {
				line.set("decision_reason_type", d.reasonType)
				line.set("decision_reason", d.reason)
			}
			line.set("message", d.msg)
			line.set("uuid", newUUID())
			line.set("session_id", s.sessionID)
			s.emit(line)
			return toolResult{structured: "Error: " + d.msg, text: d.msg, isError: true, denied: true}
		}
	}
	started := time.Now()
	res := s.runTool(tool, input)
	if res.isError || s.interrupted.Load() {
		return res
	}
	p := s.basePayload("PostToolUse")
	p.set("tool_name", tool)
	p.set("tool_input", input)
	p.set("tool_response", res.structured)
	p.set("tool_use_id", id)
	p.set("duration_ms", int(time.Since(started).Milliseconds()))
	s.runHooks("PostToolUse", tool, p)
	return res
}

// checkInput is the tools' own validation, which runs before hooks: Write
// and Edit refuse an existing file the session has not read; Edit needs a
// unique old_string.
func (s *session) checkInput(tool string, in *obj) string {
	switch tool {
	case "Write", "Edit":
		p := s.abs(in.str("file_path"))
		data, err := os.ReadFile(p)
		exists := err == nil
		if tool == "Edit" {
			old, nw := in.str("old_string"), in.str("new_string")
			if old == nw {
				return "No changes to make: old_string and new_string are exactly the same."
			}
			if !exists {
				if old == "" {
					return ""
				}
				return "File does not exist."
			}
			if old == "" {
				return "Cannot create new file - file already exists."
			}
		}
		if exists && !s.readFiles[p] {
			return "File has not been read yet. Read it first before writing to it."
		}
		if tool == "Edit" {
			old := in.str("old_string")
			n := strings.Count(string(data), old)
			replaceAll, _ := in.get("replace_all")
			if n == 0 {
				return "String to replace not found in file.\nString: " + old
			}
			if n > 1 && replaceAll != true {
				return fmt.Sprintf("Found %d matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: %s", n, old)
			}
		}
	case "Read":
		p := s.abs(in.str("file_path"))
		st, err := os.Stat(p)
		if err != nil {
			return "File does not exist. Note: your current working directory is " + s.cwd + "."
		}
		if st.IsDir() {
			return "EISDIR: illegal operation on a directory, read"
		}
	}
	return ""
}

// permission is the headless permission check (no one to ask, so anything
// that would prompt is refused). The Task tools and ToolSearch need no
// permission; Bash has its own (bashPermission); bypassPermissions allows
// everything; a bare allow rule (from --allowedTools or settings) allows
// the tool; Read is allowed inside the working directories (cwd and
// --add-dir); Write and Edit are allowed there in acceptEdits (and auto)
// mode, and refused in plan mode.
func (s *session) permission(tool string, in *obj) *denial {
	switch tool {
	case "TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "ToolSearch":
		return nil
	case "Bash":
		return s.bashPermission(in)
	}
	if s.permMode == "bypassPermissions" {
		return nil
	}
	for _, r := range append(splitToolRules(s.args.allowedTools), s.allowRules...) {
		if name, bare := ruleTool(r); bare && name == tool {
			return nil
		}
	}
	p := s.abs(in.str("file_path"))
	inside := s.insideWorkDirs(p)
	outside := func(msg string) *denial {
		if inside {
			return &denial{msg: msg}
		}
		return &denial{msg: msg, reasonType: "workingDir", reason: "Path is outside allowed working directories"}
	}
	switch tool {
	case "Read":
		if inside {
			return nil
		}
		return outside(fmt.Sprintf("Claude requested permissions to read from %s, but you haven't granted it yet.", p))
	case "Write", "Edit":
		if inside && (s.permMode == "acceptEdits" || s.permMode == "auto") {
			return nil
		}
		return outside(fmt.Sprintf("Claude requested permissions to write to %s, but you haven't granted it yet.", p))
	}
	return &denial{msg: fmt.Sprintf("Claude requested permissions to use %s, but you haven't granted it yet.", tool)}
}

// insideWorkDirs reports whether p, both as written (cleaned) and with the
// symlinks of its existing prefix resolved, is inside a working directory.
func (s *session) insideWorkDirs(p string) bool {
	in := func(q string) bool {
		for _, d := range s.workDirs {
			if q == d || strings.HasPrefix(q, strings.TrimSuffix(d, "/")+"/") {
				return true
			}
		}
		return false
	}
	return in(p) && in(resolveExisting(p))
}

// resolveExisting evaluates the symlinks of the longest existing prefix of
// p and appends the rest.
func resolveExisting(p string) string {
	rest := ""
	for q := p; ; {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(q)
		if parent == q {
			return p
		}
		rest = filepath.Join(filepath.Base(q), rest)
		q = parent
	}
}

// runTool executes an allowed call.
func (s *session) runTool(tool string, in *obj) toolResult {
	switch tool {
	case "ToolSearch":
		return s.toolSearch(in)
	case "TaskList":
		return s.taskList()
	case "TaskGet":
		return s.taskGet(in)
	case "TaskUpdate":
		return s.taskUpdate(in)
	case "TaskCreate":
		return s.taskCreate(in)
	case "Read":
		return s.readTool(in)
	case "Write":
		return s.writeTool(in)
	case "Edit":
		return s.editTool(in)
	case "Bash":
		return s.bashTool(in)
	}
	return errResult("Tool " + tool + " is not simulated")
}

func errResult(text string) toolResult {
	return toolResult{structured: "Error: " + text, text: "<tool_use_error>" + text + "</tool_use_error>", isError: true}
}
