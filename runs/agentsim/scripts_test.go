package agentsim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hydrate writes a small story's tasks the way the worker does: 1, 2
// (blocked by 1), write-tests (blocked by 2), and a hidden internal task.
func hydrate(f *fixture) {
	f.task("1", taskJSON("1", "Set up the database", "pending", []string{"2"}, nil))
	f.task("2", taskJSON("2", "Add the endpoint", "pending", []string{"write-tests"}, []string{"1"}))
	f.task("write-tests", taskJSON("write-tests", "Write the tests", "pending", nil, []string{"2"}))
	f.task("9", `{
  "id": "9",
  "subject": "internal",
  "description": "",
  "status": "pending",
  "blocks": [],
  "blockedBy": [],
  "metadata": {
    "_internal": true
  }
}`)
}

func TestAllWorksEveryTaskInDependencyOrder(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	// An unknown top-level key, which Claude Code drops at its next write,
	// and metadata, which it keeps.
	f.task("1", `{
  "id": "1",
  "subject": "Set up the database",
  "description": "Do Set up the database.",
  "status": "pending",
  "blocks": [
    "2"
  ],
  "blockedBy": [],
  "guidance": "dropped",
  "metadata": {
    "guidance": "kept",
    "doneWhen": "tables exist"
  }
}`)
	post := filepath.Join(f.root, "post.log")
	start := filepath.Join(f.root, "start.log")
	envLog := filepath.Join(f.root, "env.log")
	settings := settingsJSON(map[string][][2]string{
		"PostToolUse":  {{"TaskUpdate", recordHook(post)}},
		"SessionStart": {{"", recordHook(start) + `; echo "dir=$CLAUDE_PROJECT_DIR list=$CLAUDE_CODE_TASK_LIST_ID envfile=$CLAUDE_ENV_FILE" >> ` + shellQuote(envLog) + `; echo 'Story demo: 0/3 tasks done'`}},
	})
	r := f.run("", workerArgs(settings))
	if r.code != 0 {
		t.Fatalf("exit %d; stderr: %s", r.code, r.stderr)
	}
	calls := checkShapes(t, r, true)
	// The Task tools are deferred (2.1.330, a current model): loaded first.
	if calls[0].name != "ToolSearch" || !reflect.DeepEqual(calls[0].input, map[string]any{"query": "select:TaskList,TaskGet,TaskUpdate", "max_results": 5.0}) {
		t.Fatalf("first call %s %v, want ToolSearch", calls[0].name, calls[0].input)
	}
	calls = calls[1:]

	want := []string{"1:in_progress", "1:completed", "2:in_progress", "2:completed", "write-tests:in_progress", "write-tests:completed"}
	if got := statusSequence(calls); !reflect.DeepEqual(got, want) {
		t.Errorf("TaskUpdate sequence = %v, want %v", got, want)
	}
	// Files after the run: exact bytes (2-space JSON, key order, no newline).
	wantFile := map[string]string{
		"1": `{
  "id": "1",
  "subject": "Set up the database",
  "description": "Do Set up the database.",
  "status": "completed",
  "blocks": [
    "2"
  ],
  "blockedBy": [],
  "metadata": {
    "guidance": "kept",
    "doneWhen": "tables exist"
  }
}`,
		"2":           taskJSON("2", "Add the endpoint", "completed", []string{"write-tests"}, []string{"1"}),
		"write-tests": taskJSON("write-tests", "Write the tests", "completed", nil, []string{"2"}),
	}
	for id, w := range wantFile {
		if got := f.taskFile(id); got != w {
			t.Errorf("task %s file:\n%s\nwant:\n%s", id, got, w)
		}
	}
	if got := f.taskFile("9"); !strings.Contains(got, `"status": "pending"`) {
		t.Errorf("hidden task changed: %s", got)
	}
	for _, c := range calls {
		if c.name == "TaskList" && strings.Contains(c.content, "#9") {
			t.Errorf("TaskList shows the internal task: %s", c.content)
		}
	}
	// The first TaskList: text form and structured result.
	if calls[0].name != "TaskList" {
		t.Fatalf("first call %s, want TaskList", calls[0].name)
	}
	wantText := "#1 [pending] Set up the database\n#2 [pending] Add the endpoint [blocked by #1]\n#write-tests [pending] Write the tests [blocked by #2]"
	if calls[0].content != wantText {
		t.Errorf("TaskList text:\n%s\nwant:\n%s", calls[0].content, wantText)
	}
	data, _ := json.Marshal(calls[0].result)
	if string(data) != `{"tasks":[{"blockedBy":[],"id":"1","status":"pending","subject":"Set up the database"},{"blockedBy":["1"],"id":"2","status":"pending","subject":"Add the endpoint"},{"blockedBy":["2"],"id":"write-tests","status":"pending","subject":"Write the tests"}]}` {
		t.Errorf("TaskList result %s", data)
	}
	// The work files.
	for _, id := range []string{"1", "2", "write-tests"} {
		if got := f.read("project/saga-work/demo/" + id + ".md"); !strings.HasPrefix(got, "# "+id+": ") {
			t.Errorf("saga-work/demo/%s.md = %q", id, got)
		}
	}
	res := resultLine(t, r)
	if res["subtype"] != "success" || res["is_error"] != false || res["num_turns"].(float64) < 10 {
		t.Errorf("result %v", res)
	}
	if res["result"] != "Completed 3 task(s): #1, #2, #write-tests." {
		t.Errorf("result text %q", res["result"])
	}
	// The SessionStart context reached the model (it says so first).
	if !strings.Contains(r.stdout, `{"type":"text","text":"Session context:\nStory demo: 0/3 tasks done"}`) {
		t.Errorf("SessionStart context not in the stream")
	}

	// PostToolUse payloads: every field, in Claude Code's order.
	payloads, raw := readJSONLines(t, post)
	if len(payloads) != 6 {
		t.Fatalf("PostToolUse fired %d times, want 6", len(payloads))
	}
	// As a 2.1.330 run's hooks received them.
	wantKeys := []string{"session_id", "transcript_path", "cwd", "prompt_id", "permission_mode", "effort", "hook_event_name", "tool_name", "tool_input", "tool_response", "tool_use_id", "duration_ms"}
	sid := initLine(t, r)["session_id"].(string)
	for i, p := range payloads {
		if got := keysInOrder(t, raw[i]); !reflect.DeepEqual(got, wantKeys) {
			t.Errorf("PostToolUse keys %v, want %v", got, wantKeys)
		}
		if p["session_id"] != sid || p["cwd"] != f.project || p["permission_mode"] != "acceptEdits" ||
			p["hook_event_name"] != "PostToolUse" || p["tool_name"] != "TaskUpdate" {
			t.Errorf("payload %v", p)
		}
		if p["transcript_path"] != filepath.Join(f.config, "projects", sanitizePath(f.project), sid+".jsonl") {
			t.Errorf("transcript_path %v", p["transcript_path"])
		}
	}
	if !strings.Contains(raw[1], `"tool_input":{"taskId":"1","status":"completed"},"tool_response":{"success":true,"taskId":"1","updatedFields":["status"],"statusChange":{"from":"in_progress","to":"completed"}},"tool_use_id":"toolu_`) {
		t.Errorf("PostToolUse payload for the completion:\n%s", raw[1])
	}
	// tool_use_id matches the stream.
	if payloads[0]["tool_use_id"] != calls[2].id {
		t.Errorf("PostToolUse tool_use_id %v, stream %v", payloads[0]["tool_use_id"], calls[2].id)
	}

	// SessionStart payload: no prompt_id, no permission_mode, no model (2.1.330).
	starts, rawStarts := readJSONLines(t, start)
	if len(starts) != 1 {
		t.Fatalf("SessionStart fired %d times", len(starts))
	}
	if got := keysInOrder(t, rawStarts[0]); !reflect.DeepEqual(got, []string{"session_id", "transcript_path", "cwd", "hook_event_name", "source"}) {
		t.Errorf("SessionStart keys %v", got)
	}
	if starts[0]["source"] != "startup" {
		t.Errorf("SessionStart payload %v", starts[0])
	}
	envLine := strings.TrimSpace(f.read("env.log"))
	if !strings.HasPrefix(envLine, "dir="+f.project+" list="+f.list+" envfile=/") {
		t.Errorf("hook environment: %s", envLine)
	}
}

