package dashboard_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestEpicStoryOnGitHubActions: an epic's story dispatched to GitHub
// Actions from here links its Actions run, with its state as recorded, in
// the epic's table.
func TestEpicStoryOnGitHubActions(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	testkit.WriteFiles(t, root, map[string]string{
		".saga/epics/ghx/epic.json":       `{"id": "ghx", "title": "On Actions", "description": "", "children": [{"id": "ghx--a", "blockedBy": []}]}` + "\n",
		".saga/stories/ghx--a/story.json": `{"id": "ghx--a", "title": "A", "description": ""}` + "\n",
		".saga/stories/ghx--a/one.json":   task("one", "pending"),
	})
	testkit.InitRepo(t, root)
	session := "saga-story-ghx--a-1795760000000"
	events := filepath.Join(os.Getenv("SAGA_SESSION_DIR"), session+".log.events.jsonl")
	testkit.WriteFiles(t, filepath.Dir(events), map[string]string{filepath.Base(events): fmt.Sprintf(
		`{"time":"2026-11-27T07:00:00Z","story":"ghx--a","session":%q,"event":"dispatch","backend":"github","base":"main","runName":"saga story ghx--a run 1-a","root":%q,"actionsRun":42,"url":"https://github.com/acme/shop/actions/runs/42","status":"queued"}`+"\n", session, root)})
	t.Cleanup(func() { os.Remove(events) })
	s := serve(t, root)
	_, body := get(t, s.client(t), s.base+"/r/"+repoKeyOf(root)+"/epic/ghx", nil)
	if !strings.Contains(body, `href="https://github.com/acme/shop/actions/runs/42">GitHub Actions: dispatched</a>`) {
		t.Errorf("the epic page does not link the Actions run:\n%s", body)
	}
}
