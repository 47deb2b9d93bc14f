package dashboard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestLocalNeverReadsThroughLinksOut: a task file replaced by a link to a
// file outside the workspace is an unreadable-file finding in the
// dashboard's snapshot, as in the language server's (the dashboard used to
// read it through the link: one funnel now, workspace.Service).
func TestLocalNeverReadsThroughLinksOut(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "t.json"), []byte(`{"id": "write-tests", "subject": "SECRET", "description": "", "status": "pending", "blockedBy": []}`), 0o644)
	l, err := OpenLocal(root, LocalOptions{Env: func(k string) string {
		if k == "SAGA_SESSION_DIR" {
			return filepath.Join(root, "sessions")
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	changed := make(chan Change, 64)
	l.Source().Bind(func(c Change) { changed <- c })

	rel := ".saga/stories/add-logout-button/write-tests.json"
	task := filepath.Join(root, filepath.FromSlash(rel))
	os.Remove(task)
	if err := os.Symlink(filepath.Join(out, "t.json"), task); err != nil {
		t.Fatal(err)
	}
	// Until the file is read again: refused, or (the bug) read through.
	for {
		f := l.Workspace().File(rel)
		if f != nil && strings.Contains(string(f.Src), "SECRET") {
			t.Fatalf("%s read through a link out of the workspace", rel)
		}
		if f != nil && f.ReadErr != "" {
			if !strings.Contains(f.ReadErr, "outside the workspace") {
				t.Fatalf("refused for %q", f.ReadErr)
			}
			break
		}
		<-changed
	}
	for _, f := range l.Workspace().Files() {
		if strings.Contains(string(f.Src), "SECRET") {
			t.Errorf("%s read through a link out of the workspace", f.Rel)
		}
	}
}
