package agentsim

import (
	"errors"
	"fmt"
	"io/fs"
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
	isError    bool
	denied     bool // blocked by a hook or the permission check
}

// field describes one tool input parameter.
type field struct {
	name     string
	kind     string // string, bool, number, object, strings, any
	required bool
	enum     []string
}

var toolInputs = map[string][]field{
	"TaskCreate": {{name: "subject", kind: "string", required: true}, {name: "description", kind: "string", required: true},
		{name: "activeForm", kind: "string"}, {name: "metadata", kind: "object"}},
	"TaskGet":  {{name: "taskId", kind: "string", required: true}},
	"TaskList": {},
	"TaskUpdate": {{name: "taskId", kind: "string", required: true}, {name: "subject", kind: "string"},
		{name: "description", kind: "string"}, {name: "activeForm", kind: "string"},
		{name: "status", kind: "string", enum: []string{statusPending, statusInProgress, statusCompleted, "deleted"}},
		{name: "addBlocks", kind: "strings"}, {name: "addBlockedBy", kind: "strings"},
		{name: "owner", kind: "string"}, {name: "metadata", kind: "object"}},
	"Read": {{name: "file_path", kind: "string", required: true}, {name: "offset", kind: "number"},
		{name: "limit", kind: "number"}},
	"Write": {{name: "file_path", kind: "string", required: true}, {name: "content", kind: "string", required: true}},
	"Edit": {{name: "file_path", kind: "string", required: true}, {name: "old_string", kind: "string", required: true},
		{name: "new_string", kind: "string", required: true}, {name: "replace_all", kind: "bool"}},
}

// validateInput rejects unknown keys, missing required ones and wrong types.
func validateInput(tool string, in *obj) string {
	fields := toolInputs[tool]
	known := map[string]field{}
	for _, f := range fields {
		known[f.name] = f
	}
	var issues []string
	for _, k := range in.keys {
		if _, ok := known[k]; !ok {
			issues = append(issues, fmt.Sprintf("An unexpected parameter `%s` was provided", k))
		}
	}
	for _, f := range fields {
		v, ok := in.get(f.name)
		if !ok {
			if f.required {
				issues = append(issues, fmt.Sprintf("The required parameter `%s` is missing", f.name))
			}
			continue
		}
		if got, okType := typeOK(f.kind, v); !okType {
			issues = append(issues, fmt.Sprintf("The parameter `%s` type is expected as `%s` but provided as `%s`", f.name, f.kind, got))
			continue
		}
		if f.enum != nil && !contains(f.enum, v.(string)) {
			issues = append(issues, fmt.Sprintf("The parameter `%s` must be one of %s", f.name, strings.Join(f.enum, ", ")))
		}
	}
	if len(issues) == 0 {
		return ""
	}
	noun := "issue"
	if len(issues) > 1 {
		noun = "issues"
	}
	return fmt.Sprintf("InputValidationError: %s failed due to the following %s:\n%s", tool, noun, strings.Join(issues, "\n"))
}

func typeOK(kind string, v any) (string, bool) {
	got := "unknown"
	switch x := v.(type) {
	case nil:
		got = "null"
	case bool:
		got = "boolean"
	case float64, int:
		got = "number"
	case string:
		got = "string"
	case *obj:
		got = "object"
	case []any:
		got = "array"
		if kind == "strings" {
			for _, e := range x {
				if _, ok := e.(string); !ok {
					return got, false
				}
			}
			return got, true
		}
	}
	want := map[string]string{"string": "string", "bool": "boolean", "number": "number", "object": "object", "strings": "array"}[kind]
	return got, kind == "any" || got == want
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
	block := newObj("tool_use_id", id, "type", "tool_result", "content", res.text)
	if res.isError {
		block.set("is_error", true)
	}
	s.emit(newObj("type", "user", "message", newObj("role", "user", "content", []any{block}),
		"parent_tool_use_id", nil, "session_id", s.sessionID, "uuid", newUUID(), "tool_use_result", res.structured))
	return res, nil
}

