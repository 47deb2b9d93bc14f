package control_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
)

// TestForeseeConflicts: b's branch merged in memory with its siblings'
// (docs/landing.md#conflicts-foreseen). c, a sibling, conflicts in
// shared.go: named with the file; a, b's blocker, conflicts too but holds
// b's base, so it is no sibling; d has no branch; want narrows the
// siblings; a story without a branch foresees nothing. The branches are
// listed once, not asked about sibling by sibling.
func TestForeseeConflicts(t *testing.T) {
	root := t.TempDir()
	story := func(id string) string { return `{"id": "` + id + `", "title": "T", "description": "", "epic": "shop"}` }
	task := `{"id": "t", "subject": "s", "description": "", "status": "pending", "blockedBy": []}`
	files := map[string]string{
		".saga/epics/shop.json": `{"id": "shop", "title": "Shop", "description": "", "children": [
  {"id": "a", "blockedBy": []}, {"id": "b", "blockedBy": ["a"]}, {"id": "c", "blockedBy": []}, {"id": "d", "blockedBy": []}]}`,
		"shared.go": "package shop\n",
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		files[".saga/stories/"+id+"/story.json"] = story(id)
		files[".saga/stories/"+id+"/t.json"] = task
	}
	testkit.WriteFiles(t, root, files)
	testkit.InitRepo(t, root)
	commit := func(branch, text string) {
		t.Helper()
		testkit.Git(t, root, "checkout", "-q", "-B", runs.StoryBranch(branch), "main")
		if err := os.WriteFile(filepath.Join(root, "shared.go"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		testkit.Git(t, root, "commit", "-qam", branch)
	}
	commit("a", "package shop // a\n")
	commit("b", "package shop // b\n")
	commit("c", "package shop // c\n")
	testkit.Git(t, root, "checkout", "-q", "main")
	ws, err := workspace.Parser(t).Load(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	calls := testkit.GitCalls(t)
	got := control.ForeseeConflicts(ctx, root, ws, "b", nil)
	// The branches listed once, not a process a sibling asked about.
	for _, c := range calls() {
		if c[0] != "for-each-ref" && c[0] != "merge-tree" {
			t.Errorf("foreseeing asked git %v", c)
		}
	}
	if want := []runs.Foreseen{{With: "c", Files: []string{"shared.go"}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("b foresees %+v, want %+v", got, want)
	}
	if got[0].String() != "conflict with c: shared.go" {
		t.Errorf("String() = %q", got[0].String())
	}
	if got := control.ForeseeConflicts(ctx, root, ws, "b", func(s string) bool { return s != "c" }); len(got) != 0 {
		t.Errorf("b without c foresees %+v, want nothing", got)
	}
	if got := control.ForeseeConflicts(ctx, root, ws, "d", nil); len(got) != 0 {
		t.Errorf("d, without a branch, foresees %+v", got)
	}
}
