//go:build unix

package worker_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/buildcache"
	"github.com/saga-ai/saga-lsp/runs/verify"
	"github.com/saga-ai/saga-lsp/runs/worker"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// Issue 22: what the agent of a story may write, and what the worker
// trusts at a run's start, played as a hostile agent through the stand-in
// claude's sandboxed Bash (the same bubblewrap layout as Claude Code's).

// sandboxed skips a test where the worker's runs cannot sandbox Bash.
func sandboxed(t *testing.T) {
	t.Helper()
	testkit.Bwrap(t)
	testkit.NeedsTool(t, "socat", "the Bash sandbox needs it; Debian: apt-get install -y socat")
}

// addProbeStory commits a story whose description makes the simulated
// agent run cmd with Bash (its one task has no checks).
func (f *fixture) addProbeStory(story, cmd string) {
	f.t.Helper()
	testkit.WriteFiles(f.t, f.root, map[string]string{
		".saga/stories/" + story + "/story.json": `{"id": "` + story + `", "title": "Probe", "description": ` + jsonc.Quote("Probe.\nSIMAGENT bash "+cmd) + "}\n",
		".saga/stories/" + story + "/t.json":     `{"id": "t", "subject": "T", "description": "", "status": "pending", "blockedBy": []}` + "\n",
	})
	f.git("add", "-A")
	f.git("commit", "-qm", "plan "+story)
}

// probeScript writes a shell script at p trying each command (name →
// command) and printing "ok <name>" or "refused <name>" for each.
func probeScript(t *testing.T, p string, writes [][2]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("try() { if sh -c \"$2\" >/dev/null 2>&1; then echo \"ok $1\"; else echo \"refused $1\"; fi; }\n")
	for _, w := range writes {
		b.WriteString("try " + w[0] + " '" + strings.ReplaceAll(w[1], "'", `'\''`) + "'\n")
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
}

// The agent writes its worktree and its own caches, nothing else: not the
// repository's git dir (attack 11: a line in packed-refs breaks every git
// command; HEAD, index, config, info/), not the refs the worker and the
// epic runner trust (attack 5: another story's branch; attack 4: a
// replace ref or graft for the reference commit; attack 6: its worktree's
// HEAD pointed at main), not saga-lsp's state (run records, locks, the
// session dir), not another story's caches nor the checks' own, not its
// worktree's .git file. Git still reads.
func TestAgentWritesOnlyItsWork(t *testing.T) {
	sandboxed(t)
	f := newFixture(t, false)
	common := filepath.Join(f.root, ".git")
	script := filepath.Join(t.TempDir(), "probe.sh")
	f.addProbeStory("probe", "bash "+script+" > probe.txt 2>&1")
	ref := f.git("rev-parse", "main")
	other, err := buildcache.CacheDir(f.root, "other", nil)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := buildcache.ChecksCacheDir(f.root, "probe", nil)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(common, "saga-lsp", "runs"), 0o755)
	sessions := os.Getenv("SAGA_SESSION_DIR")
	os.MkdirAll(sessions, 0o755)
	probeScript(t, script, [][2]string{
		{"packed-refs", "echo x >> " + common + "/packed-refs"},
		{"HEAD", "echo ref: refs/heads/x > " + common + "/HEAD"},
		{"index", "echo x > " + common + "/index"},
		{"config", "echo x >> " + common + "/config"},
		{"info-exclude", "echo x >> " + common + "/info/exclude"},
		{"grafts", "echo " + ref + " > " + common + "/info/grafts"},
		{"alternates", "echo /tmp > " + common + "/objects/info/alternates"},
		{"replace-ref", "mkdir -p " + common + "/refs/replace && git rev-parse HEAD > " + common + "/refs/replace/" + ref},
		{"objects", "echo x | git hash-object -w --stdin"},
		{"branch-of-b", "git branch story/b"},
		{"main", "git update-ref refs/heads/main HEAD"},
		{"worktree-HEAD", "echo ref: refs/heads/main > " + common + "/worktrees/probe/HEAD"},
		{"symbolic-ref", "git symbolic-ref HEAD refs/heads/main"},
		{"commit", "git commit --allow-empty -qm x"},
		{"run-record", "echo '{\"story\":\"b\",\"status\":\"completed\"}' > " + common + "/saga-lsp/runs/b.json"},
		{"locks", "echo 1 > " + common + "/saga-lsp/locks/x"},
		{"session-dir", "echo x > " + sessions + "/x"},
		{"dot-git", "echo gitdir: /tmp > .git"},
		{"other-story-cache", "echo x > " + other + "/x"},
		{"checks-cache", "echo x > " + checks + "/x"},
		{"own-cache", "echo x > \"$GOCACHE.probe\" && echo x > \"$XDG_CACHE_HOME/x\""},
		{"worktree", "echo x > work.txt"},
		{"git-reads", "git log -1 --format=%H && git diff HEAD --stat && git status --short && git show HEAD:.saga/stories/probe/t.json"},
	})
	before := f.git("for-each-ref")
	code, out := f.run("probe", "all", nil)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	wt := filepath.Join(f.root, ".saga", "worktrees", "probe")
	report := testkit.FileText(filepath.Join(wt, "probe.txt"))
	for _, line := range strings.Split(strings.TrimSpace(report), "\n") {
		name := strings.Fields(line + " ?")[1]
		want := "refused"
		if name == "own-cache" || name == "worktree" || name == "git-reads" {
			want = "ok"
		}
		if !strings.HasPrefix(line, want+" ") {
			t.Errorf("%s (want %s)", line, want)
		}
	}
	if strings.Count(report, "\n") != 23 {
		t.Errorf("the probe did not run to its end:\n%s\n%s", report, out)
	}
	// Git works in the user's checkout; no ref moved but the story's own.
	var after []string
	for _, line := range strings.Split(f.git("for-each-ref"), "\n") {
		if !strings.HasSuffix(line, "\trefs/heads/story/probe") {
			after = append(after, line)
		}
	}
	if got := strings.Join(after, "\n"); got != before {
		t.Errorf("refs after the run:\n%s\nbefore:\n%s", got, before)
	}
	if head := f.gitIn(wt, "symbolic-ref", "HEAD"); head != "refs/heads/story/probe" {
		t.Errorf("the worktree's HEAD is %s", head)
	}
	if _, ok := runs.ReadRecord(f.root, "b"); ok {
		t.Error("a run record of story b exists")
	}
	if f.git("rev-parse", "main") != ref {
		t.Error("main moved")
	}
	if files := f.gitIn(wt, "ls-tree", "-r", "--name-only", "story/probe"); !strings.Contains(files, "probe.txt") || !strings.Contains(files, "work.txt") {
		t.Errorf("the worker did not commit the agent's work:\n%s", files)
	}
}

