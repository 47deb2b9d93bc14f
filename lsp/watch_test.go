//go:build unix

package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// inotifyWarnings counts the window/showMessage warnings about the watch
// limit among the notifications so far (all of them: an index of 0).
func inotifyWarnings(c *client) int {
	n := 0
	for _, m := range c.lc.Notes(0) {
		if m.Method == "window/showMessage" && strings.Contains(string(m.Params), "fs.inotify.max_user_watches") {
			n++
		}
	}
	return n
}

// TestWatchLimit: when the server's own watcher meets the user's inotify
// watch limit (ENOSPC, injected here for every story folder), it warns once
// naming fs.inotify.max_user_watches and how to raise it, keeps serving,
// and re-reads an unwatched folder when a file in it is opened or saved.
func TestWatchLimit(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	stories := filepath.Join(root, ".saga", "stories")
	c := startWith(t, Options{watchAdd: func(dir string, add func(string) error) error {
		if filepath.Dir(dir) == stories {
			return syscall.ENOSPC
		}
		return add(dir)
	}})
	c.initialize(root, "") // no client watching: the server watches
	m, _ := c.waitFor(0, "window/showMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "fs.inotify.max_user_watches")
	})
	for _, want := range []string{`"type":2`, "sudo sysctl fs.inotify.max_user_watches=", "/etc/sysctl.d/", "open or save"} {
		if !strings.Contains(string(m.Params), want) {
			t.Errorf("warning lacks %q: %s", want, m.Params)
		}
	}
	// Four story folders failed, one warning (the watches are all added
	// before the load is reported).
	if n := inotifyWarnings(c); n != 1 {
		t.Fatalf("%d watch-limit warnings, want 1", n)
	}

	// Still serving: a new story folder (its parent is watched) is seen
	// and read, though its own watch fails too — and warns no more. The
	// folder arrives whole (made beside, then renamed in): without its
	// own watch, a file written into it after the server read it is not
	// seen until it is opened or saved, which is the next part.
	mark := c.mark()
	staged := filepath.Join(root, "fresh-staged")
	os.MkdirAll(staged, 0o755)
	os.WriteFile(filepath.Join(staged, "story.json"), []byte(`{"id": "fresh", "title": "F", "description": ""}`), 0o644)
	os.WriteFile(filepath.Join(staged, "t.json"), []byte(`{"id": "t"`), 0o644)
	if err := os.Rename(staged, filepath.Join(stories, "fresh")); err != nil {
		t.Fatal(err)
	}
	d, _ := c.diagnostics(mark, ".saga/stories/fresh/t.json", func(p publishedDiagnostics) bool { return len(p.Diagnostics) > 0 })
	if !slices.Contains(d.codes(), "json-syntax") {
		t.Fatalf("new folder's file: %v", d.codes())
	}
	if n := inotifyWarnings(c); n != 1 {
		t.Fatalf("%d watch-limit warnings after a new folder, want 1", n)
	}

	// A file written into an unwatched folder is not seen as it happens;
	// opening a file of that folder re-reads it.
	story := ".saga/stories/add-logout-button"
	broken := story + "/write-tests.json"
	os.WriteFile(filepath.Join(root, broken), []byte(`{"id": "write-tests"`), 0o644)
	mark = c.mark()
	c.open(story + "/story.json")
	d, _ = c.diagnostics(mark, broken, func(p publishedDiagnostics) bool { return len(p.Diagnostics) > 0 })
	if !slices.Contains(d.codes(), "json-syntax") {
		t.Fatalf("after didOpen: %v", d.codes())
	}
	// … and so does saving one: the broken file mended on disk.
	data, _ := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), "examples/workspace", broken))
	os.WriteFile(filepath.Join(root, broken), data, 0o644)
	mark = c.mark()
	c.notify("textDocument/didSave", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, c.uri(story+"/story.json")))
	c.diagnostics(mark, broken, func(p publishedDiagnostics) bool { return len(p.Diagnostics) == 0 })
}

