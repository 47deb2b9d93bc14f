package agentsim

import (
	"reflect"
	"strings"
	"testing"
)

// For current models 2.1.330 defers the Task tools: the model loads them
// with ToolSearch first, and the stream shows that call. ENABLE_TOOL_SEARCH
// false (no ToolSearch at all) or "auto", and Claude 3 models, get them as
// plain tools.
func TestTaskToolsAreDeferred(t *testing.T) {
	cases := []struct {
		name     string
		extra    []string
		env      []string
		search   bool // ToolSearch offered
		deferred bool
	}{
		{"current model", nil, nil, true, true},
		{"ENABLE_TOOL_SEARCH=false", nil, []string{"ENABLE_TOOL_SEARCH=false"}, false, false},
		{"ENABLE_TOOL_SEARCH=0", nil, []string{"ENABLE_TOOL_SEARCH=0"}, false, false},
		{"ENABLE_TOOL_SEARCH=auto", nil, []string{"ENABLE_TOOL_SEARCH=auto"}, true, false},
		{"ENABLE_TOOL_SEARCH=true", nil, []string{"ENABLE_TOOL_SEARCH=true"}, true, true},
		{"Claude 3 model", []string{"--model", "claude-3-7-sonnet-20250219"}, nil, true, false},
		{"sonnet 4", []string{"--model", "claude-sonnet-4-20250514"}, nil, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			hydrate(f)
			r := f.run("one", append(workerArgs(`{}`), c.extra...), c.env...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			calls := checkShapes(t, r, true)
			if got := offers(t, r, "ToolSearch"); got != c.search {
				t.Errorf("init offers ToolSearch: %v, want %v", got, c.search)
			}
			if got := calls[0].name == "ToolSearch"; got != c.deferred {
				t.Fatalf("first call %s (deferred: want %v)", calls[0].name, c.deferred)
			}
			if !c.deferred {
				return
			}
			if !reflect.DeepEqual(calls[0].result, map[string]any{"matches": []any{"TaskList", "TaskGet", "TaskUpdate"},
				"query": "select:TaskList,TaskGet,TaskUpdate", "total_deferred_tools": 15.0}) {
				t.Errorf("ToolSearch result %v", calls[0].result)
			}
			if !strings.Contains(r.stdout, `"content":[{"type":"tool_reference","tool_name":"TaskList"},{"type":"tool_reference","tool_name":"TaskGet"},{"type":"tool_reference","tool_name":"TaskUpdate"}]`) {
				t.Errorf("ToolSearch's tool_result is not tool_reference blocks")
			}
			if got := statusSequence(calls); !reflect.DeepEqual(got, []string{"1:in_progress", "1:completed"}) {
				t.Errorf("updates %v", got)
			}
		})
	}
}

// system/init lists tools as 2.1.330 does: "Task" first, then alphabetical,
// deferred ones included; --disallowedTools Bash removes Bash and Monitor
// and brings Glob and Grep.
func TestInitToolList(t *testing.T) {
	f := newFixture(t)
	s, _ := testSession(t, f)
	want := []string{"Task", "Bash", "CronCreate", "CronDelete", "CronList", "Edit", "EnterWorktree", "ExitWorktree",
		"ListAgents", "Monitor", "NotebookEdit", "Read", "ReportFindings", "ScheduleWakeup", "SendMessage", "Skill",
		"TaskCreate", "TaskGet", "TaskList", "TaskStop", "TaskUpdate", "ToolSearch", "WebFetch", "WebSearch", "Workflow", "Write"}
	if got := s.toolList(); !reflect.DeepEqual(got, want) {
		t.Errorf("tools\n%v\nwant\n%v", got, want)
	}
	s, _ = testSession(t, f, "--disallowedTools", "Bash")
	want = []string{"Task", "CronCreate", "CronDelete", "CronList", "Edit", "EnterWorktree", "ExitWorktree", "Glob", "Grep",
		"ListAgents", "NotebookEdit", "Read", "ReportFindings", "ScheduleWakeup", "SendMessage", "Skill",
		"TaskCreate", "TaskGet", "TaskList", "TaskStop", "TaskUpdate", "ToolSearch", "WebFetch", "WebSearch", "Workflow", "Write"}
	if got := s.toolList(); !reflect.DeepEqual(got, want) {
		t.Errorf("tools without Bash\n%v\nwant\n%v", got, want)
	}
}