func TestOneCompletesExactlyOneTask(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	r := f.run("one", workerArgs(`{}`))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	calls := checkShapes(t, r, true)
	if got := statusSequence(calls); !reflect.DeepEqual(got, []string{"1:in_progress", "1:completed"}) {
		t.Errorf("updates %v", got)
	}
	if !strings.Contains(f.taskFile("2"), `"status": "pending"`) {
		t.Errorf("task 2 changed")
	}
	// A second run takes the next one.
	r = f.run("one", workerArgs(`{}`))
	if got := statusSequence(checkShapes(t, r, true)); !reflect.DeepEqual(got, []string{"2:in_progress", "2:completed"}) {
		t.Errorf("second run updates %v", got)
	}
}

func TestCrashStopsWithoutResult(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	stop := filepath.Join(f.root, "stop.log")
	r := f.run("crash", workerArgs(settingsJSON(map[string][][2]string{"Stop": {{"", recordHook(stop)}}, "SessionEnd": {{"", recordHook(stop)}}})))
	if r.code != 1 {
		t.Fatalf("exit %d, want 1", r.code)
	}
	calls := checkShapes(t, r, false)
	if got := statusSequence(calls); !reflect.DeepEqual(got, []string{"1:in_progress"}) {
		t.Errorf("updates %v", got)
	}
	if !strings.Contains(f.taskFile("1"), `"status": "in_progress"`) {
		t.Errorf("task 1 not in_progress: %s", f.taskFile("1"))
	}
	if _, err := os.Stat(stop); err == nil {
		t.Errorf("Stop/SessionEnd hooks ran after a crash")
	}
}