func (s *session) execute(tool, id string, input *obj) toolResult {
	fail := func(text string) toolResult {
		return toolResult{structured: "Error: " + text, text: "<tool_use_error>" + text + "</tool_use_error>", isError: true}
	}
	if !s.available[tool] {
		return fail("No such tool available: " + tool)
	}
	if msg := validateInput(tool, input); msg != "" {
		return fail(msg)
	}
	if msg := s.checkInput(tool, input); msg != "" {
		return fail(msg)
	}
	pre := s.preToolUse(tool, id, input)
	if pre.blocked {
		s.denials = append(s.denials, newObj("tool_name", tool, "tool_use_id", id, "tool_input", input))
		return toolResult{structured: "Error: " + pre.message, text: pre.message, isError: true, denied: true}
	}
	if pre.updatedInput != nil {
		if msg := validateInput(tool, pre.updatedInput); msg != "" {
			return fail(msg)
		}
		input = pre.updatedInput
	}
	if !pre.allow {
		if msg := s.permission(tool, input); msg != "" {
			s.denials = append(s.denials, newObj("tool_name", tool, "tool_use_id", id, "tool_input", input))
			return toolResult{structured: "Error: " + msg, text: msg, isError: true, denied: true}
		}
	}
	started := time.Now()
	res := s.runTool(tool, input)
	if res.isError {
		return res
	}
	p := s.basePayload("PostToolUse", true)
	p.set("tool_name", tool)
	p.set("tool_input", input)
	p.set("tool_response", res.structured)
	p.set("tool_use_id", id)
	p.set("duration_ms", int(time.Since(started).Milliseconds()))
	s.runHooks("PostToolUse", tool, p)
	return res
}

// abs resolves a tool path against the session's cwd.
func (s *session) abs(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.cwd, p)
	}
	return filepath.Clean(p)
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
			return "File does not exist. Current working directory: " + s.cwd
		}
		if st.IsDir() {
			return "EISDIR: illegal operation on a directory, read"
		}
	}
	return ""
}

// permission is the headless permission check (no one to ask, so anything
// that would prompt is refused). The Task tools need no permission;
// bypassPermissions allows everything; a bare allow rule (from
// --allowedTools or settings) allows the tool; Read is allowed inside the
// working directories (cwd and --add-dir); Write and Edit are allowed there
// in acceptEdits (and auto) mode, and refused in plan mode.
func (s *session) permission(tool string, in *obj) string {
	switch tool {
	case "TaskCreate", "TaskGet", "TaskList", "TaskUpdate":
		return ""
	}
	if s.permMode == "bypassPermissions" {
		return ""
	}
	for _, r := range append(splitToolRules(s.args.allowedTools), s.allowRules...) {
		if name, bare := ruleTool(r); bare && name == tool {
			return ""
		}
	}
	p := s.abs(in.str("file_path"))
	inside := s.insideWorkDirs(p)
	switch tool {
	case "Read":
		if inside {
			return ""
		}
		return fmt.Sprintf("Claude requested permissions to read from %s, but you haven't granted it yet.", p)
	case "Write", "Edit":
		if inside && (s.permMode == "acceptEdits" || s.permMode == "auto") {
			return ""
		}
		return fmt.Sprintf("Claude requested permissions to write to %s, but you haven't granted it yet.", p)
	}
	return fmt.Sprintf("Claude requested permissions to use %s, but you haven't granted it yet.", tool)
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
	}
	return errResult("Tool " + tool + " is not simulated")
}

func errResult(text string) toolResult {
	return toolResult{structured: "Error: " + text, text: "<tool_use_error>" + text + "</tool_use_error>", isError: true}
}

// ---- Task tools ----

