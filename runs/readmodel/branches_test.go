package readmodel

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/git"
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

// The local story branches' history not in HEAD, kept by HEAD's commit
// (on disk too, for the next `status <epic>`): git reads only the tips
// not read at that commit before — none when no tip moved, the one that
// moved — every tip again once HEAD moved, and every tip each time with
// HEAD detached. Each answer is the one git gives afresh.
func TestUnmergedHistoryReadWhereTipsMoved(t *testing.T) {
	root := t.TempDir()
	testkit.WriteFiles(t, root, map[string]string{"README": "r\n"})
	testkit.InitRepo(t, root)
	commitOn := func(branch, file string) {
		testkit.Git(t, root, "switch", "-q", branch)
		testkit.WriteFiles(t, root, map[string]string{file: branch + file + "\n"})
		testkit.Git(t, root, "add", file)
		testkit.Git(t, root, "commit", "-q", "-m", branch+" "+file)
		testkit.Git(t, root, "switch", "-q", "-")
	}
	for _, id := range []string{"a", "b"} {
		testkit.Git(t, root, "branch", runs.StoryBranch(id))
		commitOn(runs.StoryBranch(id), id+"1")
	}
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin, log := t.TempDir(), filepath.Join(t.TempDir(), "rev-list.log")
	wrapper := "#!/bin/sh\ncase \"$*\" in *rev-list*) echo rev-list >> '" + log + "'; tee -a '" + log + "' | '" + realGit + "' \"$@\"; exit $?;; esac\nexec '" + realGit + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx := context.Background()
	tip := func(id string) string { return testkit.Git(t, root, "rev-parse", runs.StoryBranch(id)) }

	// read derives as a new `status <epic>` does, and returns the tips git
	// was given (nil: no rev-list).
	read := func(what string) []string {
		t.Helper()
		os.Remove(log)
		kept := LoadBranchFolders(root)
		r := listStoryRefs(ctx, root)
		r.readGraph(ctx, root, kept)
		if err := kept.Save(); err != nil {
			t.Fatal(err)
		}
		want, err := git.Repo{Dir: root, Bin: realGit}.CommitsNotIn(ctx, []string{tip("a"), tip("b")}, "HEAD")
		if r.graphErr != nil || err != nil || !maps.EqualFunc(r.unmerged, want, slices.Equal) {
			t.Fatalf("%s: %v, %v; want %v, %v", what, r.unmerged, r.graphErr, want, err)
		}
		data, err := os.ReadFile(log)
		if os.IsNotExist(err) {
			return nil
		}
		var tips []string
		for l := range strings.Lines(string(data)) {
			if l = strings.TrimSpace(l); l != "rev-list" {
				tips = append(tips, l)
			}
		}
		slices.Sort(tips)
		return tips
	}
	both := func() []string { return slices.Sorted(slices.Values([]string{tip("a"), tip("b")})) }
	if got := read("the first"); !slices.Equal(got, both()) {
		t.Errorf("the first read gave git %v, want both tips %v", got, both())
	}
	if got := read("nothing moved"); got != nil {
		t.Errorf("nothing moved, yet git read %v", got)
	}
	commitOn(runs.StoryBranch("b"), "b2")
	if got := read("b moved"); !slices.Equal(got, []string{tip("b")}) {
		t.Errorf("b moved: git read %v, want b's tip alone %s", got, tip("b"))
	}
	commitOn("main", "m2")
	if got := read("HEAD moved"); !slices.Equal(got, both()) {
		t.Errorf("HEAD moved: git read %v, want both tips %v", got, both())
	}
	testkit.Git(t, root, "switch", "-q", "--detach", "main")
	for _, what := range []string{"HEAD detached", "HEAD detached, again"} {
		if got := read(what); !slices.Equal(got, both()) {
			t.Errorf("%s: git read %v, want both tips %v", what, got, both())
		}
	}
}
