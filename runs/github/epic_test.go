package github_test

// Epics on GitHub Actions, driven as users drive them: the real binary
// (`run <epic> --on github`, `status`, `stop`, `follow`), its runner in a
// private tmux server, real git with a bare origin, the gh stand-in
// running each dispatched job in a fresh clone of origin with the
// stand-in claude.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/github"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

// newEpicOnActions is a repository holding epic shop — a diamond a → (b,
// c) → d — with the workflow on origin's main; the gh stand-in's state is
// shared by every clone of origin (it is "GitHub"). Nothing else is
// shared, so the tests that use it run side by side (t.Parallel): most of
// their time is the runner's polls of GitHub (docs/architecture.md#test-time).
func newEpicOnActions(t *testing.T, secrets ...string) *actions {
	t.Helper()
	task := func(id string, blockedBy ...string) string {
		b, _ := json.Marshal(append([]string{}, blockedBy...))
		return fmt.Sprintf(`{"id": %q, "subject": "Do %s", "description": "", "status": "pending", "blockedBy": %s}`+"\n", id, id, b)
	}
	files := map[string]string{".saga/epics/shop/epic.json": `{"id": "shop", "title": "Shop", "description": "", "children": [
    {"id": "shop--a", "blockedBy": []},
    {"id": "shop--b", "blockedBy": ["shop--a"]},
    {"id": "shop--c", "blockedBy": ["shop--a"]},
    {"id": "shop--d", "blockedBy": ["shop--b", "shop--c"]}
  ]}` + "\n"}
	for _, s := range []string{"a", "b", "c", "d"} {
		id := "shop--" + s
		files[".saga/stories/"+id+"/story.json"] = fmt.Sprintf(`{"id": %q, "title": "Story %s", "description": "Part %s of the shop."}`+"\n", id, s, s)
		files[".saga/stories/"+id+"/"+s+"1.json"] = task(s + "1")
		files[".saga/stories/"+id+"/"+s+"2.json"] = task(s+"2", s+"1")
	}
	root := t.TempDir()
	testkit.WriteFiles(t, root, files)
	testkit.InitRepo(t, root)
	if _, err := github.Install(root, github.Source{Version: "v1.4.2", GoVersion: "1.26"}, false); err != nil {
		t.Fatal(err)
	}
	testkit.Git(t, root, "add", ".github")
	testkit.Git(t, root, "commit", "-q", "-m", "saga-story workflow")
	base := t.TempDir()
	a := &actions{t: t, root: root, gh: testkit.Build(t, "./testdata/standin/gh"), state: filepath.Join(base, "gh.json"), log: filepath.Join(base, "claude.log")}
	a.origin = testkit.BareOrigin(t, root)
	a.env = append(testkit.CleanEnv(),
		"PATH="+filepath.Dir(testkit.Binary(t))+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+base, "GIT_CONFIG_NOSYSTEM=1", "CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"),
		"SAGA_CLAUDE="+testkit.Build(t, "./testdata/standin/claude"), "SAGA_GH="+a.gh, "SAGA_LSP_BIN="+testkit.Binary(t),
		"SAGA_TMUX_SOCKET="+testkit.TmuxServer(t), "SAGA_STANDIN_LOG="+a.log, "GH_STANDIN_STATE="+a.state,
		"GH_STANDIN_LOG="+filepath.Join(base, "gh.jsonl"),
		"SAGA_SESSION_DIR="+filepath.Join(base, "sessions"))
	for _, s := range secrets {
		a.env = append(a.env, "GH_STANDIN_SECRET_"+s)
	}
	t.Cleanup(a.kill)
	t.Cleanup(func() {
		if t.Failed() {
			for _, r := range a.runs() {
				t.Logf("run %d %q %s/%s:\n%s", r.ID, r.Title, r.Status, r.Conclusion, a.jobLog(r))
			}
		}
	})
	return a
}

// dispatches counts the Actions runs of each story.
func (a *actions) dispatches() map[string]int {
	out := map[string]int{}
	for _, r := range a.runs() {
		if s, _, ok := github.ParseRunName(r.Title); ok {
			out[s]++
		}
	}
	return out
}

