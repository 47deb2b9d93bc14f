//go:build unix

package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// reviewWorkspace is testdata/review.txtar in a git repository, its story
// completed with a PR, as its run record says.
func reviewWorkspace(t *testing.T) string {
	t.Helper()
	t.Setenv("SAGA_SESSION_DIR", filepath.Join(t.TempDir(), "sessions"))
	root := archiveWorkspace(t, "testdata/review.txtar")
	testkit.Git(t, root, "init", "-q", "-b", "main")
	testkit.Git(t, root, "add", "-A")
	testkit.Git(t, root, "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", "cart")
	if err := runs.WriteRecord(root, runs.Record{Story: "cart", Session: "saga-story-cart-1", Status: runs.StatusCompleted, Ended: time.Now(),
		PR: "https://github.com/acme/shop/pull/7", PRState: runs.PROpen}); err != nil {
		t.Fatal(err)
	}
	return root
}

// The lens renders the recorded review: "Address review (n)" running
// saga.addressReview beside "Review story" while requests wait; once the
// loop needs its person, "needs you: …" once and the review alone.
func TestCodeLensReview(t *testing.T) {
	root := reviewWorkspace(t)
	c := startOn(t, root, "")
	lenses := func() string {
		t.Helper()
		var got []gotCodeLens
		c.result("textDocument/codeLens", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, c.uri(".saga/stories/cart/story.json")), &got)
		b, _ := json.Marshal(got)
		return string(b)
	}
	before := lenses()
	if strings.Contains(before, "Address review") || strings.Contains(before, "review: ") || !strings.Contains(before, `"title":"Review story"`) {
		t.Errorf("before any review is recorded: %s", before)
	}
	if err := runs.UpdateReview(root, "cart", func(r *runs.ReviewRecord) {
		r.Rounds, r.Requests, r.ChangesRequested = 1, 3, 2
		r.Ignored = runs.ReviewIgnored{Bots: 1}
	}); err != nil {
		t.Fatal(err)
	}
	got := lenses()
	for _, want := range []string{
		`"title":"Address review (3)","command":"saga.addressReview","arguments":[{"story":"cart"}]`,
		`"title":"Review story","command":"saga.reviewStory"`,
		"review: changes requested (2) · 3 to address · 1 ignored (bots 1, non-writers 0, hidden 0) · round 1",
		"next: address its review (3): `saga-lsp run cart --review`",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lens without %s: %s", want, got)
		}
	}
	if err := runs.UpdateReview(root, "cart", func(r *runs.ReviewRecord) { r.NeedsYou = "a round made no progress" }); err != nil {
		t.Fatal(err)
	}
	got = lenses()
	if strings.Contains(got, "Address review") || strings.Count(got, "needs you: a round made no progress") != 1 || !strings.Contains(got, `"title":"Review story"`) {
		t.Errorf("needs you: %s", got)
	}
}

// saga.addReviewComment writes the comment as a review task of the story
// (kind editor, schema-valid); the same comment twice is one task, as
// positional arguments too; saga.addressReview is declared and checks its
// arguments as runStory does.
func TestReviewCommands(t *testing.T) {
	root := reviewWorkspace(t)
	var init struct {
		Capabilities struct {
			ExecuteCommandProvider struct{ Commands []string } `json:"executeCommandProvider"`
		} `json:"capabilities"`
	}
	c := start(t)
	c.root = root
	c.result("initialize", fmt.Sprintf(`{"processId":null,"rootUri":%q,"capabilities":{}}`, c.uri("")), &init)
	c.notify("initialized", `{}`)
	c.waitLoaded()
	declared := strings.Join(init.Capabilities.ExecuteCommandProvider.Commands, " ")
	if !strings.Contains(declared, "saga.addressReview") || !strings.Contains(declared, "saga.addReviewComment") {
		t.Errorf("commands %s", declared)
	}
	type result struct {
		Task, File, Root string
		Created          bool
	}
	comment := func(args any) result {
		t.Helper()
		m := c.execCommand("saga.addReviewComment", args)
		if m.Error != nil {
			t.Fatalf("addReviewComment %v: %s", args, m.Error.Message)
		}
		var r result
		json.Unmarshal(m.Result, &r)
		return r
	}
	first := comment([]any{map[string]any{"story": "cart", "path": filepath.Join(root, "cart.go"), "line": 3, "body": "Why zero?", "author": "bob"}})
	if !first.Created || first.Root != root || first.File != store.TaskFileRel("cart", first.Task) {
		t.Errorf("the first comment: %+v", first)
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(first.File)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	f := p.Parse(first.File, data, 0)
	if f.Task == nil || len(f.Local) > 0 || f.Task.Review == nil || f.Task.Review.Kind != "editor" || f.Task.Review.Path != "cart.go" ||
		f.Task.Review.Line != 3 || !strings.Contains(f.Task.Description, "bob wrote") {
		t.Errorf("the task: %+v %v\n%s", f.Task, f.Local, data)
	}
	if again := comment([]any{"cart", "cart.go", "3", "Why zero?"}); again.Created || again.Task != first.Task {
		t.Errorf("the same comment again: %+v", again)
	}
	entries, _ := os.ReadDir(filepath.Join(root, ".saga/stories/cart"))
	if len(entries) != 3 { // story.json, build.json and the one review task
		t.Errorf("the story's folder holds %d files", len(entries))
	}
	for _, tc := range []struct {
		command string
		args    any
		want    string
	}{
		{"saga.addReviewComment", []any{map[string]any{"story": "cart", "body": " "}}, "empty comment"},
		{"saga.addReviewComment", []any{map[string]any{"story": "cart", "path": "../x", "body": "x"}}, "relative"},
		{"saga.addReviewComment", []any{"cart", "cart.go", "three", "x"}, "line number"},
		{"saga.addressReview", []any{}, "missing arguments"},
		{"saga.addressReview", []any{"No Such"}, "invalid story name"},
	} {
		if m := c.execCommand(tc.command, tc.args); m.Error == nil || m.Error.Code != codeInvalidParams || !strings.Contains(m.Error.Message, tc.want) {
			t.Errorf("%s %v: %+v, want %q", tc.command, tc.args, m.Error, tc.want)
		}
	}
}
