//go:build unix

package chaos_test

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/dashboard"
	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// Red team (issue 32, closing note): hostile .saga JSON — huge numbers,
// duplicate keys, invalid UTF-8, deep nesting, a 100 MB file, ids with
// "../" — in a story's worktree copy and in the checkout, against `check`,
// `status`, `plan`, the hook and the dashboard. None panics or hangs,
// each names what is wrong, and no id is ever a path: nothing is written
// outside the story's folder. (The language server gets the same
// documents in TestChaosDocuments; the loader's cases are
// store.TestBadInput.)
func TestHostileSagaFiles(t *testing.T) {
	wt := hookWorktree(t)
	repo := filepath.Dir(filepath.Dir(filepath.Dir(wt)))
	files := map[string]string{
		"dup.json":   `{"id": "dup", "id": "other", "subject": "a", "subject": "b", "description": "", "status": "pending", "status": "completed", "blockedBy": [], "blockedBy": ["nope"]}`,
		"huge.json":  `{"id": "huge", "subject": "s", "description": "", "status": "pending", "blockedBy": [], "checks": ["true"], "timeout": 1e400, "checkLimits": {"memory": 1e308, "fileSize": -1e400, "processes": 18446744073709551617}}`,
		"utf.json":   "{\"id\": \"utf\", \"subject\": \"caf\xe9 \xff\xfe\", \"description\": \"\xed\xa0\x80\", \"status\": \"pending\", \"blockedBy\": []}",
		"deep.json":  strings.Repeat(`{"a":`, 200000),
		"dots.json":  `{"id": "../../../../escaped", "subject": "s", "description": "", "status": "pending", "blockedBy": ["../../../etc/passwd", "/etc/shadow"]}`,
		"slash.json": `{"id": "dots/../../x", "subject": "s", "description": "", "status": "pending", "blockedBy": []}`,
	}
	for _, dir := range []string{wt, repo} {
		story := filepath.Join(dir, ".saga", "stories", hookStory)
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(story, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// 100 MB, sparse: a reader that honours its bound never reads it.
		f, err := os.Create(filepath.Join(story, "big.json"))
		if err != nil {
			t.Fatal(err)
		}
		f.Truncate(100 << 20)
		f.Close()
		// A story whose id climbs out.
		testkit.WriteFiles(t, dir, map[string]string{".saga/stories/evil/story.json": `{"id": "../../evil", "title": "E", "description": ""}` + "\n"})
	}
	// Where the climbing task id leads, from the worktree's story folder
	// and from the checkout's: task files a write through the id would
	// change.
	victim := `{"id": "escaped", "subject": "s", "description": "", "status": "pending", "blockedBy": []}` + "\n"
	victims := []string{filepath.Join(repo, ".saga", "worktrees", "escaped.json"), filepath.Join(filepath.Dir(repo), "escaped.json")}
	for _, v := range victims {
		if err := os.WriteFile(v, []byte(victim), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	before := listTree(t, filepath.Dir(repo))

	for _, dir := range []string{repo, wt} {
		for _, args := range [][]string{{"check"}, {"check", "--format", "json"}, {"status"}, {"plan"}, {"status", hookStory}} {
			r := testkit.Run(t, dir, nil, "", testkit.Binary(t), args...)
			if strings.Contains(r.Stderr, "panic") || strings.Contains(r.Stderr, "goroutine ") || r.Code > 2 {
				t.Fatalf("%v in %s: exit %d\n%s", args, dir, r.Code, r.Stderr)
			}
			if args[0] == "check" {
				out := r.Stdout + r.Stderr
				for _, name := range []string{"dup.json", "utf.json", "deep.json", "big.json", "dots.json"} {
					if !strings.Contains(out, name) {
						t.Errorf("%v in %s does not name %s:\n%s", args, dir, name, out)
					}
				}
				if r.Code != 2 {
					t.Errorf("%v in %s: exit %d, want 2 (errors)", args, dir, r.Code)
				}
				if len(args) > 1 && !json.Valid([]byte(r.Stdout)) {
					t.Errorf("check --format json is not JSON:\n%.500s", r.Stdout)
				}
			}
		}
	}

	// The hook: a session's start reads the story; a task update names an
	// id that climbs out, and one of the hostile files.
	env := []string{"HOME=" + home, "SAGA_STORY_ID=" + hookStory}
	update := func(id string) string {
		return `{"session_id":"s","cwd":` + jsonString(wt) + `,"hook_event_name":"PostToolUse","tool_name":"TaskUpdate","tool_input":{"taskId":` + jsonString(id) +
			`,"status":"completed"},"tool_response":{"success":true,"taskId":` + jsonString(id) + `,"updatedFields":["status"],"statusChange":{"from":"pending","to":"completed"}}}`
	}
	runHook(t, hookTemplates(wt)[0], env, wt, false)
	for _, id := range []string{"../../../../escaped", "dots/../../x", "dup", "huge", "utf", "big", "/etc/passwd"} {
		runHook(t, update(id), env, wt, false)
	}

	// The dashboard over the same checkout: every page answers, none fails.
	l, err := dashboard.OpenLocal(repo, dashboard.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	srv, err := dashboard.Start(dashboard.Options{Sources: []dashboard.Source{l.Source()}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	u, _ := url.Parse(srv.URL())
	base := "http://" + u.Host
	key := filepath.Base(repo)
	for _, p := range []string{srv.URL(), base + "/problems", base + "/r/" + key + "/story/" + hookStory, base + "/r/" + key + "/story/evil",
		base + "/r/" + key + "/story/" + url.PathEscape("../../evil")} {
		res, err := c.Get(p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode >= 500 {
			t.Errorf("GET %s: %s", p, res.Status)
		}
	}

	for _, v := range victims {
		if got := testkit.ReadFile(t, v); got != victim {
			t.Errorf("a task id that climbs out changed %s:\n%s", v, got)
		}
	}
	sep := string(filepath.Separator)
	for p := range listTree(t, filepath.Dir(repo)) {
		switch {
		case before[p] || strings.HasPrefix(p, home+sep):
		case !strings.Contains(p, sep+".saga"+sep):
			t.Errorf("made outside .saga/: %s", p)
		case strings.Contains(filepath.Base(p), "escaped") || filepath.Base(p) == "x.json" || filepath.Base(p) == "evil.json":
			t.Errorf("an id became a path: %s", p)
		}
	}
}

// listTree is every path under dir.
func listTree(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			out[p] = true
		}
		return nil
	})
	return out
}
