//go:build unix

package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/worker"
	"github.com/saga-ai/saga-lsp/store"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// fixture is a git repository holding a copy of examples/workspace, with a
// bare origin, a private Claude config dir and gh stand-in state; sagaLSP is
// the binary (the hook command and the worker process).
type fixture struct {
	t       *testing.T
	root    string
	origin  string
	claude  string // CLAUDE_CONFIG_DIR
	ghState string
	ghLog   string // the gh stand-in's invocations
	out     string // output file
	sagaLSP string
}

func newFixture(t *testing.T, withRemote bool) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{t: t, root: testkit.GitRepo(t, filepath.Join(testkit.ModuleRoot(t), "examples", "workspace")),
		claude: filepath.Join(base, "claude"), ghState: filepath.Join(base, "gh.json"), ghLog: filepath.Join(base, "gh.log"),
		out: filepath.Join(base, "sessions", "run.log"), sagaLSP: testkit.Binary(t)}
	if withRemote {
		f.origin = testkit.BareOrigin(t, f.root)
	}
	// The worker's children (claude, hooks, gh) inherit the process env.
	for k, v := range map[string]string{
		"CLAUDE_CONFIG_DIR": f.claude,
		"SAGA_CLAUDE":       testkit.Build(t, "./testdata/standin/claude"),
		"SAGA_GH":           testkit.Build(t, "./testdata/standin/gh"),
		"GH_STANDIN_STATE":  f.ghState,
		"GH_STANDIN_LOG":    f.ghLog,
		"GH_STANDIN_REPO":   "acme/shop",
		"SAGA_SESSION_DIR":  filepath.Join(base, "sessions"),
		"HOME":              base,
	} {
		t.Setenv(k, v)
	}
	return f
}

func (f *fixture) git(args ...string) string {
	f.t.Helper()
	return f.gitIn(f.root, args...)
}

// gitIn runs git in dir (a worktree of the fixture's repository).
func (f *fixture) gitIn(dir string, args ...string) string {
	f.t.Helper()
	return testkit.Git(f.t, dir, args...)
}

// run runs the worker in-process with the stand-in claude's script.
func (f *fixture) run(story, script string, mod func(*worker.Options)) (int, string) {
	f.t.Helper()
	f.t.Setenv("SAGA_STANDIN_SCRIPT", script)
	var out bytes.Buffer
	o := worker.Options{Story: story, Dir: f.root, Self: f.sagaLSP, Process: runs.Process{OutputFile: f.out, Stdout: &out}, WorkerFlags: runs.WorkerFlags{MaxCycles: 5, MaxTime: 1}}
	if mod != nil {
		mod(&o)
	}
	code := worker.Run(context.Background(), o)
	return code, out.String()
}

// worktreeStatuses reads the task statuses from the story's worktree copy.
func (f *fixture) worktreeStatuses(story string) map[string]string {
	f.t.Helper()
	return f.worktreeStatusesIn(story, story)
}

// worktreeStatusesIn reads them from the copy in .saga/worktrees/<dir>
// (<story>.dry: a dry run's).
func (f *fixture) worktreeStatusesIn(dir, story string) map[string]string {
	f.t.Helper()
	s := workspace.Story(f.t, filepath.Join(f.root, ".saga", "worktrees", dir), story)
	out := map[string]string{}
	for _, t := range s.Tasks {
		out[t.ID] = t.Status
	}
	return out
}

// events reads the run's events file, failing on a line that is not an
// event.
func (f *fixture) events() []runs.Event {
	f.t.Helper()
	tail := runs.Tail{Path: f.out + ".events.jsonl", Bad: func(line, why string) { f.t.Fatalf("events line %q: %s", line, why) }}
	var evs []runs.Event
	for {
		n, err := tail.Read(func(e runs.Event) { evs = append(evs, e) })
		if err != nil {
			f.t.Fatal(err)
		}
		if n == 0 {
			return evs
		}
	}
}

func lastEnd(evs []runs.Event) runs.Event {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Event == "worker.end" {
			return evs[i]
		}
	}
	return runs.Event{}
}

func (f *fixture) ghPRs() []map[string]any {
	data, err := os.ReadFile(f.ghState)
	if err != nil {
		return nil
	}
	var st struct {
		PRs []map[string]any `json:"prs"`
	}
	json.Unmarshal(data, &st)
	return st.PRs
}

