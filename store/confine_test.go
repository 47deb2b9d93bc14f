//go:build unix

package store_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/store"
)

// outsideTree makes a folder outside any workspace holding valid SAGA
// files whose text carries SECRET, and returns its path.
func outsideTree(t *testing.T) string {
	t.Helper()
	out := t.TempDir()
	task := `{"id": "t", "subject": "SECRET", "description": "", "status": "pending", "blockedBy": []}`
	for rel, data := range map[string]string{
		"stories/evil/story.json":       `{"id": "evil", "title": "SECRET", "description": ""}`,
		"stories/evil/t.json":           task,
		"secret.json":                   task,
		"epic.json":                     `{"id": "e", "title": "SECRET", "description": "", "children": []}`,
		"epicdir/epic.json":             `{"id": "e", "title": "SECRET", "description": "", "children": []}`,
		".saga/stories/evil/story.json": `{"id": "evil", "title": "SECRET", "description": ""}`,
	} {
		write(t, filepath.Join(out, rel), data)
	}
	return out
}

func link(t *testing.T, target, at string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, at); err != nil {
		t.Fatal(err)
	}
}

// TestLoadNeverReadsOutside (attack 17): a story folder, a task, an epic,
// the stories or epics folder, a worktree copy — each a symbolic link out
// of the workspace — is one unreadable-file diagnostic naming the link and
// what to do; nothing behind it is parsed.
func TestLoadNeverReadsOutside(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, root, out string)
		file string // where the diagnostic is
	}{
		{"story folder to /", func(t *testing.T, root, out string) {
			link(t, "/", filepath.Join(root, ".saga/stories/x"))
		}, ".saga/stories/x"},
		{"story folder to a folder of stories", func(t *testing.T, root, out string) {
			link(t, filepath.Join(out, "stories/evil"), filepath.Join(root, ".saga/stories/evil"))
		}, ".saga/stories/evil"},
		{"story folder, relative link climbing out", func(t *testing.T, root, out string) {
			rel, err := filepath.Rel(filepath.Join(root, ".saga/stories"), filepath.Join(out, "stories/evil"))
			if err != nil {
				t.Fatal(err)
			}
			link(t, rel, filepath.Join(root, ".saga/stories/evil"))
		}, ".saga/stories/evil"},
		{"task file", func(t *testing.T, root, out string) {
			link(t, filepath.Join(out, "secret.json"), filepath.Join(root, ".saga/stories/s/leak.json"))
		}, ".saga/stories/s/leak.json"},
		{"epic file", func(t *testing.T, root, out string) {
			link(t, filepath.Join(out, "epic.json"), filepath.Join(root, ".saga/epics/e.json"))
		}, ".saga/epics/e.json"},
		{"epic folder", func(t *testing.T, root, out string) {
			link(t, filepath.Join(out, "epicdir"), filepath.Join(root, ".saga/epics/e"))
		}, ".saga/epics/e"},
		{"the stories folder", func(t *testing.T, root, out string) {
			os.RemoveAll(filepath.Join(root, ".saga/stories"))
			link(t, filepath.Join(out, "stories"), filepath.Join(root, ".saga/stories"))
		}, ".saga/stories"},
		{"a worktree's copy", func(t *testing.T, root, out string) {
			link(t, filepath.Join(out, "stories/evil"), filepath.Join(root, ".saga/worktrees/evil/.saga/stories/evil"))
		}, ".saga/worktrees/evil/.saga/stories/evil"},
		{"a worktree's .saga", func(t *testing.T, root, out string) {
			link(t, filepath.Join(out, ".saga"), filepath.Join(root, ".saga/worktrees/evil/.saga"))
		}, ".saga/worktrees/evil/.saga/stories/evil"},
		{"a worktree", func(t *testing.T, root, out string) {
			link(t, out, filepath.Join(root, ".saga/worktrees/evil"))
		}, ".saga/worktrees/evil/.saga/stories/evil"},
		{"a worktree's stories folder", func(t *testing.T, root, out string) {
			link(t, filepath.Join(out, "stories"), filepath.Join(root, ".saga/worktrees/evil/.saga/stories"))
		}, ".saga/worktrees/evil/.saga/stories/evil"},
	}
	p := workspace.Parser(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, out := t.TempDir(), outsideTree(t)
			write(t, filepath.Join(root, ".saga/stories/s/story.json"), `{"id": "s", "title": "S", "description": ""}`)
			tt.make(t, root, out)
			ws, err := p.Load(root)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			found := false
			for _, d := range ws.Diagnostics() {
				if d.File == tt.file && d.Code == store.CodeUnreadableFile &&
					strings.Contains(d.Message, "outside the workspace") && strings.Contains(d.Message, "remove the link") {
					found = true
				}
				if strings.Contains(d.Message, "SECRET") {
					t.Errorf("a diagnostic quotes a file outside: %s", d.Message)
				}
			}
			if !found {
				t.Errorf("no unreadable-file on %s saying it leads outside:\n%s", tt.file, dump(ws))
			}
			for _, f := range ws.Files() {
				if bytes.Contains(f.Src, []byte("SECRET")) {
					t.Errorf("%s was read from outside the workspace", f.Rel)
				}
			}
			if ws.Story("evil") != nil && ws.Story("evil").Title == "SECRET" {
				t.Error("story evil was loaded from outside")
			}
		})
	}
}