// Attack 4: a ref in refs/replace/ (planted by an agent of an earlier
// saga-lsp, whose sandbox could write the git dir) names the reference
// commit and points at a commit whose check is weakened: the run still
// reads, hydrates and gates with the check as committed at the
// reference commit, and the final tree is checked with it too.
func TestPlantedReplaceRefIgnored(t *testing.T) {
	testkit.Bwrap(t)
	f := newFixture(t, false)
	f.addStory("gated", map[string]string{
		"build": `{"id": "build", "subject": "Build it", "description": "", "status": "pending", "blockedBy": [], "checks": ["echo strict; exit 1"]}`,
	})
	ref := f.git("rev-parse", "main")
	f.git("checkout", "-q", "-b", "weak")
	testkit.WriteFiles(t, f.root, map[string]string{".saga/stories/gated/build.json": `{"id": "build", "subject": "Build it", "description": "", "status": "pending", "blockedBy": [], "checks": ["true"]}` + "\n"})
	f.git("commit", "-qam", "weaken")
	f.git("checkout", "-q", "main")
	f.git("update-ref", "refs/replace/"+ref, "weak")
	if got := f.git("show", ref+":.saga/stories/gated/build.json"); !strings.Contains(got, `"true"`) {
		t.Fatalf("git does not see the replacement (the test proves nothing): %s", got)
	}
	code, out := f.run("gated", "all", nil)
	if code != runs.ExitFailed || !strings.Contains(out, "`echo strict; exit 1` — exit status 1") {
		t.Fatalf("exit %d, want %d (the strict check kept refusing the task): the weakened check let the task through\n%s", code, runs.ExitFailed, out)
	}
	if st := f.worktreeStatuses("gated"); st["build"] != "pending" {
		t.Errorf("statuses %v", st)
	}
	evs := f.checkEvents()
	if len(evs) == 0 || evs[0].Command != "echo strict; exit 1" {
		t.Errorf("check events %+v", evs)
	}
	if rec, ok := runs.ReadRecord(f.root, "gated"); !ok || rec.Reference != ref {
		t.Errorf("record %+v: want the reference commit %s", rec, ref)
	}
}

