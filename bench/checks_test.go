package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/runs/verify"
)

// BenchmarkHookTaskCompletedChecks is the budget of a completion with
// checks (issue 14, kept by issue 22's confinement and issue 23's
// protected files): the hook, process start included, running a task's
// one check takes at most the check's own run time + 150 ms. The check is
// `sleep 0.05`; its own time is measured as a plain `sh -c` in the same op,
// alternately. The difference is the hook's start, the comparison of the
// worktree with the reference commit (git diff, git ls-files), the
// bubblewrap probe and the sandbox's start (user, pid, network, IPC and UTS
// namespaces, the mounts), the limits and the watchdog. The story changed
// no protected file, so the check runs once.
func BenchmarkHookTaskCompletedChecks(b *testing.B) {
	testkit.Bwrap(b)
	wt, fork := checksRepo(b)
	hookChecks(b, wt, fork, 1)
}

// BenchmarkHookTaskCompletedProtected is the same budget for a story that
// changed a protected file (a test it modified, one it added): the check
// runs twice — with the reference commit's protected files, in a view
// mounted over the worktree, and on the full tree — and the hook may take
// both runs' own time + 150 ms.
func BenchmarkHookTaskCompletedProtected(b *testing.B) {
	testkit.Bwrap(b)
	wt, fork := checksRepo(b)
	for rel, text := range map[string]string{"calc/calc_test.go": "package calc // changed\n", "calc/more_test.go": "package calc\n"} {
		if err := os.WriteFile(filepath.Join(wt, rel), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	hookChecks(b, wt, fork, 2)
}

// hookChecks runs the hook on a completion of a task whose check is
// `sleep 0.05`, and the check itself n times (its runs' own time),
// alternately, and reports the medians and the hook's time beyond the
// check's runs.
func hookChecks(b *testing.B, wt, fork string, n int) {
	bin := builtBinary(b)
	const check = "sleep 0.05"
	manifest := filepath.Join(b.TempDir(), "saga-story-s-1.checks.json")
	m := &verify.Manifest{Story: "s", ForkPoint: fork, Tasks: map[string]verify.TaskChecks{"c": {Commands: []string{check}, From: fork}}}
	if err := runs.WriteChecksManifest(manifest, m); err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), "SAGA_STORY_ID=s", "SAGA_PROJECT_DIR="+wt, "CLAUDE_PROJECT_DIR="+wt,
		"SAGA_CHECKS_FILE="+manifest, "SAGA_FORK_POINT="+fork, "SAGA_BASH=sandboxed")
	payload := completedPayload(wt, "c")()
	var hookS, checkS, over []float64
	for b.Loop() {
		start := time.Now()
		for range n {
			plain := exec.Command("/bin/sh", "-c", check)
			plain.Dir = wt
			if err := plain.Run(); err != nil {
				b.Fatal(err)
			}
		}
		mid := time.Now()
		cmd := exec.Command(bin, "hook")
		cmd.Env, cmd.Stdin = env, strings.NewReader(payload)
		out, err := cmd.CombinedOutput()
		end := time.Now()
		if err != nil || len(out) > 0 {
			b.Fatalf("hook: %v %s", err, out)
		}
		c, h := mid.Sub(start).Seconds(), end.Sub(mid).Seconds()
		checkS, hookS, over = append(checkS, c), append(hookS, h), append(over, (h-c)*1000)
	}
	b.ReportMetric(median(checkS), "check-s")
	b.ReportMetric(median(hookS), "hook-s")
	b.ReportMetric(median(over), "overhead-ms")
}

// BenchmarkSandboxStart is what confinement costs one check: `true` run by
// verify.Runner under bubblewrap (probe excluded: once per runner) against
// a plain `sh -c true`, alternately. Reported, not budgeted: the hook's
// budget above holds it.
func BenchmarkSandboxStart(b *testing.B) {
	testkit.Bwrap(b)
	ctx := context.Background()
	dir := b.TempDir()
	checks, err := verify.Prepare(ctx, verify.Setup{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	r := checks.Runner
	if r.Mode != verify.Confined {
		b.Fatalf("%s: %s", r.Mode, r.Why)
	}
	var plainS, boxS []float64
	for b.Loop() {
		start := time.Now()
		if err := exec.Command("/bin/sh", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if res := r.Run(ctx, "true", time.Minute); !res.Passed {
			b.Fatalf("%s", res.Outcome())
		}
		end := time.Now()
		plainS, boxS = append(plainS, mid.Sub(start).Seconds()), append(boxS, end.Sub(mid).Seconds())
	}
	b.ReportMetric(median(plainS)*1000, "plain-ms")
	b.ReportMetric(median(boxS)*1000, "sandboxed-ms")
}

// BenchmarkCompareGoRepo is the comparison of a story's tree with the
// reference commit (verify.Compare, part of the gate's 150 ms beyond its
// checks) in a repository the size of saga-lsp itself (its own tree at
// HEAD), the story having changed one non-test Go file: R's file list, and
// every Go file's imports parsed to find the test helpers (issue 32) the
// first time at R, read back from the git dir after.
func BenchmarkCompareGoRepo(b *testing.B) {
	root := testkit.ModuleRoot(b)
	repo := filepath.Join(b.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		b.Fatal(err)
	}
	archive := exec.Command("sh", "-c", `git -C "$1" archive HEAD | tar -x -C "$2"`, "sh", root, repo)
	if out, err := archive.CombinedOutput(); err != nil {
		b.Skipf("no tree to copy: %v %s", err, out)
	}
	testkit.InitRepo(b, repo)
	fork := testkit.Git(b, repo, "rev-parse", "HEAD")
	f := filepath.Join(repo, "runs", "verify", "check.go")
	src, err := os.ReadFile(f)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(f, append(src, "\n// changed\n"...), 0o644); err != nil {
		b.Fatal(err)
	}
	// Alternately the first comparison at R (the helpers found and kept)
	// and a later one (read back).
	var first, later []float64
	for b.Loop() {
		for i, ms := range []*[]float64{&first, &later} {
			if i == 0 {
				os.RemoveAll(filepath.Join(repo, ".git", "saga-lsp", "helpers"))
			}
			start := time.Now()
			p, err := verify.Compare(context.Background(), repo, fork, nil)
			if err != nil || len(p.Changes) != 0 {
				b.Fatalf("compare: %v %v", err, p)
			}
			*ms = append(*ms, float64(time.Since(start).Microseconds())/1000)
		}
	}
	b.ReportMetric(median(first), "ms/first")
	b.ReportMetric(median(later), "ms/later")
}