// epicStatus is `status shop --format json`.
func (a *actions) epicStatus(more ...string) readmodel.EpicStatus {
	a.t.Helper()
	r := a.saga(more, "status", "shop", "--format", "json")
	var st struct{ Epic readmodel.EpicStatus }
	if err := json.Unmarshal([]byte(r.Stdout), &st); r.Code != 0 || err != nil {
		a.t.Fatalf("status: exit %d, %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	return st.Epic
}

func epicStory(st readmodel.EpicStatus, id string) readmodel.EpicStory {
	for _, s := range st.Stories {
		if s.ID == id {
			return s
		}
	}
	return readmodel.EpicStory{}
}

// runnerEvents are the events of the newest run of epic shop.
func (a *actions) runnerEvents() []runs.Event {
	rs := runs.Runs(a.sessions(), runs.KindEpic, "shop")
	if len(rs) == 0 {
		return nil
	}
	var out []runs.Event
	tl := runs.Tail{Path: rs[len(rs)-1].EventsFile}
	tl.Read(func(e runs.Event) { out = append(out, e) })
	return out
}

// runEpic starts `run shop --on github` and waits for the runner's end
// (follow); it returns the runner's epic.end.
func (a *actions) runEpic(more []string, args ...string) runs.Event {
	a.t.Helper()
	r := a.saga(more, append([]string{"run", "shop", "--on", "github"}, args...)...)
	if r.Code != 0 {
		a.t.Fatalf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	return a.followEpic(more)
}

func (a *actions) followEpic(more []string) runs.Event {
	a.t.Helper()
	fr := a.saga(more, "follow", "shop", "--format", "json")
	var last runs.Event
	for line := range strings.Lines(fr.Stdout) {
		json.Unmarshal([]byte(line), &last)
	}
	if last.Event != runs.KindEpicEnd {
		a.t.Fatalf("follow: exit %d, last event %+v\n%s%s", fr.Code, last, fr.Stdout, fr.Stderr)
	}
	return last
}

// TestEpicOnGitHub: a diamond epic run entirely on GitHub Actions with
// --max-parallel 2 completes in dependency order, one dispatch per story,
// at most two jobs at once, each story's branch stacked on its blockers'
// pushed branches (d on their merge); status shows every story completed
// from GitHub's state, with its Actions run.
func TestEpicOnGitHub(t *testing.T) {
	t.Parallel()
	a := newEpicOnActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	end := a.runEpic(nil, "--max-parallel", "2")
	if end.Status != runs.StatusCompleted || end.ExitCode == nil || *end.ExitCode != 0 {
		t.Fatalf("epic.end %+v\n%+v", end, a.epicStatus())
	}
	if n := a.dispatches(); len(n) != 4 || n["shop--a"] != 1 || n["shop--b"] != 1 || n["shop--c"] != 1 || n["shop--d"] != 1 {
		t.Errorf("dispatches %v, want one per story", n)
	}
	ended := map[string]bool{}
	running, most := 0, 0
	for _, e := range a.runnerEvents() {
		switch e.Event {
		case runs.KindEpicStart:
			if e.Backend != readmodel.BackendGitHub {
				t.Errorf("epic.start backend %q", e.Backend)
			}
		case runs.KindStoryStart:
			running++
			most = max(most, running)
			if want := map[string]string{"shop--a": "main", "shop--b": "story/shop--a", "shop--c": "story/shop--a", "shop--d": "main"}[e.Story]; e.Base != want || e.Backend != readmodel.BackendGitHub || e.URL == "" {
				t.Errorf("story.start %s: base %q (want %q), backend %q, url %q", e.Story, e.Base, want, e.Backend, e.URL)
			}
			for _, b := range map[string][]string{"shop--b": {"shop--a"}, "shop--c": {"shop--a"}, "shop--d": {"shop--b", "shop--c"}}[e.Story] {
				if !ended[b] {
					t.Errorf("%s started before %s ended", e.Story, b)
				}
			}
		case runs.KindStoryEnd:
			running--
			ended[e.Story] = true
			if e.Status != runs.StatusCompleted {
				t.Errorf("%s ended %s: %s", e.Story, e.Status, e.Message)
			}
		}
	}
	if most > 2 || len(ended) != 4 {
		t.Errorf("at most %d at once (want ≤ 2); %d stories ended", most, len(ended))
	}
	// Stacked on origin: b and c on a's work, d on the merge of b and c.
	testkit.Git(t, a.root, "fetch", "-q", "origin")
	for story, want := range map[string][]string{"shop--b": {"a1", "b2"}, "shop--c": {"a1", "c2"}, "shop--d": {"a2", "b1", "c2", "d2"}} {
		files := testkit.Git(t, a.root, "ls-tree", "-r", "--name-only", "origin/story/"+story)
		for _, w := range want {
			if !strings.Contains(files, "saga-work/shop--"+w[:1]+"/"+w+".md") {
				t.Errorf("origin/story/%s lacks %s's work file:\n%s", story, w, files)
			}
		}
	}
	merges := testkit.Git(t, a.root, "log", "--format=%s", "--merges", "origin/story/shop--d")
	if !strings.Contains(merges, "build on story/shop--b") || !strings.Contains(merges, "build on story/shop--c") {
		t.Errorf("story/shop--d is no merge of b and c:\n%s", merges)
	}
	st := a.epicStatus()
	if st.Done != 4 || st.Total != 4 || st.State != runs.StatusCompleted || st.Backend != readmodel.BackendGitHub {
		t.Errorf("status: %+v", st)
	}
	for _, s := range st.Stories {
		if s.State != runs.StatusCompleted || s.Actions == nil || s.Actions.State() != "success" || !strings.Contains(s.Actions.URL, "/actions/runs/") || s.PR == "" {
			t.Errorf("%s: %+v %+v", s.ID, s, s.Actions)
		}
	}
	text := a.saga(nil, "status", "shop")
	if !strings.Contains(text.Stdout, "GitHub Actions success https://github.com/standin/origin/actions/runs/") {
		t.Errorf("status text:\n%s", text.Stdout)
	}
	t.Logf("gh invocations (the runner, follow, status and the jobs' workers): %v", a.ghCalls())
}

// ghCalls counts the gh invocations by command (the stand-in's log): what
// a run asks of GitHub.
func (a *actions) ghCalls() map[string]int {
	out := map[string]int{}
	for line := range strings.Lines(testkit.FileText(filepath.Join(filepath.Dir(a.state), "gh.jsonl"))) {
		var inv struct{ Args []string }
		if json.Unmarshal([]byte(line), &inv) == nil && len(inv.Args) >= 2 {
			out[inv.Args[0]+" "+inv.Args[1]]++
		}
	}
	return out
}

// holdJobs keeps every dispatched run queued until release is called.
func (a *actions) holdJobs() (release func()) {
	hold := filepath.Join(a.t.TempDir(), "hold")
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		a.t.Fatal(err)
	}
	a.env = append(a.env, "GH_STANDIN_HOLD="+hold)
	return func() { os.Remove(hold) }
}

// waitRun waits for the story's Actions run in the given status.
func (a *actions) waitRun(story, status string) standinRun {
	a.t.Helper()
	var got standinRun
	if !testkit.WaitUntil(90*time.Second, func() bool {
		for _, r := range a.runs() {
			if s, _, _ := github.ParseRunName(r.Title); s == story && r.Status == status {
				got = r
				return true
			}
		}
		return false
	}) {
		a.t.Fatalf("no %s run of %s: %+v", status, story, a.runs())
	}
	return got
}

// TestEpicOnGitHubResumesInFreshClone: a runner killed while its story's
// run is queued, started again in a fresh clone of origin with an empty
// session dir and no run records, has no record of that dispatch: the run
// found by its name decides nothing there (it could be anyone's: docs/
// github-actions.md#which-run-is-the-storys) — it is shown ignored — but
// the story is not dispatched while it is live; once it ended, the story
// is dispatched again from here (continuing its pushed branch) and the
// epic completes.
func TestEpicOnGitHubResumesInFreshClone(t *testing.T) {
	t.Parallel()
	a := newEpicOnActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	release := a.holdJobs()
	if r := a.saga(nil, "run", "shop", "--on", "github", "--max-parallel", "2"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	a.waitRun("shop--a", "queued")
	// The runner's machine goes away: the runner killed, its tmux server too.
	st := a.epicStatus()
	if st.PID == 0 {
		t.Fatalf("no runner: %+v", st)
	}
	if err := exec.Command("kill", "-KILL", fmt.Sprint(st.PID)).Run(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitExit(st.PID, 30*time.Second)

	// Another machine: a fresh clone, an empty session dir.
	clone := filepath.Join(t.TempDir(), "clone")
	testkit.Git(t, a.root, "clone", "-q", a.origin, clone)
	testkit.Git(t, clone, "config", "user.email", "other@example.com")
	testkit.Git(t, clone, "config", "user.name", "Other")
	a.root = clone
	a.env = append(a.env, "SAGA_SESSION_DIR="+filepath.Join(t.TempDir(), "sessions"), "SAGA_TMUX_SOCKET="+testkit.TmuxServer(t))
	if r := a.saga(nil, "run", "shop", "--on", "github", "--max-parallel", "2"); r.Code != 0 {
		t.Fatalf("run again: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// a's run is not taken for the story's, and holds it back while live.
	queued := a.waitRun("shop--a", "queued")
	if !testkit.WaitUntil(60*time.Second, func() bool {
		st := a.storyStatus("shop--a")
		return len(st.IgnoredRuns) == 1 && st.IgnoredRuns[0].ID == queued.ID && st.Actions == nil
	}) {
		t.Fatalf("a's run not shown ignored: %+v", a.storyStatus("shop--a"))
	}
	if n := a.dispatches(); n["shop--a"] != 1 {
		t.Errorf("dispatches %v: a dispatched again while its run was live", n)
	}
	release()
	end := a.followEpic(nil)
	if end.Status != runs.StatusCompleted {
		t.Fatalf("epic.end %+v", end)
	}
	if n := a.dispatches(); n["shop--a"] != 2 || n["shop--b"] != 1 || n["shop--c"] != 1 || n["shop--d"] != 1 {
		t.Errorf("dispatches %v: want a twice (its unrecorded run, then its own), the rest once", n)
	}
}

// TestEpicOnGitHubCancelledFromTheWeb: a story's run cancelled on GitHub
// ends the story stopped, with the run's URL and the next step in status;
// its dependents are held and the runner ends; nothing is dispatched
// again.
func TestEpicOnGitHubCancelledFromTheWeb(t *testing.T) {
	t.Parallel()
	a := newEpicOnActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	release := a.holdJobs()
	defer release()
	if r := a.saga(nil, "run", "shop", "--on", "github"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	run := a.waitRun("shop--a", "queued")
	a.ghOK("run", "cancel", jsonNumber(run.ID)) // "the web"
	end := a.followEpic(nil)
	if end.Status != runs.StatusBlocked || end.ExitCode == nil || *end.ExitCode != runs.ExitBlocked {
		t.Errorf("epic.end %+v", end)
	}
	st := a.epicStatus()
	s := epicStory(st, "shop--a")
	if s.State != runs.StatusStopped || !strings.Contains(s.Why, "its Actions run was cancelled") || !strings.Contains(s.Why, run.url()) ||
		!strings.Contains(s.Why, "`saga-lsp run shop--a --on github` runs it again") {
		t.Errorf("a: %+v", s)
	}
	if b := epicStory(st, "shop--b"); b.State != readmodel.EpicHeld {
		t.Errorf("b: %+v", b)
	}
	if n := a.dispatches(); len(n) != 1 || n["shop--a"] != 1 {
		t.Errorf("dispatches %v", n)
	}
	text := a.saga(nil, "status", "shop--a")
	if !strings.Contains(text.Stdout, "worker:   GitHub Actions cancelled "+run.url()) || !strings.Contains(text.Stdout, "why:      its Actions run was cancelled") {
		t.Errorf("status shop--a:\n%s", text.Stdout)
	}
}

func (r standinRun) url() string {
	return "https://github.com/standin/origin/actions/runs/" + jsonNumber(r.ID)
}

// TestEpicOnGitHubMissingSecret: without the Claude Code secret the first
// job fails at once; status says the story failed and why; its dependents
// are held.
func TestEpicOnGitHubMissingSecret(t *testing.T) {
	t.Parallel()
	a := newEpicOnActions(t)
	end := a.runEpic(nil)
	if end.Status != runs.StatusFailed {
		t.Errorf("epic.end %+v", end)
	}
	st := a.epicStatus()
	s := epicStory(st, "shop--a")
	if s.State != runs.StatusFailed || !strings.Contains(s.Why, `failed at step "Check the Claude Code secret": neither the secret ANTHROPIC_API_KEY nor CLAUDE_CODE_OAUTH_TOKEN is set`) {
		t.Errorf("a: %+v", s)
	}
	if c := epicStory(st, "shop--c"); c.State != readmodel.EpicHeld {
		t.Errorf("c: %+v", c)
	}
	text := a.saga(nil, "status", "shop")
	if !strings.Contains(text.Stdout, "neither the secret ANTHROPIC_API_KEY") {
		t.Errorf("status shop:\n%s", text.Stdout)
	}
}

// TestStopEpicOnGitHub: `stop <epic>` cancels the runs of its stories on
// GitHub Actions; they end stopped.
func TestStopEpicOnGitHub(t *testing.T) {
	t.Parallel()
	a := newEpicOnActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	release := a.holdJobs()
	defer release()
	if r := a.saga(nil, "run", "shop", "--on", "github"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	a.waitRun("shop--a", "queued")
	if r := a.saga(nil, "stop", "shop"); r.Code != 0 {
		t.Fatalf("stop: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	a.waitRun("shop--a", "completed")
	if r := a.runs()[0]; r.Conclusion != "cancelled" {
		t.Errorf("a's run %+v", r)
	}
	if s := epicStory(a.epicStatus(), "shop--a"); s.State != runs.StatusStopped {
		t.Errorf("a: %+v", s)
	}
	if n := a.dispatches(); len(n) != 1 {
		t.Errorf("dispatches %v", n)
	}
}

// TestEpicOnGitHubRefusals: what every job needs is checked before the
// runner starts — gh, its login, the workflow on origin's default branch —
// each refusal saying what to do; nothing starts, nothing is dispatched.
func TestEpicOnGitHubRefusals(t *testing.T) {
	t.Parallel()
	a := newEpicOnActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	try := func(env []string, code int, want string, args ...string) {
		t.Helper()
		r := a.saga(env, append([]string{"run", "shop", "--on", "github"}, args...)...)
		if r.Code != code || !strings.Contains(r.Stderr, want) {
			t.Errorf("%v %v: exit %d, want %d and %q\n%s%s", env, args, r.Code, code, want, r.Stdout, r.Stderr)
		}
	}
	try([]string{"SAGA_GH=/nonexistent/gh"}, 1, "gh (GitHub's CLI) is not installed: install it and run `gh auth login`")
	try([]string{"GH_STANDIN_AUTH=none"}, 1, "gh is not logged in to GitHub: run `gh auth login`")
	try(nil, 2, "--on github takes no --dry-run", "--dry-run")
	try(nil, 2, "--model does not reach a GitHub Actions job", "--model", "opus")
	testkit.Git(t, a.root, "rm", "-q", github.WorkflowPath)
	testkit.Git(t, a.root, "commit", "-q", "-m", "no workflow")
	testkit.Git(t, a.root, "push", "-q", "origin", "main")
	try(nil, 1, "origin's default branch main has no .github/workflows/saga-story.yml: run `saga-lsp install --github-actions`, commit the file and push it to main")
	if rs := runs.Runs(a.sessions(), runs.KindEpic, "shop"); len(rs) != 0 {
		t.Errorf("runners started: %v", rs)
	}
	if n := a.dispatches(); len(n) != 0 {
		t.Errorf("dispatched %v", n)
	}
}

// TestCheckReadyWorkflow: a workflow on the default branch that a person
// edited, or that another saga-lsp release wrote, is dispatched with a
// warning saying what to do.
func TestCheckReadyWorkflow(t *testing.T) {
	t.Parallel()
	a := newEpicOnActions(t)
	env := func(k string) string {
		for _, kv := range slices.Backward(a.env) {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	ctx := t.Context()
	this, err := github.Render(github.Source{Version: "v1.5.0", GoVersion: "1.26"})
	if err != nil {
		t.Fatal(err)
	}
	rd, err := github.CheckReady(ctx, a.root, env, this)
	if err != nil || rd.Default != "main" || len(rd.Warnings) != 1 ||
		!strings.Contains(rd.Warnings[0], ".github/workflows/saga-story.yml on main was written by saga-lsp v1.4.2, not by this one: its jobs run that saga-lsp — bring it up to date with `saga-lsp install --github-actions`, then commit and push it to main") {
		t.Errorf("outdated: %+v, %v", rd, err)
	}
	old, _ := github.Render(github.Source{Version: "v1.4.2", GoVersion: "1.26"})
	if rd, err := github.CheckReady(ctx, a.root, env, old); err != nil || len(rd.Warnings) != 0 {
		t.Errorf("up to date: %+v, %v", rd, err)
	}
	path := filepath.Join(a.root, github.WorkflowPath)
	testkit.WriteFiles(t, a.root, map[string]string{github.WorkflowPath: testkit.ReadFile(t, path) + "# mine\n"})
	testkit.Git(t, a.root, "commit", "-q", "-am", "edited")
	testkit.Git(t, a.root, "push", "-q", "origin", "main")
	if rd, err := github.CheckReady(ctx, a.root, env, this); err != nil || len(rd.Warnings) != 1 || !strings.Contains(rd.Warnings[0], "was edited since saga-lsp wrote it") {
		t.Errorf("edited: %+v, %v", rd, err)
	}
}

// TestEpicOnGitHubNetworkLost: while gh cannot reach GitHub, a story
// running there is in an unknown state — running for the runner, which
// neither fails it nor dispatches it again, and says so in status — and
// the run goes on once GitHub answers again.
func TestEpicOnGitHubNetworkLost(t *testing.T) {
	t.Parallel()
	a := newEpicOnActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	release := a.holdJobs()
	defer release()
	dir := t.TempDir()
	offline, calls := filepath.Join(dir, "offline"), filepath.Join(dir, "offline.log")
	a.unreliableGH(fmt.Sprintf(`if [ -e %q ]; then echo "$*" >> %q; echo 'error connecting to api.github.com' >&2; exit 1; fi`, offline, calls))
	if r := a.saga(nil, "run", "shop", "--on", "github"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	a.waitRun("shop--a", "queued")
	if err := os.WriteFile(offline, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The runner asked GitHub, in vain, several times.
	if !testkit.WaitUntil(60*time.Second, func() bool { return strings.Count(testkit.FileText(calls), "run list") >= 3 }) {
		t.Fatalf("the runner did not ask GitHub: %q", testkit.FileText(calls))
	}
	s := epicStory(a.epicStatus(), "shop--a")
	if s.State != readmodel.EpicRunning || s.Actions == nil || !strings.Contains(s.Actions.Unknown, "error connecting to api.github.com") ||
		!strings.Contains(s.Why, "GitHub could not be asked") {
		t.Errorf("a while offline: %+v %+v", s, s.Actions)
	}
	if text := a.saga(nil, "status", "shop"); !strings.Contains(text.Stdout, "GitHub Actions unknown") {
		t.Errorf("status offline:\n%s", text.Stdout)
	}
	os.Remove(offline)
	release()
	if end := a.followEpic(nil); end.Status != runs.StatusCompleted {
		t.Fatalf("epic.end %+v", end)
	}
	if n := a.dispatches(); n["shop--a"] != 1 || len(n) != 4 {
		t.Errorf("dispatches %v", n)
	}
	for _, e := range a.runnerEvents() {
		if e.Event == runs.KindStoryEnd && e.Status != runs.StatusCompleted {
			t.Errorf("story.end %+v", e)
		}
	}
}

// TestMixedBackends: the base is a pushed branch whoever ran the blockers —
// a story on GitHub Actions after a blocker run locally, and a local story
// after blockers run on GitHub Actions (their branches taken from origin,
// merged).
func TestMixedBackends(t *testing.T) {
	t.Parallel()
	a := newEpicOnActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	// a locally (tmux), its branch pushed by its worker.
	if r := a.saga(nil, "run", "shop--a"); r.Code != 0 {
		t.Fatalf("run a: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := a.saga(nil, "follow", "shop--a"); r.Code != 0 {
		t.Fatalf("follow a: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// b and c on GitHub Actions, stacked on a's pushed branch.
	for _, s := range []string{"shop--b", "shop--c"} {
		r := a.saga(nil, "run", s, "--on", "github", "--follow")
		if r.Code != 0 || !strings.Contains(r.Stdout, "dispatched story "+s+" to GitHub Actions (base story/shop--a)") || !strings.HasSuffix(r.Stdout, "completed: success\n") {
			t.Fatalf("run %s --on github: exit %d\n%s%s", s, r.Code, r.Stdout, r.Stderr)
		}
	}
	// d locally: b and c completed on GitHub, their branches from origin.
	if r := a.saga(nil, "run", "shop--d"); r.Code != 0 {
		t.Fatalf("run d: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := a.saga(nil, "follow", "shop--d"); r.Code != 0 {
		t.Fatalf("follow d: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	merges := testkit.Git(t, a.root, "log", "--format=%s", "--merges", "story/shop--d")
	if !strings.Contains(merges, "build on story/shop--b") || !strings.Contains(merges, "build on story/shop--c") {
		t.Errorf("story/shop--d is no merge of b and c:\n%s", merges)
	}
	files := testkit.Git(t, a.root, "ls-tree", "-r", "--name-only", "story/shop--d")
	for _, w := range []string{"a2", "b2", "c2", "d2"} {
		if !strings.Contains(files, "saga-work/shop--"+w[:1]+"/"+w+".md") {
			t.Errorf("story/shop--d lacks %s's work file:\n%s", w, files)
		}
	}
	st := a.epicStatus()
	if st.Done != 4 {
		t.Errorf("status: %+v", st)
	}
	if n := a.dispatches(); len(n) != 2 {
		t.Errorf("dispatches %v", n)
	}
}

// TestEpicOnGitHubMaxCost: --max-cost counts the jobs' spend, read from
// the run records they uploaded: once it reaches the cap nothing more is
// dispatched and the runner exits 2.
func TestEpicOnGitHubMaxCost(t *testing.T) {
	t.Parallel()
	a := newEpicOnActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	a.env = append(a.env, "SAGA_STANDIN_COST_USD=0.6") // the jobs' claude, priced
	end := a.runEpic(nil, "--max-parallel", "1", "--max-cost", "1")
	if end.Status != runs.StatusTimeout || end.ExitCode == nil || *end.ExitCode != runs.ExitLimit || end.Cost == nil || *end.Cost < 1 {
		t.Errorf("epic.end %+v", end)
	}
	if n := a.dispatches(); len(n) != 2 || n["shop--a"] != 1 {
		t.Errorf("dispatches %v, want a and one of b, c", n)
	}
	if !slices.ContainsFunc(a.runnerEvents(), func(e runs.Event) bool { return e.Event == runs.KindEpicCap }) {
		t.Error("no epic.cap")
	}
	if s := epicStory(a.epicStatus(), "shop--a"); s.Cost < 0.6 {
		t.Errorf("a's cost %+v", s)
	}
}

// TestEpicOnGitHubDispatchUnanswered: a dispatch GitHub did not answer —
// once after taking it, once without — is tried again later, never failed,
// and no story runs twice: the retry finds the run GitHub took.
func TestEpicOnGitHubDispatchUnanswered(t *testing.T) {
	t.Parallel()
	a := newEpicOnActions(t, "ANTHROPIC_API_KEY=sk-ant-standin")
	dir := t.TempDir()
	taken, lost := filepath.Join(dir, "taken"), filepath.Join(dir, "lost")
	for _, f := range []string{taken, lost} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a.unreliableGH(fmt.Sprintf(`if [ "$1 $2" = "workflow run" ]; then
  if [ -e %[1]q ]; then rm %[1]q; "$GH" "$@" >/dev/null 2>&1; echo 'error connecting to api.github.com' >&2; exit 1; fi
  if [ -e %[2]q ]; then rm %[2]q; echo 'error connecting to api.github.com' >&2; exit 1; fi
fi`, taken, lost))
	end := a.runEpic(nil, "--max-parallel", "1")
	if end.Status != runs.StatusCompleted {
		t.Errorf("epic.end %+v", end)
	}
	if n := a.dispatches(); len(n) != 4 || n["shop--a"] != 1 || n["shop--b"]+n["shop--c"] != 2 || n["shop--d"] != 1 {
		t.Errorf("dispatches %v, want one per story", n)
	}
	tries := 0
	for _, e := range a.runnerEvents() {
		if e.Level == runs.LevelWarn && strings.Contains(e.Message, "could not be started now, tried again") {
			tries++
		}
	}
	if tries != 2 {
		t.Errorf("%d retries announced, want 2: %+v", tries, a.runnerEvents())
	}
}

// unreliableGH puts gh behind a shell script that runs first (with $GH,
// the stand-in), standing for a network that fails as it says.
func (a *actions) unreliableGH(first string) {
	a.t.Helper()
	wrapper := filepath.Join(a.t.TempDir(), "gh")
	script := fmt.Sprintf("#!/bin/sh\nGH=%q\n%s\nexec \"$GH\" \"$@\"\n", a.gh, first)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		a.t.Fatal(err)
	}
	a.env = append(a.env, "SAGA_GH="+wrapper)
}