// One reference commit per run: the base moved since the story branch
// was made, so the run brings the base's tip into the branch first and
// reads the checks there (a task added on the base after the branch was
// made counts); it records that commit. When the branch conflicts with it,
// the run is refused before any agent runs, naming the files and the step
// to take.
func TestRunBringsInTheReferenceCommit(t *testing.T) {
	f := newFixture(t, false)
	f.addStory("moving", map[string]string{
		"a": `{"id": "a", "subject": "A", "description": "", "status": "pending", "blockedBy": []}`,
	})
	testkit.WriteFiles(t, f.root, map[string]string{"shared.txt": "base\n"})
	f.git("add", "-A")
	f.git("commit", "-qm", "shared")
	if code, out := f.run("moving", "idle", func(o *worker.Options) { o.MaxCycles = 1 }); code != runs.ExitLimit {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	// The base moves on: a new task with a check.
	testkit.WriteFiles(t, f.root, map[string]string{".saga/stories/moving/b.json": `{"id": "b", "subject": "B", "description": "", "status": "pending", "blockedBy": [], "checks": ["exit 7"]}` + "\n"})
	f.git("add", "-A")
	f.git("commit", "-qm", "add b")
	ref := f.git("rev-parse", "main")
	code, out := f.run("moving", "idle", func(o *worker.Options) { o.MaxCycles = 1 })
	if code != runs.ExitLimit {
		t.Fatalf("second run: exit %d\n%s", code, out)
	}
	wt := filepath.Join(f.root, ".saga", "worktrees", "moving")
	if !strings.Contains(out, "took main at "+verify.Short(ref)+" into story/moving") || !f.gitOK(wt, "merge-base", "--is-ancestor", ref, "story/moving") {
		t.Errorf("the base's tip was not brought in:\n%s", out)
	}
	if !strings.Contains(out, "checks: 1 task(s) with checks, as committed at "+verify.Short(ref)) {
		t.Errorf("the checks were not read at the new tip:\n%s", out)
	}
	if rec, ok := runs.ReadRecord(f.root, "moving"); !ok || rec.Reference != ref {
		t.Errorf("record %+v, want reference %s", rec, ref)
	}

	// The branch and the base both change shared.txt: refused.
	testkit.WriteFiles(t, wt, map[string]string{"shared.txt": "story\n"})
	f.gitIn(wt, "commit", "-qam", "story's change")
	testkit.WriteFiles(t, f.root, map[string]string{"shared.txt": "base moved\n"})
	f.git("commit", "-qam", "base's change")
	head := f.gitIn(wt, "rev-parse", "HEAD")
	code, out = f.run("moving", "idle", func(o *worker.Options) { o.MaxCycles = 1 })
	if code != runs.ExitFailed || !strings.Contains(out, "story/moving conflicts with main at ") || !strings.Contains(out, "in shared.txt; no agent ran") ||
		!strings.Contains(out, "git -C "+wt+" merge ") || strings.Contains(out, "run 1:") {
		t.Fatalf("conflicting run: exit %d\n%s", code, out)
	}
	if got := f.gitIn(wt, "rev-parse", "HEAD"); got != head || f.gitIn(wt, "status", "--porcelain") != "" {
		t.Errorf("the refused merge left the branch at %s (was %s) or the worktree unclean", got, head)
	}
}

// gitOK tells whether a git command succeeds in dir.
func (f *fixture) gitOK(dir string, args ...string) bool {
	return exec.Command("git", append([]string{"-C", dir}, args...)...).Run() == nil
}

// The suspected cache poisoning of issue 22: the TaskCompleted gate runs
// a task's checks with the story's own caches (those its agent's Bash
// writes), the final re-run with caches no agent's Bash writes — so a
// result the agent planted in its caches (a cached go test result) cannot
// pass for the final checks. (That another story's agent cannot write
// either: TestAgentWritesOnlyItsWork.)
func TestFinalChecksUseTheirOwnCaches(t *testing.T) {
	sandboxed(t)
	f := newFixture(t, false)
	f.addStory("cached", map[string]string{
		"build": `{"id": "build", "subject": "Build it", "description": "", "status": "pending", "blockedBy": [], "checks": ["echo \"cache=$GOCACHE\""]}`,
	})
	code, out := f.run("cached", "all", nil)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	agent, _ := buildcache.CachePath(f.root, "cached", nil)
	checks, _ := buildcache.ChecksCachePath(f.root, "cached", nil)
	evs := f.checkEvents()
	if len(evs) != 2 || !strings.Contains(evs[0].Message, "cache="+agent+"/go-build") || !strings.Contains(evs[1].Message, "cache="+checks+"/go-build") {
		t.Errorf("want the gate in %s and the final re-run in %s:\n%+v", agent, checks, evs)
	}
}
