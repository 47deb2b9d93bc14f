//go:build unix

package epic_test

// The epic runner driven as users drive it: the real binary (`saga-lsp run
// <epic>`, `status`, `stop`, `follow`), real git with a bare origin, a
// private tmux server, the stand-in claude (or the simulated agent of a dry
// run) and the gh stand-in.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/control"
	"github.com/saga-ai/saga-lsp/runs/epic"
	"github.com/saga-ai/saga-lsp/runs/readmodel"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// epicFixture is a repository holding epic shop: a diamond a → (b, c) → d,
// and e on its own.
type epicFixture struct {
	t          *testing.T
	root       string
	sessionDir string
	base       string // the stand-ins' state: gh.json, claude.jsonl
	env        []string
}

func task(id string, blockedBy ...string) string {
	b, _ := json.Marshal(blockedBy)
	if blockedBy == nil {
		b = []byte("[]")
	}
	return fmt.Sprintf(`{"id": %q, "subject": "Do %s", "description": "", "status": "pending", "blockedBy": %s}`+"\n", id, id, b)
}

func newEpicFixture(t *testing.T, withRemote bool) *epicFixture {
	t.Helper()
	return newEpicFixtureWith(t, withRemote, nil)
}

// newEpicFixtureWith is newEpicFixture with its files changed by edit
// before the first commit.
func newEpicFixtureWith(t *testing.T, withRemote bool, edit func(files map[string]string)) *epicFixture {
	t.Helper()
	children := `[
    {"id": "shop--a", "blockedBy": []},
    {"id": "shop--b", "blockedBy": ["shop--a"]},
    {"id": "shop--c", "blockedBy": ["shop--a"]},
    {"id": "shop--d", "blockedBy": ["shop--b", "shop--c"]},
    {"id": "shop--e", "blockedBy": []}
  ]`
	files := map[string]string{
		".saga/epics/shop/epic.json":       `{"id": "shop", "title": "Shop", "description": "", "children": ` + children + "}\n",
		".saga/stories/shop--a/journal.md": "# Journal: shop--a\n\n## 2026-11-20T10:12:00Z decision\nPrices are integers in cents.\n",
	}
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		id := "shop--" + s
		files[".saga/stories/"+id+"/story.json"] = fmt.Sprintf(`{"id": %q, "title": "Story %s", "description": "Part %s of the shop."}`+"\n", id, s, s)
		files[".saga/stories/"+id+"/"+s+"1.json"] = task(s + "1")
		files[".saga/stories/"+id+"/"+s+"2.json"] = task(s+"2", s+"1")
	}
	if edit != nil {
		edit(files)
	}
	root := t.TempDir()
	testkit.WriteFiles(t, root, files)
	testkit.InitRepo(t, root)
	base := t.TempDir()
	f := &epicFixture{t: t, root: root, sessionDir: t.TempDir(), base: base}
	f.env = append(testkit.CleanEnv(),
		"SAGA_TMUX_SOCKET="+testkit.TmuxServer(t),
		"SAGA_SESSION_DIR="+f.sessionDir,
		"SAGA_LSP_BIN="+testkit.Binary(t),
		"SAGA_CLAUDE="+testkit.Build(t, "./testdata/standin/claude"),
		"SAGA_GH="+testkit.Build(t, "./testdata/standin/gh"),
		"GH_STANDIN_STATE="+filepath.Join(base, "gh.json"),
		"GH_STANDIN_REPO=acme/shop",
		"SAGA_STANDIN_LOG="+filepath.Join(base, "claude.jsonl"),
		"CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"),
	)
	if withRemote {
		testkit.BareOrigin(t, root)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the runs that did not complete:\n%s", f.workerLogs())
		}
	})
	return f
}

// getenv is the fixture's environment for a runner run in this process.
func (f *epicFixture) getenv() func(string) string {
	env := map[string]string{}
	for _, kv := range f.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return func(k string) string { return env[k] }
}

func (f *epicFixture) saga(extra []string, args ...string) testkit.Result {
	f.t.Helper()
	return testkit.Run(f.t, f.root, append(slices.Clone(f.env), extra...), "", testkit.Binary(f.t), args...)
}