func TestIdleChangesNothing(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	f.task("3", "{\n  \"id\": \"3\",\n  \"subject\": \"s\",\n  \"description\": \"\",\n  \"status\": \"pending\",\n  \"blocks\": [],\n  \"blockedBy\": [],\n  \"extra\": 1\n}")
	before := map[string]string{}
	for _, id := range []string{"1", "2", "3", "write-tests", "9"} {
		before[id] = f.taskFile(id)
	}
	r := f.run("idle", workerArgs(`{}`))
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	calls := checkShapes(t, r, true)
	if len(calls) != 2 || calls[0].name != "ToolSearch" || calls[1].name != "TaskList" {
		t.Errorf("calls %v", calls)
	}
	for id, b := range before {
		if got := f.taskFile(id); got != b {
			t.Errorf("task %s changed:\n%s", id, got)
		}
	}
	if _, err := os.Stat(filepath.Join(f.project, "saga-work")); err == nil {
		t.Errorf("idle wrote work files")
	}
}

var blockerEntry = regexp.MustCompile(`## \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ blocker\n[^\n]+\n$`)

func TestBlockerAppendsToJournal(t *testing.T) {
	for _, existing := range []string{"", "# Journal\n\n## 2024-01-01T00:00:00Z decision\nUse SQLite.\n"} {
		f := newFixture(t)
		hydrate(f)
		journal := filepath.Join(f.project, ".saga", "stories", "demo", "journal.md")
		if existing != "" {
			f.write("project/.saga/stories/demo/journal.md", existing)
		}
		r := f.run("blocker", workerArgs(`{}`), "SAGA_STANDIN_BLOCKER=Which database should I use?")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		calls := checkShapes(t, r, true)
		if got := statusSequence(calls); !reflect.DeepEqual(got, []string{"1:in_progress"}) {
			t.Errorf("updates %v", got)
		}
		data, err := os.ReadFile(journal)
		if err != nil {
			t.Fatal(err)
		}
		got := string(data)
		if !strings.HasPrefix(got, existing) || !blockerEntry.MatchString(got) || !strings.HasSuffix(got, " blocker\nWhich database should I use?\n") {
			t.Errorf("journal:\n%s", got)
		}
		if len(got) != len(existing)+len("## 2006-01-02T15:04:05Z blocker\nWhich database should I use?\n") {
			t.Errorf("journal has more than one new entry:\n%s", got)
		}
		wantTool := "Write"
		if existing != "" {
			wantTool = "Edit"
		}
		var used []string
		for _, c := range calls {
			used = append(used, c.name)
		}
		if !strings.Contains(strings.Join(used, " "), wantTool) {
			t.Errorf("tools used %v, want %s", used, wantTool)
		}
		if res := resultLine(t, r); res["is_error"] != false {
			t.Errorf("result %v", res)
		}
	}
}

// denyHook writes a PreToolUse hook script that logs its payload and denies
// writes outside the story scope.
func denyHook(f *fixture, log string) string {
	return f.write("deny.sh", `#!/bin/sh
input=$(cat)
printf '%s\n' "$input" >> `+shellQuote(log)+`
case "$input" in
  *'"file_path":"/etc/'*|*outside.txt*|*'.saga/epics'*)
    printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"outside the story scope"}}'
    ;;
esac
exit 0
`)
}