func TestStopRules(t *testing.T) {
	tests := []struct {
		name     string
		story    string
		script   string
		mod      func(*worker.Options)
		code     int
		status   string
		statuses map[string]string // worktree statuses after
	}{
		{name: "finish everything", story: "add-logout-button", script: "all", code: runs.ExitCompleted, status: "completed",
			statuses: map[string]string{"write-tests": "completed", "implement-button": "completed"}},
		{name: "one task per run", story: "add-logout-button", script: "one", code: runs.ExitCompleted, status: "completed",
			statuses: map[string]string{"write-tests": "completed", "implement-button": "completed"}},
		{name: "max cycles", story: "add-logout-button", script: "one", mod: func(o *worker.Options) { o.MaxCycles = 1 },
			code: runs.ExitLimit, status: "timeout", statuses: map[string]string{"write-tests": "completed", "implement-button": "pending"}},
		{name: "crash mid-task", story: "add-logout-button", script: "crash", code: runs.ExitFailed, status: "failed",
			statuses: map[string]string{"write-tests": "pending", "implement-button": "pending"}},
		{name: "do nothing twice", story: "add-logout-button", script: "idle", code: runs.ExitLimit, status: "timeout",
			statuses: map[string]string{"write-tests": "pending", "implement-button": "pending"}},
		{name: "blocker in the journal", story: "add-logout-button", script: "blocker", code: runs.ExitBlocked, status: "blocked",
			statuses: map[string]string{"write-tests": "pending", "implement-button": "pending"}},
		{name: "max time", story: "add-logout-button", script: "slow", mod: func(o *worker.Options) { o.MaxTime = 0.005 },
			code: runs.ExitLimit, status: "timeout"},
		{name: "no hooks: reconciliation syncs", story: "add-logout-button", script: "nohooks", code: runs.ExitCompleted, status: "completed",
			statuses: map[string]string{"write-tests": "completed", "implement-button": "completed"}},
		{name: "dry run", story: "add-logout-button", script: "crash", mod: func(o *worker.Options) { o.DryRun = true },
			code: runs.ExitCompleted, status: "completed", statuses: map[string]string{"write-tests": "completed", "implement-button": "completed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, false)
			if tt.name == "max time" {
				t.Setenv("SAGA_STANDIN_DELAY_MS", "400")
			}
			code, out := f.run(tt.story, tt.script, tt.mod)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s", code, tt.code, out)
			}
			end := lastEnd(f.events())
			if end.Status != tt.status || end.ExitCode == nil || *end.ExitCode != tt.code {
				t.Errorf("worker.end %+v, want status %s", end, tt.status)
			}
			dry := tt.name == "dry run" // apart: docs/worker.md#dry-runs
			// The run's line in its record: a run whose claude crashed
			// without a result reported no cost, and says so
			// (docs/landing.md#the-epics-outcome-counted).
			if rec, _ := runs.ReadRecord(f.root, tt.story); !dry {
				unknown := map[string]int{"crash": 1, "all": 0, "one": 0}
				if h := rec.History; len(h) != 1 || h[0].Status != tt.status || h[0].Review {
					t.Errorf("run lines %+v, want one %s", h, tt.status)
				} else if want, ok := unknown[tt.script]; ok && h[0].CostUnknown != want {
					t.Errorf("%d headless runs without a cost, want %d: %+v", h[0].CostUnknown, want, h[0])
				}
			}
			wtName, branch := tt.story, "story/"+tt.story
			if dry {
				wtName, branch = tt.story+".dry", "saga-dry/"+tt.story
			}
			if tt.statuses != nil {
				if got := f.worktreeStatusesIn(wtName, tt.story); !maps.Equal(got, tt.statuses) {
					t.Errorf("statuses %v, want %v\n%s", got, tt.statuses, out)
				}
			}
			// The end step always leaves nothing in progress and commits.
			for id, st := range f.worktreeStatusesIn(wtName, tt.story) {
				if st == store.StatusInProgress {
					t.Errorf("%s left in progress", id)
				}
			}
			// (An agent that changed nothing leaves nothing to commit.)
			if msg := f.git("log", "-1", "--format=%s", branch); !strings.HasPrefix(msg, "saga("+tt.story+"): ") && msg != f.git("log", "-1", "--format=%s", "main") {
				t.Errorf("last commit on the branch: %q", msg)
			}
			// Everything the agent left is committed: the worktree is clean.
			if st := f.gitIn(filepath.Join(f.root, ".saga/worktrees", wtName), "status", "--porcelain"); st != "" {
				t.Errorf("worktree not clean after the end:\n%s", st)
			}
			// The hydrated list is removed (no --keep-tasks).
			if des, _ := os.ReadDir(filepath.Join(f.claude, "tasks")); len(des) != 0 {
				t.Errorf("task lists left behind: %v", des)
			}
		})
	}
}