func (s *session) taskList() toolResult {
	all, err := s.store.list()
	if err != nil {
		return errResult(err.Error())
	}
	completed := map[string]bool{}
	for _, t := range all {
		if t.Status == statusCompleted {
			completed[t.ID] = true
		}
	}
	tasks := []any{}
	var lines []string
	for _, t := range all {
		if t.hidden() {
			continue
		}
		open := []string{}
		for _, b := range t.BlockedBy {
			if !completed[b] {
				open = append(open, b)
			}
		}
		e := newObj("id", t.ID, "subject", t.Subject, "status", t.Status)
		if t.Owner != nil {
			e.set("owner", *t.Owner)
		}
		e.set("blockedBy", open)
		tasks = append(tasks, e)
		line := fmt.Sprintf("#%s [%s] %s", t.ID, t.Status, t.Subject)
		if len(open) > 0 {
			line += " [blocked by #" + strings.Join(open, ", #") + "]"
		}
		lines = append(lines, line)
	}
	text := "No tasks found"
	if len(lines) > 0 {
		text = strings.Join(lines, "\n")
	}
	return toolResult{structured: newObj("tasks", tasks), text: text}
}

func (s *session) taskGet(in *obj) toolResult {
	t, err := s.store.read(in.str("taskId"))
	if err != nil {
		if errors.Is(err, errTaskNotFound) {
			return toolResult{structured: newObj("task", nil), text: "Task not found"}
		}
		return errResult(err.Error())
	}
	o := newObj("id", t.ID, "subject", t.Subject, "description", t.Description, "status", t.Status,
		"blocks", nonNil(t.Blocks), "blockedBy", nonNil(t.BlockedBy))
	text := fmt.Sprintf("Task #%s: %s\nStatus: %s\nDescription: %s", t.ID, t.Subject, t.Status, t.Description)
	if len(t.BlockedBy) > 0 {
		text += "\nBlocked by: #" + strings.Join(t.BlockedBy, ", #")
	}
	if len(t.Blocks) > 0 {
		text += "\nBlocks: #" + strings.Join(t.Blocks, ", #")
	}
	return toolResult{structured: newObj("task", o), text: text}
}

func (s *session) taskCreate(in *obj) toolResult {
	t := &task{Subject: in.str("subject"), Description: in.str("description")}
	if v, ok := in.get("activeForm"); ok {
		af := v.(string)
		t.ActiveForm = &af
	}
	if v, ok := in.get("metadata"); ok {
		m := v.(*obj).clone()
		for _, k := range append([]string(nil), m.keys...) {
			if m.vals[k] == nil {
				m.del(k)
			}
		}
		t.Metadata = m
	}
	if err := s.store.create(t); err != nil {
		return errResult(err.Error())
	}
	p := s.basePayload("TaskCreated", true)
	p.set("task_id", t.ID)
	p.set("task_subject", t.Subject)
	if t.Description != "" {
		p.set("task_description", t.Description)
	}
	s.runHooks("TaskCreated", "", p)
	return toolResult{structured: newObj("task", newObj("id", t.ID, "subject", t.Subject, "description", t.Description)),
		text: fmt.Sprintf("Task #%s created successfully: %s", t.ID, t.Subject)}
}