// events folds the newest epic run's events file.
func (f *epicFixture) events() []runs.Event {
	f.t.Helper()
	rs := runs.Runs(f.sessionDir, runs.KindEpic, "shop")
	if len(rs) == 0 {
		f.t.Fatal("no epic run")
	}
	var out []runs.Event
	tl := runs.Tail{Path: rs[len(rs)-1].EventsFile}
	tl.Read(func(e runs.Event) { out = append(out, e) })
	return out
}

func (f *epicFixture) status() readmodel.EpicStatus {
	f.t.Helper()
	r := f.saga(nil, "status", "shop", "--format", "json")
	if r.Code != 0 {
		f.t.Fatalf("status: exit %d\n%s", r.Code, r.Stderr)
	}
	var st struct{ Epic readmodel.EpicStatus }
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil {
		f.t.Fatalf("status json: %v\n%s", err, r.Stdout)
	}
	return st.Epic
}

func storyState(st readmodel.EpicStatus, id string) readmodel.EpicStory {
	for _, s := range st.Stories {
		if s.ID == id {
			return s
		}
	}
	return readmodel.EpicStory{}
}

// follow runs `saga-lsp follow shop --format json` until the run ends.
func (f *epicFixture) follow() testkit.Result {
	f.t.Helper()
	return f.saga(nil, "follow", "shop", "--format", "json")
}

// workerLogs is the output of every story run that did not complete,
// logged when a test fails.
func (f *epicFixture) workerLogs() string {
	var b strings.Builder
	for _, id := range []string{"shop--a", "shop--b", "shop--c", "shop--d", "shop--e"} {
		for _, rf := range runs.Runs(f.sessionDir, runs.KindStory, id) {
			if r := runs.ReadRun(rf.EventsFile); r == nil || r.State != runs.StatusCompleted {
				data, _ := os.ReadFile(runs.OutputOfEvents(rf.EventsFile))
				fmt.Fprintf(&b, "--- %s:\n%s\n", id, data)
			}
		}
	}
	return b.String()
}

