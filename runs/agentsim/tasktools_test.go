package agentsim

import "testing"

// What the model sees of tasks: the texts 2.1.330 answered for the same
// files (read off claude-offline's request log). TaskGet shows subject,
// status, description and links — never metadata; TaskList shows the owner.
func TestWhatTheModelSeesOfATask(t *testing.T) {
	f := newFixture(t)
	f.task("1", `{"id":"1","subject":"First","description":"Do first.","status":"pending","blocks":["2","3"],"blockedBy":[],"metadata":{"guidance":"G","doneWhen":"D"}}`)
	f.task("2", `{"id":"2","subject":"Second","description":"","activeForm":"Doing second","status":"in_progress","owner":"bob","blocks":["4"],"blockedBy":["1","9"]}`)
	f.task("3", `{"id":"3","subject":"Third","description":"Multi\nline","status":"completed","blocks":[],"blockedBy":["1"]}`)
	s, _ := testSession(t, f)
	for _, c := range []struct{ tool, input, want string }{
		{"TaskGet", `{"taskId":"1"}`, "Task #1: First\nStatus: pending\nDescription: Do first.\nBlocks: #2, #3"},
		{"TaskGet", `{"taskId":"2"}`, "Task #2: Second\nStatus: in_progress\nDescription: \nBlocked by: #1, #9\nBlocks: #4"},
		{"TaskGet", `{"taskId":"3"}`, "Task #3: Third\nStatus: completed\nDescription: Multi\nline\nBlocked by: #1"},
		{"TaskGet", `{"taskId":"77"}`, "Task not found"},
		{"TaskList", `{}`, "#1 [pending] First\n#2 [in_progress] Second (bob) [blocked by #1, #9]\n#3 [completed] Third [blocked by #1]"},
		{"TaskUpdate", `{"taskId":"1","status":"pending"}`, "Updated task #1 "},
		{"TaskUpdate", `{"taskId":"1","subject":"First!","owner":"me","metadata":{"a":1},"status":"in_progress"}`, "Updated task #1 subject, owner, metadata, status"},
		{"TaskUpdate", `{"taskId":"77","status":"completed"}`, "Task not found"},
	} {
		if _, res := callJSON(t, s, c.tool, c.input); res.text != c.want || res.isError {
			t.Errorf("%s %s:\n%q\nwant\n%q", c.tool, c.input, res.text, c.want)
		}
	}
	if got, _ := callJSON(t, s, "TaskGet", `{"taskId":"1"}`); got != `{"task":{"id":"1","subject":"First!","description":"Do first.","status":"in_progress","blocks":["2","3"],"blockedBy":[]}}` {
		t.Errorf("TaskGet result %s", got)
	}
}