// A deferred tool called before ToolSearch loaded it runs when its input is
// valid; invalid input gets Claude Code's note to load it first (texts read
// off 2.1.330's answers; the schema here has no descriptions). Once loaded,
// the note is gone.
func TestDeferredToolCalledBeforeLoading(t *testing.T) {
	f := newFixture(t)
	f.task("1", taskJSON("1", "one", "pending", nil, nil))
	s, _ := testSession(t, f)

	if _, res := callJSON(t, s, "TaskList", `{}`); res.isError || res.text != "#1 [pending] one" {
		t.Errorf("TaskList before loading: %+v", res)
	}
	structured, res := callJSON(t, s, "TaskUpdate", `{"taskId":1,"status":"done"}`)
	wantText := "<tool_use_error>InputValidationError: TaskUpdate failed due to the following issues:\n" +
		"The parameter `taskId` type is expected as `string` but provided as `number`\n" +
		"The parameter `status` matches none of the accepted forms\n\n" +
		"This tool's schema was not sent to the API — it was not in the discovered-tool set derived from message history. " +
		"Without the schema in your prompt, typed parameters (arrays, numbers, booleans) get emitted as strings and the client-side parser rejects them. " +
		`Load the tool first: call ToolSearch with query "select:TaskUpdate", then retry this call. For reference, this tool's input schema is: ` +
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"taskId":{"type":"string"},"subject":{"type":"string"},` +
		`"description":{"type":"string"},"activeForm":{"type":"string"},"status":{"anyOf":[{"type":"string","enum":["pending","in_progress","completed"]},` +
		`{"type":"string","const":"deleted"}]},"addBlocks":{"type":"array","items":{"type":"string"}},"addBlockedBy":{"type":"array","items":{"type":"string"}},` +
		`"owner":{"type":"string"},"metadata":{"type":"object","propertyNames":{"type":"string"},"additionalProperties":{}}},"required":["taskId"],"additionalProperties":false}` +
		"</tool_use_error>"
	if !res.isError || res.text != wantText {
		t.Errorf("invalid call before loading:\n%s\nwant\n%s", res.text, wantText)
	}
	if !strings.HasPrefix(structured, `"InputValidationError: [\n  {\n    \"expected\": \"string\",\n    \"code\": \"invalid_type\",\n    \"path\": [\n      \"taskId\"\n    ],\n    \"message\": \"Invalid input: expected string, received number\"\n  },\n  {\n    \"code\": \"invalid_union\",`) {
		t.Errorf("structured %s", structured)
	}

	got, res := callJSON(t, s, "ToolSearch", `{"query":"select:TaskUpdate,Nope","max_results":5}`)
	if got != `{"matches":["TaskUpdate"],"query":"select:TaskUpdate,Nope","total_deferred_tools":15}` || res.text != "" || len(res.blocks) != 1 {
		t.Errorf("ToolSearch %s %+v", got, res)
	}
	if _, res = callJSON(t, s, "TaskUpdate", `{"taskId":"1","foo":"x"}`); res.text != "<tool_use_error>InputValidationError: TaskUpdate failed due to the following issue:\nAn unexpected parameter `foo` was provided</tool_use_error>" {
		t.Errorf("invalid call after loading: %s", res.text)
	}
	if got, res = callJSON(t, s, "ToolSearch", `{"query":"zzzz"}`); got != `{"matches":[],"query":"zzzz","total_deferred_tools":15}` || res.text != "No matching deferred tools found" {
		t.Errorf("ToolSearch without match %s %q", got, res.text)
	}
	if got, _ = callJSON(t, s, "ToolSearch", `{"query":"task list"}`); !strings.HasPrefix(got, `{"matches":["TaskList",`) {
		t.Errorf("keyword search %s", got)
	}
}
