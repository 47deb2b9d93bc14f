package agentsim

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// standin is the built testdata/standin/claude, which runs this package.
func standin(t *testing.T) string {
	t.Helper()
	return testkit.Build(t, "./testdata/standin/claude")
}

// fixture is a project dir plus a Claude config dir with one task list.
type fixture struct {
	t       *testing.T
	root    string
	project string
	config  string
	list    string
	listDir string
	env     map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, root: root, project: filepath.Join(root, "project"), config: filepath.Join(root, "config"),
		list: "saga__demo__1700000000000"}
	f.listDir = filepath.Join(f.config, "tasks", f.list)
	for _, d := range []string{f.project, f.listDir, filepath.Join(root, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.env = map[string]string{
		"PATH":                     os.Getenv("PATH"),
		"HOME":                     filepath.Join(root, "home"),
		"CLAUDE_CONFIG_DIR":        f.config,
		"CLAUDE_CODE_TASK_LIST_ID": f.list,
		"CLAUDE_CODE_ENABLE_TASKS": "true",
		"SAGA_STORY_ID":            "demo",
		"SAGA_STORY_PATH":          "demo",
	}
	return f
}

// task writes a task file byte for byte.
func (f *fixture) task(id, content string) {
	f.t.Helper()
	if err := os.WriteFile(filepath.Join(f.listDir, id+".json"), []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) read(rel string) string {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join(f.root, rel))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(data)
}

func (f *fixture) taskFile(id string) string {
	return f.read(filepath.Join("config", "tasks", f.list, id+".json"))
}

func (f *fixture) write(rel, content string) string {
	f.t.Helper()
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// taskJSON is a task in Claude Code's stored format.
func taskJSON(id, subject, status string, blocks, blockedBy []string) string {
	t := &task{ID: id, Subject: subject, Description: "Do " + subject + ".", Status: status, Blocks: blocks, BlockedBy: blockedBy}
	return string(t.encode())
}

// recordHook is a hook command appending its stdin to log.
func recordHook(log string) string { return "cat >> " + shellQuote(log) }

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// settingsJSON builds a --settings value: event → list of (matcher, command).
func settingsJSON(hooks map[string][][2]string) string {
	out := map[string]any{}
	for event, list := range hooks {
		var groups []any
		for _, mc := range list {
			groups = append(groups, map[string]any{"matcher": mc[0],
				"hooks": []any{map[string]any{"type": "command", "command": mc[1], "timeout": 30}}})
		}
		out[event] = groups
	}
	data, _ := json.Marshal(map[string]any{"hooks": out})
	return string(data)
}

// workerArgs are the flags saga-lsp's worker passes (docs/worker.md#the-loop).
func workerArgs(settings string) []string {
	return []string{"-p", "Work through the story's tasks.", "--output-format", "stream-json", "--verbose",
		"--model", "opus", "--permission-mode", "acceptEdits", "--settings", settings,
		"--allowedTools", "TaskList TaskGet TaskUpdate TaskCreate"}
}

type result struct {
	code   int
	stdout string
	stderr string
	lines  []map[string]any
}

// environ is the stand-in's environment: the fixture's, the script (none
// when ""), then extraEnv.
func (f *fixture) environ(script string, extraEnv ...string) []string {
	var env []string
	for k, v := range f.env {
		env = append(env, k+"="+v)
	}
	if script != "" {
		env = append(env, "SAGA_STANDIN_SCRIPT="+script)
	}
	return append(env, extraEnv...)
}

// run runs the stand-in binary in the project dir.
func (f *fixture) run(script string, args []string, extraEnv ...string) *result {
	f.t.Helper()
	out := testkit.Run(f.t, f.project, f.environ(script, extraEnv...), "", standin(f.t), args...)
	return &result{code: out.Code, stdout: out.Stdout, stderr: out.Stderr, lines: parseLines(f.t, out.Stdout, args)}
}

// parseLines parses a stream-json run's stdout (nil for other formats).
func parseLines(t *testing.T, stdout string, args []string) []map[string]any {
	t.Helper()
	if !strings.Contains(strings.Join(args, " "), "stream-json") {
		return nil
	}
	lines, _ := jsonLines(t, "stream line", stdout)
	return lines
}

// jsonLines parses text made of JSON lines (what says which, for errors),
// keeping each line's raw text; empty lines are skipped.
func jsonLines(t *testing.T, what, text string) ([]map[string]any, []string) {
	t.Helper()
	var out []map[string]any
	var raw []string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s is not JSON: %v\n%q", what, err, l)
		}
		out = append(out, m)
		raw = append(raw, l)
	}
	return out, raw
}

// toolCall is one tool_use with its tool_result.
type toolCall struct {
	name    string
	id      string
	input   map[string]any
	content string
	isError bool
	result  any // tool_use_result
}