// TestHeadlessInvocation: the exact flags and environment of a run, and the
// hydrated list's bytes while it runs (--keep-tasks keeps it for the check).
func TestHeadlessInvocation(t *testing.T) {
	f := newFixture(t, false)
	log := filepath.Join(t.TempDir(), "claude.log")
	t.Setenv("SAGA_STANDIN_LOG", log)
	code, out := f.run("user-auth--api", "all", func(o *worker.Options) { o.KeepTasks = true; o.Model = "sonnet" })
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	inv := firstInvocation(t, log)
	wt := filepath.Join(f.root, ".saga", "worktrees", "user-auth--api")
	if a, _ := filepath.EvalSymlinks(inv.Cwd); a != mustEval(t, wt) {
		t.Errorf("cwd %s, want the worktree %s", inv.Cwd, wt)
	}
	flag := func(name string) string {
		i := slices.Index(inv.Args, name)
		if i < 0 || i+1 >= len(inv.Args) {
			return ""
		}
		return inv.Args[i+1]
	}
	if inv.Args[0] != "-p" || !strings.Contains(inv.Args[1], "You are working on: Authentication API") ||
		!strings.Contains(inv.Args[1], "Guidance: Follow the handler style") || !strings.Contains(inv.Args[1], "TaskList, TaskGet, and TaskUpdate") ||
		strings.Contains(inv.Args[1], "Avoid:") ||
		// The worker commits; the agent's sandbox cannot (issue 22).
		!strings.Contains(inv.Args[1], "Do not commit: the worker commits and pushes everything you leave") || strings.Contains(inv.Args[1], "git add, git commit") {
		t.Errorf("prompt: %q", inv.Args[1])
	}
	if flag("--output-format") != "stream-json" || !slices.Contains(inv.Args, "--verbose") || flag("--model") != "sonnet" ||
		flag("--permission-mode") != "acceptEdits" || flag("--allowedTools") != "TaskList TaskGet TaskUpdate TaskCreate" {
		t.Errorf("flags: %q", inv.Args)
	}
	// Only the user's settings and ours load: nothing the agent could have
	// written in the worktree (.claude/settings*.json, .mcp.json).
	if flag("--setting-sources") != "user" || !slices.Contains(inv.Args, "--strict-mcp-config") {
		t.Errorf("settings sources: %q", inv.Args)
	}
	var settings struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct{ Type, Command string }
		} `json:"hooks"`
		Sandbox struct {
			Enabled, AutoAllowBashIfSandboxed, AllowUnsandboxedCommands bool
			Filesystem                                                  struct{ AllowWrite []string }
		} `json:"sandbox"`
	}
	if err := json.Unmarshal([]byte(flag("--settings")), &settings); err != nil {
		t.Fatalf("--settings: %v", err)
	}
	// Bash confined by Claude Code's sandbox, the build caches writable.
	sb := settings.Sandbox
	if !sb.Enabled || !sb.AutoAllowBashIfSandboxed || sb.AllowUnsandboxedCommands || len(sb.Filesystem.AllowWrite) != 1 ||
		!strings.HasPrefix(inv.Env["GOCACHE"], sb.Filesystem.AllowWrite[0]) || inv.Env["ENABLE_TOOL_SEARCH"] != "false" {
		t.Errorf("sandbox %+v, GOCACHE %q, ENABLE_TOOL_SEARCH %q", sb, inv.Env["GOCACHE"], inv.Env["ENABLE_TOOL_SEARCH"])
	}
	if m := settings.Hooks["PostToolUse"]; len(m) != 1 || m[0].Matcher != "TaskUpdate" || m[0].Hooks[0].Command != filepath.Join(filepath.Dir(f.sagaLSP), runs.HookBinary)+" hook" {
		// saga-lsp-hook, built beside saga-lsp (docs/hooks.md#the-hook-program).
		t.Errorf("PostToolUse hooks %+v", m)
	}
	if m := settings.Hooks["PreToolUse"]; len(m) != 1 || m[0].Matcher != "Write|Edit|MultiEdit|NotebookEdit" {
		t.Errorf("PreToolUse hooks %+v", m)
	}
	list := inv.Env["CLAUDE_CODE_TASK_LIST_ID"]
	if !strings.HasPrefix(list, "saga__user-auth--api__") || inv.Env["CLAUDE_CODE_ENABLE_TASKS"] != "true" ||
		inv.Env["SAGA_STORY_ID"] != "user-auth--api" || inv.Env["SAGA_STORY_PATH"] != "user-auth--api" ||
		inv.Env["SAGA_STORY_TASK_LIST_ID"] != list || inv.Env["SAGA_TASK_CONTEXT"] != "story-worktree" ||
		inv.Env["SAGA_PROJECT_DIR"] != wt || inv.Env["SAGA_SESSION_DIR"] == "" {
		t.Errorf("environment: %v", inv.Env)
	}
	// The kept list: Claude Code's format, every task, byte for byte what
	// claudetasks encodes (its own tests pin that format against node).
	dir := filepath.Join(f.claude, "tasks", list)
	tasks, err := claudecode.Read(dir)
	if err != nil || len(tasks) != 5 {
		t.Fatalf("kept list %s: %d tasks, %v", dir, len(tasks), err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "login-endpoint.json"))
	want, _ := claudecode.Encode(tasks["login-endpoint"])
	if !bytes.Equal(raw, want) || bytes.HasSuffix(raw, []byte("\n")) || !bytes.HasPrefix(raw, []byte("{\n  \"id\": \"login-endpoint\",\n  \"subject\"")) {
		t.Errorf("task file bytes:\n%s", raw)
	}
	if got := tasks["hash-passwords"].Blocks; !slices.Equal(got, []string{"login-endpoint", "signup-endpoint"}) {
		t.Errorf("blocks of hash-passwords = %v", got)
	}
	// The story completes; its branch and worktree are the run's (its
	// record), never written into the person's story.json (issue 23).
	sj, _ := os.ReadFile(filepath.Join(wt, ".saga/stories/user-auth--api/story.json"))
	if !strings.Contains(string(sj), `"status": "completed"`) || strings.Contains(string(sj), `"branch"`) || strings.Contains(string(sj), `"worktree"`) {
		t.Errorf("story.json:\n%s", sj)
	}
	if rec, ok := runs.ReadRecord(f.root, "user-auth--api"); !ok || rec.Branch != "story/user-auth--api" || rec.Worktree != ".saga/worktrees/user-auth--api" {
		t.Errorf("run record %+v", rec)
	}
}

