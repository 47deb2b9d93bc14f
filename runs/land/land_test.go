//go:build unix

package land_test

// Landing driven as users drive it: an epic run to completion by the real
// binary (`saga-lsp run <epic>`, the stand-in claude, tmux, a bare origin,
// the gh stand-in), then `saga-lsp land` against the stand-in's GitHub.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/land"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// fixture is a repository whose epic shop — a diamond a → (b, c) → d —
// ran to completion: one PR per story, b and c stacked on a, d on the
// merge of b and c.
type fixture struct {
	t      *testing.T
	root   string
	origin string
	state  string // the gh stand-in's state file
	env    []string
}

func task(id string) string {
	return fmt.Sprintf(`{"id": %q, "subject": "Do %s", "description": "", "status": "pending", "blockedBy": []}`+"\n", id, id)
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	testkit.NeedsTool(t, "tmux", "")
	children := `[
    {"id": "shop--a", "blockedBy": []},
    {"id": "shop--b", "blockedBy": ["shop--a"]},
    {"id": "shop--c", "blockedBy": ["shop--a"]},
    {"id": "shop--d", "blockedBy": ["shop--b", "shop--c"]}
  ]`
	files := map[string]string{".saga/epics/shop/epic.json": `{"id": "shop", "title": "Shop", "description": "", "children": ` + children + "}\n"}
	for _, s := range []string{"a", "b", "c", "d"} {
		id := "shop--" + s
		files[".saga/stories/"+id+"/story.json"] = fmt.Sprintf(`{"id": %q, "title": "Story %s", "description": "Part %s of the shop."}`+"\n", id, s, s)
		files[".saga/stories/"+id+"/"+s+"1.json"] = task(s + "1")
	}
	root := t.TempDir()
	testkit.WriteFiles(t, root, files)
	testkit.InitRepo(t, root)
	base := t.TempDir()
	f := &fixture{t: t, root: root, state: filepath.Join(base, "gh.json")}
	f.env = append(testkit.CleanEnv(),
		"SAGA_TMUX_SOCKET="+testkit.TmuxServer(t),
		"SAGA_SESSION_DIR="+t.TempDir(),
		"SAGA_LSP_BIN="+testkit.Binary(t),
		"SAGA_CLAUDE="+testkit.Build(t, "./testdata/standin/claude"),
		"SAGA_GH="+testkit.Build(t, "./testdata/standin/gh"),
		"GH_STANDIN_STATE="+f.state,
		"GH_STANDIN_REPO=acme/shop",
		"GH_STANDIN_LOG="+filepath.Join(base, "gh.log"),
		"SAGA_STANDIN_LOG="+filepath.Join(base, "claude.jsonl"),
		"CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"),
	)
	f.origin = testkit.BareOrigin(t, root)
	if r := f.saga("run", "shop", "--max-parallel", "2"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := f.saga("follow", "shop"); r.Code != 0 {
		t.Fatalf("follow: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// The repository's CI: every pushed commit gets a green check.
	f.edit(func(st map[string]any) {
		st["repository"] = map[string]any{"ci": []any{map[string]any{"name": "test", "conclusion": "SUCCESS"}}}
	})
	return f
}

func (f *fixture) saga(args ...string) testkit.Result {
	f.t.Helper()
	return testkit.Run(f.t, f.root, f.env, "", testkit.Binary(f.t), args...)
}

func (f *fixture) gh(args ...string) testkit.Result {
	f.t.Helper()
	return testkit.Run(f.t, f.root, f.env, "", testkit.Build(f.t, "./testdata/standin/gh"), args...)
}

// edit changes the stand-in's state file (GitHub's side: settings, checks,
// reviews).
func (f *fixture) edit(change func(map[string]any)) {
	f.t.Helper()
	st := map[string]any{}
	if err := json.Unmarshal([]byte(testkit.ReadFile(f.t, f.state)), &st); err != nil {
		f.t.Fatal(err)
	}
	change(st)
	data, _ := json.Marshal(st)
	if err := os.WriteFile(f.state, data, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// pr is the stand-in's PR of the story.
func (f *fixture) pr(story string) map[string]any {
	f.t.Helper()
	st := map[string]any{}
	json.Unmarshal([]byte(testkit.ReadFile(f.t, f.state)), &st)
	for _, p := range st["prs"].([]any) {
		if m := p.(map[string]any); m["headRefName"] == "story/"+story {
			return m
		}
	}
	f.t.Fatalf("no PR of %s", story)
	return nil
}

func (f *fixture) land(args ...string) (*land.Result, testkit.Result) {
	f.t.Helper()
	r := f.saga(append([]string{"land", "--format", "json"}, args...)...)
	var res land.Result
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		f.t.Fatalf("land: exit %d: %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	return &res, r
}

func outcome(res *land.Result, story string) land.Outcome {
	for _, s := range res.Stories {
		if s.Story == story {
			return s
		}
	}
	return land.Outcome{}
}

// did lists the actions as "did story".
func did(res *land.Result) []string {
	var out []string
	for _, a := range res.Actions {
		out = append(out, a.Did+" "+a.Story)
	}
	return out
}

// status is the story as `status <story> --format json` shows it.
func (f *fixture) status(story string) control.StoryStatus {
	f.t.Helper()
	r := f.saga("status", story, "--format", "json")
	var st control.Status
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || len(st.Stories) != 1 {
		f.t.Fatalf("status %s: %v\n%s%s", story, err, r.Stdout, r.Stderr)
	}
	return st.Stories[0]
}

// The diamond lands bottom-up: a, then b and c (rebuilt on main, their
// PRs retargeted, their checks run again), then d (rebuilt on main with
// both); main's history holds the four in dependency order.
func TestLandDiamond(t *testing.T) {
	f := newFixture(t)
	if f.pr("shop--b")["baseRefName"] != "story/shop--a" {
		t.Fatalf("b's PR is not stacked on a: %v", f.pr("shop--b"))
	}

	// --dry-run says what it would do, and how, changing nothing.
	r := f.saga("land", "shop", "--dry-run")
	if r.Code != 0 || !strings.Contains(r.Stdout, "method: merge (the repository allows: merge, squash, rebase") ||
		!strings.Contains(r.Stdout, "would merge shop--a: #") || !strings.Contains(r.Stdout, "shop--b: waiting — waits for shop--a to land") {
		t.Fatalf("land --dry-run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if f.pr("shop--a")["state"] != "OPEN" {
		t.Fatal("a dry run merged")
	}

	res, r := f.land("shop", "--method", "squash")
	if r.Code != 0 {
		t.Fatalf("land: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	want := []string{"merged shop--a", "followed shop--b", "followed shop--c", "merged shop--b", "merged shop--c", "followed shop--d", "merged shop--d"}
	if got := did(res); !slices.Equal(got, want) {
		t.Errorf("actions %q, want %q\n%s", got, want, r.Stdout)
	}
	for _, s := range []string{"shop--a", "shop--b", "shop--c", "shop--d"} {
		if o := outcome(res, s); o.State != land.Landed {
			t.Errorf("%s: %+v", s, o)
		}
		if p := f.pr(s); p["state"] != "MERGED" || p["baseRefName"] != "main" {
			t.Errorf("%s's PR: %v %v", s, p["state"], p["baseRefName"])
		}
		if st := f.status(s); st.PRState != runs.PRMerged || st.State != runs.StatusCompleted || st.Land != nil || st.BaseMoved != nil {
			t.Errorf("status %s: %+v", s, st)
		}
	}
	log := testkit.Git(t, f.origin, "log", "--format=%s", "main")
	var order []string
	for line := range strings.Lines(log) {
		for _, s := range []string{"a", "b", "c", "d"} {
			if strings.HasPrefix(line, "shop--"+s+":") || strings.Contains(line, "Story "+s+" ") || strings.Contains(line, "shop--"+s+" (#") {
				order = append(order, s)
			}
		}
	}
	slices.Reverse(order)
	if len(order) != 4 || order[0] != "a" || order[3] != "d" {
		t.Errorf("main's history, oldest first: %q\n%s", order, log)
	}
	// Each story's work is on main: its tasks completed there.
	for _, s := range []string{"a", "b", "c", "d"} {
		data := testkit.Git(t, f.origin, "show", "main:.saga/stories/shop--"+s+"/"+s+"1.json")
		if !strings.Contains(data, `"completed"`) {
			t.Errorf("main's %s1: %s", s, data)
		}
	}
}
