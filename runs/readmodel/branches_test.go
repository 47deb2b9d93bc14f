package readmodel

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// A long-lived reader's BranchFolders: a branch whose tip did not move is
// not read from git again, one whose tip moved is, and a branch gone is
// forgotten.
func TestBranchFoldersReadWhereTipsMoved(t *testing.T) {
	// Each story's task its own id: a's and b's files never share a blob.
	taskRel := func(id string) string { return ".saga/stories/" + id + "/" + id + "1.json" }
	task := func(id, status string) map[string]string {
		return map[string]string{taskRel(id): `{"id": "` + id + `1", "subject": "T", "description": "d", "status": "` + status + `", "blockedBy": []}` + "\n"}
	}
	root := t.TempDir()
	for _, id := range []string{"a", "b"} {
		testkit.WriteFiles(t, root, task(id, "pending"))
		testkit.WriteFiles(t, root, map[string]string{".saga/stories/" + id + "/story.json": `{"id": "` + id + `", "title": "S", "description": "d"}` + "\n"})
	}
	testkit.InitRepo(t, root)
	// story/a completed its task; story/b is main's tip.
	commitOn := func(branch, story, status string) {
		testkit.Git(t, root, "switch", "-q", branch)
		testkit.WriteFiles(t, root, task(story, status))
		testkit.Git(t, root, "commit", "-q", "-am", story+" "+status)
		testkit.Git(t, root, "switch", "-q", "main")
	}
	testkit.Git(t, root, "branch", runs.StoryBranch("a"))
	testkit.Git(t, root, "branch", runs.StoryBranch("b"))
	commitOn(runs.StoryBranch("a"), "a", "completed")

	p, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	ctx, sessionDir := context.Background(), t.TempDir()
	kept := &BranchFolders{}
	story := func(id string, folders *BranchFolders) StoryState {
		t.Helper()
		ev := NewEvidence(ctx, root, sessionDir, p)
		ev.Branches = folders
		ev.Prefetch([]string{"a", "b"})
		ws, err := p.Load(root)
		if err != nil {
			t.Fatal(err)
		}
		return ev.Story(ctx, ws, id)
	}
	want := func(what string, st StoryState, from string, done int) {
		t.Helper()
		if st.From != from || st.Done != done || st.Total != 1 {
			t.Errorf("%s: %s %d/%d, want %s %d/1", what, st.From, st.Done, st.Total, from, done)
		}
	}
	want("a, first read", story("a", kept), FromBranch, 1)
	want("b, first read", story("b", kept), FromBranch, 0)

	// b's tip moves; a's task as story/a holds it is gone from the object
	// store, so that only a folder kept from before can still show it.
	commitOn(runs.StoryBranch("b"), "b", "completed")
	oid := testkit.Git(t, root, "rev-parse", runs.StoryBranch("a")+":"+taskRel("a"))
	if err := os.Remove(filepath.Join(root, ".git", "objects", oid[:2], oid[2:])); err != nil {
		t.Fatal(err)
	}
	want("a, read anew without the kept folders", story("a", nil), FromMain, 0)
	want("a, kept", story("a", kept), FromBranch, 1)
	want("b, its tip moved", story("b", kept), FromBranch, 1)

	// A branch deleted is forgotten at the next read.
	testkit.Git(t, root, "branch", "-q", "-D", runs.StoryBranch("a"))
	want("a, its branch deleted", story("a", kept), FromMain, 0)
	story("b", kept)
	if refs := slices.Sorted(maps.Keys(kept.byRef)); !slices.Equal(refs, []string{"refs/heads/" + runs.StoryBranch("b")}) {
		t.Errorf("kept after story/a's deletion: %v", refs)
	}
}

// A one-shot reader (`status <epic>`) keeps the branches' folders on disk:
// the next one reads from git only the tips that moved. The kept folders
// are believed only from a folder no one else may write, and a file that is
// not one this code wrote keeps nothing.
func TestBranchFoldersKeptOnDisk(t *testing.T) {
	taskRel := ".saga/stories/a/a1.json"
	task := func(status string) map[string]string {
		return map[string]string{taskRel: `{"id": "a1", "subject": "T", "description": "d", "status": "` + status + `", "blockedBy": []}` + "\n"}
	}
	root := t.TempDir()
	testkit.WriteFiles(t, root, task("pending"))
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/a/story.json": `{"id": "a", "title": "S", "description": "d"}` + "\n",
		".saga/epics/e.json":         `{"id": "e", "title": "E", "description": "d", "children": [{"id": "a", "blockedBy": []}]}` + "\n",
	})
	testkit.InitRepo(t, root)
	testkit.Git(t, root, "switch", "-q", "-c", runs.StoryBranch("a"))
	testkit.WriteFiles(t, root, task("completed"))
	testkit.Git(t, root, "commit", "-q", "-am", "a done")
	testkit.Git(t, root, "switch", "-q", "main")

	sessionDir := t.TempDir()
	status := func(what string, done int) {
		t.Helper()
		_, st, err := LoadEpicState(context.Background(), EpicQuery{Root: root, Epic: "e", SessionDir: sessionDir})
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Stories[0].Done; got != done {
			t.Errorf("%s: a has %d/1 tasks done, want %d", what, got, done)
		}
	}
	status("first read", 1)
	dir, err := runs.ReadCacheDir(root)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, branchFoldersName)
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("nothing kept on disk: %v", err)
	}

	// story/a's task is gone from the object store: only the folder kept
	// on disk can still show it done.
	oid := testkit.Git(t, root, "rev-parse", runs.StoryBranch("a")+":"+taskRel)
	if err := os.Remove(filepath.Join(root, ".git", "objects", oid[:2], oid[2:])); err != nil {
		t.Fatal(err)
	}
	status("read again, kept on disk", 1)

	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" { // ACLs there (docs/platforms.md#windows)
		status("kept in a folder others may write", 0)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	status("the folder private again", 1)

	if err := os.WriteFile(file, []byte(`{"version": 1, "byRef": `), 0o600); err != nil {
		t.Fatal(err)
	}
	status("a cut file", 0)

	// The tip moves: read anew, whatever was kept.
	testkit.Git(t, root, "switch", "-q", runs.StoryBranch("a"))
	testkit.WriteFiles(t, root, task("pending"))
	testkit.Git(t, root, "commit", "-q", "-am", "a reopened")
	testkit.Git(t, root, "switch", "-q", "main")
	status("its tip moved", 0)
}
