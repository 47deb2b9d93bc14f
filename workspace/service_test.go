package workspace_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/store"
	"github.com/saga-ai/saga-lsp/workspace"
)

// open starts a service that keeps its snapshot and watches, and returns
// it with a channel of the changes it applied.
func open(t *testing.T, root string) (*workspace.Service, chan workspace.Change) {
	t.Helper()
	p, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	changes := make(chan workspace.Change, 64)
	s := workspace.Open(root, workspace.Options{Parser: p, Watch: true,
		Changed: func(c workspace.Change, _ []string) { changes <- c }})
	t.Cleanup(s.Close)
	if _, err := s.Load(); err != nil {
		t.Fatal(err)
	}
	return s, changes
}

// until waits for a change applied that makes ok true of the snapshot.
func until(t *testing.T, s *workspace.Service, changes chan workspace.Change, ok func(*store.Workspace) bool) {
	t.Helper()
	for !ok(s.Workspace()) {
		<-changes
	}
}

// TestFunnelNeverFollowsLinksOut: a task file and a story folder each
// replaced by a link out of the workspace are one unreadable-file finding
// each; nothing behind them is read — the rule the language server and
// the dashboard now share (the dashboard read a file through such a link).
func TestFunnelNeverFollowsLinksOut(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	out := t.TempDir()
	secret := `{"id": "write-tests", "subject": "SECRET", "description": "", "status": "pending", "blockedBy": []}`
	os.WriteFile(filepath.Join(out, "t.json"), []byte(secret), 0o644)
	os.WriteFile(filepath.Join(out, "story.json"), []byte(`{"id": "evil", "title": "SECRET", "description": ""}`), 0o644)
	s, changes := open(t, root)

	task := filepath.Join(root, ".saga/stories/add-logout-button/write-tests.json")
	os.Remove(task)
	if err := os.Symlink(filepath.Join(out, "t.json"), task); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(root, ".saga/stories/evil")); err != nil {
		t.Fatal(err)
	}
	unreadable := func(ws *store.Workspace, rel string) bool {
		f := ws.File(rel)
		return f != nil && f.ReadErr != "" && strings.Contains(f.ReadErr, "outside the workspace")
	}
	until(t, s, changes, func(ws *store.Workspace) bool {
		return unreadable(ws, ".saga/stories/add-logout-button/write-tests.json") && unreadable(ws, ".saga/stories/evil")
	})
	for _, f := range s.Workspace().Files() {
		if strings.Contains(string(f.Src), "SECRET") {
			t.Errorf("%s read from outside the workspace", f.Rel)
		}
	}
	// The link gone, the finding goes; a real file is read again.
	os.Remove(filepath.Join(root, ".saga/stories/evil"))
	until(t, s, changes, func(ws *store.Workspace) bool { return ws.File(".saga/stories/evil") == nil })
}

// TestFunnelApply: a face that keeps its own snapshot gets the files read
// and gone, with what it holds itself (Skip) left out.
func TestFunnelApply(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	p, _ := store.NewParser()
	base, err := p.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	var got workspace.Change
	held := ".saga/stories/add-logout-button/story.json"
	s := workspace.Open(root, workspace.Options{Parser: p,
		Base:  func() *store.Workspace { return base },
		Skip:  func(rel string) bool { return rel == held },
		Apply: func(c workspace.Change) { got = c }})
	defer s.Close()
	dir := filepath.Join(root, ".saga/stories/add-logout-button")
	os.Remove(filepath.Join(dir, "write-tests.json"))
	s.DidModifyFiles([]string{dir})
	var read []string
	for _, f := range got.Changed {
		read = append(read, f.Rel)
	}
	if slices.Contains(read, held) {
		t.Errorf("a file the face holds was read: %v", read)
	}
	if len(read) == 0 {
		t.Errorf("nothing of the folder read again")
	}
	if !slices.Equal(got.Removed, []string{".saga/stories/add-logout-button/write-tests.json"}) {
		t.Errorf("removed %v", got.Removed)
	}
}
