package agentsim

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// session for in-process tool calls, as the worker would start it.
func testSession(t *testing.T, f *fixture, extra ...string) (*session, *bytes.Buffer) {
	t.Helper()
	var env []string
	for k, v := range f.env {
		env = append(env, k+"="+v)
	}
	var out bytes.Buffer
	s, code := prepare(context.Background(), Options{Args: append(workerArgs(`{}`), extra...), Environ: env,
		Dir: f.project, Stdout: &out, Stderr: &out, Script: ScriptIdle})
	if s == nil {
		t.Fatalf("prepare: exit %d: %s", code, out.String())
	}
	return s, &out
}

func callJSON(t *testing.T, s *session, tool, input string) (string, toolResult) {
	t.Helper()
	v, err := parseJSON([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.call(tool, v.(*obj), "")
	if err != nil {
		t.Fatal(err)
	}
	return stringify(res.structured, ""), res
}

func TestTaskCreateNumbering(t *testing.T) {
	f := newFixture(t)
	f.task("1", taskJSON("1", "one", "completed", nil, nil))
	f.task("5", taskJSON("5", "five", "pending", nil, nil))
	f.task("write-tests", taskJSON("write-tests", "named", "pending", nil, nil))
	f.write("config/tasks/"+f.list+"/12.json.tmp.0badf00d", "not a task")
	f.write("config/tasks/"+f.list+"/notes.txt", "ignored")
	s, _ := testSession(t, f)

	// No .highwatermark: highest numeric name + 1.
	got, _ := callJSON(t, s, "TaskCreate", `{"subject":"six","description":"d","activeForm":"Doing six","metadata":{"b":1,"a":null,"0":"z"}}`)
	if got != `{"task":{"id":"6","subject":"six","description":"d"}}` {
		t.Errorf("TaskCreate result %s", got)
	}
	want := "{\n  \"id\": \"6\",\n  \"subject\": \"six\",\n  \"description\": \"d\",\n  \"activeForm\": \"Doing six\",\n  \"status\": \"pending\",\n  \"blocks\": [],\n  \"blockedBy\": [],\n  \"metadata\": {\n    \"0\": \"z\",\n    \"b\": 1\n  }\n}"
	if f.taskFile("6") != want {
		t.Errorf("6.json:\n%s", f.taskFile("6"))
	}
	// A higher mark wins; creating does not raise it.
	f.write("config/tasks/"+f.list+"/.highwatermark", "9")
	got, _ = callJSON(t, s, "TaskCreate", `{"subject":"ten","description":""}`)
	if got != `{"task":{"id":"10","subject":"ten","description":""}}` {
		t.Errorf("TaskCreate result %s", got)
	}
	if m := f.read("config/tasks/" + f.list + "/.highwatermark"); m != "9" {
		t.Errorf(".highwatermark = %q after create", m)
	}
	// Deleting raises it: 10 deleted → next is 11 although 10.json is gone.
	got, _ = callJSON(t, s, "TaskUpdate", `{"taskId":"10","status":"deleted"}`)
	if got != `{"success":true,"taskId":"10","updatedFields":["deleted"],"statusChange":{"from":"pending","to":"deleted"}}` {
		t.Errorf("delete result %s", got)
	}
	if m := f.read("config/tasks/" + f.list + "/.highwatermark"); m != "10" {
		t.Errorf(".highwatermark = %q after delete", m)
	}
	got, _ = callJSON(t, s, "TaskCreate", `{"subject":"eleven","description":""}`)
	if !strings.Contains(got, `"id":"11"`) {
		t.Errorf("after delete: %s", got)
	}
	// The list lock: .lock kept (empty), .lock.lock released.
	if data, err := os.ReadFile(filepath.Join(f.listDir, ".lock")); err != nil || len(data) != 0 {
		t.Errorf(".lock: %q %v", data, err)
	}
	for _, p := range []string{".lock.lock", "6.json.lock", "10.json.lock"} {
		if _, err := os.Stat(filepath.Join(f.listDir, p)); err == nil {
			t.Errorf("%s left behind", p)
		}
	}
	// Unknown input keys are rejected.
	_, res := callJSON(t, s, "TaskCreate", `{"subject":"x","description":"","priority":"high"}`)
	if !res.isError || !strings.Contains(res.text, "An unexpected parameter `priority` was provided") {
		t.Errorf("unknown key: %+v", res)
	}
}

func TestTaskUpdateSemantics(t *testing.T) {
	f := newFixture(t)
	f.task("1", `{
  "id": "1",
  "subject": "one",
  "description": "",
  "status": "pending",
  "blocks": [],
  "blockedBy": [],
  "customKey": "dropped at the next write",
  "metadata": {
    "keep": 1,
    "drop": "x"
  }
}`)
	f.task("2", taskJSON("2", "two", "pending", nil, nil))
	f.task("3", `{"id":"3","subject":"bad status","description":"","status":"done","blocks":[],"blockedBy":[]}`)
	f.task("4", `{"id":"other","subject":"wrong id","description":"","status":"pending","blocks":[],"blockedBy":[]}`)
	s, _ := testSession(t, f)

	cases := []struct{ input, want string }{
		{`{"taskId":"99","status":"completed"}`, `{"success":false,"taskId":"99","updatedFields":[],"error":"Task not found"}`},
		{`{"taskId":"3","status":"completed"}`, `{"success":false,"taskId":"3","updatedFields":[],"error":"Task not found"}`},
		{`{"taskId":"4","status":"completed"}`, `{"success":false,"taskId":"4","updatedFields":[],"error":"Task not found"}`},
		{`{"taskId":"1","status":"pending"}`, `{"success":true,"taskId":"1","updatedFields":[]}`},
		{`{"taskId":"1","owner":"agent","metadata":{"drop":null,"new":[1,"a"]}}`, `{"success":true,"taskId":"1","updatedFields":["owner","metadata"]}`},
		{`{"taskId":"1","addBlocks":["2"]}`, `{"success":true,"taskId":"1","updatedFields":["blocks"]}`},
		{`{"taskId":"1","status":"in_progress","activeForm":"Doing one"}`, `{"success":true,"taskId":"1","updatedFields":["activeForm","status"],"statusChange":{"from":"pending","to":"in_progress"}}`},
	}
	for _, c := range cases {
		if got, _ := callJSON(t, s, "TaskUpdate", c.input); got != c.want {
			t.Errorf("TaskUpdate %s\n got %s\nwant %s", c.input, got, c.want)
		}
	}
	want1 := `{
  "id": "1",
  "subject": "one",
  "description": "",
  "activeForm": "Doing one",
  "status": "in_progress",
  "owner": "agent",
  "blocks": [
    "2"
  ],
  "blockedBy": [],
  "metadata": {
    "keep": 1,
    "new": [
      1,
      "a"
    ]
  }
}`
	if got := f.taskFile("1"); got != want1 {
		t.Errorf("1.json:\n%s", got)
	}
	if got := f.taskFile("2"); !strings.Contains(got, "\"blockedBy\": [\n    \"1\"\n  ]") {
		t.Errorf("2.json not linked back:\n%s", got)
	}
	// TaskGet shows raw blockedBy; TaskList only unfinished blockers.
	got, _ := callJSON(t, s, "TaskGet", `{"taskId":"2"}`)
	if got != `{"task":{"id":"2","subject":"two","description":"Do two.","status":"pending","blocks":[],"blockedBy":["1"]}}` {
		t.Errorf("TaskGet %s", got)
	}
	got, _ = callJSON(t, s, "TaskGet", `{"taskId":"99"}`)
	if got != `{"task":null}` {
		t.Errorf("TaskGet missing %s", got)
	}
	callJSON(t, s, "TaskUpdate", `{"taskId":"1","status":"completed"}`)
	got, res := callJSON(t, s, "TaskList", `{}`)
	if got != `{"tasks":[{"id":"1","subject":"one","status":"completed","owner":"agent","blockedBy":[]},{"id":"2","subject":"two","status":"pending","blockedBy":[]}]}` {
		t.Errorf("TaskList %s", got)
	}
	if res.text != "#1 [completed] one (agent)\n#2 [pending] two" {
		t.Errorf("TaskList text %q", res.text)
	}
	// Writes go through a temp file and leave none behind.
	ents, _ := os.ReadDir(f.listDir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp.") || strings.HasSuffix(e.Name(), ".lock") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestTaskLocks(t *testing.T) {
	f := newFixture(t)
	f.task("1", taskJSON("1", "one", "pending", nil, nil))
	s, _ := testSession(t, f)
	lock := filepath.Join(f.listDir, "1.json.lock")

	// A stale lock (mtime over 10 s old) is taken over.
	if err := os.Mkdir(lock, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	os.Chtimes(lock, old, old)
	if got, _ := callJSON(t, s, "TaskUpdate", `{"taskId":"1","status":"in_progress"}`); !strings.Contains(got, `"success":true`) {
		t.Errorf("with a stale lock: %s", got)
	}
	// A live lock is waited for: the holder lets it go only once the
	// update has found it held, and the update ends after that.
	if err := os.Mkdir(lock, 0o755); err != nil {
		t.Fatal(err)
	}
	busy := make(chan struct{}, 1)
	s.store.lockBusy = func() {
		select {
		case busy <- struct{}{}:
		default:
		}
	}
	released := make(chan struct{})
	go func() {
		select {
		case <-busy:
		case <-t.Context().Done():
		}
		close(released) // before the lock goes: an update past it finds it closed
		os.Remove(lock)
	}()
	if got, _ := callJSON(t, s, "TaskUpdate", `{"taskId":"1","status":"completed"}`); !strings.Contains(got, `"statusChange":{"from":"in_progress","to":"completed"}`) {
		t.Errorf("after waiting for the lock: %s", got)
	}
	select {
	case <-released:
	default:
		t.Errorf("the update did not wait for the held lock")
	}
}

func TestWriteAndEditRules(t *testing.T) {
	f := newFixture(t)
	f.write("project/notes.md", "a\nb\nb\n")
	s, _ := testSession(t, f)
	p := filepath.Join(f.project, "notes.md")
	_, res := callJSON(t, s, "Write", `{"file_path":"`+p+`","content":"x"}`)
	if !res.isError || res.text != "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>" {
		t.Errorf("unread write: %+v", res)
	}
	callJSON(t, s, "Read", `{"file_path":"notes.md"}`)
	_, res = callJSON(t, s, "Edit", `{"file_path":"`+p+`","old_string":"b","new_string":"c"}`)
	if !res.isError || !strings.Contains(res.text, "Found 2 matches") {
		t.Errorf("ambiguous edit: %+v", res)
	}
	got, res := callJSON(t, s, "Edit", `{"file_path":"`+p+`","old_string":"a\n","new_string":"A\n"}`)
	if res.isError || f.read("project/notes.md") != "A\nb\nb\n" {
		t.Errorf("edit: %+v %q", res, f.read("project/notes.md"))
	}
	if !strings.Contains(got, `"structuredPatch":[{"oldStart":1,"oldLines":3,"newStart":1,"newLines":3,"lines":["-a","+A"," b"," b"]}]`) {
		t.Errorf("edit result %s", got)
	}
	got, res = callJSON(t, s, "Write", `{"file_path":"sub/new.txt","content":"hi"}`)
	if res.isError || got != `{"type":"create","filePath":"`+filepath.Join(f.project, "sub/new.txt")+`","content":"hi","structuredPatch":[],"originalFile":null,"userModified":false}` {
		t.Errorf("create: %s", got)
	}
	// The texts 2.1.330 shows the model.
	if want := "File created successfully at: " + filepath.Join(f.project, "sub/new.txt") + " (file state is current in your context — no need to Read it back)"; res.text != want {
		t.Errorf("create text %q", res.text)
	}
	f.write("project/e.txt", "a\nb\n")
	if _, res = callJSON(t, s, "Read", `{"file_path":"e.txt"}`); res.text != "1\ta\n2\tb\n3\t" {
		t.Errorf("Read text %q", res.text)
	}
	if _, res = callJSON(t, s, "Read", `{"file_path":"nothere"}`); !res.isError || res.text != "File does not exist. Note: your current working directory is "+f.project+"." {
		t.Errorf("Read of a missing file %q", res.text)
	}
}

func TestRunCanceledMidway(t *testing.T) {
	f := newFixture(t)
	f.task("1", taskJSON("1", "one", "pending", nil, nil))
	f.task("2", taskJSON("2", "two", "pending", nil, nil))
	var env []string
	for k, v := range f.env {
		env = append(env, k+"="+v)
	}
	env = append(env, "SAGA_STANDIN_DELAY_MS=50")
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Millisecond)
	defer cancel()
	var out, errb bytes.Buffer
	code := Run(ctx, Options{Args: workerArgs(`{}`), Environ: env, Dir: f.project, Stdout: &out, Stderr: &errb, Script: ScriptSlow})
	if code != ExitCanceled {
		t.Fatalf("exit %d, want %d; %s", code, ExitCanceled, errb.String())
	}
	if strings.Contains(out.String(), `"type":"result"`) || !strings.Contains(out.String(), `"name":"TaskList"`) {
		t.Errorf("stream:\n%s", out.String())
	}
}

func TestMatcher(t *testing.T) {
	cases := []struct {
		matcher, query string
		want           bool
	}{
		{"", "Write", true}, {"*", "Write", true}, {"Write", "Write", true}, {"Write", "WriteX", false},
		{"Write|Edit", "Edit", true}, {"Write|Edit", "Ed", false}, {"Task.*", "TaskUpdate", true},
		{"^Task(List|Get)$", "TaskUpdate", false}, {"Upd", "TaskUpdate", false}, {"Upd.", "TaskUpdate", true},
		{"(", "Write", false}, {"startup", "startup", true}, {"resume", "startup", false},
	}
	for _, c := range cases {
		if got := matchHook(c.matcher, c.query); got != c.want {
			t.Errorf("matchHook(%q, %q) = %v", c.matcher, c.query, got)
		}
	}
}

func TestStringifyLikeJavaScript(t *testing.T) {
	v, err := parseJSON([]byte(`{"b":1,"10":true,"a":[],"2":{},"s":"<&>\u2028\u0001\"\\","n":[1.0,1e21,1.5e-7,0.000001,-0,123456789012,2.5]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := stringify(v, "")
	want := `{"2":{},"10":true,"b":1,"a":[],"s":"<&>` + "\u2028" + `\u0001\"\\","n":[1,1e+21,1.5e-7,0.000001,0,123456789012,2.5]}`
	if got != want {
		t.Errorf("stringify\n got %s\nwant %s", got, want)
	}
	if got := stringify(newObj("a", []any{}, "b", newObj("c", []string{"x"})), "  "); got != "{\n  \"a\": [],\n  \"b\": {\n    \"c\": [\n      \"x\"\n    ]\n  }\n}" {
		t.Errorf("indented:\n%s", got)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(got), &m); err != nil {
		t.Error(err)
	}
}

func TestParseTaskRejects(t *testing.T) {
	bad := []string{
		`[]`,
		`{"id":"1","subject":"s","description":"","status":"pending","blocks":[]}`,
		`{"id":"1","subject":"s","description":"","status":"deleted","blocks":[],"blockedBy":[]}`,
		`{"id":"1","subject":"s","description":"","activeForm":null,"status":"pending","blocks":[],"blockedBy":[]}`,
		`{"id":"1","subject":"s","description":"","status":"pending","blocks":[1],"blockedBy":[]}`,
		`{"id":"1","subject":"s","description":"","status":"pending","blocks":[],"blockedBy":[],"metadata":[]}`,
		`{"id":"1","subject":"s","status":"pending","blocks":[],"blockedBy":[]}`,
	}
	for _, b := range bad {
		if _, err := parseTask([]byte(b)); err == nil {
			t.Errorf("accepted %s", b)
		}
	}
	if got := sanitizeID("saga__a.b/c d"); got != "saga__a-b-c-d" {
		t.Errorf("sanitizeID = %q", got)
	}
}

func TestSplitToolRules(t *testing.T) {
	got := splitToolRules([]string{"TaskList TaskGet,TaskUpdate", "Bash(git log:*), Edit"})
	want := []string{"TaskList", "TaskGet", "TaskUpdate", "Bash(git log:*)", "Edit"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("splitToolRules = %q", got)
	}
}