func TestEscapeIsDeniedByPreToolUse(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	pre := filepath.Join(f.root, "pre.log")
	settings := settingsJSON(map[string][][2]string{"PreToolUse": {{"Write|Edit|MultiEdit|NotebookEdit", denyHook(f, pre)}}})
	r := f.run("escape", workerArgs(settings))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	calls := checkShapes(t, r, true)
	for _, c := range calls[:3] {
		if c.name != "Write" || !c.isError || c.content != "Hook PreToolUse:Write denied this tool: outside the story scope" {
			t.Errorf("escape attempt %v: error=%v content=%q", c.input["file_path"], c.isError, c.content)
		}
	}
	for _, p := range []string{filepath.Join(f.root, "outside.txt"), filepath.Join(f.project, ".saga", "epics", "x.json")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	// The model reported the outcomes in the stream.
	if !strings.Contains(r.stdout, `/etc/saga-escape: denied: Hook PreToolUse:Write denied this tool: outside the story scope`) {
		t.Errorf("no escape report in the stream")
	}
	// Then it did the work.
	if got := statusSequence(calls); len(got) != 6 {
		t.Errorf("updates %v", got)
	}
	res := resultLine(t, r)
	if d := res["permission_denials"].([]any); len(d) != 3 {
		t.Errorf("permission_denials %v", d)
	}
	payloads, raw := readJSONLines(t, pre)
	if len(payloads) != 6 { // 3 escapes + 3 work files
		t.Fatalf("PreToolUse fired %d times", len(payloads))
	}
	if got := keysInOrder(t, raw[0]); !reflect.DeepEqual(got, []string{"session_id", "transcript_path", "cwd", "prompt_id", "permission_mode", "effort", "hook_event_name", "tool_name", "tool_input", "tool_use_id"}) {
		t.Errorf("PreToolUse keys %v", got)
	}
	if payloads[0]["tool_input"].(map[string]any)["file_path"] != f.project+"/../outside.txt" {
		t.Errorf("tool_input %v", payloads[0]["tool_input"])
	}
}

func TestEscapeWithoutHooksMeetsOnlyThePermissionCheck(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	r := f.run("escape", workerArgs(`{}`))
	calls := checkShapes(t, r, true)
	if !calls[0].isError || !strings.Contains(calls[0].content, "Claude requested permissions to write to "+filepath.Join(f.root, "outside.txt")) {
		t.Errorf("outside.txt: %q", calls[0].content)
	}
	if !calls[1].isError {
		t.Errorf("/etc/saga-escape was allowed")
	}
	// Inside the project, acceptEdits allows .saga/epics: only a hook stops it.
	if calls[2].isError {
		t.Errorf(".saga/epics/x.json refused: %s", calls[2].content)
	}
	if _, err := os.Stat(filepath.Join(f.project, ".saga", "epics", "x.json")); err != nil {
		t.Errorf("x.json not written: %v", err)
	}
}

func TestPreToolUseExit2BlocksWithStderr(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	settings := settingsJSON(map[string][][2]string{"PreToolUse": {{"Write", "cat >/dev/null; echo 'no writes today' >&2; exit 2"}}})
	r := f.run("one", workerArgs(settings))
	calls := checkShapes(t, r, true)
	var write *toolCall
	for i := range calls {
		if calls[i].name == "Write" {
			write = &calls[i]
		}
	}
	if write == nil || !write.isError || !strings.Contains(write.content, "no writes today") {
		t.Fatalf("Write call %+v", write)
	}
	if _, err := os.Stat(filepath.Join(f.project, "saga-work")); err == nil {
		t.Errorf("blocked Write created files")
	}
	// The task was taken but not completed.
	if !strings.Contains(f.taskFile("1"), `"status": "in_progress"`) {
		t.Errorf("task 1: %s", f.taskFile("1"))
	}
}

func TestPreToolUseOutputRules(t *testing.T) {
	cases := []struct {
		name, out string
		denied    bool
	}{
		{"hookEventName mismatch is rejected", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny","permissionDecisionReason":"x"}}`, false},
		{"legacy decision block", `{"decision":"block","reason":"legacy says no"}`, true},
		{"plain text is not a decision", `deny`, false},
		{"exit 1 is non-blocking", `EXIT1`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			hydrate(f)
			cmd := "cat >/dev/null; printf '%s' " + shellQuote(c.out)
			if c.out == "EXIT1" {
				cmd = "cat >/dev/null; echo oops >&2; exit 1"
			}
			r := f.run("one", workerArgs(settingsJSON(map[string][][2]string{"PreToolUse": {{"Write", cmd}}})))
			calls := checkShapes(t, r, true)
			for _, w := range calls {
				if w.name != "Write" {
					continue
				}
				if w.isError != c.denied {
					t.Errorf("Write denied=%v (%s), want %v", w.isError, w.content, c.denied)
				}
				if c.denied && w.content != "Hook PreToolUse:Write denied this tool: legacy says no" {
					t.Errorf("content %q", w.content)
				}
			}
		})
	}
}

func TestBareAndNohooksFireNoHooks(t *testing.T) {
	for _, mode := range []string{"--bare", "nohooks"} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t)
			hydrate(f)
			log := filepath.Join(f.root, "hooks.log")
			all := map[string][][2]string{}
			for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"} {
				all[ev] = [][2]string{{"", recordHook(log)}}
			}
			f.write("project/.claude/settings.json", settingsJSON(all))
			args, script := workerArgs(settingsJSON(all)), "nohooks"
			if mode == "--bare" {
				args, script = append(args[:len(args):len(args)], "--bare"), ""
			}
			r := f.run(script, args)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if got := statusSequence(checkShapes(t, r, true)); len(got) != 6 {
				t.Errorf("updates %v", got)
			}
			if _, err := os.Stat(log); err == nil {
				t.Errorf("hooks fired:\n%s", f.read("hooks.log"))
			}
		})
	}
}

