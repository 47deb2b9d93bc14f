package store_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/store"
)

// TestBroken: which task files plan and status must not present as tasks.
func TestBroken(t *testing.T) {
	p := workspace.Parser(t)
	valid := `{"id": "t", "subject": "s", "description": "", "status": "pending", "blockedBy": []}`
	tests := []struct {
		name string
		src  []byte
		code store.Code // "" when not broken
	}{
		{"valid", []byte(valid), ""},
		{"empty", nil, store.CodeJSONSyntax},
		{"unparsable", []byte(`{"id": "t" "subject": "s"}`), store.CodeJSONSyntax},
		{"schema-invalid", bytes.Replace([]byte(valid), []byte(`"pending"`), []byte(`"done"`), 1), store.CodeSchema},
		{"over-size", append([]byte(valid), bytes.Repeat([]byte(" "), filesafe.MaxFileSize)...), store.CodeUnreadableFile},
		{"binary", []byte("{\x00}"), store.CodeUnreadableFile},
		// A name problem is a finding, but the content is still a task.
		{"id mismatch", bytes.Replace([]byte(valid), []byte(`"id": "t"`), []byte(`"id": "u"`), 1), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, broken := p.Parse(".saga/stories/s/t.json", tt.src, -1).Broken()
			if broken != (tt.code != "") || d.Code != tt.code {
				t.Errorf("Broken() = %v %q, want %q", broken, d.Code, tt.code)
			}
		})
	}
}

// TestStoryPaths: a story's paths are the union of its copies' — a
// worktree copy being checked out (its story.json before its tasks), or
// edited by its agent, never takes the main copy's paths away.
func TestStoryPaths(t *testing.T) {
	task := func(paths string) string {
		return `{"id": "t", "subject": "s", "description": "", "status": "pending", "blockedBy": [], "paths": ` + paths + `}`
	}
	root := t.TempDir()
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/a/story.json":                   `{"id": "a", "title": "A", "description": ""}`,
		".saga/stories/a/t.json":                       task(`["api/**"]`),
		".saga/worktrees/a/.saga/stories/a/story.json": `{"id": "a", "title": "A", "description": ""}`,
		".saga/worktrees/a/.saga/stories/a/u.json":     strings.Replace(task(`["web/**"]`), `"t"`, `"u"`, 1),
		".saga/worktrees/b/.saga/stories/b/story.json": `{"id": "b", "title": "B", "description": ""}`,
		".saga/stories/b/story.json":                   `{"id": "b", "title": "B", "description": ""}`,
		".saga/stories/b/t.json":                       task(`["docs/**", "docs/**"]`),
	})
	ws, err := workspace.Parser(t).Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := ws.StoryPaths("a"); !slices.Equal(got, []string{"api/**", "web/**"}) {
		t.Errorf("a's paths = %q, want both copies'", got)
	}
	if got := ws.StoryPaths("b"); !slices.Equal(got, []string{"docs/**"}) {
		t.Errorf("b's paths = %q, want the main copy's, once", got)
	}
}

// TestNameOnDiskAgreesWithResolveName: where the files settle a name
// without a load, the answer is the loaded workspace's; everywhere else
// NameOnDisk leaves it to ResolveName.
func TestNameOnDiskAgreesWithResolveName(t *testing.T) {
	story := `{"id": "x", "title": "X", "description": ""}`
	epic := `{"id": "x", "title": "X", "description": "", "children": []}`
	layouts := []struct {
		name  string
		files map[string]string
		want  map[store.NameKind]bool // the wants NameOnDisk answers
	}{
		{"a story", map[string]string{".saga/stories/x/story.json": story},
			map[store.NameKind]bool{store.NameStory: true, store.NameEither: true}},
		{"an epic", map[string]string{".saga/epics/x/epic.json": epic},
			map[store.NameKind]bool{store.NameEpic: true, store.NameEither: true}},
		{"a single-file epic", map[string]string{".saga/epics/x.json": epic},
			map[store.NameKind]bool{store.NameEpic: true, store.NameEither: true}},
		{"both", map[string]string{".saga/stories/x/story.json": story, ".saga/epics/x/epic.json": epic},
			map[store.NameKind]bool{store.NameStory: true, store.NameEpic: true}},
		{"a story and a single-file epic", map[string]string{".saga/stories/x/story.json": story, ".saga/epics/x.json": epic},
			map[store.NameKind]bool{store.NameStory: true, store.NameEpic: true}},
		{"a story only in its worktree, and an epic", map[string]string{".saga/worktrees/x/.saga/stories/x/story.json": story, ".saga/epics/x/epic.json": epic},
			map[store.NameKind]bool{store.NameEpic: true}},
		{"an epic folder without its file, and a story", map[string]string{".saga/epics/x/notes.md": "", ".saga/stories/x/story.json": story},
			map[store.NameKind]bool{store.NameStory: true}},
		{"neither", map[string]string{".saga/stories/y/story.json": story}, nil},
	}
	p := workspace.Parser(t)
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			root := t.TempDir()
			testkit.WriteFiles(t, root, l.files)
			ws, err := p.Load(root)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []store.NameKind{store.NameEither, store.NameStory, store.NameEpic} {
				kind, ok := store.NameOnDisk(root, "x", want)
				if ok != l.want[want] {
					t.Errorf("want %q: answered %v, want %v", want, ok, l.want[want])
				}
				if !ok {
					continue
				}
				if loaded, err := store.ResolveName(ws, "x", want); err != nil || loaded != kind {
					t.Errorf("want %q: on disk %q, loaded %q (%v)", want, kind, loaded, err)
				}
			}
		})
	}
	for _, name := range []string{"", "..", "../x", "a/b", `a\b`} {
		if _, ok := store.NameOnDisk(t.TempDir(), name, store.NameEither); ok {
			t.Errorf("%q answered on disk", name)
		}
	}
}
