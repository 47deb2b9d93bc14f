package workload

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/store"
)

// TestGenerateLoads checks a small workspace against the real loader: the
// counts come out right, and the deliberate findings are exactly the
// diagnostics reported.
func TestGenerateLoads(t *testing.T) {
	const stories, tasksPerStory, epics, seed = 20, 5, 2, 1
	dir := t.TempDir()
	if err := Generate(dir, stories, tasksPerStory, epics, seed); err != nil {
		t.Fatal(err)
	}
	ws := workspace.Load(t, dir)
	if ws.StoryCount() != stories || ws.EpicCount() != epics {
		t.Errorf("got %d stories and %d epics, want %d and %d", ws.StoryCount(), ws.EpicCount(), stories, epics)
	}
	for _, id := range ws.SortedStoryIDs() {
		if s := ws.Story(id); len(s.Tasks) != tasksPerStory {
			t.Errorf("story %s has %d tasks, want %d", id, len(s.Tasks), tasksPerStory)
		}
	}
	for _, id := range ws.SortedEpicIDs() {
		if e := ws.Epic(id); len(e.Children) != stories/epics {
			t.Errorf("epic %s lists %d children, want %d", id, len(e.Children), stories/epics)
		}
	}

	_, findings, err := build(stories, tasksPerStory, epics, seed)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	codes := map[store.Code]bool{}
	for _, f := range findings {
		want[f.rel+" "+string(f.code)] = true
		codes[f.code] = true
	}
	for _, c := range []store.Code{store.CodeJSONSyntax, store.CodeUnknownProperty, store.CodeUnknownDependency, store.CodeStatusInconsistent} {
		if !codes[c] {
			t.Errorf("no deliberate %s finding", c)
		}
	}
	got := map[string]bool{}
	for _, d := range ws.Diagnostics() {
		key := d.File + " " + string(d.Code)
		got[key] = true
		if !want[key] {
			t.Errorf("unexpected diagnostic %s:%d: %s [%s]", d.File, d.Range.Start.Line+1, d.Message, d.Code)
		}
	}
	for key := range want {
		if !got[key] {
			t.Errorf("deliberate finding not reported: %s", key)
		}
	}
}

func TestGenerateDeterministic(t *testing.T) {
	a, _, err := build(10, 4, 2, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := build(10, 4, 2, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(a, b, func(x, y file) bool { return x.rel == y.rel && bytes.Equal(x.data, y.data) }) {
		t.Fatal("same seed, different workspaces")
	}
	c, _, err := build(10, 4, 2, 8)
	if err != nil {
		t.Fatal(err)
	}
	if slices.EqualFunc(a, c, func(x, y file) bool { return bytes.Equal(x.data, y.data) }) {
		t.Fatal("different seeds, same workspace")
	}
}

func TestGenerateStandalone(t *testing.T) {
	files, _, err := build(6, 3, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 6*(1+3) {
		t.Fatalf("got %d files, want %d", len(files), 6*(1+3))
	}
}

func TestEnsureReusesAndRefuses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "W")
	if _, err := ensure(dir, 4, 2, 1, 1); err != nil {
		t.Fatal(err)
	}
	// A reused copy is not rewritten: a scribbled file stays scribbled.
	story := filepath.Join(dir, ".saga", "stories")
	des, err := os.ReadDir(story)
	if err != nil || len(des) != 4 {
		t.Fatalf("want 4 story folders, got %d (%v)", len(des), err)
	}
	scribbled := filepath.Join(story, des[0].Name(), "story.json")
	if err := os.WriteFile(scribbled, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ensure(dir, 4, 2, 1, 1); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(scribbled); string(got) != "{}" {
		t.Error("Ensure regenerated a current workspace")
	}
	// Other parameters (as after a version bump) regenerate it.
	if _, err := ensure(dir, 5, 2, 1, 1); err != nil {
		t.Fatal(err)
	}
	if des, _ := os.ReadDir(story); len(des) != 5 {
		t.Errorf("after regeneration: %d story folders, want 5", len(des))
	}
	// A folder that is not ours is left alone.
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ensure(foreign, 4, 2, 1, 1); err == nil {
		t.Error("Ensure filled a foreign, non-empty folder")
	}
}

func ExampleGenerate() {
	dir, err := os.MkdirTemp("", "workload")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	if err := Generate(dir, 4, 3, 2, 1); err != nil {
		panic(err)
	}
	des, _ := os.ReadDir(filepath.Join(dir, ".saga", "stories"))
	fmt.Println(len(des), "stories")
	// Output: 4 stories
}