func TestStreamJSONRequiresVerbose(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	r := f.run("", []string{"-p", "x", "--output-format", "stream-json", "--allowedTools", "TaskList TaskUpdate"})
	if r.code != 1 || r.stdout != "" || r.stderr != "Error: When using --print, --output-format=stream-json requires --verbose\n" {
		t.Errorf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(f.taskFile("1"), `"pending"`) {
		t.Errorf("tasks changed")
	}
}

func TestArgumentErrors(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"-p", "x", "--frobnicate"}, 2, "error: unknown option '--frobnicate'\n"},
		{[]string{"x"}, 2, "agentsim: only headless runs (-p/--print) are simulated\n"},
		{[]string{"-p", "x", "--model"}, 2, "error: option '--model <model>' argument missing\n"},
		{[]string{"-p", "x", "--output-format", "xml"}, 2, "error: option '--output-format <format>' argument 'xml' is invalid. Allowed choices are text, json, stream-json.\n"},
		{[]string{"-p", "x", "y"}, 2, "error: too many arguments. Expected 1 argument but got 2.\n"},
		{[]string{"-p"}, 1, "Error: Input must be provided either through stdin or as a prompt argument when using --print\n"},
		{[]string{"-p", "x", "--session-id", "not-a-uuid"}, 1, "Error: Invalid session ID. Must be a valid UUID.\n"},
		{[]string{"-p", "x", "--settings", "missing.json"}, 1, "Error: Settings file not found: " + filepath.Join(f.project, "missing.json") + "\n"},
	}
	for _, c := range cases {
		r := f.run("", c.args)
		if r.code != c.code || r.stderr != c.stderr {
			t.Errorf("%v: exit %d stderr %q, want %d %q", c.args, r.code, r.stderr, c.code, c.stderr)
		}
	}
	if r := f.run("bogus", []string{"-p", "x"}); r.code != 2 || !strings.Contains(r.stderr, `unknown script "bogus"`) {
		t.Errorf("bad script: %d %q", r.code, r.stderr)
	}
	if r := f.run("", []string{"--version"}); r.code != 0 || r.stdout != Version+" (Claude Code)\n" {
		t.Errorf("--version: %d %q", r.code, r.stdout)
	}
}

