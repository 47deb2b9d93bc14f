package agentsim

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The TaskCompleted veto exactly as 2.1.330 does it: the hooks run before
// the status is written, with the claude process's environment; those that
// exit 2 make TaskUpdate fail with {success:false, taskId, updatedFields:[],
// error} where error — also the text the model sees — is each blocking
// hook's "TaskCompleted hook feedback:\n[<command>]: <stderr>", in the order
// they finished, joined by newlines. Other exit codes do not block. The
// status stays; PostToolUse still fires. The model tries the task again
// (up to 3 attempts in all), then leaves it.
func TestTaskCompletedVetoExactly(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	payloads := filepath.Join(f.root, "completed.log")
	post := filepath.Join(f.root, "post.log")
	pids, runs := shellQuote(filepath.Join(f.root, "fast.pids")), shellQuote(filepath.Join(f.root, "slow.runs"))
	// slow is configured first but finishes after this attempt's fast hook
	// has exited (its pid is the n-th line of fast.pids).
	slow := `cat >/dev/null; echo x >> ` + runs + `; n=$(wc -l < ` + runs + `); ` +
		`while [ "$(cat ` + pids + ` 2>/dev/null | wc -l)" -lt "$n" ]; do :; done; ` +
		`while kill -0 "$(sed -n "${n}p" ` + pids + `)" 2>/dev/null; do :; done; printf 'slow says no' >&2; exit 2`
	fast := `cat >> ` + shellQuote(payloads) + `; echo "fast says no ($SAGA_MARK)" >&2; echo $$ >> ` + pids + `; exit 2`
	other := `cat >/dev/null; echo ignored >&2; exit 1`
	settings := `{"hooks":{"TaskCompleted":[{"hooks":[` +
		`{"type":"command","command":` + jsonString(slow) + `},{"type":"command","command":` + jsonString(fast) + `},` +
		`{"type":"command","command":` + jsonString(other) + `}]}],` +
		`"PostToolUse":[{"matcher":"TaskUpdate","hooks":[{"type":"command","command":` + jsonString(recordHook(post)) + `}]}]}}`
	r := f.run("one", workerArgs(settings), "SAGA_MARK=inherited")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	calls := checkShapes(t, r, true)
	if got := statusSequence(calls); !reflect.DeepEqual(got, []string{"1:in_progress", "1:completed", "1:completed", "1:completed"}) {
		t.Errorf("updates %v", got)
	}
	feedback := "TaskCompleted hook feedback:\n[" + fast + "]: fast says no (inherited)\n\n" +
		"TaskCompleted hook feedback:\n[" + slow + "]: slow says no"
	var refusals int
	for _, c := range calls {
		if c.name != "TaskUpdate" || c.input["status"] != "completed" {
			continue
		}
		refusals++
		if c.isError || c.content != feedback {
			t.Errorf("the model saw %q (error %v), want\n%q", c.content, c.isError, feedback)
		}
		want := map[string]any{"success": false, "taskId": "1", "updatedFields": []any{}, "error": feedback}
		if !reflect.DeepEqual(c.result, want) {
			t.Errorf("TaskUpdate result %v", c.result)
		}
	}
	if refusals != 3 {
		t.Errorf("%d completion attempts, want 3", refusals)
	}
	if !strings.Contains(f.taskFile("1"), `"status": "in_progress"`) {
		t.Errorf("task 1 after the vetoes:\n%s", f.taskFile("1"))
	}
	if got := f.read("project/saga-work/demo/1.md"); !strings.Contains(got, "Attempt 3.") {
		t.Errorf("work file of the third attempt: %q", got)
	}
	if res := resultLine(t, r)["result"].(string); !strings.Contains(res, "Could not finish #1 (refused 3 time(s): TaskCompleted hook feedback:") {
		t.Errorf("summary %q", res)
	}
	got, raw := readJSONLines(t, payloads)
	if len(got) != 3 {
		t.Fatalf("TaskCompleted fired %d times, want 3", len(got))
	}
	if keys := keysInOrder(t, raw[0]); !reflect.DeepEqual(keys, []string{"session_id", "transcript_path", "cwd", "prompt_id",
		"hook_event_name", "task_id", "task_subject", "task_description"}) {
		t.Errorf("TaskCompleted payload keys %v", keys)
	}
	if got[0]["task_id"] != "1" || got[0]["task_subject"] != "Set up the database" || got[0]["task_description"] != "Do Set up the database." {
		t.Errorf("payload %v", got[0])
	}
	posts, _ := readJSONLines(t, post)
	if len(posts) != 4 || posts[1]["tool_response"].(map[string]any)["success"] != false {
		t.Errorf("PostToolUse payloads %v", posts)
	}
}

// A blocking hook with nothing on stderr: "No stderr output".
func TestTaskCompletedVetoWithoutStderr(t *testing.T) {
	f := newFixture(t)
	f.task("1", taskJSON("1", "one", "in_progress", nil, nil))
	s, _ := testSession(t, f, "--settings", `{"hooks":{"TaskCompleted":[{"hooks":[{"type":"command","command":"echo out; exit 2"}]}]}}`)
	if _, res := callJSON(t, s, "TaskUpdate", `{"taskId":"1","status":"completed"}`); res.text != "TaskCompleted hook feedback:\n[echo out; exit 2]: No stderr output" {
		t.Errorf("feedback %q", res.text)
	}
}

// A check that fails until the model has tried again: each task's first
// completion is refused, the second accepted, and the run ends with every
// task completed — the "refused until the check passes" a worker shows.
func TestCompletionRefusedUntilTheCheckPasses(t *testing.T) {
	f := newFixture(t)
	hydrate(f)
	check := `id=$(sed -n 's/.*"task_id":"\([^"]*\)".*/\1/p'); grep -q 'Attempt 2\.' "saga-work/demo/$id.md" || { echo "check failed: saga-work/demo/$id.md is not the second attempt" >&2; exit 2; }`
	r := f.run("all", workerArgs(settingsJSON(map[string][][2]string{"TaskCompleted": {{"", check}}})))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	calls := checkShapes(t, r, true)
	want := []string{"1:in_progress", "1:completed", "1:completed", "2:in_progress", "2:completed", "2:completed",
		"write-tests:in_progress", "write-tests:completed", "write-tests:completed"}
	if got := statusSequence(calls); !reflect.DeepEqual(got, want) {
		t.Errorf("updates %v\nwant %v", got, want)
	}
	for _, id := range []string{"1", "2", "write-tests"} {
		if !strings.Contains(f.taskFile(id), `"status": "completed"`) {
			t.Errorf("task %s not completed", id)
		}
	}
	if res := resultLine(t, r)["result"]; res != "Completed 3 task(s): #1, #2, #write-tests." {
		t.Errorf("summary %q", res)
	}
}

func jsonString(s string) string {
	data, _ := json.Marshal(s)
	return string(data)
}