// The agent's files reach the branch after each run, pushed; what it
// changed in .saga/ outside its journal and statuses is reverted and
// reported; the worktree is clean at the end.
func TestAgentWorkCommitted(t *testing.T) {
	f := newFixture(t, true)
	wt := filepath.Join(f.root, ".saga", "worktrees", "add-logout-button")
	code, out := f.run("add-logout-button", "escape", nil)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	files := f.gitIn(wt, "ls-tree", "-r", "--name-only", "origin/story/add-logout-button")
	for _, want := range []string{"saga-work/add-logout-button/write-tests.md", "saga-work/add-logout-button/implement-button.md"} {
		if !strings.Contains(files, want) {
			t.Errorf("the pushed branch lacks %s:\n%s", want, files)
		}
	}
	log := f.gitIn(wt, "log", "--format=%s", "story/add-logout-button")
	if !strings.Contains(log, "saga(add-logout-button): run 1 — completed implement-button, write-tests") {
		t.Errorf("commits:\n%s", log)
	}
	if st := f.gitIn(wt, "status", "--porcelain"); st != "" {
		t.Errorf("not clean:\n%s", st)
	}
	prs := f.ghPRs()
	if len(prs) != 1 || prs[0]["isDraft"] != false {
		t.Errorf("the PR is not ready: %v", prs)
	}
}

// The commit stages exactly what one status of the worktree listed
// (docs/worker.md#the-loop): names git would read as pathspecs (a glob, a
// leading colon, brackets) are taken literally, as is a name that reads as
// an option; a new folder's files come in, a link comes in as a link, an
// ignored file stays out, and the worktree is clean afterwards.
func TestAgentWorkCommittedByName(t *testing.T) {
	f := newFixture(t, false)
	wrapper := filepath.Join(t.TempDir(), "claude")
	standin := testkit.Build(t, "./testdata/standin/claude")
	// Only the agent's run writes (not the worker's --version probe, which
	// runs in the test's folder).
	script := `#!/bin/sh
case "$*" in *--version*) exec ` + standin + ` "$@";; esac
printf 'x\n' > 'a*b.txt'
printf 'x\n' > ':colon.txt'
printf 'x\n' > '[ab].txt'
mkdir -p 'new dir/deep'
printf 'x\n' > 'new dir/deep/f g.md'
printf 'x\n' > ./--add
ln -s 'new dir' dirlink
printf '*.log\n' > .gitignore
printf 'x\n' > build.log
exec ` + standin + ` "$@"
`
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out := f.run("add-logout-button", "all", func(o *worker.Options) { o.Claude = wrapper })
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	wt := filepath.Join(f.root, ".saga", "worktrees", "add-logout-button")
	files := f.gitIn(wt, "ls-tree", "-r", "--name-only", "story/add-logout-button")
	for _, want := range []string{"a*b.txt", ":colon.txt", "[ab].txt", "new dir/deep/f g.md", "--add", "dirlink", ".gitignore"} {
		if !slices.Contains(strings.Split(files, "\n"), want) {
			t.Errorf("the branch lacks %q:\n%s", want, files)
		}
	}
	if strings.Contains(files, "build.log") {
		t.Errorf("the ignored build.log was committed:\n%s", files)
	}
	if mode := f.gitIn(wt, "ls-tree", "story/add-logout-button", "dirlink"); !strings.HasPrefix(mode, "120000 ") {
		t.Errorf("dirlink is not committed as a link: %s", mode)
	}
	if st := f.gitIn(wt, "status", "--porcelain"); st != "" {
		t.Errorf("not clean:\n%s", st)
	}
}

