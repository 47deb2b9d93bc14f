package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/bench/workload"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs/verify"
)

// repoSamples bounds BenchmarkRepo100k's samples whatever -benchtime asks:
// each one checks out the 100,000-file repository twice (about a gigabyte
// each), and make bench runs every benchmark 10 times.
const repoSamples = 3

// BenchmarkRepo100k is issue 36's budget 1 (docs/architecture.md#budgets)
// on the generated repository of 100,000 files (bench/workload.EnsureRepo):
// per sample, `git worktree add` of the same commit, then `saga-lsp worker`
// on the repository's one-task story, with a stand-in claude that changes
// one file, then git's floors on the tree the worker left —
// `git status --porcelain=v2 -z --untracked-files=all` after a one-file
// change, `git push` of its commit to the local bare origin. The worker's steps are
// timed from git's trace (GIT_TRACE2_EVENT): its start to the agent's
// process beyond its own `git worktree add` (the budget's floor; the add
// made before it is reported too), and after the agent's end the guard of .saga/ (the agent's-work
// checks), the commit, the push and the comparison with the reference
// commit (protect). The stand-in also plants a link out of the worktree and
// a FIFO in its story folder: the sample fails unless the worker removed
// both and the branch carries neither (docs/security.md#special-files).
func BenchmarkRepo100k(b *testing.B) {
	bin := builtBinary(b)
	gitBin := testkit.NeedsTool(b, "git", "")
	standin := testkit.Build(b, "./testdata/standin/claude")
	bench := filepath.Join(testkit.ModuleRoot(b), ".bench")
	start := time.Now()
	repo, _, err := workload.EnsureRepo(filepath.Join(bench, "R100k"), gitBin)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("repository of %d files ready in %s", workload.RepoFiles, time.Since(start).Round(time.Millisecond))
	// Worktrees are moved here, not removed, while the benchmark runs
	// (removing a gigabyte takes minutes on a loaded machine and would
	// slow the next sample); an earlier run's are removed first.
	trash := filepath.Join(bench, "R100k-trash")
	if err := os.RemoveAll(trash); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(trash, 0o755); err != nil {
		b.Fatal(err)
	}
	resetRepo(b, repo, trash)
	// The comparison for `status`: the same story run once in a
	// repository of 1,000 files.
	small, _, err := workload.EnsureRepoOf(filepath.Join(bench, "R1k"), gitBin, 1000)
	if err != nil {
		b.Fatal(err)
	}
	smallTrash := filepath.Join(trash, "small")
	if err := os.MkdirAll(smallTrash, 0o755); err != nil {
		b.Fatal(err)
	}
	resetRepo(b, small, smallTrash)
	smallEnv := workerEnv(filepath.Join(smallTrash, "run"), standin)
	if r := testkit.Run(b, small, smallEnv, "", bin, "worker", workload.RepoStory); r.Code != 0 {
		b.Fatalf("worker at 1,000 files: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var m repoMetrics
	m.statusSmall = func() float64 { return statusTime(b, bin, small, smallEnv) }
	m.small, m.smallEnv = small, smallEnv
	i := 0
	for b.Loop() {
		if i >= repoSamples {
			continue
		}
		b.StopTimer()
		m.sample(b, bin, gitBin, standin, repo, filepath.Join(trash, strconv.Itoa(i)))
		i++
		b.StartTimer()
	}
	m.report(b)
}

// repoMetrics are the samples of BenchmarkRepo100k, in seconds.
type repoMetrics struct {
	add, toClaude, status, push []float64
	// the worker's own `git worktree add`, from its trace.
	ownAdd []float64
	// status with saga-lsp's own git environment (huge pages for the
	// heap: internal/git's hugePageTunable), beside the plain floor.
	statusHuge                            []float64
	guard, commit, workerPush, protectRun []float64
	// status at 100,000 files and at 1,000 (statusSmall measures one).
	statusBig, statusSmallS []float64
	statusSmall             func() float64
	// The protected view's set-up: the protected run's start beyond a
	// plain run's.
	viewSetup []float64
	// The dashboard's story page at 100,000 files and at 1,000 (the
	// repository small, its worker's env smallEnv).
	pageBig, pageSmall []float64
	small              string
	smallEnv           []string
}

func (m *repoMetrics) report(b *testing.B) {
	over := func(xs, floor []float64) float64 {
		var d []float64
		for i := range xs {
			d = append(d, xs[i]-floor[i])
		}
		return median(d)
	}
	b.ReportMetric(median(m.add), "worktree-add-s")
	b.ReportMetric(median(m.toClaude), "start-to-claude-s")
	b.ReportMetric(over(m.toClaude, m.add), "start-over-add-s")
	b.ReportMetric(over(m.toClaude, m.ownAdd), "start-over-own-add-s")
	b.ReportMetric(median(m.status), "status-floor-s")
	b.ReportMetric(median(m.statusHuge), "status-hugepages-s")
	b.ReportMetric(over(m.commit, m.statusHuge), "commit-over-hugepages-status-s")
	b.ReportMetric(median(m.push), "push-floor-s")
	b.ReportMetric(median(m.guard), "guard-s")
	b.ReportMetric(over(m.guard, m.status), "guard-over-status-s")
	b.ReportMetric(median(m.commit), "commit-s")
	b.ReportMetric(over(m.commit, m.status), "commit-over-status-s")
	b.ReportMetric(median(m.protectRun), "protect-s")
	b.ReportMetric(over(m.protectRun, m.status), "protect-over-status-s")
	b.ReportMetric(median(m.workerPush), "push-s")
	b.ReportMetric(over(m.workerPush, m.push), "push-over-floor-s")
	// Each sample's ratio, then their median: a sample's two sides ran
	// under the same load.
	ratio := func(big, small []float64) float64 {
		var r []float64
		for i := range big {
			r = append(r, big[i]/small[i])
		}
		return median(r)
	}
	b.ReportMetric(median(m.statusBig)*1e3, "status-100k-ms")
	b.ReportMetric(median(m.statusSmallS)*1e3, "status-1k-ms")
	b.ReportMetric(ratio(m.statusBig, m.statusSmallS), "status-100k/1k")
	if len(m.viewSetup) > 0 {
		b.ReportMetric(median(m.viewSetup), "view-setup-s")
	}
	if len(m.pageBig) > 0 {
		b.ReportMetric(median(m.pageBig)*1e3, "story-page-100k-ms")
		b.ReportMetric(median(m.pageSmall)*1e3, "story-page-1k-ms")
		b.ReportMetric(ratio(m.pageBig, m.pageSmall), "story-page-100k/1k")
	}
}

// workerEnv is the environment of a worker run with the stand-in claude
// (claude, a wrapper, in base).
func workerEnv(base, claude string) []string {
	return append(testkit.CleanEnv(), "SAGA_CLAUDE="+claude, "SAGA_SESSION_DIR="+filepath.Join(base, "sessions"),
		"CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude-config"), "SAGA_GH="+filepath.Join(base, "no-gh"))
}

// statusTime is the wall time of `saga-lsp status <story> --format json`
// in root, in seconds.
func statusTime(b *testing.B, bin, root string, env []string) float64 {
	b.Helper()
	cmd := exec.Command(bin, "status", workload.RepoStory, "--format", "json")
	cmd.Dir, cmd.Env = root, env
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("status: %v\n%s", err, out)
	}
	return time.Since(start).Seconds()
}

