package store

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadStoryBrief: tasks in their display order (t2 before t10),
// broken files marked, and a story folder or task file that leads out of
// the workspace never read.
func TestReadStoryBrief(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".saga", "stories", "s")
	outside := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "story.json"), `{"id": "s", "title": "S", "status": "in_progress"}`)
	write(filepath.Join(dir, "t10.json"), `{"id": "t10", "subject": "Ten", "status": "pending", "blockedBy": ["t2"]}`)
	write(filepath.Join(dir, "t2.json"), `{"id": "t2", "subject": "Two", "status": "completed"}`)
	write(filepath.Join(dir, "bad.json"), `{"id": "bad",`)
	write(filepath.Join(outside, "secret.json"), `{"id": "secret", "subject": "SECRET", "status": "pending"}`)
	if err := os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(dir, "leak.json")); err != nil {
		t.Fatal(err)
	}

	b, err := ReadStoryBrief(root, "s")
	if err != nil {
		t.Fatal(err)
	}
	if b.Title != "S" || b.Status != "in_progress" || b.Broken {
		t.Errorf("story: %+v", b)
	}
	var ids []string
	for _, tk := range b.Tasks {
		ids = append(ids, tk.ID)
		if tk.Subject == "SECRET" {
			t.Errorf("a task file linked out of the workspace was read: %+v", tk)
		}
	}
	if want := []string{"bad", "leak", "t2", "t10"}; !equalStrings(ids, want) {
		t.Errorf("tasks %v, want %v", ids, want)
	}
	for _, tk := range b.Tasks {
		if (tk.ID == "bad" || tk.ID == "leak") != tk.Broken {
			t.Errorf("task %s broken=%v", tk.ID, tk.Broken)
		}
	}

	// A story folder that is a link out of the workspace is refused whole.
	if err := os.MkdirAll(filepath.Join(outside, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(outside, "x", "story.json"), `{"id": "x", "title": "OUTSIDE"}`)
	if err := os.Symlink(filepath.Join(outside, "x"), filepath.Join(root, ".saga", "stories", "x")); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadStoryBrief(root, "x"); err == nil {
		t.Errorf("a story folder linked out of the workspace was read: %+v", b)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