// Files the agent changes in .saga/ beyond its journal and task statuses
// (by Bash, which the scope hook cannot see) are reverted before the
// commit, and reported in the log and the journal.
func TestSagaChangesReverted(t *testing.T) {
	f := newFixture(t, false)
	// As the agent's Bash would during the run: an epic, another story, the
	// story's own task JSON beyond its status, a new task file. A wrapper
	// around the stand-in claude makes the changes in the worktree (its
	// working directory), then runs it.
	wrapper := filepath.Join(t.TempDir(), "claude")
	script := `#!/bin/sh
printf '{}\n' > .saga/epics/user-auth/epic.json
printf '{}\n' > .saga/stories/user-auth--api/story.json
printf '{"id":"sneaky","subject":"s","description":"","status":"pending","blockedBy":[]}\n' > .saga/stories/add-logout-button/sneaky.json
sed -i 's/"subject": "Implement the logout button"/"subject": "Nothing to do"/' .saga/stories/add-logout-button/implement-button.json
exec ` + testkit.Build(t, "./testdata/standin/claude") + ` "$@"
`
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out := f.run("add-logout-button", "all", func(o *worker.Options) { o.Claude = wrapper })
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	wt := filepath.Join(f.root, ".saga", "worktrees", "add-logout-button")
	for _, rel := range []string{".saga/epics/user-auth/epic.json", ".saga/stories/user-auth--api/story.json"} {
		if got := f.gitIn(wt, "diff", "main", "--stat", "--", rel); got != "" {
			t.Errorf("%s changed on the branch: %s", rel, got)
		}
	}
	if _, err := os.Stat(filepath.Join(wt, ".saga/stories/add-logout-button/sneaky.json")); !os.IsNotExist(err) {
		t.Errorf("sneaky.json kept: %v", err)
	}
	task, _ := os.ReadFile(filepath.Join(wt, ".saga/stories/add-logout-button/implement-button.json"))
	if !strings.Contains(string(task), `"subject": "Implement the logout button"`) || !strings.Contains(string(task), `"status": "completed"`) {
		t.Errorf("the task file was not restored with its status:\n%s", task)
	}
	journal, _ := os.ReadFile(filepath.Join(wt, ".saga/stories/add-logout-button/journal.md"))
	if !strings.Contains(string(journal), "worker note") || !strings.Contains(string(journal), ".saga/epics/user-auth/epic.json") ||
		!strings.Contains(out, "reverted changes the agent made in .saga/") {
		t.Errorf("not reported:\n%s\n%s", journal, out)
	}
	if st := f.gitIn(wt, "status", "--porcelain"); st != "" {
		t.Errorf("not clean:\n%s", st)
	}
}

// A dry run has no remote side effects: its own worktree and local commits
// only, on saga-dry/<story> (docs/worker.md#dry-runs), no push, no gh; its
// output says so and labels the simulated agent; its record is its own.
func TestDryRunStaysLocal(t *testing.T) {
	f := newFixture(t, true)
	code, out := f.run("add-logout-button", "all", func(o *worker.Options) { o.DryRun = true })
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	first, _, _ := strings.Cut(out, "\n")
	if !strings.Contains(first, "dry run") || !strings.Contains(out, "simulated agent:") || strings.Contains(out, "] claude:") {
		t.Errorf("output:\n%s", out)
	}
	if log, _ := os.ReadFile(f.ghLog); len(log) != 0 {
		t.Errorf("gh was called:\n%s", log)
	}
	if out, err := exec.Command("git", "-C", f.origin, "for-each-ref", "refs/heads/story/", "refs/heads/saga-dry/").Output(); err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("pushed to the origin: %q %v", out, err)
	}
	if n := f.git("rev-list", "--count", "main..saga-dry/add-logout-button"); n == "0" {
		t.Errorf("no local commit on the dry-run branch")
	}
	if f.git("for-each-ref", "refs/heads/story/") != "" {
		t.Error("a dry run made the story's own branch")
	}
	if _, ok := runs.ReadRecord(f.root, "add-logout-button"); ok {
		t.Error("a dry run wrote the story's run record")
	}
	if rec, ok := runs.ReadDryRecord(f.root, "add-logout-button"); !ok || rec.Status != runs.StatusCompleted || rec.Branch != "saga-dry/add-logout-button" {
		t.Errorf("the dry run's record: %+v %v", rec, ok)
	}
}

