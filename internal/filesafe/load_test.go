//go:build unix

package filesafe_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/store"
)

// The tests here load a workspace with store, which imports this package:
// an external test package, whose loader the storm test reaches through
// filesafe.LoadTaskCount (export_test.go).
func init() {
	filesafe.LoadTaskCount = func(t *testing.T, root, story string) int {
		st := loadIgnoringTemps(t, root).Story(story)
		if st == nil {
			return -1
		}
		return len(st.Tasks)
	}
}

// TestStaleTempRemovedByLoad: a temp file a killed writer left in a story
// folder is never a task nor a diagnostic, and the next load removes it; a
// live writer's stays.
func TestStaleTempRemovedByLoad(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".saga", "stories", "s")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	task := filepath.Join(dir, "a.json")
	if err := os.WriteFile(task, []byte(`{"id": "a", "subject": "A", "description": "", "status": "pending", "blockedBy": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	killed := testkit.HelperCmd("temp", task)
	dead := filesafe.StartHelperLine(t, killed)
	_ = killed.Process.Kill()
	_ = killed.Wait()
	live := filesafe.StartHelperLine(t, testkit.HelperCmd("temp", filepath.Join(dir, "b.json")))

	ws := loadIgnoringTemps(t, root)
	if st := ws.Story("s"); st == nil || len(st.Tasks) != 1 || st.Tasks[0].ID != "a" {
		t.Fatalf("story s: %+v", st)
	}
	if _, err := os.Lstat(filepath.Join(dir, dead)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed writer's %s is still there (%v)", dead, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, live)); err != nil {
		t.Errorf("the live writer's %s was removed: %v", live, err)
	}
}

// loadIgnoringTemps loads root and fails when a temp file of an atomic
// write got a diagnostic (the loader must never see one).
func loadIgnoringTemps(t *testing.T, root string) *store.Workspace {
	t.Helper()
	p, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	ws, err := p.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ws.Diagnostics() {
		if strings.Contains(d.File, ".tmp-") {
			t.Errorf("a temp file got a diagnostic: %s: %s", d.File, d.Message)
		}
	}
	return ws
}
