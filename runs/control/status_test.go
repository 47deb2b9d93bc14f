//go:build unix

package control_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// statusEnv copies testdata/status/workspace (stories shop--cart, with a
// worktree copy the worker writes in, shop--checkout with two recorded runs,
// and fix-typo whose run died) and points the session folder at
// testdata/status/sessions. The tmux socket names a server that does not
// run, so the user's sessions never show up.
func statusEnv(t *testing.T) (root string, env []string) {
	t.Helper()
	root = testkit.CopyTree(t, "testdata/status/workspace")
	// A copy: the session dir must be the user's alone (mode 0700), and
	// a checkout's folders are not.
	sessions := testkit.CopyTree(t, "testdata/status/sessions")
	env = append(testkit.CleanEnv(), "SAGA_SESSION_DIR="+sessions,
		fmt.Sprintf("SAGA_TMUX_SOCKET=saga-test-none-%d", os.Getpid()))
	return root, env
}

type statusJSON struct {
	Stories []struct {
		ID, Title, Status string
		Done, Total       int
		Epic, PR          string
		Branch, Worktree  string
		Worker            map[string]any
		Tasks             []map[string]any
	} `json:"stories"`
}

func statusOf(t *testing.T, root string, env []string, args ...string) (statusJSON, map[string]any) {
	t.Helper()
	r := sagaLSP(t, root, env, append([]string{"status", "--format", "json"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("status %v: exit %d\n%s", args, r.Code, r.Stderr)
	}
	var st statusJSON
	var raw map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil {
		t.Fatalf("status json: %v\n%s", err, r.Stdout)
	}
	json.Unmarshal([]byte(r.Stdout), &raw)
	return st, raw
}

func TestStatusStoryFromWorktree(t *testing.T) {
	root, env := statusEnv(t)
	r := sagaLSP(t, root, env, "status", "shop--cart")
	if r.Code != 0 {
		t.Fatalf("status: exit %d\n%s", r.Code, r.Stderr)
	}
	testkit.Golden(t, filepath.Join("testdata", "status/shop--cart.golden"), r.Stdout)

	st, _ := statusOf(t, root, env, "shop--cart")
	if len(st.Stories) != 1 {
		t.Fatalf("%d stories", len(st.Stories))
	}
	s := st.Stories[0]
	// The main checkout has every task pending; the worktree copy is ahead.
	if s.ID != "shop--cart" || s.Title != "Shopping cart" || s.Status != "in_progress" || s.Done != 1 || s.Total != 3 ||
		s.Epic != "shop" || s.PR != "https://github.com/acme/shop/pull/7" || s.Branch != "story/shop--cart" ||
		s.Worktree != ".saga/worktrees/shop--cart" {
		t.Errorf("story: %+v", s)
	}
	if s.Worker["running"] != false || s.Worker["state"] != "idle" || s.Worker["pid"] != 0.0 || s.Worker["exitCode"] != nil {
		t.Errorf("worker: %v", s.Worker)
	}
	want := `[{"blockedBy":[],"id":"add-item","status":"completed","subject":"Add an item to the cart"},` +
		`{"blockedBy":[],"id":"remove-item","status":"in_progress","subject":"Remove an item from the cart"},` +
		`{"blockedBy":["remove-item"],"id":"totals","status":"pending","subject":"Show the totals"}]`
	if got, _ := json.Marshal(s.Tasks); string(got) != want {
		t.Errorf("tasks:\n got %s\nwant %s", got, want)
	}

	// Without a worktree, the main checkout's statuses count.
	if err := os.RemoveAll(filepath.Join(root, ".saga", "worktrees")); err != nil {
		t.Fatal(err)
	}
	st, _ = statusOf(t, root, env, "shop--cart")
	s = st.Stories[0]
	if s.Status != "pending" || s.Done != 0 || s.PR != "" || len(s.Tasks) != 3 ||
		fmt.Sprint(s.Tasks[2]["blockedBy"]) != "[add-item remove-item]" {
		t.Errorf("story without worktree: %+v", s)
	}
	r = sagaLSP(t, root, env, "status", "shop--cart")
	if strings.Contains(r.Stdout, "from the worktree") || !strings.Contains(r.Stdout, "#totals [pending] Show the totals [blocked by #add-item, #remove-item]") {
		t.Errorf("status text:\n%s", r.Stdout)
	}
}

func TestStatusAllStories(t *testing.T) {
	root, env := statusEnv(t)
	r := sagaLSP(t, root, env, "status")
	if r.Code != 0 {
		t.Fatalf("status: exit %d\n%s", r.Code, r.Stderr)
	}
	testkit.Golden(t, filepath.Join("testdata", "status/all.golden"), r.Stdout)

	st, raw := statusOf(t, root, env)
	var ids []string
	for _, s := range st.Stories {
		ids = append(ids, s.ID+":"+s.Status+":"+fmt.Sprint(s.Done, "/", s.Total))
	}
	if got := strings.Join(ids, " "); got != "shop--cart:in_progress:1/3 shop--checkout:completed:2/2 fix-typo:pending:0/1" {
		t.Errorf("stories: %s", got)
	}
	for _, s := range raw["stories"].([]any) {
		if _, ok := s.(map[string]any)["tasks"]; ok {
			t.Errorf("tasks listed without --tasks: %v", s)
		}
	}
	st, _ = statusOf(t, root, env, "--tasks")
	for _, s := range st.Stories {
		if len(s.Tasks) != s.Total {
			t.Errorf("%s: %d tasks listed, %d in the story", s.ID, len(s.Tasks), s.Total)
		}
	}
	r = sagaLSP(t, root, env, "status", "--tasks")
	if !strings.Contains(r.Stdout, "      #totals [pending] Show the totals [blocked by #remove-item]\n") {
		t.Errorf("status --tasks:\n%s", r.Stdout)
	}
}

func TestStatusLastRun(t *testing.T) {
	root, env := statusEnv(t)
	st, _ := statusOf(t, root, env)
	workers := map[string]map[string]any{}
	for _, s := range st.Stories {
		workers[s.ID] = s.Worker
	}
	// The newest of two runs, finished.
	w := workers["shop--checkout"]
	if w["running"] != false || w["state"] != "completed" || w["exitCode"] != 0.0 || w["cycle"] != 2.0 ||
		w["session"] != "saga-story-shop--checkout-1700000000000" || w["pid"] != 2147483602.0 ||
		w["outputFile"] != "/tmp/saga-sessions/saga-story-shop--checkout-1700000000000.log" ||
		w["started"] != "2023-11-14T22:13:20Z" {
		t.Errorf("shop--checkout worker: %v", w)
	}
	// A run without worker.end whose process is gone died.
	if w := workers["fix-typo"]; w["running"] != false || w["state"] != "died" || w["exitCode"] != nil || w["cycle"] != 1.0 {
		t.Errorf("fix-typo worker: %v", w)
	}
	r := sagaLSP(t, root, env, "status", "shop--checkout")
	if !strings.Contains(r.Stdout, "worker:   not running; last run completed (exit 0, pid 2147483602, session saga-story-shop--checkout-1700000000000, started ") {
		t.Errorf("status text:\n%s", r.Stdout)
	}
}

// Each task's last check result (check.end) shows beside it.
func TestStatusChecks(t *testing.T) {
	root, env := statusEnv(t)
	st, _ := statusOf(t, root, env, "shop--checkout")
	checks := map[string]any{}
	for _, task := range st.Stories[0].Tasks {
		checks[task["id"].(string)] = task["check"]
	}
	if c, _ := checks["pay"].(map[string]any); c == nil || c["command"] != "go test ./pay/..." || c["passed"] != true || c["exitCode"] != 0.0 || c["durationMs"] != 900.0 {
		t.Errorf("pay's check: %v", checks["pay"])
	}
	if checks["receipt"] != nil {
		t.Errorf("receipt has no check result, got %v", checks["receipt"])
	}
	if r := sagaLSP(t, root, env, "status", "shop--checkout"); !strings.Contains(r.Stdout, "#pay [completed] ") || !strings.Contains(r.Stdout, " · ✓ checks\n") {
		t.Errorf("status text:\n%s", r.Stdout)
	}
	if r := sagaLSP(t, root, env, "status", "fix-typo"); !strings.Contains(r.Stdout, "#fix [pending] Fix the typo · ✗ check failed: make spellcheck (timed out)\n") {
		t.Errorf("status text:\n%s", r.Stdout)
	}
}

func TestStatusUnknownStory(t *testing.T) {
	root, env := statusEnv(t)
	for _, c := range []struct{ name, want string }{
		{"no-such-story", `no story "no-such-story"`},
		{"Bad_Name", `invalid story name "Bad_Name"`},
	} {
		r := sagaLSP(t, root, env, "status", c.name)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("status %s: exit %d\n%s", c.name, r.Code, r.Stderr)
		}
	}
	if r := sagaLSP(t, root, env, "status", "a", "b"); r.Code != 2 {
		t.Errorf("status with two stories: exit %d", r.Code)
	}
	if r := sagaLSP(t, t.TempDir(), env, "status"); r.Code != 2 || !strings.Contains(r.Stderr, "no .saga/ folder") {
		t.Errorf("status outside a workspace: exit %d\n%s", r.Code, r.Stderr)
	}
}

// A worktree the run recorded is named only while it is on disk: removed,
// it is no place to go, and the dashboard (the workspace's copies) does not
// name it either.
func TestStatusNamesOnlyAWorktreeOnDisk(t *testing.T) {
	root, env := statusEnv(t)
	var sessions string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "SAGA_SESSION_DIR="); ok {
			sessions = v
		}
	}
	wt := filepath.Join(root, ".saga", "worktrees", "shop--checkout")
	events := filepath.Join(sessions, "saga-story-shop--checkout-1700000000000.log.events.jsonl")
	data, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	// The worker's worktree step, after its start (events after its end
	// change nothing).
	start, rest, _ := strings.Cut(string(data), "\n")
	step, _ := json.Marshal(map[string]any{"time": "2023-11-14T22:13:20.05Z", "story": "shop--checkout", "session": "saga-story-shop--checkout-1700000000000",
		"event": "step", "step": "worktree", "branch": "story/shop--checkout", "base": "main", "worktree": wt})
	if err := os.WriteFile(events, []byte(start+"\n"+string(step)+"\n"+rest), 0o644); err != nil {
		t.Fatal(err)
	}

	st, _ := statusOf(t, root, env, "shop--checkout")
	if s := st.Stories[0]; s.Worktree != "" {
		t.Errorf("a worktree no longer on disk is named: %q", s.Worktree)
	}
	if r := sagaLSP(t, root, env, "status", "shop--checkout"); strings.Contains(r.Stdout, "worktree:") {
		t.Errorf("status text names a worktree no longer on disk:\n%s", r.Stdout)
	}
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	st, _ = statusOf(t, root, env, "shop--checkout")
	if s := st.Stories[0]; s.Worktree != ".saga/worktrees/shop--checkout" {
		t.Errorf("the run's worktree on disk: %q", s.Worktree)
	}
}
