//go:build unix

package lsp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/store"
)

// TestExecuteCommandCreate: createStory, createTask and createEpic write
// valid files through package commands, take object or positional
// arguments, and ask the client to show the new file.
func TestExecuteCommandCreate(t *testing.T) {
	root := liveTestdata(t)
	c := startLive(t, root)
	cases := []struct {
		command string
		args    any
		want    string // the created file
	}{
		{"saga.createEpic", []any{"billing", "Billing"}, ".saga/epics/billing/epic.json"},
		{"saga.createStory", []any{map[string]any{"name": "invoices", "epic": "billing", "title": "Send invoices"}}, ".saga/stories/billing--invoices/story.json"},
		{"saga.createStory", []any{"standalone-fix"}, ".saga/stories/standalone-fix/story.json"},
		{"saga.createTask", []any{"billing--invoices", "render-pdf", "Render the PDF"}, ".saga/stories/billing--invoices/render-pdf.json"},
		{"saga.createTask", []any{map[string]any{"story": "billing--invoices", "id": "email-it", "blockedBy": []string{"render-pdf"}, "priority": "high"}}, ".saga/stories/billing--invoices/email-it.json"},
	}
	for _, tc := range cases {
		from := c.mark()
		m := c.execCommand(tc.command, tc.args)
		if m.Error != nil {
			t.Fatalf("%s %v: %d %s", tc.command, tc.args, m.Error.Code, m.Error.Message)
		}
		var res createResult
		json.Unmarshal(m.Result, &res)
		if len(res.Created) != 1 || res.Created[0] != tc.want || res.URI != c.uri(tc.want) {
			t.Errorf("%s: %s", tc.command, m.Result)
		}
		show, _ := c.waitFor(from, "window/showDocument", nil)
		if !strings.Contains(string(show.Params), c.uri(tc.want)) {
			t.Errorf("%s: showDocument %s", tc.command, show.Params)
		}
		// The new file is in the snapshot at once (lenses come from it).
		if !strings.HasSuffix(tc.want, "epic.json") && len(codeLenses(c, tc.want)) == 0 {
			t.Errorf("%s: no lens on the new %s", tc.command, tc.want)
		}
	}
	if got := lensTitles(codeLenses(c, ".saga/epics/billing/epic.json")); len(got) != 4 || got[1] != "0/1 stories done" || got[2] != "○ ready" {
		t.Errorf("the epic's lenses after the creates: %q", got)
	}
	// Valid files: no error-severity finding in the whole workspace.
	ws := workspace.Load(t, root)
	for _, d := range ws.Diagnostics() {
		if d.Severity == store.SeverityError {
			t.Errorf("after the creates: %s: %s [%s]", d.File, d.Message, d.Code)
		}
	}
	if !strings.Contains(testkit.FileText(filepath.Join(root, ".saga/epics/billing/epic.json")), `"billing--invoices"`) {
		t.Error("the epic does not list its new story")
	}
	if !strings.Contains(testkit.FileText(filepath.Join(root, ".saga/stories/standalone-fix/story.json")), `"Standalone fix"`) {
		t.Error("createStory without a title did not derive one")
	}
	// Mistakes are -32602 with what to do; failures -32803.
	for _, tc := range []struct {
		command string
		args    any
		code    int
		want    string
	}{
		{"saga.noSuchCommand", []any{}, codeInvalidParams, "unknown command"},
		{"saga.createTask", []any{}, codeInvalidParams, "missing arguments"},
		{"saga.createTask", []any{"ship-it", "Bad Id"}, codeInvalidParams, "invalid task id"},
		{"saga.createEpic", []any{"billing"}, codeRequestFailed, "already exists"},
		{"saga.runStory", []any{"No Such"}, codeInvalidParams, "invalid story name"},
		{"saga.runStory", []any{42}, codeInvalidParams, "must be a string"},
		{"saga.showPlan", []any{"nothing-here"}, codeInvalidParams, "nothing-here"},
		{"saga.showOutput", []any{"ship-it"}, codeRequestFailed, "no worker output"},
	} {
		m := c.execCommand(tc.command, tc.args)
		if m.Error == nil || m.Error.Code != tc.code || !strings.Contains(m.Error.Message, tc.want) {
			t.Errorf("%s %v: %+v, want code %d with %q", tc.command, tc.args, m.Error, tc.code, tc.want)
		}
	}
}

// TestExecuteCommandShowPlan: the plan of a story (from open buffers) is
// returned and shown with window/showMessage.
func TestExecuteCommandShowPlan(t *testing.T) {
	c := start(t)
	c.initialize(liveTestdata(t), "")
	from := c.mark()
	m := c.execCommand("saga.showPlan", []any{map[string]any{"story": "ship-it"}})
	if m.Error != nil {
		t.Fatal(m.Error.Message)
	}
	var res struct {
		Name, Title, Kind, Text string
		Plan                    struct {
			Waves     [][]string `json:"waves"`
			Completed []string   `json:"completed"`
		} `json:"plan"`
	}
	json.Unmarshal(m.Result, &res)
	if res.Name != "ship-it" || res.Kind != "story" || !slices.EqualFunc(res.Plan.Waves, [][]string{{"build"}, {"deploy"}}, slices.Equal) ||
		res.Plan.Completed == nil || !strings.Contains(res.Text, "build") {
		t.Errorf("showPlan %s", m.Result)
	}
	msg, _ := c.waitFor(from, "window/showMessage", nil)
	if !strings.Contains(string(msg.Params), "deploy") {
		t.Errorf("showMessage %s", msg.Params)
	}
}

// TestCommandPrefix: the commands and the lenses follow the client's prefix.
func TestCommandPrefix(t *testing.T) {
	c := start(t)
	c.t.Helper()
	c.root = liveTestdata(t)
	var res struct {
		Capabilities struct {
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
		} `json:"capabilities"`
	}
	c.result("initialize", fmt.Sprintf(`{"processId":null,"rootUri":%q,"capabilities":{},"initializationOptions":{"commandPrefix":"w2.saga."}}`, c.uri("")), &res)
	c.notify("initialized", `{}`)
	c.waitLoaded()
	want := []string{"w2.saga.runStory", "w2.saga.stopStory", "w2.saga.createStory", "w2.saga.createTask", "w2.saga.createEpic", "w2.saga.showPlan", "w2.saga.showOutput",
		"w2.saga.runEpic", "w2.saga.stopEpic", "w2.saga.reviewStory", "w2.saga.addressReview", "w2.saga.addReviewComment", "w2.saga.openDashboard",
		"w2.saga.land", "w2.saga.resolveConflict"}
	if !slices.Equal(res.Capabilities.ExecuteCommandProvider.Commands, want) {
		t.Errorf("commands %v", res.Capabilities.ExecuteCommandProvider.Commands)
	}
	ls := codeLenses(c, ".saga/stories/ship-it/story.json")
	if len(ls) == 0 || ls[0].Command == nil || ls[0].Command.Command == nil || *ls[0].Command.Command != "w2.saga.runStory" {
		t.Errorf("lens %+v", ls)
	}
	if m := c.execCommand("saga.showPlan", []any{"ship-it"}); m.Error == nil {
		t.Error("the default prefix still runs a command")
	}
	if m := c.execCommand("w2.saga.showPlan", []any{"ship-it"}); m.Error != nil {
		t.Error(m.Error.Message)
	}
}