// checkShapes verifies the stream-json shapes and returns the tool calls.
// A run that ended normally must end with the result line.
func checkShapes(t *testing.T, r *result, wantResult bool) []toolCall {
	t.Helper()
	if len(r.lines) == 0 {
		t.Fatalf("no stream lines; stderr: %s", r.stderr)
	}
	var calls []toolCall
	pending := map[string]int{}
	sawInit := false
	var sessionID string
	for i, l := range r.lines {
		switch l["type"] {
		case "system":
			switch l["subtype"] {
			case "init":
				sawInit = true
				sessionID, _ = l["session_id"].(string)
				for _, k := range []string{"cwd", "session_id", "tools", "model", "permissionMode", "uuid"} {
					if _, ok := l[k]; !ok {
						t.Errorf("system/init lacks %q: %v", k, l)
					}
				}
			case "hook_started", "hook_response":
				if sawInit && l["hook_event"] == "SessionStart" {
					t.Errorf("SessionStart hook line after init: %v", l)
				}
			case "permission_denied":
				for _, k := range []string{"tool_name", "tool_use_id", "message", "uuid", "session_id"} {
					if _, ok := l[k]; !ok {
						t.Errorf("permission_denied lacks %q: %v", k, l)
					}
				}
			default:
				t.Errorf("unexpected system line %v", l)
			}
		case "assistant":
			if !sawInit {
				t.Fatalf("assistant line before system/init")
			}
			msg := l["message"].(map[string]any)
			if msg["role"] != "assistant" || msg["type"] != "message" || !strings.HasPrefix(msg["id"].(string), "msg_") {
				t.Errorf("bad assistant message %v", msg)
			}
			if l["session_id"] != sessionID {
				t.Errorf("assistant session_id %v, want %v", l["session_id"], sessionID)
			}
			for _, b := range msg["content"].([]any) {
				block := b.(map[string]any)
				switch block["type"] {
				case "tool_use":
					id := block["id"].(string)
					if !strings.HasPrefix(id, "toolu_") {
						t.Errorf("tool_use id %q", id)
					}
					pending[id] = len(calls)
					calls = append(calls, toolCall{name: block["name"].(string), id: id, input: block["input"].(map[string]any)})
				case "text":
					if _, ok := block["text"].(string); !ok {
						t.Errorf("text block without text: %v", block)
					}
				default:
					t.Errorf("unexpected content block %v", block)
				}
			}
		case "user":
			msg := l["message"].(map[string]any)
			if msg["role"] != "user" {
				t.Errorf("bad user message %v", msg)
			}
			_, hasResult := l["tool_use_result"]
			for _, b := range msg["content"].([]any) {
				block := b.(map[string]any)
				if block["type"] == "text" && !hasResult && strings.HasPrefix(block["text"].(string), "[Request interrupted by user") {
					continue // the note an interrupted run ends with
				}
				if !hasResult {
					t.Errorf("user line without tool_use_result: %v", l)
				}
				if block["type"] != "tool_result" {
					t.Errorf("unexpected user block %v", block)
					continue
				}
				id := block["tool_use_id"].(string)
				n, ok := pending[id]
				if !ok {
					t.Fatalf("tool_result for unknown tool_use %s", id)
				}
				delete(pending, id)
				calls[n].content, _ = block["content"].(string)
				calls[n].isError, _ = block["is_error"].(bool)
				calls[n].result = l["tool_use_result"]
			}
		case "result":
			if i != len(r.lines)-1 {
				t.Errorf("result line is not the last line")
			}
			for _, k := range []string{"subtype", "is_error", "num_turns", "duration_ms", "total_cost_usd", "session_id", "permission_denials"} {
				if _, ok := l[k]; !ok {
					t.Errorf("result lacks %q: %v", k, l)
				}
			}
		default:
			t.Errorf("unexpected line type %v", l["type"])
		}
	}
	last := r.lines[len(r.lines)-1]
	if wantResult && last["type"] != "result" {
		t.Errorf("stream does not end with a result line: %v", last)
	}
	if !wantResult && last["type"] == "result" {
		t.Errorf("stream ends with a result line, want none")
	}
	if wantResult && len(pending) > 0 {
		t.Errorf("tool_use without tool_result: %v", pending)
	}
	return calls
}

// initLine is the stream's system/init line.
func initLine(t *testing.T, r *result) map[string]any {
	t.Helper()
	for _, l := range r.lines {
		if l["subtype"] == "init" {
			return l
		}
	}
	t.Fatalf("no system/init line")
	return nil
}

// offers reports whether system/init lists a tool.
func offers(t *testing.T, r *result, tool string) bool {
	t.Helper()
	for _, tl := range initLine(t, r)["tools"].([]any) {
		if tl == tool {
			return true
		}
	}
	return false
}

func resultLine(t *testing.T, r *result) map[string]any {
	t.Helper()
	last := r.lines[len(r.lines)-1]
	if last["type"] != "result" {
		t.Fatalf("last line is not a result: %v", last)
	}
	return last
}

// readJSONLines parses a file of JSON lines (a hook log), keeping raw text.
func readJSONLines(t *testing.T, path string) ([]map[string]any, []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return jsonLines(t, "hook log line", string(data))
}

// keysInOrder returns the top-level keys of a JSON object in file order.
func keysInOrder(t *testing.T, raw string) []string {
	t.Helper()
	v, err := parseJSON([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*obj).keys
}

// statusSequence lists "id:status" for each TaskUpdate status call.
func statusSequence(calls []toolCall) []string {
	var out []string
	for _, c := range calls {
		if c.name == "TaskUpdate" {
			if st, ok := c.input["status"].(string); ok {
				out = append(out, c.input["taskId"].(string)+":"+st)
			}
		}
	}
	return out
}

// execStandin prepares (without starting) a stand-in process; stdout goes to
// a *strings.Builder.
func execStandin(f *fixture, script string, args []string, extraEnv ...string) *exec.Cmd {
	cmd := exec.Command(standin(f.t), args...)
	cmd.Dir = f.project
	cmd.Env = append(f.environ(""), "SAGA_STANDIN_SCRIPT="+script)
	cmd.Env = append(cmd.Env, extraEnv...)
	cmd.Stdout = &strings.Builder{}
	return cmd
}