// taskUpdate follows Claude Code's TaskUpdate: fields that change are
// written (and listed in updatedFields); metadata keys merge and null
// deletes; "deleted" removes the file (and raises .highwatermark);
// statusChange only when the status changed; TaskCompleted hooks run before
// a completion is written and exit 2 vetoes it; addBlocks / addBlockedBy
// link both tasks.
func (s *session) taskUpdate(in *obj) toolResult {
	id := in.str("taskId")
	var fields []string
	var change *obj
	veto := ""
	_, err := s.store.update(id, func(t *task) (bool, bool, error) {
		setStr := func(key string, dst *string) {
			if v, ok := in.get(key); ok && v.(string) != *dst {
				*dst = v.(string)
				fields = append(fields, key)
			}
		}
		setOpt := func(key string, dst **string) {
			if v, ok := in.get(key); ok && (*dst == nil || **dst != v.(string)) {
				sv := v.(string)
				*dst = &sv
				fields = append(fields, key)
			}
		}
		setStr("subject", &t.Subject)
		setStr("description", &t.Description)
		setOpt("activeForm", &t.ActiveForm)
		setOpt("owner", &t.Owner)
		if v, ok := in.get("metadata"); ok {
			m := t.Metadata.clone()
			if m == nil {
				m = newObj()
			}
			upd := v.(*obj)
			for _, k := range upd.keys {
				if upd.vals[k] == nil {
					m.del(k)
				} else {
					m.set(k, cloneValue(upd.vals[k]))
				}
			}
			t.Metadata = m
			fields = append(fields, "metadata")
		}
		if v, ok := in.get("status"); ok {
			st := v.(string)
			if st == "deleted" {
				change = newObj("from", t.Status, "to", "deleted")
				fields = append(fields, "deleted")
				return false, true, nil
			}
			if st != t.Status {
				if st == statusCompleted {
					p := s.basePayload("TaskCompleted", true)
					p.set("task_id", t.ID)
					p.set("task_subject", t.Subject)
					if t.Description != "" {
						p.set("task_description", t.Description)
					}
					for _, r := range s.runHooks("TaskCompleted", "", p) {
						if r.exitCode == 2 {
							veto = strings.TrimSpace(r.stderr)
							if veto == "" {
								veto = "blocked by TaskCompleted hook"
							}
							return false, false, errVeto
						}
					}
				}
				change = newObj("from", t.Status, "to", st)
				t.Status = st
				fields = append(fields, "status")
			}
		}
		return len(fields) > 0, false, nil
	})
	res := newObj("success", true, "taskId", id)
	switch {
	case errors.Is(err, errTaskNotFound):
		res.set("success", false)
		res.set("updatedFields", []string{})
		res.set("error", "Task not found")
		return toolResult{structured: res, text: "Task not found"}
	case errors.Is(err, errVeto):
		res.set("success", false)
		res.set("updatedFields", []string{})
		res.set("error", veto)
		return toolResult{structured: res, text: "TaskCompleted hook blocked completing task #" + id + ": " + veto}
	case err != nil:
		return errResult(err.Error())
	}
	if change != nil && change.str("to") == "deleted" {
		s.store.raiseWatermark(id)
		s.unlinkDeleted(id)
	}
	if v, ok := in.get("addBlocks"); ok && s.link(id, v.([]any), true) {
		fields = append(fields, "blocks")
	}
	if v, ok := in.get("addBlockedBy"); ok && s.link(id, v.([]any), false) {
		fields = append(fields, "blockedBy")
	}
	res.set("updatedFields", nonNil(fields))
	if change != nil {
		res.set("statusChange", change)
	}
	text := "Updated task #" + id
	if len(fields) > 0 {
		text += " " + strings.Join(fields, ", ")
	} else {
		text += " (no changes)"
	}
	return toolResult{structured: res, text: text}
}

var errVeto = errors.New("vetoed")

// link records "id blocks others" (blocks=true) or "others block id" on
// both tasks of each pair. It reports whether anything changed.
func (s *session) link(id string, others []any, blocks bool) bool {
	changed := false
	add := func(list *[]string, v string) bool {
		for _, e := range *list {
			if e == v {
				return false
			}
		}
		*list = append(*list, v)
		return true
	}
	for _, ov := range others {
		other := ov.(string)
		if other == id {
			continue
		}
		if _, err := s.store.read(other); err != nil {
			continue
		}
		s.store.update(id, func(t *task) (bool, bool, error) {
			if blocks {
				changed = add(&t.Blocks, other) || changed
				return true, false, nil
			}
			changed = add(&t.BlockedBy, other) || changed
			return true, false, nil
		})
		s.store.update(other, func(t *task) (bool, bool, error) {
			if blocks {
				return add(&t.BlockedBy, id), false, nil
			}
			return add(&t.Blocks, id), false, nil
		})
	}
	return changed
}