// A diamond epic with K=2 completes in dependency order: a first; b and c
// (stacked on story/a) at most two at once; d last, from a merge of b and
// c, its PR against the base. follow shows the run to its end.
func TestDiamondEpic(t *testing.T) {
	f := newEpicFixture(t, true)
	r := f.saga(nil, "run", "shop", "--max-parallel", "2", "--format", "json")
	if r.Code != 0 {
		t.Fatalf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var started readmodel.Started
	if err := json.Unmarshal([]byte(r.Stdout), &started); err != nil || started.Epic != "shop" || !strings.HasPrefix(started.Session, "saga-epic-shop-") || started.PID == 0 {
		t.Fatalf("run --format json: %v %+v", err, started)
	}
	fr := f.follow()
	if fr.Code != 0 {
		t.Fatalf("follow: exit %d\n%s", fr.Code, fr.Stderr)
	}
	var last runs.Event
	for line := range strings.Lines(fr.Stdout) {
		json.Unmarshal([]byte(line), &last)
	}
	if last.Event != runs.KindEpicEnd || last.Status != runs.StatusCompleted || last.ExitCode == nil || *last.ExitCode != 0 {
		t.Fatalf("follow's last event %+v\n%s", last, fr.Stdout)
	}

	// Order: every start after its blockers' ends; never more than two at once.
	ended := map[string]int{}
	running, most := 0, 0
	for i, e := range f.events() {
		switch e.Event {
		case runs.KindStoryStart:
			running++
			most = max(most, running)
			if want := map[string]string{"shop--a": "main", "shop--b": "story/shop--a", "shop--c": "story/shop--a", "shop--d": "main", "shop--e": "main"}[e.Story]; e.Base != want {
				t.Errorf("story.start %s: base %q, want %q", e.Story, e.Base, want)
			}
			for _, b := range map[string][]string{"shop--b": {"shop--a"}, "shop--c": {"shop--a"}, "shop--d": {"shop--b", "shop--c"}}[e.Story] {
				if _, ok := ended[b]; !ok {
					t.Errorf("%s started before %s ended", e.Story, b)
				}
			}
		case runs.KindStoryEnd:
			running--
			ended[e.Story] = i
			if e.Status != runs.StatusCompleted {
				t.Errorf("%s ended %s", e.Story, e.Status)
			}
		}
	}
	if most > 2 || len(ended) != 5 {
		t.Errorf("at most %d at once (want ≤ 2); %d stories ended", most, len(ended))
	}
	// Branches: b and c stacked on a; d on a merge of b and c.
	st := f.status()
	if st.Done != 5 || st.Total != 5 || st.State != runs.StatusCompleted {
		t.Errorf("status: %+v", st)
	}
	for id, base := range map[string]string{"shop--a": "main", "shop--b": "story/shop--a", "shop--c": "story/shop--a", "shop--d": "main"} {
		if got := storyState(st, id); got.Base != base || got.Branch != "story/"+id {
			t.Errorf("%s: branch %q base %q, want story/%s from %s", id, got.Branch, got.Base, id, base)
		}
	}
	merges := testkit.Git(t, f.root, "log", "--format=%s", "--merges", "story/shop--d")
	if !strings.Contains(merges, "build on story/shop--b") || !strings.Contains(merges, "build on story/shop--c") {
		t.Errorf("story/shop--d is no merge of b and c:\n%s", merges)
	}
	files := testkit.Git(t, f.root, "ls-tree", "-r", "--name-only", "story/shop--d")
	for _, want := range []string{"saga-work/shop--a/a1.md", "saga-work/shop--b/b1.md", "saga-work/shop--c/c2.md", "saga-work/shop--d/d2.md"} {
		if !strings.Contains(files, want) {
			t.Errorf("story/shop--d lacks %s (its blockers' work)", want)
		}
	}

	// Handoff: b's prompt names a with its PR and its journal's decision;
	// d's names b and c.
	prs := f.pullRequests()
	prompts := f.prompts()
	if p := prompts["shop--b"]; !strings.Contains(p, "- shop--a \"Story a\" ("+prs["story/shop--a"].URL+")") ||
		!strings.Contains(p, "decision: Prices are integers in cents.") {
		t.Errorf("b's prompt lacks its handoff from a:\n%s", p)
	}
	if p := prompts["shop--d"]; !strings.Contains(p, "- shop--b \"Story b\" ("+prs["story/shop--b"].URL+")") ||
		!strings.Contains(p, "- shop--c \"Story c\"") || strings.Contains(p, "shop--a \"Story a\"") {
		t.Errorf("d's prompt lacks its handoff from b and c:\n%s", p)
	}
	if p := prompts["shop--a"]; strings.Contains(p, "builds on") {
		t.Errorf("a's prompt names blockers it does not have:\n%s", p)
	}
	// PRs: b stacked on a; d against main naming b and c; each body with
	// the epic's graph, its own story completed once ready.
	b, d := prs["story/shop--b"], prs["story/shop--d"]
	if b.BaseRefName != "story/shop--a" || !strings.Contains(b.Body, "Stacked on `story/shop--a`") {
		t.Errorf("b's PR: base %q\n%s", b.BaseRefName, b.Body)
	}
	if d.BaseRefName != "main" || !strings.Contains(d.Body, "- `shop--b` \"Story b\" ("+b.URL+")") || !strings.Contains(d.Body, "- `shop--c`") {
		t.Errorf("d's PR: base %q\n%s", d.BaseRefName, d.Body)
	}
	for head, p := range prs {
		if p.IsDraft || !strings.Contains(p.Body, "```mermaid\nflowchart TD\n") || !strings.Contains(p.Body, strings.TrimPrefix(head, "story/")+" · completed") {
			t.Errorf("%s's PR: draft %v, body:\n%s", head, p.IsDraft, p.Body)
		}
	}
}

// ghPR is a pull request as the gh stand-in stores it.
type ghPR struct {
	URL         string `json:"url"`
	BaseRefName string `json:"baseRefName"`
	HeadRefName string `json:"headRefName"`
	Body        string `json:"body"`
	IsDraft     bool   `json:"isDraft"`
}

// pullRequests are the gh stand-in's pull requests by head branch.
func (f *epicFixture) pullRequests() map[string]ghPR {
	f.t.Helper()
	var st struct{ PRs []ghPR }
	data, err := os.ReadFile(filepath.Join(f.base, "gh.json"))
	if err != nil || json.Unmarshal(data, &st) != nil {
		f.t.Fatalf("gh state: %v\n%s", err, data)
	}
	out := map[string]ghPR{}
	for _, p := range st.PRs {
		out[p.HeadRefName] = p
	}
	return out
}

// prompts are the -p prompts the stand-in claude was given, by story (the
// first run's).
func (f *epicFixture) prompts() map[string]string {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join(f.base, "claude.jsonl"))
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]string{}
	for line := range strings.Lines(string(data)) {
		var inv struct {
			Args []string
			Env  map[string]string
		}
		json.Unmarshal([]byte(line), &inv)
		story := inv.Env["SAGA_STORY_ID"]
		if i := slices.Index(inv.Args, "-p"); i >= 0 && i+1 < len(inv.Args) && out[story] == "" {
			out[story] = inv.Args[i+1]
		}
	}
	return out
}

