package github

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTimedOut: GitHub reports a job stopped by its timeout-minutes as
// cancelled; how long the job ran (gh run view's jobs) tells it from a
// cancel.
func TestTimedOut(t *testing.T) {
	view := func(started, completed string) RunInfo {
		var r RunInfo
		data := `{"databaseId": 7, "status": "completed", "conclusion": "cancelled", "jobs": [{"name": "story", "status": "completed",
			"conclusion": "cancelled", "startedAt": "` + started + `", "completedAt": ` + completed + `,
			"steps": [{"name": "Run the story", "status": "completed", "conclusion": "cancelled", "number": 9}]}]}`
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := view("2026-11-27T08:00:00Z", `"2026-11-27T10:00:04Z"`); !timedOut(r) {
		t.Errorf("a job of 2 h: not timed out")
	}
	r := view("2026-11-27T08:00:00Z", `"2026-11-27T08:05:00Z"`)
	if timedOut(r) {
		t.Errorf("a job of 5 min cancelled: timed out")
	}
	if why := stepWhy(r, "cancelled"); why != `its Actions run was cancelled (at step "Run the story")` {
		t.Errorf("why %q", why)
	}
	if r := view("2026-11-27T08:00:00Z", "null"); timedOut(r) {
		t.Errorf("a job not completed: timed out")
	}
	r.Jobs[0].Steps[0].Name, r.Jobs[0].Steps[0].Conclusion = "Check the Claude Code secret", "failure"
	if why := stepWhy(r, "failure"); !strings.HasPrefix(why, `its Actions job failed at step "Check the Claude Code secret": neither the secret ANTHROPIC_API_KEY`) {
		t.Errorf("why %q", why)
	}
}

// TestStepReasonsNameSteps: the steps whose failure stepReason explains
// are the workflow's.
func TestStepReasonsNameSteps(t *testing.T) {
	content, err := Render(Source{Version: "v1.4.2", GoVersion: "1.26"})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"Check the inputs", "Check the Claude Code secret", "Make confinement work", "Check out"} {
		if stepReason(step) == "" || !strings.Contains(string(content), "      - name: "+step+"\n") {
			t.Errorf("step %q: reason %q, in the workflow: %v", step, stepReason(step), strings.Contains(string(content), step))
		}
	}
}
