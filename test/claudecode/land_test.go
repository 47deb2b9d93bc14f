//go:build unix

package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/land"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Issue 35 end to end with the real Claude Code CLI and the gh stand-in: a
// diamond epic a → (b, c) → d on a Go module runs; b and c declare that they
// both touch total.go, so they run one after the other (foreseen from
// `paths`), and their branches do conflict there: d is held (its blockers'
// branches conflict) and the conflict is reported before landing. land,
// through the stand-in's merge queue, lands a, then b; c's follow of main
// conflicts; `land --resolve` runs the agent on c's conflict task; c lands;
// d runs again from main and lands. main's history holds the four stories
// in dependency order and `go test ./...` passes on it.
func TestEpicLandsWithRealClaudeCode(t *testing.T) {
	claude := claudeOffline(t)
	testkit.Bwrap(t)
	testkit.NeedsTool(t, "tmux", "")
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	// put is a shell command writing a Go file of package shop.
	put := func(file, body string) string {
		text := strings.NewReplacer(`\`, `\\`, "%", "%%", "\n", `\n`).Replace("package shop\n\n" + body + "\n")
		return "printf " + shellQuote(text) + " > " + file
	}
	write := func(file, body string) string { return "FAKEAPI bash " + shellQuote(put(file, body)) }
	conflictTask := "ls .saga/stories/shop--c/restack-*.json >/dev/null 2>&1"
	story := func(id, title, desc string) string {
		return `{"id": "` + id + `", "title": "` + title + `", "description": ` + jsonc.Quote(desc) + "}\n"
	}
	task := func(id string, paths ...string) string {
		p := ""
		if len(paths) > 0 {
			q, _ := json.Marshal(paths)
			p = `, "paths": ` + string(q)
		}
		return `{"id": "` + id + `", "subject": "Do ` + id + `", "description": "Make it work.", "status": "pending", "blockedBy": [], "checks": ["go test ./..."]` + p + "}\n"
	}
	testkit.WriteFiles(t, root, map[string]string{
		"go.mod":       "module example.com/shop\n\ngo 1.22\n",
		"shop.go":      "package shop\n\nfunc Base() int { return 1 }\n",
		"total.go":     "package shop\n\nfunc Total() int { return Base() }\n",
		"shop_test.go": "package shop\n\nimport \"testing\"\n\nfunc TestBase(t *testing.T) {\n\tif Base() != 1 {\n\t\tt.Fatal(Base())\n\t}\n}\n",
		".saga/epics/shop/epic.json": `{"id": "shop", "title": "Shop", "description": "", "children": [
    {"id": "shop--a", "blockedBy": []},
    {"id": "shop--b", "blockedBy": ["shop--a"]},
    {"id": "shop--c", "blockedBy": ["shop--a"]},
    {"id": "shop--d", "blockedBy": ["shop--b", "shop--c"]}]}` + "\n",
		".saga/stories/shop--a/story.json": story("shop--a", "A", "Add A.\n"+write("a.go", "func A() int { return 2 }")),
		".saga/stories/shop--a/a1.json":    task("a1"),
		".saga/stories/shop--b/story.json": story("shop--b", "B", "Add B to the total.\n"+write("b.go", "func B() int { return 3 }")+"\n"+
			write("total.go", "func Total() int { return Base() + B() }")),
		".saga/stories/shop--b/b1.json": task("b1", "b.go", "total.go"),
		".saga/stories/shop--c/story.json": story("shop--c", "C", "Add C to the total.\n"+write("c.go", "func C() int { return 4 }")+"\n"+
			"FAKEAPI bash "+shellQuote("if "+conflictTask+"; then "+put("total.go", "func Total() int { return Base() + B() + C() }")+
			"; else "+put("total.go", "func Total() int { return Base() + C() }")+"; fi")),
		".saga/stories/shop--c/c1.json": task("c1", "c.go", "total.go"),
		".saga/stories/shop--d/story.json": story("shop--d", "D", "Add D.\n"+write("d.go", "func D() int { return B() + C() }")+"\n"+
			write("d_test.go", "import \"testing\"\n\nfunc TestD(t *testing.T) {\n\tif D() != 7 || Total() != 8 {\n\t\tt.Fatal(D(), Total())\n\t}\n}")),
		".saga/stories/shop--d/d1.json": task("d1"),
	})
	testkit.InitRepo(t, root)
	origin := testkit.BareOrigin(t, root)
	sessions := filepath.Join(base, "sessions")
	ghState, ghLog := filepath.Join(base, "gh.json"), filepath.Join(base, "gh.log")
	env := append(testkit.CleanEnv(), "SAGA_CLAUDE="+claude, "CLAUDE_OFFLINE_LOG="+filepath.Join(base, "api.jsonl"),
		"CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"), "SAGA_SESSION_DIR="+sessions,
		"SAGA_TMUX_SOCKET="+testkit.TmuxServer(t), "SAGA_LSP_BIN="+testkit.Binary(t),
		"SAGA_GH="+testkit.Build(t, "./testdata/standin/gh"), "GH_STANDIN_STATE="+ghState, "GH_STANDIN_LOG="+ghLog, "GH_STANDIN_REPO=acme/shop")
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(sessions, "saga-*.log"))
			for _, l := range logs {
				data, _ := os.ReadFile(l)
				t.Logf("--- %s:\n%s", filepath.Base(l), data)
			}
		}
	})
	saga := func(args ...string) testkit.Result {
		t.Helper()
		return testkit.Run(t, root, env, "", testkit.Binary(t), args...)
	}
	// ended waits for the newest run of kind/id to end: each story's first
	// go test compiles with a cold cache, which takes minutes under load.
	ended := func(kind runs.Kind, id string, since time.Time) {
		t.Helper()
		if !testkit.WaitUntil(20*time.Minute, func() bool {
			r := runs.Latest(sessions, kind, id)
			return r != nil && r.Ended && !r.Started.Before(since)
		}) {
			t.Fatalf("the %s run of %s did not end", kind, id)
		}
	}
	editGH := func(change func(map[string]any)) {
		t.Helper()
		st := map[string]any{}
		if err := json.Unmarshal([]byte(testkit.ReadFile(t, ghState)), &st); err != nil {
			t.Fatal(err)
		}
		change(st)
		data, _ := json.Marshal(st)
		if err := os.WriteFile(ghState, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	landJSON := func(args ...string) *land.Result {
		t.Helper()
		r := saga(append([]string{"land", "--format", "json"}, args...)...)
		var res land.Result
		if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
			t.Fatalf("land %v: exit %d: %v\n%s%s", args, r.Code, err, r.Stdout, r.Stderr)
		}
		t.Logf("land %v: exit %d\n%s", args, r.Code, r.Stderr)
		return &res
	}
	state := func(res *land.Result, story string) land.Outcome {
		for _, s := range res.Stories {
			if s.Story == story {
				return s
			}
		}
		t.Fatalf("land's result has no %s: %+v", story, res.Stories)
		return land.Outcome{}
	}

	// plan says why b and c will not run at once; the epic runs them one
	// after the other, and d is held.
	if plan := saga("plan", "shop"); !strings.Contains(plan.Stdout, "both touch total.go") {
		t.Errorf("plan does not say why b and c wait for each other:\n%s", plan.Stdout)
	}
	start := time.Now()
	if r := saga("run", "shop", "--max-parallel", "2"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	ended(runs.KindEpic, "shop", start)
	fr := saga("follow", "shop", "--format", "json")
	t.Logf("follow: exit %d\n%s", fr.Code, fr.Stdout)
	for _, s := range []string{"shop--a", "shop--b", "shop--c"} {
		if rec := runs.Latest(sessions, runs.KindStory, s); rec == nil || rec.State != runs.StatusCompleted {
			t.Fatalf("%s did not complete: %+v\n%s", s, rec, fr.Stdout)
		}
	}
	// The epic's events, in order: one of b and c ended before the other
	// started.
	var seq []string
	for line := range strings.Lines(testkit.ReadFile(t, runs.Latest(sessions, runs.KindEpic, "shop").EventsFile)) {
		var e struct{ Event, Story string }
		if json.Unmarshal([]byte(line), &e) == nil && (e.Story == "shop--b" || e.Story == "shop--c") &&
			(e.Event == runs.KindStoryStart || e.Event == runs.KindStoryEnd) {
			seq = append(seq, e.Event+" "+e.Story)
		}
	}
	if len(seq) < 4 || strings.TrimPrefix(seq[0], runs.KindStoryStart) != strings.TrimPrefix(seq[1], runs.KindStoryEnd) {
		t.Errorf("b and c overlap in total.go, yet ran at once: %q", seq)
	}

	// GitHub: CI green on every push, a merge queue on main.
	editGH(func(st map[string]any) {
		repo, _ := st["repository"].(map[string]any)
		if repo == nil {
			repo = map[string]any{}
		}
		repo["ci"] = []any{map[string]any{"name": "test", "conclusion": "SUCCESS"}}
		repo["mergeQueue"] = true
		st["repository"] = repo
	})
	// landUntil runs land until the story's state is want: the queue
	// merges what one land enqueued when GitHub is next read (by the next
	// land), so a story takes a few.
	landUntil := func(story, want string) *land.Result {
		t.Helper()
		var res *land.Result
		for range 10 {
			if res = landJSON("shop"); state(res, story).State == want {
				return res
			}
		}
		t.Fatalf("%s is not %s after 10 lands: %+v", story, want, res.Stories)
		return nil
	}
	dry := saga("land", "shop", "--dry-run")
	if !strings.Contains(dry.Stdout, "method: the merge queue of main") {
		t.Errorf("land --dry-run does not name the merge queue:\n%s%s", dry.Stdout, dry.Stderr)
	}
	// Before b lands, c's branch is seen to conflict with b's: c is held
	// (named with the file) while b goes on.
	res := landUntil("shop--b", land.Landed)
	if s := state(res, "shop--a"); s.State != land.Landed {
		t.Fatalf("a: %+v", s)
	}
	if !slices.ContainsFunc(res.Actions, func(a land.Action) bool {
		return a.Story == "shop--c" && a.Did == "held" && strings.Contains(a.Detail, "conflict with shop--b: total.go")
	}) {
		t.Errorf("land did not foresee c's conflict with b before landing b: %+v", res.Actions)
	}
	// b landed: c conflicts with main, follows it, and the conflict is its
	// conflict task, for land --resolve.
	conflicted := false
	for range 10 {
		r := saga("status", "shop--c", "--format", "json")
		if conflicted = strings.Contains(r.Stdout, `"conflict"`) && strings.Contains(r.Stdout, "total.go"); conflicted {
			if st := saga("status", "shop--c"); !strings.Contains(st.Stdout, "land --resolve shop--c") {
				t.Errorf("status of c does not point to land --resolve:\n%s", st.Stdout)
			}
			break
		}
		res = landJSON("shop")
	}
	if !conflicted {
		t.Fatalf("c's conflict with main did not become its conflict task: %+v", res.Stories)
	}
	// land --resolve runs the agent on c's conflict task.
	resolved := time.Now()
	if r := saga("land", "--resolve", "shop--c"); r.Code != 0 {
		t.Fatalf("land --resolve: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	ended(runs.KindStory, "shop--c", resolved)
	if rec := runs.Latest(sessions, runs.KindStory, "shop--c"); rec.State != runs.StatusCompleted {
		t.Fatalf("c's resolving run: %+v", rec)
	}
	landUntil("shop--c", land.Landed)

	// d runs again, from main, and lands.
	again := time.Now()
	if r := saga("run", "shop", "--max-parallel", "2"); r.Code != 0 {
		t.Fatalf("run again: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	ended(runs.KindEpic, "shop", again)
	if rec := runs.Latest(sessions, runs.KindStory, "shop--d"); rec == nil || rec.State != runs.StatusCompleted {
		t.Fatalf("d did not complete: %+v", rec)
	}
	landUntil("shop--d", land.Landed)

	// main holds the four, in dependency order, and its tests pass.
	var order []string
	for line := range strings.Lines(testkit.Git(t, origin, "log", "--first-parent", "--format=%s", "main")) {
		for _, s := range []string{"a", "b", "c", "d"} {
			if strings.Contains(line, "shop--"+s) {
				order = append(order, s)
			}
		}
	}
	slices.Reverse(order)
	if !slices.Equal(order, []string{"a", "b", "c", "d"}) {
		t.Errorf("main's history, oldest first: %q", order)
	}
	clone := filepath.Join(base, "main")
	testkit.Git(t, base, "clone", "-q", origin, clone)
	if r := testkit.Run(t, clone, append(testkit.CleanEnv(), "GOFLAGS=-mod=mod"), "", "go", "test", "./..."); r.Code != 0 {
		t.Fatalf("go test on main: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// What the scenario asked of GitHub, by gh command (a GraphQL call by
	// its operation's name).
	calls := map[string]int{}
	for line := range strings.Lines(testkit.ReadFile(t, ghLog)) {
		var call struct{ Args []string }
		if json.Unmarshal([]byte(line), &call) != nil || len(call.Args) < 2 {
			continue
		}
		name := call.Args[0] + " " + call.Args[1]
		for _, a := range call.Args {
			if op, ok := strings.CutPrefix(a, "query="); ok {
				name += " " + strings.Fields(strings.NewReplacer("(", " ", "{", " ").Replace(op))[1]
			}
		}
		calls[name]++
	}
	t.Logf("gh calls: %v", calls)
}