// A story of an epic run by hand starts as the runner would start it: b,
// whose blocker a completed unmerged, from story/a, its PR stacked on a's;
// d, whose blocker c never ran, is refused.
func TestStoryRunByHandBuildsOnBlockers(t *testing.T) {
	f := newEpicFixture(t, true)
	for _, story := range []string{"shop--a", "shop--b"} {
		if r := f.saga(nil, "run", story); r.Code != 0 {
			t.Fatalf("run %s: exit %d\n%s%s", story, r.Code, r.Stdout, r.Stderr)
		}
		if r := f.saga(nil, "follow", story); r.Code != 0 {
			t.Fatalf("follow %s: exit %d\n%s%s", story, r.Code, r.Stdout, r.Stderr)
		}
	}
	if b := f.pullRequests()["story/shop--b"]; b.BaseRefName != "story/shop--a" {
		t.Errorf("b's PR against %q, want story/shop--a", b.BaseRefName)
	}
	if r := testkit.Run(t, f.root, nil, "", "git", "merge-base", "--is-ancestor", "story/shop--a", "story/shop--b"); r.Code != 0 {
		t.Errorf("story/shop--b does not start from story/shop--a")
	}
	r := f.saga(nil, "run", "shop--d")
	if r.Code != 1 || !strings.Contains(r.Stderr, "blockers are not completed: shop--c —") {
		t.Errorf("run d before c: exit %d\n%s", r.Code, r.Stderr)
	}
}

// A failing story holds only its dependents: b fails, so d is held; a, c
// and e complete. The runner exits 1.
func TestFailingStoryHoldsDependents(t *testing.T) {
	f := newEpicFixture(t, false)
	extra := []string{"SAGA_STANDIN_SCRIPTS=shop--b=crash"}
	if r := f.saga(extra, "run", "shop", "--max-parallel", "3"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s", r.Code, r.Stderr)
	}
	if fr := f.follow(); fr.Code != 1 {
		t.Fatalf("follow: exit %d, want the runner's 1\n%s", fr.Code, fr.Stderr)
	}
	st := f.status()
	want := map[string]string{"shop--a": "completed", "shop--b": "failed", "shop--c": "completed", "shop--d": "held", "shop--e": "completed"}
	for id, state := range want {
		if got := storyState(st, id); got.State != state {
			t.Errorf("%s: %s, want %s", id, got.State, state)
		}
	}
	if d := storyState(st, "shop--d"); !slices.Equal(d.HeldBy, []string{"shop--b"}) {
		t.Errorf("d held by %v", d.HeldBy)
	}
	if n := count(f.events(), runs.KindStoryStart, "shop--d"); n != 0 {
		t.Errorf("d started %d times", n)
	}
}

func count(evs []runs.Event, kind, story string) int {
	n := 0
	for _, e := range evs {
		if e.Event == kind && e.Story == story {
			n++
		}
	}
	return n
}