// unlinkDeleted removes a deleted task from the others' blocks/blockedBy.
func (s *session) unlinkDeleted(id string) {
	all, _ := s.store.list()
	for _, t := range all {
		if !contains(t.Blocks, id) && !contains(t.BlockedBy, id) {
			continue
		}
		s.store.update(t.ID, func(t *task) (bool, bool, error) {
			t.Blocks = without(t.Blocks, id)
			t.BlockedBy = without(t.BlockedBy, id)
			return true, false, nil
		})
	}
}

func without(list []string, v string) []string {
	out := []string{}
	for _, e := range list {
		if e != v {
			out = append(out, e)
		}
	}
	return out
}

// ---- file tools ----

func (s *session) readTool(in *obj) toolResult {
	p := s.abs(in.str("file_path"))
	data, err := os.ReadFile(p)
	if err != nil {
		return errResult(err.Error())
	}
	content := string(data)
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	if content == "" {
		lines = nil
	}
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%6d\t%s\n", i+1, l)
	}
	s.readFiles[p] = true
	return toolResult{
		structured: newObj("type", "text", "file", newObj("filePath", p, "content", content,
			"numLines", len(lines), "startLine", 1, "totalLines", len(lines))),
		text: strings.TrimSuffix(b.String(), "\n"),
	}
}

func (s *session) writeTool(in *obj) toolResult {
	p := s.abs(in.str("file_path"))
	content := in.str("content")
	old, err := os.ReadFile(p)
	existed := err == nil
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return errResult(err.Error())
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		return errResult(err.Error())
	}
	s.readFiles[p] = true
	if !existed {
		return toolResult{
			structured: newObj("type", "create", "filePath", p, "content", content, "structuredPatch", []any{}, "originalFile", nil),
			text:       "File created successfully at: " + p,
		}
	}
	return toolResult{
		structured: newObj("type", "update", "filePath", p, "content", content,
			"structuredPatch", patch(string(old), content), "originalFile", string(old)),
		text: "The file " + p + " has been updated successfully.",
	}
}

func (s *session) editTool(in *obj) toolResult {
	p := s.abs(in.str("file_path"))
	oldS, newS := in.str("old_string"), in.str("new_string")
	replaceAll, _ := in.get("replace_all")
	data, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errResult(err.Error())
	}
	orig := string(data)
	var updated string
	switch {
	case oldS == "":
		updated = newS
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return errResult(err.Error())
		}
	case replaceAll == true:
		updated = strings.ReplaceAll(orig, oldS, newS)
	default:
		updated = strings.Replace(orig, oldS, newS, 1)
	}
	if err := os.WriteFile(p, []byte(updated), 0o644); err != nil {
		return errResult(err.Error())
	}
	s.readFiles[p] = true
	return toolResult{
		structured: newObj("filePath", p, "oldString", oldS, "newString", newS, "originalFile", orig,
			"structuredPatch", patch(orig, updated), "userModified", false, "replaceAll", replaceAll == true),
		text: "The file " + p + " has been updated successfully.",
	}
}

// patch is a one-hunk unified diff of two texts (common leading and
// trailing lines trimmed to three lines of context).
func patch(a, b string) []any {
	al, bl := splitLines(a), splitLines(b)
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		pre++
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	if pre == len(al) && pre == len(bl) {
		return []any{}
	}
	ctxPre, ctxSuf := min(pre, 3), min(suf, 3)
	start := pre - ctxPre
	var lines []string
	for _, l := range al[start:pre] {
		lines = append(lines, " "+l)
	}
	for _, l := range al[pre : len(al)-suf] {
		lines = append(lines, "-"+l)
	}
	for _, l := range bl[pre : len(bl)-suf] {
		lines = append(lines, "+"+l)
	}
	for _, l := range al[len(al)-suf : len(al)-suf+ctxSuf] {
		lines = append(lines, " "+l)
	}
	oldLines := len(al) - suf + ctxSuf - start
	newLines := len(bl) - suf + ctxSuf - start
	return []any{newObj("oldStart", start+1, "oldLines", oldLines, "newStart", start+1, "newLines", newLines, "lines", lines)}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