// TestPullRequest: a draft PR is opened once (idempotent across runs),
// recorded in story.json, and marked ready only when every task is done.
func TestPullRequest(t *testing.T) {
	f := newFixture(t, true)
	code, out := f.run("add-logout-button", "one", func(o *worker.Options) { o.MaxCycles = 1 })
	if code != runs.ExitLimit {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	prs := f.ghPRs()
	if len(prs) != 1 || prs[0]["isDraft"] != true || prs[0]["title"] != "Story: add-logout-button" || prs[0]["headRefName"] != "story/add-logout-button" {
		t.Fatalf("after the first run: %v\n%s", prs, out)
	}
	// The PR is the run's: in its events (and record), not in story.json.
	sj, _ := os.ReadFile(filepath.Join(f.root, ".saga/worktrees/add-logout-button/.saga/stories/add-logout-button/story.json"))
	if strings.Contains(string(sj), `"pr"`) {
		t.Errorf("story.json has the pr:\n%s\n%s", sj, out)
	}
	if run := runs.ReadRun(runs.EventsFile(f.out)); run == nil || run.PR != prs[0]["url"] {
		t.Errorf("the run's events do not name the PR: %+v", run)
	}
	// Pushed: the branch is on the origin with the status commit.
	if out := testkit.Git(t, f.origin, "log", "-1", "--format=%s", "story/add-logout-button"); !strings.Contains(out, "completed write-tests") {
		t.Errorf("origin branch: %s", out)
	}
	// Second run reuses worktree, branch and PR; completes; PR ready.
	code, out = f.run("add-logout-button", "all", nil)
	if code != 0 {
		t.Fatalf("second run: exit %d\n%s", code, out)
	}
	prs = f.ghPRs()
	if len(prs) != 1 || prs[0]["isDraft"] != false {
		t.Fatalf("after completion: %v", prs)
	}
	if !strings.Contains(out, "reusing .saga/worktrees/add-logout-button") || !strings.Contains(out, "pull request exists") {
		t.Errorf("second run did not reuse:\n%s", out)
	}
	// Worktree removed by hand: re-added from the branch, nothing lost.
	f.git("worktree", "remove", "--force", filepath.Join(f.root, ".saga/worktrees/add-logout-button"))
	code, out = f.run("add-logout-button", "all", nil)
	if code != 0 || !strings.Contains(out, "re-added") {
		t.Fatalf("third run: exit %d\n%s", code, out)
	}
	if st := f.worktreeStatuses("add-logout-button"); st["write-tests"] != "completed" {
		t.Errorf("statuses after re-adding: %v", st)
	}
}

func TestPRWarnings(t *testing.T) {
	for _, tc := range []struct {
		name, says, reason string
		remote             bool
		env                map[string]string
	}{
		{"no gh", "gh is not installed", runs.NoPRNoGH, true, map[string]string{"SAGA_GH": "/nonexistent/gh"}},
		{"no remote", "no remote named origin", runs.NoPRNoOrigin, false, nil},
		{"no auth", "not authenticated", runs.NoPRLoggedOut, true, map[string]string{"GH_STANDIN_AUTH": "none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.remote)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, out := f.run("add-logout-button", "all", nil)
			if code != 0 || !strings.Contains(out, tc.says) {
				t.Fatalf("exit %d, want 0 with a warning %q\n%s", code, tc.says, out)
			}
			// Why is recorded for status and for run, which opens it later.
			var missing *runs.Event
			for _, e := range f.events() {
				if e.Event == runs.KindPRMissing {
					missing = &e
				}
			}
			if missing == nil || missing.Reason != tc.reason || !strings.Contains(missing.Message, tc.says) {
				t.Errorf("pr.missing: %+v", missing)
			}
			if rec, ok := runs.ReadRecord(f.root, "add-logout-button"); !ok || rec.NoPR == nil || rec.NoPR.Reason != tc.reason {
				t.Errorf("the run record's noPR: %+v", rec.NoPR)
			}
		})
	}
}

// TestScopeEscapeDenied: the PreToolUse hook from --settings stops writes
// outside the story's scope; the run still completes the tasks.
func TestScopeEscapeDenied(t *testing.T) {
	f := newFixture(t, false)
	code, out := f.run("add-logout-button", "escape", nil)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var report string
	for _, e := range f.events() {
		if e.Event == "run.output" && strings.Contains(e.Message, "Escape attempts") {
			report = e.Message
		}
	}
	if report == "" || strings.Contains(report, "WRITTEN") || strings.Count(report, ": denied: ") != 3 {
		t.Errorf("escapes were not all denied: %q\n%s", report, out)
	}
	if _, err := os.Stat(filepath.Join(f.root, ".saga", "worktrees", "outside.txt")); err == nil {
		t.Error("outside.txt was written")
	}
}

// startSlow starts a worker process on story with the stand-in's slow
// script (delayMS per step) and waits until its output file says until.
// Its stdout and stderr go to out; it is killed when the test ends.
func (f *fixture) startSlow(story, delayMS, until string) (cmd *exec.Cmd, out *bytes.Buffer) {
	f.t.Helper()
	f.t.Setenv("SAGA_STANDIN_SCRIPT", "slow")
	f.t.Setenv("SAGA_STANDIN_DELAY_MS", delayMS)
	cmd = exec.Command(f.sagaLSP, "worker", story, "--output-file", f.out)
	cmd.Dir = f.root
	out = new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { cmd.Process.Kill() })
	if !testkit.WaitUntil(30*time.Second, func() bool { return strings.Contains(testkit.FileText(f.out), until) }) {
		f.t.Fatalf("the worker's output never said %q:\n%s", until, testkit.FileText(f.out))
	}
	return cmd, out
}