// Blockers whose branches conflict hold their dependent with the files
// listed: b and c both write same.md, each its own text, so d is held (not
// started), the runner exits 3, and status says why. (Tasks of one id in
// both are no conflict: the simulated agent's files are per story.)
func TestConflictingBlockersHoldDependent(t *testing.T) {
	testkit.Bwrap(t) // the agent's Bash
	f := newEpicFixture(t, false)
	for _, s := range []string{"b", "c"} {
		p := filepath.Join(f.root, ".saga/stories/shop--"+s+"/same.json")
		same := `{"id": "same", "subject": "Write same.md", "description": "SIMAGENT bash echo ` + s + ` > same.md", "status": "pending", "blockedBy": []}` + "\n"
		if err := os.WriteFile(p, []byte(same), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Git(t, f.root, "add", "-A")
	testkit.Git(t, f.root, "commit", "-q", "-m", "b and c touch the same file")
	if r := f.saga(nil, "run", "shop", "--max-parallel", "2"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s", r.Code, r.Stderr)
	}
	if fr := f.follow(); fr.Code != 3 {
		// Why no conflict: did each blocker's agent write same.md?
		for _, s := range []string{"shop--b", "shop--c"} {
			if r := testkit.Run(t, f.root, nil, "", "git", "show", "story/"+s+":same.md"); r.Code != 0 {
				for _, rf := range runs.Runs(f.sessionDir, runs.KindStory, s) {
					t.Logf("%s has no same.md on its branch; its worker's log:\n%s", s, testkit.FileText(runs.OutputOfEvents(rf.EventsFile)))
				}
			}
		}
		t.Fatalf("follow: exit %d, want 3 (held)\n%s", fr.Code, fr.Stdout)
	}
	d := storyState(f.status(), "shop--d")
	if d.State != readmodel.EpicHeld || !slices.Equal(d.Conflicts, []string{"same.md"}) {
		t.Errorf("d: %+v", d)
	}
	var held *runs.Event
	for _, e := range f.events() {
		if e.Event == runs.KindStoryHeld && e.Story == "shop--d" {
			held = &e
		}
	}
	if held == nil || !slices.Equal(held.Files, []string{"same.md"}) {
		t.Errorf("story.held of d: %+v", held)
	}
	if n := len(runs.Runs(f.sessionDir, runs.KindStory, "shop--d")); n != 0 {
		t.Errorf("d ran %d times", n)
	}
	if r := testkit.Run(t, f.root, nil, "", "git", "rev-parse", "--verify", "--quiet", "refs/heads/story/shop--d"); r.Code == 0 {
		t.Errorf("the failed merge left story/shop--d behind")
	}
}

// Issue 33 point 6: an epic's dry run never conflicts with itself. b and c,
// d's two blockers, each have a task "implement": the simulated agent's
// files are per story (saga-work/<story>/<task>.md), so d's merge of their
// dry branches is clean and no story is held.
func TestDryRunSharedTaskIDsNeverConflict(t *testing.T) {
	f := newEpicFixture(t, false)
	for _, s := range []string{"b", "c"} {
		testkit.WriteFiles(t, f.root, map[string]string{".saga/stories/shop--" + s + "/implement.json": task("implement")})
	}
	testkit.Git(t, f.root, "add", "-A")
	testkit.Git(t, f.root, "commit", "-q", "-m", "b and c both implement")
	if r := f.saga(nil, "run", "shop", "--dry-run", "--max-parallel", "2"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s", r.Code, r.Stderr)
	}
	if fr := f.follow(); fr.Code != 0 {
		t.Fatalf("follow: exit %d, want 0\n%s%s", fr.Code, fr.Stdout, fr.Stderr)
	}
	for _, e := range f.events() {
		if e.Event == runs.KindStoryHeld {
			t.Errorf("%s held: %s %v", e.Story, e.Message, e.Files)
		}
	}
	files := testkit.Git(t, f.root, "ls-tree", "-r", "--name-only", "saga-dry/shop--d")
	for _, want := range []string{"saga-work/shop--b/implement.md", "saga-work/shop--c/implement.md", "saga-work/shop--d/d2.md"} {
		if !strings.Contains(files, want) {
			t.Errorf("saga-dry/shop--d lacks %s:\n%s", want, files)
		}
	}
}

// A runner killed mid-run resumes: run again, the finished stories are not
// run again, the live worker is followed, the rest is scheduled.
func TestKilledRunnerResumes(t *testing.T) {
	f := newEpicFixture(t, false)
	slow := []string{"SAGA_STANDIN_SCRIPTS=shop--b=slow,shop--c=slow", "SAGA_STANDIN_DELAY_MS=400"}
	if r := f.saga(slow, "run", "shop", "--max-parallel", "2"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s", r.Code, r.Stderr)
	}
	// Once b runs (a completed), kill the runner.
	if !testkit.WaitUntil(60*time.Second, func() bool { return storyState(f.status(), "shop--b").State == readmodel.EpicRunning }) {
		t.Fatalf("b never ran: %+v", f.status())
	}
	first := f.status()
	// A second run while the runner lives is refused, naming it.
	if r := f.saga(slow, "run", "shop"); r.Code != 1 || !strings.Contains(r.Stderr, "tmux session "+first.Session) {
		t.Errorf("run while the runner lives: exit %d\n%s", r.Code, r.Stderr)
	}
	if err := syscall.Kill(first.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Its lock is free once the kernel closed all its files (a zombie
	// leader can still have threads holding them).
	testkit.WaitUntil(30*time.Second, func() bool { _, held, _ := runs.EpicLock(f.root, "shop", true); return !held })
	if r := f.saga(slow, "run", "shop", "--max-parallel", "2"); r.Code != 0 {
		pid, held, err := runs.EpicLock(f.root, "shop", true)
		t.Fatalf("run again: exit %d\n%s%s\nlock %d %v %v; first pid %d alive %v", r.Code, r.Stdout, r.Stderr, pid, held, err, first.PID, filesafe.ProcessAlive(first.PID))
	}
	if fr := f.follow(); fr.Code != 0 {
		t.Fatalf("follow: exit %d\n%s", fr.Code, fr.Stderr)
	}
	st := f.status()
	if st.Done != 5 {
		t.Fatalf("after the resume: %+v", st)
	}
	// The second runner never started a: it completed under the first.
	if n := count(f.events(), runs.KindStoryStart, "shop--a"); n != 0 {
		t.Errorf("a started again (%d) after it completed", n)
	}
	// Every story ran exactly once in all: one worker run each.
	for _, id := range []string{"shop--a", "shop--b", "shop--c", "shop--d", "shop--e"} {
		if n := len(runs.Runs(f.sessionDir, runs.KindStory, id)); n != 1 {
			t.Errorf("%s ran %d times", id, n)
		}
	}
}

// stop <epic> stops the runner and every worker it started; the runner's
// end says stopped; nothing of the epic runs afterwards.
func TestStopEpic(t *testing.T) {
	f := newEpicFixture(t, false)
	slow := []string{"SAGA_STANDIN_SCRIPT=slow", "SAGA_STANDIN_DELAY_MS=500"}
	if r := f.saga(slow, "run", "shop", "--max-parallel", "2"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s", r.Code, r.Stderr)
	}
	if !testkit.WaitUntil(60*time.Second, func() bool { return len(f.status().Running) == 2 }) {
		t.Fatalf("two stories never ran: %+v", f.status())
	}
	r := f.saga(nil, "stop", "shop")
	if r.Code != 0 || !strings.Contains(r.Stdout, "stopped epic shop") {
		t.Fatalf("stop: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	st := f.status()
	if len(st.Running) != 0 || st.State != runs.StatusStopped {
		t.Errorf("after stop: %+v", st)
	}
	for _, s := range st.Stories {
		if _, held, _ := runs.WorkerLock(f.root, s.ID, true); held {
			t.Errorf("%s still has a worker", s.ID)
		}
	}
	evs := f.events()
	if end := evs[len(evs)-1]; end.Event != runs.KindEpicEnd || end.Status != runs.StatusStopped {
		t.Errorf("last event %+v", end)
	}
}

// Bad input: each a clear error naming what to do, exit 2, nothing started.
func TestEpicRunUsage(t *testing.T) {
	f := newEpicFixture(t, false)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "nope"}, "no story \"nope\""},
		{[]string{"run", "shop", "--max-parallel", "0"}, "--max-parallel must be ≥ 1, got 0"},
		{[]string{"run", "shop", "--max-cost", "-1"}, "--max-cost must be ≥ 0"},
		{[]string{"run", "shop", "--after", "merged"}, "--after merged needs"},
		{[]string{"run", "shop", "--after", "soon"}, `unknown --after "soon"`},
	} {
		r := f.saga(nil, c.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s", c.args, r.Code, c.want, r.Stderr)
		}
	}
	// More epics, each wrong in one way.
	for rel, text := range map[string]string{
		".saga/epics/empty/epic.json":        `{"id": "empty", "title": "E", "description": "", "children": []}`,
		".saga/epics/bare/epic.json":         `{"id": "bare", "title": "B", "description": "", "children": [{"id": "bare--x", "blockedBy": []}]}`,
		".saga/stories/bare--x/story.json":   `{"id": "bare--x", "title": "X", "description": ""}`,
		".saga/epics/dangle/epic.json":       `{"id": "dangle", "title": "D", "description": "", "children": [{"id": "dangle--y", "blockedBy": []}, {"id": "dangle--ghost", "blockedBy": []}]}`,
		".saga/stories/dangle--y/story.json": `{"id": "dangle--y", "title": "Y", "description": ""}`,
		".saga/stories/dangle--y/y.json":     task("y"),
	} {
		p := filepath.Join(f.root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args  []string
		extra []string
		code  int
		want  string
	}{
		{[]string{"run", "empty"}, nil, 2, "epic empty has no stories: add one with `saga-lsp new story <name> --epic empty"},
		{[]string{"run", "bare"}, nil, 2, "stories of epic bare have no tasks: bare--x — add tasks with"},
		{[]string{"run", "dangle"}, nil, 1, "dangle--ghost"},
		{[]string{"run", "shop", "--after", "merged"}, []string{"SAGA_GH=" + filepath.Join(f.root, "no-gh")}, 2, "--after merged needs gh to see when a PR is merged"},
	} {
		r := f.saga(c.extra, c.args...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: exit %d, want %d and %q\n%s", c.args, r.Code, c.code, c.want, r.Stderr)
		}
	}
	for _, epic := range []string{"shop", "empty", "bare", "dangle"} {
		if rs := runs.Runs(f.sessionDir, runs.KindEpic, epic); len(rs) != 0 {
			t.Errorf("a runner of %s was started", epic)
		}
	}
}

// A name that is both an epic and a story is refused unless --epic or
// --story says which.
func TestAmbiguousName(t *testing.T) {
	f := newEpicFixture(t, false)
	dir := filepath.Join(f.root, ".saga/stories/shop")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "story.json"), []byte(`{"id": "shop", "title": "S", "description": ""}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "t.json"), []byte(task("t")), 0o644)
	for _, cmd := range []string{"run", "status", "stop", "follow"} {
		r := f.saga(nil, cmd, "shop")
		if r.Code != 2 || !strings.Contains(r.Stderr, `"shop" is both a story and an epic: pass --story or --epic`) {
			t.Errorf("%s: exit %d\n%s", cmd, r.Code, r.Stderr)
		}
	}
	if r := f.saga(nil, "status", "shop", "--epic", "--format", "json"); r.Code != 0 || !strings.Contains(r.Stdout, `"epic"`) {
		t.Errorf("status --epic: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// --max-cost: once the epic's spend reaches the cap no new story starts
// (and no running story starts another run); the runner exits 2 and says
// which stories it left.
func TestCostCapStopsNewStarts(t *testing.T) {
	f := newEpicFixture(t, false)
	priced := []string{"SAGA_STANDIN_COST_USD=0.6"}
	if r := f.saga(priced, "run", "shop", "--max-parallel", "1", "--max-cost", "1"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s", r.Code, r.Stderr)
	}
	fr := f.follow()
	if fr.Code != 2 {
		t.Fatalf("follow: exit %d, want the runner's 2\n%s", fr.Code, fr.Stderr)
	}
	evs := f.events()
	starts := 0
	capAt := -1
	for i, e := range evs {
		switch e.Event {
		case runs.KindStoryStart:
			starts++
			if capAt >= 0 {
				t.Errorf("%s started after the cap", e.Story)
			}
		case runs.KindEpicCap:
			capAt = i
		}
	}
	if capAt < 0 || starts != 2 {
		t.Fatalf("cap at %d, %d starts (want the cap after 2 runs of $0.60)", capAt, starts)
	}
	end := evs[len(evs)-1]
	if end.Event != runs.KindEpicEnd || end.Status != runs.StatusTimeout || end.Cost == nil || *end.Cost < 1 {
		t.Errorf("end %+v", end)
	}
	if !strings.Contains(fr.Stderr, "left: ") {
		t.Errorf("the runner does not say which stories it left:\n%s", fr.Stderr)
	}
}

// --after merged: a dependent starts only once its blocker's PR is merged
// into the base, and then from the freshly fetched base.
func TestAfterMerged(t *testing.T) {
	f := newEpicFixture(t, true)
	if r := f.saga(nil, "run", "shop", "--after", "merged", "--max-parallel", "2", "--poll", "0.1"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s", r.Code, r.Stderr)
	}
	defer f.saga(nil, "stop", "shop")
	// a completes and its PR is ready, but not merged: b and c wait.
	if !testkit.WaitUntil(60*time.Second, func() bool {
		st := f.status()
		e := storyState(st, "shop--e").State
		return storyState(st, "shop--a").State == runs.StatusCompleted && (e == runs.StatusCompleted || e == runs.StatusFailed)
	}) {
		t.Fatalf("a and e never completed: %+v", f.status())
	}
	if e := storyState(f.status(), "shop--e"); e.State != runs.StatusCompleted {
		t.Fatalf("e %s", e.State)
	}
	if s := storyState(f.status(), "shop--b"); s.State != readmodel.EpicWaiting {
		t.Fatalf("b %s before a's PR merged", s.State)
	}
	// A face renders what was recorded and never asks GitHub to draw
	// itself (docs/architecture.md#one-read-model-of-a-run): plan of an
	// epic whose run waits for merges calls no gh.
	ghLog := filepath.Join(t.TempDir(), "gh.log")
	if r := f.saga([]string{"GH_STANDIN_LOG=" + ghLog}, "plan", "shop", "--format", "json"); r.Code != 0 {
		t.Fatalf("plan: exit %d\n%s", r.Code, r.Stderr)
	}
	if calls, err := os.ReadFile(ghLog); err == nil {
		t.Errorf("plan asked gh to render the epic:\n%s", calls)
	}
	// Merge a's PR as GitHub would: its branch into main on the origin, the
	// PR marked merged.
	origin := strings.TrimSpace(testkit.Git(t, f.root, "remote", "get-url", "origin"))
	testkit.Git(t, f.root, "fetch", "-q", "origin")
	testkit.Git(t, f.root, "checkout", "-q", "-b", "merge-a", "origin/main")
	testkit.Git(t, f.root, "merge", "-q", "--no-ff", "-m", "Merge story/shop--a", "origin/story/shop--a")
	testkit.Git(t, f.root, "push", "-q", origin, "merge-a:main")
	testkit.Git(t, f.root, "checkout", "-q", "main")
	markMerged(t, f, "story/shop--a")
	if !testkit.WaitUntil(60*time.Second, func() bool {
		b := storyState(f.status(), "shop--b")
		return (b.State == readmodel.EpicRunning || b.State == runs.StatusCompleted) && b.Base != ""
	}) {
		t.Fatalf("b never started after a merged: %+v", f.status())
	}
	if b := storyState(f.status(), "shop--b"); b.Base != "main" {
		t.Errorf("b built on %q, want the base main (a is merged)", b.Base)
	}
}

// markMerged sets a PR of the gh stand-in's state to MERGED.
func markMerged(t *testing.T, f *epicFixture, head string) {
	t.Helper()
	var path string
	for _, kv := range f.env {
		if v, ok := strings.CutPrefix(kv, "GH_STANDIN_STATE="); ok {
			path = v
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	json.Unmarshal(data, &st)
	for _, p := range st["prs"].([]any) {
		if pr := p.(map[string]any); pr["headRefName"] == head {
			pr["state"] = "MERGED"
		}
	}
	out, _ := json.Marshal(st)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runnerOptions are the options of an in-process runner of the fixture's
// epic (its first run) starting its stories through b, parallel at once.
func (f *epicFixture) runnerOptions(b control.Backend, parallel int) epic.Options {
	return epic.Options{Epic: "shop", Dir: f.root, EpicFlags: runs.EpicFlags{MaxParallel: parallel}, Worker: runs.WorkerFlags{}.WithDefaults(),
		Process: runs.Process{OutputFile: filepath.Join(f.sessionDir, "saga-epic-shop-1.log"), Session: "saga-epic-shop-1",
			Stdout: io.Discard, Env: f.getenv()},
		Self: testkit.Binary(f.t), Backend: b}
}