// LoadStory (the worker's, status's reader of one story) opens the folder
// and checks what it opened: a story folder that is a link out of the
// workspace gives its story.json an unreadable-file diagnostic, and none of
// its files.
func TestLoadStoryNeverReadsOutside(t *testing.T) {
	root, out := t.TempDir(), outsideTree(t)
	write(t, filepath.Join(root, ".saga/stories/s/story.json"), `{"id": "s", "title": "S", "description": ""}`)
	link(t, filepath.Join(out, "stories/evil"), filepath.Join(root, ".saga/stories/evil"))
	s, err := workspace.Parser(t).LoadStory(root, "evil")
	if err != nil {
		t.Fatal(err)
	}
	if s.Title == "SECRET" || len(s.Tasks) != 0 {
		t.Fatalf("story read from outside: %+v", s)
	}
	f := s.File
	if f == nil || f.ReadErr == "" || !strings.Contains(f.ReadErr, "outside the workspace") {
		t.Fatalf("story.json: %+v", f)
	}
}

// A link that stays inside the workspace is followed: a story kept
// elsewhere in the repository loads as before.
func TestLoadFollowsLinksInside(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "docs/kept/story.json"), `{"id": "kept", "title": "Kept", "description": ""}`)
	write(t, filepath.Join(root, "docs/kept/t.json"), `{"id": "t", "subject": "T", "description": "", "status": "pending", "blockedBy": []}`)
	write(t, filepath.Join(root, "docs/task.json"), `{"id": "u", "subject": "U", "description": "", "status": "pending", "blockedBy": []}`)
	link(t, "../../docs/kept", filepath.Join(root, ".saga/stories/kept"))
	link(t, filepath.Join(root, "docs/task.json"), filepath.Join(root, "docs/kept/u.json"))
	ws, err := workspace.Parser(t).Load(root)
	if err != nil {
		t.Fatal(err)
	}
	s := ws.Story("kept")
	if s == nil || s.Title != "Kept" || len(s.Tasks) != 2 {
		t.Fatalf("story kept: %+v\n%s", s, dump(ws))
	}
	if ds := ws.Diagnostics(); len(ds) != 0 {
		t.Errorf("diagnostics: %s", dump(ws))
	}
}

// ReadWorkspaceFile (the server's re-read of a changed file, a blocker's
// journal for a handoff) refuses a file reached through a link out of the
// workspace, wherever the link is along its path.
func TestReadWorkspaceFileConfined(t *testing.T) {
	root, out := t.TempDir(), outsideTree(t)
	write(t, filepath.Join(root, ".saga/stories/s/story.json"), `{"id": "s", "title": "S", "description": ""}`)
	link(t, filepath.Join(out, "secret.json"), filepath.Join(root, ".saga/stories/s/leak.json"))
	link(t, filepath.Join(out, "stories/evil"), filepath.Join(root, ".saga/stories/evil"))
	for _, rel := range []string{".saga/stories/s/leak.json", ".saga/stories/evil/t.json", ".saga/stories/evil/story.json"} {
		src, why := filesafe.ReadWorkspaceFile(root, rel)
		if src != nil || !strings.Contains(why, "outside the workspace") {
			t.Errorf("%s: %q, %q", rel, src, why)
		}
	}
	if src, why := filesafe.ReadWorkspaceFile(root, ".saga/stories/s/story.json"); why != "" || !bytes.Contains(src, []byte(`"S"`)) {
		t.Errorf("story.json: %q, %q", src, why)
	}
}

// A .saga folder that is itself a link out of the workspace is refused as
// a whole, saying why.
func TestLoadRefusesSagaOutside(t *testing.T) {
	root, out := t.TempDir(), outsideTree(t)
	link(t, filepath.Join(out, ".saga"), filepath.Join(root, ".saga"))
	_, err := workspace.Parser(t).Load(root)
	if err == nil || !strings.Contains(err.Error(), ".saga is a symbolic link to") || !strings.Contains(err.Error(), "outside the workspace") {
		t.Fatalf("Load: %v", err)
	}
}