// TestSecondWorkerRefused: while one worker runs a story, another exits 1
// at once, naming the first.
func TestSecondWorkerRefused(t *testing.T) {
	f := newFixture(t, false)
	first, firstOut := f.startSlow("add-logout-button", "300", "run 1:")
	start := time.Now()
	r := testkit.Run(t, f.root, os.Environ(), "", f.sagaLSP, "worker", "add-logout-button")
	if r.Code != 1 || !strings.Contains(r.Stdout+r.Stderr, fmt.Sprintf("pid %d", first.Process.Pid)) {
		t.Fatalf("second worker: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("the second worker waited %s instead of refusing at once", time.Since(start))
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("first worker: %v\n%s", err, firstOut.String())
	}
}

// TestSIGTERM: a worker stopped mid-run stops its run, resets the task in
// progress, commits, and exits 1 with status stopped.
func TestSIGTERM(t *testing.T) {
	f := newFixture(t, false)
	cmd, out := f.startSlow("user-auth--api", "500", "→ in_progress")
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := cmd.ProcessState.ExitCode(); code != 1 {
			t.Fatalf("exit %d (%v)\n%s", code, err, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("worker did not stop\n%s", out.String())
	}
	end := lastEnd(f.events())
	if end.Status != "stopped" {
		t.Errorf("worker.end %+v", end)
	}
	for id, st := range f.worktreeStatuses("user-auth--api") {
		if st == store.StatusInProgress {
			t.Errorf("%s left in progress after SIGTERM", id)
		}
	}
	if msg := f.git("log", "-1", "--format=%s", "story/user-auth--api"); !strings.HasPrefix(msg, "saga(user-auth--api): ") {
		t.Errorf("no commit after SIGTERM: %q", msg)
	}
	// The lock is released: a new worker can start.
	if code, out := f.run("user-auth--api", "all", nil); code != 0 {
		t.Errorf("worker after SIGTERM: exit %d\n%s", code, out)
	}
}

// TestSIGTERMDuringSetup: a worker stopped before its first run (while it
// makes its worktree, PR or task list) ends stopped, not failed: the stop
// is what interrupted it.
func TestSIGTERMDuringSetup(t *testing.T) {
	f := newFixture(t, false)
	cmd, out := f.startSlow("user-auth--api", "500", "holding the worker lock")
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if end := lastEnd(f.events()); end.Status != "stopped" {
		t.Errorf("worker.end %+v\n%s", end, out.String())
	}
}

func TestBadStory(t *testing.T) {
	f := newFixture(t, false)
	for _, story := range []string{"Bad_Name", "no-such-story", "../etc"} {
		if code, out := f.run(story, "all", nil); code != runs.ExitFailed || out == "" {
			t.Errorf("%s: exit %d\n%s", story, code, out)
		}
	}
}

func mustEval(t *testing.T, p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// pathWithout is $PATH rebuilt in a temp dir of links to every program of
// it but the named ones.
func pathWithout(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		des, _ := os.ReadDir(d)
		for _, de := range des {
			if slices.Contains(names, de.Name()) {
				continue
			}
			os.Symlink(filepath.Join(d, de.Name()), filepath.Join(dir, de.Name())) // the first of a name wins, as on PATH
		}
	}
	return dir
}

// Without bubblewrap and socat Bash cannot be confined: it is off for the
// run, unless the user opts into unconfined Bash; the events and the log
// say which.
func TestBashWithoutSandbox(t *testing.T) {
	f := newFixture(t, false)
	log := filepath.Join(t.TempDir(), "claude.log")
	t.Setenv("SAGA_STANDIN_LOG", log)
	t.Setenv("PATH", pathWithout(t, "bwrap", "socat"))
	code, out := f.run("add-logout-button", "all", nil)
	if code != 0 || !strings.Contains(out, "Bash off") || !strings.Contains(out, "apt-get install bubblewrap socat") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	evs := f.events()
	if evs[0].Event != "worker.start" || evs[0].Bash != "off" {
		t.Errorf("worker.start %+v", evs[0])
	}
	data, _ := os.ReadFile(log)
	if !strings.Contains(string(data), `"--disallowedTools","Bash"`) || strings.Contains(string(data), `\"sandbox\"`) {
		t.Errorf("Bash is not off:\n%s", data)
	}
	os.Remove(log)
	code, out = f.run("user-auth--api", "all", func(o *worker.Options) { o.AllowUnsandboxedBash = true })
	if code != 0 || !strings.Contains(out, "Bash unsandboxed") || !strings.Contains(out, "UNCONFINED") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	data, _ = os.ReadFile(log)
	if !strings.Contains(string(data), `"TaskList TaskGet TaskUpdate TaskCreate Bash"`) {
		t.Errorf("Bash is not allowed:\n%s", data)
	}
}

// claude -p exits 0 after an interruption or with an error result: the
// worker judges a run by the stream's final result as well as the code.
func TestRunJudgedByResult(t *testing.T) {
	f := newFixture(t, false)
	for name, stream := range map[string]string{
		"error result, exit 0": `{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":1,"total_cost_usd":0.01}`,
		"no result, exit 0":    `{"type":"system","subtype":"init"}`,
	} {
		t.Run(name, func(t *testing.T) {
			fake := filepath.Join(t.TempDir(), "claude")
			os.WriteFile(fake, []byte("#!/bin/sh\n"+versionAnswer+"printf '%s\\n' '"+stream+"'\nexit 0\n"), 0o755)
			code, out := f.run("add-logout-button", "all", func(o *worker.Options) { o.Claude = fake })
			if code != runs.ExitFailed || !strings.Contains(out, "run 1 ended with") || !strings.Contains(out, "the story stops here") {
				t.Errorf("exit %d\n%s", code, out)
			}
			if end := lastEnd(f.events()); end.Status != "failed" {
				t.Errorf("worker.end %+v", end)
			}
		})
	}
}

// TestResumesAfterInterruptedWorktreeAdd: a worker killed while git was
// adding its worktree leaves the entry "locked initializing" and the
// checkout half done (git's own state, seen after a SIGKILL). The next
// worker removes it and adds the worktree again from the branch, instead of
// resuming in it and committing the files the checkout never wrote as
// deleted.
func TestResumesAfterInterruptedWorktreeAdd(t *testing.T) {
	f := newFixture(t, false)
	story := "add-logout-button"
	wt := filepath.Join(f.root, ".saga", "worktrees", story)
	f.git("worktree", "add", "-q", "-b", "story/"+story, wt)
	entry := strings.TrimSpace(f.gitIn(wt, "rev-parse", "--git-dir"))
	if err := os.WriteFile(filepath.Join(entry, "locked"), []byte("initializing"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{".saga/stories/user-auth--api", ".saga/stories/" + story} {
		if err := os.RemoveAll(filepath.Join(wt, filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
	code, out := f.run(story, "all", nil)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "removed .saga/worktrees/"+story+": an earlier add of it was interrupted") {
		t.Errorf("the half-made worktree was not named:\n%s", out)
	}
	if deleted := f.git("diff", "--name-only", "--diff-filter=D", "main", "story/"+story); deleted != "" {
		t.Errorf("the story branch deletes files the checkout never wrote:\n%s", deleted)
	}
	if got := f.worktreeStatuses(story); got["implement-button"] != store.StatusCompleted || got["write-tests"] != store.StatusCompleted {
		t.Errorf("statuses %v\n%s", got, out)
	}
}

// The check that the worktree is clean after the commit takes a file the
// repository's filter converted on the way in (core.autocrlf=input: CRLF
// committed as LF) as committed: its bytes are not the blob's, so git
// judges it, and the run completes with the converted blob on the branch.
func TestCleanCheckLeavesAConvertedFileToGit(t *testing.T) {
	f := newFixture(t, false)
	f.git("config", "core.autocrlf", "input")
	f.agentBash("add-logout-button", `printf 'one\r\ntwo\r\n' > notes.txt`)
	code, out := f.run("add-logout-button", "all", nil)
	if code != runs.ExitCompleted || strings.Contains(out, "not clean") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	wt := filepath.Join(f.root, ".saga", "worktrees", "add-logout-button")
	if got := f.gitIn(wt, "show", "story/add-logout-button:notes.txt"); got != "one\ntwo" {
		t.Errorf("the branch's notes.txt: %q, want LF line ends", got)
	}
	if raw := testkit.ReadFile(t, filepath.Join(wt, "notes.txt")); raw != "one\r\ntwo\r\n" {
		t.Errorf("the working file: %q", raw)
	}
}