// A prompt after a variadic option is swallowed by it, as with commander.
func TestVariadicOptionSwallowsPrompt(t *testing.T) {
	f := newFixture(t)
	r := f.run("", []string{"--allowedTools", "TaskList", "TaskUpdate", "-p"})
	if r.code != 1 || !strings.Contains(r.stderr, "Input must be provided") {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
}

func TestTaskToolsNeedNaming(t *testing.T) {
	args := func(extra ...string) []string {
		return append([]string{"-p", "go", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits"}, extra...)
	}
	cases := []struct {
		name      string
		args      []string
		env       []string
		available bool
	}{
		{"no flag", args(), nil, false},
		{"allowedTools names them", args("--allowedTools", "TaskList,TaskGet,TaskUpdate"), nil, true},
		{"tools names them", args("--tools", "TaskList TaskUpdate Write Read"), nil, true},
		{"tools without them", args("--tools", "Read,Write"), []string{"CLAUDE_CODE_ENABLE_TODO_TOOLS=1"}, false},
		{"ENABLE_TODO_TOOLS=1", args(), []string{"CLAUDE_CODE_ENABLE_TODO_TOOLS=1"}, true},
		{"ENABLE_TASKS=false", args("--allowedTools", "TaskList TaskGet TaskUpdate"), []string{"CLAUDE_CODE_ENABLE_TASKS=false"}, false},
		{"disallowed", args("--allowedTools", "TaskList TaskGet TaskUpdate", "--disallowedTools", "TaskUpdate"), nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			hydrate(f)
			r := f.run("", c.args, c.env...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			calls := checkShapes(t, r, true)
			hasList := offers(t, r, "TaskList")
			if c.available {
				if len(statusSequence(calls)) != 6 {
					t.Errorf("tools available but tasks not worked: %v", statusSequence(calls))
				}
				return
			}
			if len(calls) != 0 {
				t.Errorf("calls without Task tools: %v", calls)
			}
			if res := resultLine(t, r); !strings.Contains(res["result"].(string), "can't see a task list") || res["is_error"] != false {
				t.Errorf("result %v", res)
			}
			if c.name != "disallowed" && hasList {
				t.Errorf("init lists TaskList")
			}
			if !strings.Contains(f.taskFile("1"), `"pending"`) {
				t.Errorf("tasks changed")
			}
		})
	}
}

func TestDefaultPermissionModeRefusesWrites(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	args := workerArgs(`{}`)
	args[8] = "default"
	r := f.run("all", args)
	calls := checkShapes(t, r, true)
	for _, c := range calls {
		if c.name == "Write" && (!c.isError || !strings.HasPrefix(c.content, "Claude requested permissions to write to "+f.project+"/saga-work/")) {
			t.Errorf("Write in default mode: %q", c.content)
		}
	}
	if got := statusSequence(calls); !reflect.DeepEqual(got, []string{"1:in_progress"}) {
		t.Errorf("updates %v", got)
	}
	if d := resultLine(t, r)["permission_denials"].([]any); len(d) != 1 {
		t.Errorf("denials %v", d)
	}
}

func TestProjectLocalAndPluginHooks(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	log := filepath.Join(f.root, "all.log")
	same := `printf 'dedup %s\n' "$(cat | head -c 40)" >> ` + shellQuote(log)
	f.write("project/.claude/settings.json", settingsJSON(map[string][][2]string{
		"SessionStart": {{"startup", `cat >/dev/null; echo project >> ` + shellQuote(log)}, {"", same}},
		"PostToolUse":  {{"Task.*", `cat >/dev/null; echo project-post >> ` + shellQuote(log)}},
	}))
	f.write("project/.claude/settings.local.json", settingsJSON(map[string][][2]string{
		"SessionStart": {{"resume", `cat >/dev/null; echo wrong-source >> ` + shellQuote(log)}, {"*", same}},
	}))
	plugin := filepath.Join(f.root, "plugin")
	f.write("plugin/hook.sh", "#!/bin/sh\ncat >/dev/null\necho \"plugin $1 root=$CLAUDE_PLUGIN_ROOT\" >> "+shellQuote(log)+"\n")
	f.write("plugin/.claude-plugin/plugin.json", `{"name":"saga"}`)
	f.write("plugin/hooks/hooks.json", `{"description":"saga hooks","hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"sh ${CLAUDE_PLUGIN_ROOT}/hook.sh start"}]}],"PostToolUse":[{"matcher":"TaskUpdate","hooks":[{"type":"command","command":"sh \"${CLAUDE_PLUGIN_ROOT}/hook.sh\" post"}]}]}}`)
	args := append(workerArgs(`{}`), "--plugin-dir", plugin)
	r := f.run("one", args)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	checkShapes(t, r, true)
	got := f.read("all.log")
	count := func(s string) int { return strings.Count(got, s) }
	if count("project\n") != 1 || count("dedup ") != 1 || count("wrong-source") != 0 {
		t.Errorf("SessionStart hooks:\n%s", got)
	}
	if count("plugin start root="+plugin+"\n") != 1 || count("plugin post root="+plugin+"\n") != 2 {
		t.Errorf("plugin hooks:\n%s", got)
	}
	// Task.* is a regex: it matches TaskList, TaskGet, TaskUpdate.
	if count("project-post") != 4 { // TaskList, TaskGet, 2× TaskUpdate
		t.Errorf("regex matcher fired %d times:\n%s", count("project-post"), got)
	}
	if p := initLine(t, r)["plugins"].([]any); len(p) != 1 || p[0].(map[string]any)["name"] != "saga" {
		t.Errorf("init plugins %v", p)
	}
}

func TestOutputFormatsAndMaxTurns(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	r := f.run("idle", []string{"-p", "x", "--allowedTools", "TaskList TaskUpdate"})
	if r.code != 0 || r.stdout != "There are 3 task(s) in the list. I was asked to look only, so I changed nothing.\n" {
		t.Errorf("text: %d %q", r.code, r.stdout)
	}
	r = f.run("idle", []string{"-p", "x", "--output-format", "json", "--allowedTools", "TaskList TaskUpdate"})
	var res map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res["type"] != "result" || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("json: %v %q", err, r.stdout)
	}
	r = f.run("all", append(workerArgs(`{}`), "--max-turns", "3"))
	if r.code != 1 {
		t.Errorf("max turns exit %d", r.code)
	}
	checkShapes(t, r, true)
	// 2.1.330 counts the turn it refused: --max-turns 3 reports 4.
	if res := resultLine(t, r); res["subtype"] != "error_max_turns" || res["is_error"] != true || res["num_turns"] != 4.0 ||
		res["terminal_reason"] != "max_turns" || !reflect.DeepEqual(res["errors"], []any{"Reached maximum number of turns (3)"}) {
		t.Errorf("max turns result %v", res)
	}
	r = f.run("all", []string{"-p", "x", "--allowedTools", "TaskList TaskUpdate", "--max-turns", "1"})
	if r.code != 1 || r.stdout != "Error: Reached max turns (1)" {
		t.Errorf("text max turns: %d %q", r.code, r.stdout)
	}
}

// The result line has the keys of a real 2.1.330 run's last line, in its
// order (read off claude-offline runs: a success, --max-turns, and the json
// output format, which lacks model_usage_since_last_result).
func TestResultLineShape(t *testing.T) {
	success := []string{"duration_api_ms", "stop_reason", "session_id", "total_cost_usd", "usage", "modelUsage",
		"permission_denials", "terminal_reason", "fast_mode_state", "fast_mode_disabled_reason", "subagent_stats",
		"safety_stops", "is_error", "num_turns", "subtype", "api_error_status", "result", "ttft_ms", "type",
		"duration_ms", "uuid", "ttft_stream_ms", "time_to_request_ms", "first_content_frame_ms", "queued_turn_count",
		"result_index", "model_usage_since_last_result"}
	maxTurns := []string{"duration_api_ms", "stop_reason", "session_id", "total_cost_usd", "usage", "modelUsage",
		"permission_denials", "terminal_reason", "fast_mode_state", "fast_mode_disabled_reason", "subagent_stats",
		"safety_stops", "is_error", "num_turns", "subtype", "errors", "type", "duration_ms", "uuid",
		"queued_turn_count", "result_index", "model_usage_since_last_result"}
	usageKeys := []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens",
		"output_tokens_details", "server_tool_use", "service_tier", "cache_creation", "inference_geo", "iterations",
		"speed", "fallback_credit"}
	f := newFixture(t)
	hydrate(f)
	lastLine := func(out string) string {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[len(lines)-1]
	}
	r := f.run("one", workerArgs(`{}`))
	raw := lastLine(r.stdout)
	if got := keysInOrder(t, raw); !reflect.DeepEqual(got, success) {
		t.Errorf("success keys\n%v\nwant\n%v", got, success)
	}
	res := resultLine(t, r)
	if res["terminal_reason"] != "completed" || res["stop_reason"] != "end_turn" || res["api_error_status"] != nil {
		t.Errorf("success result %v", res)
	}
	v, _ := parseJSON([]byte(raw))
	if got := v.(*obj).vals["usage"].(*obj).keys; !reflect.DeepEqual(got, usageKeys) {
		t.Errorf("usage keys %v", got)
	}
	r = f.run("all", append(workerArgs(`{}`), "--max-turns", "2"))
	if got := keysInOrder(t, lastLine(r.stdout)); !reflect.DeepEqual(got, maxTurns) {
		t.Errorf("max-turns keys\n%v\nwant\n%v", got, maxTurns)
	}
	r = f.run("idle", []string{"-p", "x", "--output-format", "json", "--allowedTools", "TaskList TaskUpdate"})
	if got := keysInOrder(t, lastLine(r.stdout)); !reflect.DeepEqual(got, success[:len(success)-1]) {
		t.Errorf("json keys %v", got)
	}
}

func TestStandinLogRecordsArgsAndEnv(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	log := filepath.Join(f.root, "standin.log")
	args := workerArgs(`{}`)
	f.run("idle", args, "SAGA_STANDIN_LOG="+log, "SAGA_TASK_CONTEXT=story-worktree", "GH_TOKEN=secret")
	lines, _ := readJSONLines(t, log)
	if len(lines) != 1 {
		t.Fatalf("log lines %d", len(lines))
	}
	var got []string
	for _, a := range lines[0]["args"].([]any) {
		got = append(got, a.(string))
	}
	if !reflect.DeepEqual(got, args) {
		t.Errorf("args %v", got)
	}
	env := lines[0]["env"].(map[string]any)
	if env["CLAUDE_CODE_TASK_LIST_ID"] != f.list || env["SAGA_TASK_CONTEXT"] != "story-worktree" || env["GH_TOKEN"] != nil {
		t.Errorf("env %v", env)
	}
	if lines[0]["cwd"] != f.project {
		t.Errorf("cwd %v", lines[0]["cwd"])
	}
}

func TestHookTimeoutIsNonBlocking(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	settings := `{"hooks":{"PreToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"sleep 30; echo '{\"decision\":\"block\"}'","timeout":0.3}]}]}}`
	started := time.Now()
	r := f.run("one", workerArgs(settings))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if time.Since(started) > 10*time.Second {
		t.Errorf("the hook was not killed at its timeout")
	}
	if got := statusSequence(checkShapes(t, r, true)); !reflect.DeepEqual(got, []string{"1:in_progress", "1:completed"}) {
		t.Errorf("updates %v", got)
	}
}

// With "onFailure": "block" (Claude Code 2.1.295+), a PreToolUse hook that
// crashes or times out blocks the call, as the real CLI does
// (test/claudecode's TestWriteScopeHookFailsClosed shows it there).
func TestHookFailureBlocksWithOnFailure(t *testing.T) {
	for cmd, why := range map[string]string{"kill -SEGV $$": "failed", "sleep 30": "timed out"} {
		f := newFixture(t)
		hydrate(f)
		settings := `{"hooks":{"PreToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":` + strconv.Quote(cmd) + `,"timeout":0.3,"onFailure":"block"}]}]}}`
		r := f.run("one", workerArgs(settings))
		var write *toolCall
		for _, c := range checkShapes(t, r, true) {
			if c.name == "Write" {
				write = &c
			}
		}
		if write == nil || !write.isError || !strings.Contains(write.content, why+`; blocking because onFailure is "block"`) {
			t.Errorf("%s: Write call %+v", cmd, write)
		}
		if _, err := os.Stat(filepath.Join(f.project, "saga-work")); err == nil {
			t.Errorf("%s: the failed hook let the write through", cmd)
		}
	}
}

func TestListFromSessionIDAndSettingsFile(t *testing.T) {
	f := newFixture(t)
	delete(f.env, "CLAUDE_CODE_TASK_LIST_ID")
	sid := "0b9f4a0e-7c43-4a7e-9a55-3d1e2f1a2b3c"
	f.listDir = filepath.Join(f.config, "tasks", sid)
	f.list = sid
	os.MkdirAll(f.listDir, 0o755)
	f.task("1", taskJSON("1", "one", "pending", nil, nil))
	log := filepath.Join(f.root, "post.log")
	f.write("project/hooks.json", settingsJSON(map[string][][2]string{"PostToolUse": {{"TaskUpdate", recordHook(log)}}}))
	args := workerArgs("hooks.json")
	args = append(args, "--session-id", sid)
	r := f.run("", args)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	checkShapes(t, r, true)
	if !strings.Contains(f.taskFile("1"), `"completed"`) {
		t.Errorf("task in the session's list not completed")
	}
	payloads, _ := readJSONLines(t, log)
	if len(payloads) != 2 || payloads[0]["session_id"] != sid {
		t.Errorf("payloads %v", payloads)
	}
}