// TestWatchNeverFollowsLinksOut (attack 17, the server's side): a story
// folder made a link out of the workspace while the server runs is one
// unreadable-file diagnostic on the link; nothing behind it is read or
// watched.
func TestWatchNeverFollowsLinksOut(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "story.json"), []byte(`{"id": "evil", "title": "SECRET", "description": ""}`), 0o644)
	os.WriteFile(filepath.Join(out, "t.json"), []byte(`{"id": "t", "subject": "SECRET", "description": "", "status": "pending", "blockedBy": []}`), 0o644)
	var mu sync.Mutex
	var watched []string
	c := startWith(t, Options{watchAdd: func(dir string, add func(string) error) error {
		mu.Lock()
		watched = append(watched, dir)
		mu.Unlock()
		return add(dir)
	}})
	c.initialize(root, "")
	srv := <-c.server
	mark := c.mark()
	if err := os.Symlink(out, filepath.Join(root, ".saga/stories/evil")); err != nil {
		t.Fatal(err)
	}
	d, _ := c.diagnostics(mark, ".saga/stories/evil", func(p publishedDiagnostics) bool { return len(p.Diagnostics) > 0 })
	if !slices.Contains(d.codes(), "unreadable-file") || !strings.Contains(d.Diagnostics[0].Message, "outside the workspace") {
		t.Fatalf("diagnostics on the link: %+v", d)
	}
	snap := srv.current()
	if s := snap.WS.Story("evil"); s != nil {
		t.Errorf("story evil read through the link: %+v", s)
	}
	for _, f := range snap.WS.Files() {
		if strings.Contains(string(f.Src), "SECRET") {
			t.Errorf("%s read from outside the workspace", f.Rel)
		}
	}
	mu.Lock()
	seen := slices.Clone(watched)
	mu.Unlock()
	for _, dir := range seen {
		if strings.HasPrefix(dir, out) || strings.HasSuffix(dir, "/evil") {
			t.Errorf("watched %s", dir)
		}
	}
	// Removing the link clears its diagnostic.
	mark = c.mark()
	os.Remove(filepath.Join(root, ".saga/stories/evil"))
	c.diagnostics(mark, ".saga/stories/evil", func(p publishedDiagnostics) bool { return len(p.Diagnostics) == 0 })
}

// TestDiskChangeRefreshesLenses: a task file changed on disk outside any
// run (a branch switch, a pull, an edit in another program) changes its
// story's lens ("n/m tasks done"); the server asks the client to refresh
// its lenses, since an editor asks again only then, and the lens it then
// gets counts the change.
func TestDiskChangeRefreshesLenses(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	c := startWith(t, Options{})
	c.initialize(root, `{"workspace":{"codeLens":{"refreshSupport":true}}}`)
	lens := func() string {
		m := c.call("textDocument/codeLens", fmt.Sprintf(`{"textDocument":{"uri":%q}}`, c.uri(".saga/stories/add-logout-button/story.json")))
		return string(m.Result)
	}
	if before := lens(); !strings.Contains(before, "0/2 tasks done") {
		t.Fatalf("the lens before: %s", before)
	}
	mark := c.mark()
	task := filepath.Join(root, ".saga/stories/add-logout-button/write-tests.json")
	data, err := os.ReadFile(task)
	if err != nil {
		t.Fatal(err)
	}
	done := strings.Replace(string(data), `"status": "pending"`, `"status": "completed"`, 1)
	if done == string(data) {
		t.Fatalf("no pending status in %s", data)
	}
	if err := os.WriteFile(task, []byte(done), 0o644); err != nil {
		t.Fatal(err)
	}
	c.waitFor(mark, "workspace/codeLens/refresh", nil)
	if after := lens(); !strings.Contains(after, "1/2 tasks done") {
		t.Errorf("the lens after the refresh: %s", after)
	}
}