// sample measures git's floors and one worker run into m; dir is where its
// worktrees go afterwards.
func (m *repoMetrics) sample(b *testing.B, bin, gitBin, standin, repo, dir string) {
	b.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	// git's floor for the worktree: one of the same commit, just before.
	// Each checkout starts with nothing left to write back: the floor's
	// gigabyte, still being written when the worker's own checkout began,
	// slowed that one (by up to 10 s in a sample).
	writeBack(b)
	ref := filepath.Join(dir, "ref")
	m.add = append(m.add, timed(b, repo, gitBin, "worktree", "add", "-q", "--detach", ref, "main"))
	writeBack(b)

	// The worker.
	base := filepath.Join(dir, "run")
	times, trace := filepath.Join(base, "times"), filepath.Join(base, "trace2.json")
	wrapper := filepath.Join(base, "claude")
	story := filepath.ToSlash(filepath.Join(".saga", "stories", workload.RepoStory))
	// The headless run (not the --version probe) records its start and end,
	// changes one file and plants a link out and a FIFO in its story folder.
	script := fmt.Sprintf(`#!/bin/sh
case "$*" in *--version*) exec %[1]q "$@";; esac
s=$(date +%%s%%N)
echo "the agent's change" >> %[2]q
ln -s /etc/passwd %[3]s/leak.json
mkfifo %[3]s/pipe.json
%[1]q "$@"
rc=$?
echo "$s $(date +%%s%%N)" >> %[4]q
exit $rc
`, standin, workload.RepoChangeFile, story, times)
	if err := os.MkdirAll(base, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}
	env := append(workerEnv(base, wrapper), "GIT_TRACE2_EVENT="+trace)
	began := time.Now()
	r := testkit.Run(b, repo, env, "", bin, "worker", workload.RepoStory)
	if r.Code != 0 {
		b.Fatalf("worker: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// The guard caught both (docs/security.md#special-files).
	if !strings.Contains(r.Stdout+r.Stderr, "leak.json (a symbolic link)") || !strings.Contains(r.Stdout+r.Stderr, "pipe.json (a FIFO)") {
		b.Fatalf("the worker did not report removing the link and the FIFO the agent planted:\n%s%s", r.Stdout, r.Stderr)
	}
	if tree := testkit.Git(b, repo, "ls-tree", "--name-only", "story/"+workload.RepoStory, story+"/"); strings.Contains(tree, "leak") || strings.Contains(tree, "pipe") {
		b.Fatalf("the story branch carries what the agent planted:\n%s", tree)
	}
	agentStart, agentEnd := agentSpan(b, testkit.ReadFile(b, times))
	m.toClaude = append(m.toClaude, agentStart.Sub(began).Seconds())
	steps := workerSteps(b, trace, agentEnd)
	m.ownAdd = append(m.ownAdd, steps.add.Seconds())
	m.guard = append(m.guard, steps.guard.Seconds())
	m.commit = append(m.commit, steps.commit.Seconds())
	m.workerPush = append(m.workerPush, steps.push.Seconds())
	m.protectRun = append(m.protectRun, steps.protect.Seconds())

	// `status` of the story the worker left, here and at 1,000 files,
	// alternating, the quickest of three each (one call is ~0.1 s, and a
	// loaded machine's noise is of that order).
	big, small := 1e9, 1e9
	for range 3 {
		big, small = min(big, statusTime(b, bin, repo, env)), min(small, m.statusSmall())
	}
	m.statusBig, m.statusSmallS = append(m.statusBig, big), append(m.statusSmallS, small)
	// The dashboard's story page, here and at 1,000 files.
	if pb, ps, ok := storyPageTimes(b, bin, repo, env, m.small, m.smallEnv); ok {
		m.pageBig, m.pageSmall = append(m.pageBig, pb), append(m.pageSmall, ps)
	}

	// git's floors for the steps, on the tree the worker left, right after
	// it: the status of a one-file change, the push of its commit.
	wt := filepath.Join(repo, ".saga", "worktrees", workload.RepoStory)
	appendLine(b, filepath.Join(wt, workload.RepoChangeFile), "a one-file change")
	m.status = append(m.status, timed(b, wt, gitBin, "status", "--porcelain=v2", "-z", "--untracked-files=all"))
	m.statusHuge = append(m.statusHuge, timedEnv(b, wt, gitBin, []string{"GLIBC_TUNABLES=glibc.malloc.hugetlb=1"}, "status", "--porcelain=v2", "-z", "--untracked-files=all"))
	testkit.Git(b, wt, "commit", "-qam", "a one-file change")
	m.push = append(m.push, timed(b, wt, gitBin, "push", "-q", "origin", "HEAD:refs/heads/floor"))
	testkit.Git(b, repo, "push", "-q", "origin", ":refs/heads/floor")
	if s, ok := viewSetup(b, wt, testkit.Git(b, repo, "rev-parse", "main")); ok {
		m.viewSetup = append(m.viewSetup, s)
	}
	resetRepo(b, repo, dir)
}

// viewSetup is what the protected view costs the final checks at 100,000
// files (docs/worker.md#protected-files), in seconds: with one protected
// file changed in the worktree wt (a Go package's test), the time from
// Checks.Run to its first (protected) run's start beyond the same for a
// run without a view. ok is false where checks are not confined (no view
// is mounted there).
func viewSetup(b *testing.B, wt, fork string) (float64, bool) {
	b.Helper()
	ctx := context.Background()
	appendLine(b, filepath.Join(wt, workload.RepoProtectedFile), "// the agent's change to a protected test")
	protected, err := verify.Prepare(ctx, verify.Setup{Dir: wt, Reference: fork})
	if err != nil {
		b.Fatal(err)
	}
	if protected.Runner.Mode != verify.Confined {
		return 0, false
	}
	if restored, _ := protected.Protected.View.Restored(); !slices.Equal(restored, []string{workload.RepoProtectedFile}) {
		b.Fatalf("the protected view restores %v, want %s", restored, workload.RepoProtectedFile)
	}
	plain, err := verify.Prepare(ctx, verify.Setup{Dir: wt})
	if err != nil {
		b.Fatal(err)
	}
	// The time from the call to the first run's start: its report's time
	// less its duration.
	toStart := func(c *verify.Checks) float64 {
		var first time.Time
		start := time.Now()
		res := c.Run(ctx, workload.RepoTask, verify.TaskChecks{Commands: []string{"true"}}, time.Time{}, func(r verify.Result) {
			if first.IsZero() {
				first = time.Now().Add(-r.Duration)
			}
		})
		if !res.Passed() {
			b.Fatalf("the check failed: %+v", res.Results)
		}
		return first.Sub(start).Seconds()
	}
	return toStart(protected) - toStart(plain), true
}

// resetRepo puts the repository back as generated for the next sample: the
// story's worktree moved into trash (the reference one is there already),
// the registrations pruned, the story's branch (here and at the origin) and
// saga-lsp's run records gone.
func resetRepo(b *testing.B, repo, trash string) {
	b.Helper()
	wt := filepath.Join(repo, ".saga", "worktrees", workload.RepoStory)
	if _, err := os.Lstat(wt); err == nil {
		if err := os.Rename(wt, filepath.Join(trash, "worker")); err != nil {
			b.Fatal(err)
		}
	}
	testkit.Git(b, repo, "worktree", "prune")
	branch := "story/" + workload.RepoStory
	if exec.Command("git", "-C", repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Run() == nil {
		testkit.Git(b, repo, "branch", "-q", "-D", branch)
	}
	if exec.Command("git", "-C", repo, "ls-remote", "--exit-code", "origin", "refs/heads/"+branch).Run() == nil {
		testkit.Git(b, repo, "push", "-q", "origin", ":refs/heads/"+branch)
	}
	if err := os.RemoveAll(filepath.Join(repo, ".git", "saga-lsp")); err != nil {
		b.Fatal(err)
	}
}

// writeBack has the kernel write every dirty page back (sync(1)).
func writeBack(b *testing.B) {
	b.Helper()
	if out, err := exec.Command("sync").CombinedOutput(); err != nil {
		b.Fatalf("sync: %v\n%s", err, out)
	}
}

// timed runs git in dir and returns its wall time in seconds.
func timed(b *testing.B, dir, gitBin string, args ...string) float64 {
	b.Helper()
	return timedEnv(b, dir, gitBin, nil, args...)
}

// timedEnv is timed with env added to git's environment.
func timedEnv(b *testing.B, dir, gitBin string, env []string, args ...string) float64 {
	b.Helper()
	cmd := exec.Command(gitBin, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return time.Since(start).Seconds()
}

func appendLine(b *testing.B, file, line string) {
	b.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		b.Fatal(err)
	}
}

// agentSpan is the first headless run's start and end, as the wrapper
// recorded them (nanoseconds since the epoch).
func agentSpan(b *testing.B, times string) (start, end time.Time) {
	b.Helper()
	for line := range strings.Lines(times) {
		f := strings.Fields(line)
		s, err1 := strconv.ParseInt(f[0], 10, 64)
		e, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			b.Fatalf("times: %q", line)
		}
		return time.Unix(0, s), time.Unix(0, e)
	}
	b.Fatal("the stand-in claude never ran")
	return
}

// gitProc is one git process of the worker's trace.
type gitProc struct {
	argv       []string
	start, end time.Time
}

func (p gitProc) has(args ...string) bool {
	for _, a := range args {
		if !slices.Contains(p.argv, a) {
			return false
		}
	}
	return true
}

// stepTimes are the worker's steps after the agent's run, from its git
// processes: the guard of .saga/ (its status of .saga), the commit (the
// guard's end to the push's start, and the push's end to the check that
// the worktree is clean), the push, and protect (the comparison with the
// reference commit: its parallel listings, first start to last end).
type stepTimes struct{ add, guard, commit, push, protect time.Duration }

func workerSteps(b *testing.B, trace string, after time.Time) stepTimes {
	b.Helper()
	f, err := os.Open(trace)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	bySid := map[string]*gitProc{}
	var procs []*gitProc
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Event string    `json:"event"`
			Sid   string    `json:"sid"`
			Time  time.Time `json:"time"`
			Argv  []string  `json:"argv"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		// A child's sid extends its parent's ("parent/child"): only the
		// worker's own git processes are steps.
		if strings.Contains(e.Sid, "/") {
			continue
		}
		switch e.Event {
		case "start":
			p := &gitProc{argv: e.Argv, start: e.Time}
			bySid[e.Sid] = p
			procs = append(procs, p)
		case "exit":
			if p := bySid[e.Sid]; p != nil {
				p.end = e.Time
			}
		}
	}
	var s stepTimes
	var afterAgent []*gitProc
	for _, p := range procs {
		if p.has("worktree", "add") && s.add == 0 && !p.end.IsZero() {
			s.add = p.end.Sub(p.start)
		}
		if p.start.After(after) && !p.end.IsZero() {
			afterAgent = append(afterAgent, p)
		}
	}
	first := func(from int, match func(*gitProc) bool) int {
		for i := from; i < len(afterAgent); i++ {
			if match(afterAgent[i]) {
				return i
			}
		}
		b.Fatalf("no such git process in the worker's trace after the agent's run")
		return -1
	}
	guard := first(0, func(p *gitProc) bool { return p.has("status", ".saga") })
	push := first(guard, func(p *gitProc) bool { return p.has("push") })
	g, pu := afterAgent[guard], afterAgent[push]
	s.guard = g.end.Sub(g.start)
	s.push = pu.end.Sub(pu.start)
	s.commit = pu.start.Sub(g.end)
	// The clean check, the worker's processes right after the push: a
	// cat-file of the tip's trees (git.Repo.CommittedAsIs), then git's
	// diff (or status, for many paths) of what that could not tell.
	cleanEnd := pu.end
	for _, c := range afterAgent[push+1:] {
		if !c.has("cat-file", "--batch") && !c.has("diff", "--no-ext-diff") && !(c.has("status", "--porcelain") && len(c.argv) > 0 && c.argv[len(c.argv)-1] == "--porcelain") {
			break
		}
		cleanEnd = c.end
	}
	s.commit += cleanEnd.Sub(pu.end)
	var pStart, pEnd time.Time
	for _, p := range afterAgent[push:] {
		if p.has("status", "--ignored=matching") || p.has("diff", "--ignore-submodules") || p.has("ls-tree", "-r") {
			if pStart.IsZero() || p.start.Before(pStart) {
				pStart = p.start
			}
			if p.end.After(pEnd) {
				pEnd = p.end
			}
		}
	}
	if pStart.IsZero() {
		b.Fatal("no comparison with the reference commit in the worker's trace")
	}
	s.protect = pEnd.Sub(pStart)
	return s
}
