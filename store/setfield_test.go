package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/store"
)

// statusWriters are the two ways to write a task's status: the durable one
// and the hook's mirror without fsyncs, which must refuse all the same.
var statusWriters = map[string]func(ctx context.Context, root, story, task, status string) (bool, error){
	"SetTaskStatus":    store.SetTaskStatus,
	"MirrorTaskStatus": store.MirrorTaskStatus,
}

// Names and statuses are checked before any path is built.
func TestSetTaskStatusRefusesBadNames(t *testing.T) {
	for name, set := range statusWriters {
		for _, c := range [][3]string{{"../x", "1", "completed"}, {"s", "../x", "completed"}, {"s", "1", "deleted"}} {
			if _, err := set(context.Background(), "/nonexistent", c[0], c[1], c[2]); err == nil || strings.Contains(err.Error(), "nonexistent") {
				t.Errorf("%s%q = %v, want a name error", name, c, err)
			}
		}
	}
}

func storyRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for rel, text := range map[string]string{
		".saga/stories/st/story.json": `{"id":"st","title":"S","description":"d"}` + "\n",
		".saga/stories/st/t1.json":    "{\n  \"id\": \"t1\",\n  \"subject\": \"x\",\n  \"description\": \"\",\n  \"status\": \"pending\",\n  \"blockedBy\": []\n}\n",
		".saga/stories/other/t1.json": "{\n  \"id\": \"t1\",\n  \"status\": \"pending\"\n}\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestSetTaskStatusChangesOnlyTheValue(t *testing.T) {
	for name, set := range statusWriters {
		t.Run(name, func(t *testing.T) {
			root := storyRoot(t)
			changed, err := set(context.Background(), root, "st", "t1", "completed")
			if err != nil || !changed {
				t.Fatalf("%s = %v, %v", name, changed, err)
			}
			got, _ := os.ReadFile(filepath.Join(root, ".saga/stories/st/t1.json"))
			want := "{\n  \"id\": \"t1\",\n  \"subject\": \"x\",\n  \"description\": \"\",\n  \"status\": \"completed\",\n  \"blockedBy\": []\n}\n"
			if string(got) != want {
				t.Errorf("file:\n%s\nwant:\n%s", got, want)
			}
			if changed, err := set(context.Background(), root, "st", "t1", "completed"); err != nil || changed {
				t.Errorf("second %s = %v, %v; want unchanged", name, changed, err)
			}
			if _, err := set(context.Background(), root, "st", "nope", "completed"); !errors.Is(err, store.ErrNoFile) {
				t.Errorf("missing task: %v, want ErrNoFile", err)
			}
		})
	}
}

// A story folder that is a link to another story's folder is refused: the
// write would land in the other story.
func TestSetTaskStatusRefusesLinkedStoryFolder(t *testing.T) {
	for name, set := range statusWriters {
		t.Run(name, func(t *testing.T) {
			root := storyRoot(t)
			link := filepath.Join(root, ".saga/stories/linked")
			if err := os.Symlink(filepath.Join(root, ".saga/stories/other"), link); err != nil {
				t.Fatal(err)
			}
			_, err := set(context.Background(), root, "linked", "t1", "completed")
			if err == nil || !strings.Contains(err.Error(), "outside story linked's own folder") {
				t.Fatalf("err = %v, want a refusal", err)
			}
			got, _ := os.ReadFile(filepath.Join(root, ".saga/stories/other/t1.json"))
			if strings.Contains(string(got), "completed") {
				t.Errorf("the other story's task was written:\n%s", got)
			}
		})
	}
}

// SetStoryField with onlyIfPresent never adds a member (upstream's strict
// story object rejects a status it did not write).
func TestSetStoryFieldOnlyIfPresent(t *testing.T) {
	root := storyRoot(t)
	if changed, err := store.SetStoryField(context.Background(), root, "st", "status", "in_progress", true); err != nil || changed {
		t.Fatalf("SetStoryField = %v, %v; want unchanged", changed, err)
	}
	if changed, err := store.SetStoryField(context.Background(), root, "st", "branch", "story/st", false); err != nil || !changed {
		t.Fatalf("SetStoryField branch = %v, %v", changed, err)
	}
	got, _ := os.ReadFile(filepath.Join(root, ".saga/stories/st/story.json"))
	if strings.Contains(string(got), "status") || !strings.Contains(string(got), `,"branch":"story/st"}`) {
		t.Errorf("story.json:\n%s", got)
	}
	// A status the file has is kept up to date.
	path := filepath.Join(root, ".saga/stories/st/story.json")
	if err := os.WriteFile(path, []byte("{\n  \"id\": \"st\",\n  \"status\": \"pending\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, err := store.SetStoryField(context.Background(), root, "st", "status", "completed", true); err != nil || !changed {
		t.Fatalf("SetStoryField status = %v, %v", changed, err)
	}
	if got, _ := os.ReadFile(path); string(got) != "{\n  \"id\": \"st\",\n  \"status\": \"completed\"\n}\n" {
		t.Errorf("story.json with a status:\n%s", got)
	}
}

// Issue 32: the hook's status write in a worktree whose .saga or
// .saga/stories its agent made a link out of it (absolute, relative, a
// link to a link) is refused, and nothing outside changes — the story's
// folder there passes the old check (it is the real folder of the linked
// stories folder).
func TestSetTaskStatusNeverWritesThroughALinkOut(t *testing.T) {
	for _, c := range []struct{ at, how, writer string }{
		{".saga/stories", "absolute", "SetTaskStatus"}, {".saga/stories", "relative", "SetTaskStatus"}, {".saga/stories", "link to a link", "SetTaskStatus"}, {".saga", "relative", "SetTaskStatus"},
		{".saga/stories", "absolute", "MirrorTaskStatus"}, {".saga", "relative", "MirrorTaskStatus"},
	} {
		t.Run(c.writer+" "+c.at+" "+c.how, func(t *testing.T) {
			root, outside := storyRoot(t), t.TempDir()
			at := filepath.Join(root, filepath.FromSlash(c.at))
			if err := os.Rename(at, filepath.Join(outside, "moved")); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(outside, "moved")
			switch c.how {
			case "relative":
				target, _ = filepath.Rel(filepath.Dir(at), target)
			case "link to a link":
				os.Symlink(target, filepath.Join(root, "hop"))
				target, _ = filepath.Rel(filepath.Dir(at), filepath.Join(root, "hop"))
			}
			if err := os.Symlink(target, at); err != nil {
				t.Fatal(err)
			}
			before := testkit.TreeSnapshot(t, outside)
			changed, err := statusWriters[c.writer](context.Background(), root, "st", "t1", store.StatusCompleted)
			if after := testkit.TreeSnapshot(t, outside); after != before {
				t.Fatalf("written outside the worktree (changed %v, err %v):\n%s", changed, err, after)
			}
			if err == nil {
				t.Fatal("the write through the link was not refused")
			}
		})
	}
}
