// Command report owns the summary of `make bench`: it reads `go test -bench`
// output on stdin, prints each benchmark's time per op in seconds, and
// compares the budgeted benchmarks with the floor measured in the same run,
// or their metrics (latency, memory) with absolute budgets
// (docs/architecture.md#budgets). It prints only what the input holds, and
// exits 1 when a budget is missed (its line marked ✗), a budgeted benchmark
// failed, or the input holds no result at all, so `make bench` fails then.
//
//	go test -run '^$' -bench . ./bench | go run ./bench/report
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// budget bounds a benchmark's time as a multiple of the floor's, or, when
// metric is set, one of its metrics by an absolute maximum.
type budget struct {
	label    string
	bench    string // benchmark name without "Benchmark" and the -GOMAXPROCS suffix
	maxRatio float64
	// A paired benchmark measures the floor itself and reports its time and
	// ratio as metrics; others are divided by the Floor benchmark's ns/op.
	secondsMetric, ratioMetric string
	// An absolute budget: the median of metric must stay ≤ max, printed in
	// unit. With max 0 the line is a comparison, printed without a verdict
	// and only when measured.
	metric string
	max    float64
	unit   string
}

// budgets lists the budgets of docs/architecture.md#budgets; later ones are added here.
func budgets() []budget {
	return []budget{
		// The budget proper: both as processes, paired. The other two lines
		// relate to the in-process floor and are for orientation (the
		// in-process check keeps the GC on; the binary turns it off).
		{label: "check: saga-lsp binary vs floor program (paired)", bench: "CheckPaired", maxRatio: 1.2, secondsMetric: "check-s", ratioMetric: "check/floor"},
		{label: "check (binary) vs in-process floor", bench: "CheckBinary", maxRatio: 1.2},
		{label: "check (in-process) vs in-process floor", bench: "Check", maxRatio: 1.2},
		// The language server, as a process on W (bench/lsp_test.go).
		{label: "language server: initialize → all diagnostics", bench: "LSPInit", maxRatio: 4, secondsMetric: "init-s", ratioMetric: "init/floor"},
		{label: "keystroke → diagnostics p95", bench: "LSPKeystroke", metric: "p95-ms", max: 10, unit: "ms"},
		{label: "language server peak RSS", bench: "LSPKeystroke", metric: "peak-RSS-MB", max: 200, unit: "MB"},
		// The hook and hydration (bench/hook_test.go).
		{label: "hook PostToolUse sync vs empty Go program start (paired)", bench: "HookSyncPaired", maxRatio: 2, secondsMetric: "hook-s", ratioMetric: "hook/empty"},
		{label: "saga-lsp hook (the whole binary) PostToolUse sync vs empty Go program start (paired)", bench: "HookSyncSagaLSPPaired", maxRatio: 3, secondsMetric: "hook-s", ratioMetric: "hook/empty"},
		{label: "hook TaskCompleted, a task without checks, vs empty Go program start (paired)", bench: "HookTaskCompletedPaired", maxRatio: 2, secondsMetric: "hook-s", ratioMetric: "hook/empty"},
		{label: "hook TaskCompleted with a check: time beyond the check's own (paired)", bench: "HookTaskCompletedChecks", metric: "overhead-ms", max: 150, unit: "ms"},
		{label: "hook TaskCompleted with a check, protected files changed: time beyond the check's two runs (paired)", bench: "HookTaskCompletedProtected", metric: "overhead-ms", max: 150, unit: "ms"},
		// Warm build caches (bench/gocache_test.go).
		{label: "a fresh story's first go test ./... gate check in a new worktree ÷ the same with the user's warm cache", bench: "WarmFirstCheck", metric: "first/warm", max: 2, unit: "×"},
		{label: "a fresh story's first go test ./... gate check in a new worktree", bench: "WarmFirstCheck", metric: "story-first-s", unit: "s"},
		{label: "the same, cold (every story before warm caches)", bench: "WarmFirstCheck", metric: "story-cold-s", unit: "s"},
		{label: "verify before the first run, in the checkout ÷ the user's go test there (results cached)", bench: "WarmFirstCheck", metric: "checkout-first/warm", unit: "×"},
		{label: "a one-task story run by the worker with the stand-in claude: time outside it", bench: "StoryOverhead", metric: "overhead-s", max: 0.5, unit: "s"},
		{label: "a story's npm seed, 200 packages, every write below its cache (bench/nofollow_test.go)", bench: "NpmSeed200", metric: "seed-s", unit: "s"},
		{label: "a task status written the hook's way, in process", bench: "StatusWrite", metric: "write-ms", unit: "ms"},
		{label: "one check's sandbox start: plain sh -c true", bench: "SandboxStart", metric: "plain-ms", unit: "ms"},
		{label: "one check's sandbox start: confined true", bench: "SandboxStart", metric: "sandboxed-ms", unit: "ms"},
		{label: "hydration of a 200-task story", bench: "Hydrate200", metric: "ms", max: 50, unit: "ms"},
		// Live worker state (bench/live_test.go).
		{label: "status change on disk → saga/taskStatus p95", bench: "LiveTaskStatus", metric: "p95-ms", max: 100, unit: "ms"},
		// Cost follows the edit (bench/scale_test.go): W and 4W side by side
		// in one run, a 100,000-task story, a 10,000-task cycle.
		{label: "4W: keystroke → diagnostics p95", bench: "LSPScale", metric: "4W-p95-ms", max: 2, unit: "ms"},
		{label: "keystroke p95, 4W ÷ W", bench: "LSPScale", metric: "p95-4W/W", max: 1.5, unit: "×"},
		{label: "4W: peak RSS ÷ JSON bytes", bench: "LSPScale", metric: "4W-RSS/JSON", max: 3, unit: "×"},
		{label: "initialize → all diagnostics, 4W ÷ W", bench: "LSPScale", metric: "init-4W/W", max: 4, unit: "×"},
		{label: "100,000-task story: check", bench: "BigStory", metric: "check-s", max: 2, unit: "s"},
		{label: "100,000-task story: plan", bench: "BigStory", metric: "plan-s", max: 2, unit: "s"},
		{label: "100,000-task story: status", bench: "BigStory", metric: "status-s", max: 2, unit: "s"},
		{label: "100,000-task story: one edit → diagnostics p95", bench: "BigStoryEdit", metric: "edit-p95-ms", max: 50, unit: "ms"},
		{label: "10,000-task cycle: check", bench: "Cycle", metric: "check-s", max: 1, unit: "s"},
		// Both faces following reset, clean and a 500-file branch switch, and
		// answering requests during the switch (bench/faces_test.go; issue 31).
		{label: "language server: reset → its lens shows it, p95", bench: "FacesFollow", metric: "lsp-reset-p95-ms", max: 250, unit: "ms"},
		{label: "language server: reset → its lens shows it, slowest", bench: "FacesFollow", metric: "lsp-reset-max-ms", unit: "ms"},
		{label: "language server: clean → its lens shows it, p95", bench: "FacesFollow", metric: "lsp-clean-p95-ms", max: 250, unit: "ms"},
		{label: "language server: clean → its lens shows it, slowest", bench: "FacesFollow", metric: "lsp-clean-max-ms", unit: "ms"},
		{label: "language server: branch switch of 500 files → all their diagnostics published, p95", bench: "FacesFollow", metric: "lsp-switch-p95-ms", max: 250, unit: "ms"},
		{label: "language server: a request during the branch switch, p95", bench: "FacesFollow", metric: "lsp-request-p95-ms", max: 50, unit: "ms"},
		{label: "language server: a request during the branch switch, slowest", bench: "FacesFollow", metric: "lsp-request-max-ms", unit: "ms"},
		{label: "dashboard: reset → the open page shows it, p95", bench: "FacesFollow", metric: "dash-reset-p95-ms", max: 250, unit: "ms"},
		{label: "dashboard: reset → the open page shows it, slowest", bench: "FacesFollow", metric: "dash-reset-max-ms", unit: "ms"},
		{label: "dashboard: clean → the open page shows it, p95", bench: "FacesFollow", metric: "dash-clean-p95-ms", max: 250, unit: "ms"},
		{label: "dashboard: clean → the open page shows it, slowest", bench: "FacesFollow", metric: "dash-clean-max-ms", unit: "ms"},
		{label: "dashboard: branch switch of 500 files → the open page shows it, p95", bench: "FacesFollow", metric: "dash-switch-p95-ms", max: 250, unit: "ms"},
		{label: "dashboard: a page request during the branch switch, p95", bench: "FacesFollow", metric: "dash-request-p95-ms", max: 50, unit: "ms"},
		{label: "dashboard: a page request during the branch switch, slowest", bench: "FacesFollow", metric: "dash-request-max-ms", unit: "ms"},
		// The epic runner (bench/epic_test.go).
		{label: "epic run: a story's end → a dependent's worker started (max)", bench: "EpicRun", metric: "handoff-max-ms", max: 1000, unit: "ms"},
		{label: "epic runner peak RSS", bench: "EpicRun", metric: "runner-peak-RSS-MB", max: 30, unit: "MB"},
		{label: "status <epic> on a 200-story epic, 100 on branches, one tip moved since the last status", bench: "EpicStatus200", metric: "status-ms", max: 100, unit: "ms"},
		{label: "the same, nothing kept by an earlier status (every branch read)", bench: "EpicStatus200", metric: "cold-ms", unit: "ms"},
		{label: "a live reader's derivation of a 200-story epic, 100 of them on branches: every branch read (bench/derive_test.go)", bench: "EpicDerive200", metric: "fresh-ms", unit: "ms"},
		{label: "the same, branch folders kept, no tip moved", bench: "EpicDerive200", metric: "kept-ms", unit: "ms"},
		{label: "the same, branch folders kept, one tip moved", bench: "EpicDerive200", metric: "kept-moved-ms", unit: "ms"},
		// A repository of 100,000 files (bench/repo100k_test.go; issue 36, budget 1):
		// each worker step against git's own floor measured in the same sample.
		// The start is budgeted against the worker's own add (its git
		// trace): two adds of one commit differ by seconds on one disk
		// (docs/architecture.md#cost-follows-the-change-100000-files).
		{label: "100k files: a story's start → its claude, beyond the worker's own git worktree add (its trace)", bench: "Repo100k", metric: "start-over-own-add-s", max: 0.5, unit: "s"},
		{label: "100k files: the same, beyond a git worktree add of the same commit just before", bench: "Repo100k", metric: "start-over-add-s", unit: "s"},
		{label: "100k files: git worktree add (the floor)", bench: "Repo100k", metric: "worktree-add-s", unit: "s"},
		{label: "100k files: the commit beyond git status", bench: "Repo100k", metric: "commit-over-status-s", max: 0.2, unit: "s"},
		{label: "100k files: the agent's-work checks (guard of .saga/, links, special files) beyond git status", bench: "Repo100k", metric: "guard-over-status-s", max: 0.2, unit: "s"},
		{label: "100k files: protect (the comparison with R) beyond git status", bench: "Repo100k", metric: "protect-over-status-s", max: 0.2, unit: "s"},
		{label: "100k files: the push beyond git push of a one-file commit", bench: "Repo100k", metric: "push-over-floor-s", max: 0.2, unit: "s"},
		{label: "100k files: git status --porcelain=v2 -z --untracked-files=all (the floor)", bench: "Repo100k", metric: "status-floor-s", unit: "s"},
		{label: "100k files: the same status with saga-lsp's git environment (huge pages for git's heap)", bench: "Repo100k", metric: "status-hugepages-s", unit: "s"},
		{label: "100k files: the commit beyond that status", bench: "Repo100k", metric: "commit-over-hugepages-status-s", unit: "s"},
		{label: "100k files: saga-lsp status <story> ÷ the same at 1,000 files", bench: "Repo100k", metric: "status-100k/1k", max: 2, unit: "×"},
		{label: "100k files: the final checks' protected view (one protected file changed): set-up beyond a plain check's start", bench: "Repo100k", metric: "view-setup-s", max: 0.3, unit: "s"},
		{label: "100k files: the dashboard's story page ÷ the same at 1,000 files", bench: "Repo100k", metric: "story-page-100k/1k", max: 2, unit: "×"},
		{label: "100k files: the dashboard's story page", bench: "Repo100k", metric: "story-page-100k-ms", unit: "ms"},
		// A 200-story epic run, K = 8, the stand-in claude (issue 36's budget 2; bench/epic200_test.go).
		{label: "200-story epic: a story's end → the next ready story's worker started (max)", bench: "Epic200", metric: "reaction-max-ms", max: 1000, unit: "ms"},
		{label: "200-story epic: a story's end → the next ready story's worker started, p95", bench: "Epic200", metric: "reaction-p95-ms", unit: "ms"},
		{label: "200-story epic: a worker's end → the runner's story.end, max", bench: "Epic200", metric: "end-seen-max-ms", unit: "ms"},
		{label: "200-story epic: runner peak RSS", bench: "Epic200", metric: "runner-peak-RSS-MB", max: 30, unit: "MB"},
		{label: "200-story epic: runner CPU over the run", bench: "Epic200", metric: "runner-cpu-s", unit: "s"},
		{label: "200-story epic: status <epic> during the run (median)", bench: "Epic200", metric: "status-p50-ms", max: 100, unit: "ms"},
		{label: "200-story epic: status <epic> during the run, p95", bench: "Epic200", metric: "status-p95-ms", unit: "ms"},
		{label: "200-story epic: status <epic>'s CPU (its git processes' too) during the run (median)", bench: "Epic200", metric: "status-cpu-p50-ms", unit: "ms"},
		{label: "200-story epic: a new process of the same binary doing nothing (`version`) during the run, status's floor (median)", bench: "Epic200", metric: "noop-p50-ms", unit: "ms"},
		{label: "200-story epic: a task status written → the open epic graph shows it, p95", bench: "Epic200", metric: "graph-p95-ms", max: 250, unit: "ms"},
		{label: "200-story epic: a task status written → the open epic graph shows it (median)", bench: "Epic200", metric: "graph-p50-ms", unit: "ms"},
		{label: "200-story epic: the open epic page's fetches of itself (median)", bench: "Epic200", metric: "page-fetch-p50-ms", unit: "ms"},
		{label: "200-story epic: keystroke in epic.json → its diagnostics, p95, during the run", bench: "Epic200", metric: "keystroke-p95-ms", max: 10, unit: "ms"},
		{label: "200-story epic: epic.json's lenses (a line per story) answered, p95, during the run", bench: "Epic200", metric: "lens-p95-ms", max: 10, unit: "ms"},
		{label: "200-story epic: the same keystroke and lens request to a process that answers them doing nothing (bench/lspfloor), the server's floor on those cores, p95", bench: "Epic200", metric: "floor-keystroke-p95-ms", unit: "ms"},
		{label: "200-story epic: the same lens request to that floor, p95", bench: "Epic200", metric: "floor-lens-p95-ms", unit: "ms"},
		{label: "200-story epic: the server's keystroke p95 above its floor's", bench: "Epic200", metric: "keystroke-over-floor-p95-ms", unit: "ms"},
		{label: "200-story epic: the server's lenses p95 above its floor's", bench: "Epic200", metric: "lens-over-floor-p95-ms", unit: "ms"},
		{label: "200-story epic: a keystroke in epic.json, parsed and the workspace updated, the machine quiet (BenchmarkEpicKeystroke200)", bench: "EpicKeystroke200", metric: "keystroke-ms", unit: "ms"},
		{label: "200-story epic: the language server's time on a core over a keystroke and its lenses, p95, during the run", bench: "Epic200", metric: "lsp-cpu-p95-ms", unit: "ms"},
		{label: "200-story epic: the language server's threads' time runnable, waiting for a core, over a keystroke and its lenses (summed), p95, during the run", bench: "Epic200", metric: "lsp-wait-p95-ms", unit: "ms"},
		{label: "200-story epic: the language server's CPU over the run", bench: "Epic200", metric: "lsp-run-cpu-s", unit: "s"},
		{label: "200-story epic: the dashboard's CPU over the run", bench: "Epic200", metric: "dashboard-run-cpu-s", unit: "s"},
		{label: "200-story epic: the machine's CPU over the run (every process)", bench: "Epic200", metric: "machine-busy-s", unit: "s"},
		{label: "200-story epic: the whole run", bench: "Epic200", metric: "run-s", unit: "s"},
		{label: "200-story epic: the stand-in claude per story (median)", bench: "Epic200", metric: "agent-p50-s", unit: "s"},
		// The review loop (bench/review_test.go; issue 34).
		{label: "review watched: a writer's \"changes requested\" detected → the round's worker started (median)", bench: "ReviewRoundStart", metric: "detect-to-started-s", max: 2, unit: "s"},
		{label: "review watched: the whole poll that starts it (one query, permissions, the start)", bench: "ReviewRoundStart", metric: "poll-s", unit: "s"},
		{label: "a review round beyond the agent and gh (compare: a plain run's, StoryOverhead)", bench: "ReviewRoundOverhead", metric: "round-overhead-s", unit: "s"},
		{label: "a review round: time in gh (the stand-in for GitHub)", bench: "ReviewRoundOverhead", metric: "gh-s", unit: "s"},
		{label: "a review round: gh calls", bench: "ReviewRoundOverhead", metric: "gh-calls", unit: "calls"},
		// The dashboard (bench/dashboard_test.go): a process, and chromium.
		{label: "dashboard: navigation → W's home table, every row in the DOM", bench: "DashboardHome", metric: "home-ms", max: 1000, unit: "ms"},
		{label: "dashboard: W's home page ÷ status --format json (paired)", bench: "DashboardHome", metric: "home/status", max: 2, unit: "×"},
		{label: "dashboard: peak RSS ÷ the language server's on W", bench: "DashboardHome", metric: "dash/lsp-RSS", max: 1, unit: "×"},
		{label: "dashboard: a 200-story epic's graph drawn", bench: "DashboardEpicGraph", metric: "graph-ms", max: 1000, unit: "ms"},
		{label: "dashboard: status change on disk → the open page p95", bench: "DashboardLiveTaskStatus", metric: "p95-ms", max: 250, unit: "ms"},
		{label: "dashboard: one open page, 30 s without change: CPU", bench: "DashboardIdle", metric: "idle-cpu-ms", max: 50, unit: "ms"},
		{label: "dashboard: gh and tmux calls meanwhile", bench: "DashboardIdle", metric: "gh+tmux-calls", max: 0.5, unit: "calls"},
		// The epic's outcome, counted (bench/stats_test.go; issue 35).
		{label: "stats <epic> --format json on 1,000 run records (3,000 runs)", bench: "Stats1000", metric: "stats-ms", max: 1000, unit: "ms"},
		{label: "dashboard: that epic's page, its figures shown, served whole", bench: "Stats1000", metric: "epic-page-ms", max: 1000, unit: "ms"},
		// Issue 17's hostile file: 60,000 blockedBy entries (bench/longlist_test.go).
		{label: "60,000-entry blockedBy: slowest request or edit → diagnostics", bench: "LongList", metric: "slowest-ms", max: 1000, unit: "ms"},
		{label: "60,000-entry blockedBy: slowest ÷ the same at 15,000 (4 linear, 16 quadratic)", bench: "LongList", metric: "growth-x4", max: 8, unit: "×"},
		// The same keystrokes in VS Code's JSON server (bench/vscode-json):
		// pushed after its fixed 500 ms delay, or pulled right away.
		{label: "VS Code JSON server: keystroke → pushed diagnostics p95", bench: "VSCodeJSONKeystroke", metric: "p95-ms", unit: "ms"},
		{label: "VS Code JSON server: keystroke → pulled diagnostics p95", bench: "VSCodeJSONKeystroke", metric: "pull-p95-ms", unit: "ms"},
	}
}

// floorBench is the benchmark every budget is a multiple of.
const floorBench = "Floor"

// result holds one benchmark's runs: each unit's values, one per -count.
type result struct {
	name    string
	metrics map[string][]float64 // unit → values
	units   []string             // in first-seen order
	status  string               // "", "SKIP" or "FAIL"
	note    string               // first line of a skip or failure message
}

// median of a benchmark's values in unit, or false when it has none; the
// median tolerates one noisy run among -count repetitions.
func (r *result) median(unit string) (float64, bool) {
	vs := slices.Clone(r.metrics[unit])
	if len(vs) == 0 {
		return 0, false
	}
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2], true
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2, true
}

func main() { os.Exit(run(os.Stdin, os.Stdout, os.Stderr)) }

// run reports the benchmark output read from r and returns the exit code:
// 1 when a budget was missed or could not be measured, else 0.
func run(r io.Reader, stdout, stderr io.Writer) int {
	results, err := parse(r)
	if err != nil {
		fmt.Fprintln(stderr, "report: reading benchmark output:", err)
		return 1
	}
	missed := printReport(stdout, results)
	if len(results) == 0 {
		return 1
	}
	if missed > 0 {
		fmt.Fprintf(stdout, "\n✗ %d budget line(s) missed or failed (docs/architecture.md#budgets)\n", missed)
		return 1
	}
	return 0
}

// parse collects benchmark results in first-seen order.
func parse(r io.Reader) ([]*result, error) {
	var order []*result
	byName := map[string]*result{}
	get := func(name string) *result {
		if res := byName[name]; res != nil {
			return res
		}
		res := &result{name: name, metrics: map[string][]float64{}}
		byName[name] = res
		order = append(order, res)
		return res
	}
	// BenchmarkName-8   10   123 ns/op   4 B/op …
	benchLine := regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$`)
	// --- SKIP: BenchmarkName (0.00s)
	statusLine := regexp.MustCompile(`^\s*--- (SKIP|FAIL): Benchmark(\S+?)(?:-\d+)?(?:\s|$)`)
	var pending *result // the skipped or failed benchmark whose message follows
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if m := statusLine.FindStringSubmatch(line); m != nil {
			pending = get(m[2])
			pending.status = m[1]
			continue
		}
		if m := benchLine.FindStringSubmatch(line); m != nil {
			pending = nil
			res := get(m[1])
			fields := strings.Fields(m[3])
			for i := 0; i+1 < len(fields); i += 2 {
				v, err := strconv.ParseFloat(fields[i], 64)
				if err != nil {
					break
				}
				unit := fields[i+1]
				if _, seen := res.metrics[unit]; !seen {
					res.units = append(res.units, unit)
				}
				res.metrics[unit] = append(res.metrics[unit], v)
			}
			continue
		}
		if pending != nil && pending.note == "" && strings.TrimSpace(line) != "" {
			pending.note = strings.TrimSpace(line)
		}
	}
	return order, sc.Err()
}

// printReport prints the table and the budget lines, and returns how many
// budgets were missed (✗) or not measured because their benchmark failed.
func printReport(w io.Writer, results []*result) (missed int) {
	if len(results) == 0 {
		fmt.Fprintln(w, "no benchmark results in the input")
		return 0
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "benchmark\ttime/op\tmem/op\tallocs/op\tother")
	for _, r := range results {
		if r.status != "" && len(r.metrics) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t\t\t%s\n", r.name, r.status, r.note)
			continue
		}
		ns, _ := r.median("ns/op")
		mem, alloc := "", ""
		if v, ok := r.median("B/op"); ok {
			mem = size(v)
		}
		if v, ok := r.median("allocs/op"); ok {
			alloc = strconv.FormatFloat(v, 'f', 0, 64)
		}
		var other []string
		for _, u := range r.units {
			if u == "ns/op" || u == "B/op" || u == "allocs/op" {
				continue
			}
			v, _ := r.median(u)
			other = append(other, strconv.FormatFloat(v, 'g', 6, 64)+" "+u)
		}
		fmt.Fprintf(tw, "%s\t%s s\t%s\t%s\t%s\n", r.name, seconds(ns), mem, alloc, strings.Join(other, ", "))
	}
	tw.Flush()

	byName := map[string]*result{}
	for _, r := range results {
		byName[r.name] = r
	}
	var lines []string
	for _, b := range budgets() {
		r := byName[b.bench]
		if r == nil {
			continue
		}
		if b.metric != "" {
			v, ok := r.median(b.metric)
			switch {
			case ok:
				lines = append(lines, absoluteLine(b, v))
			case r.status != "" && b.max > 0:
				lines = append(lines, fmt.Sprintf("%s: %s (%s)", b.label, r.status, r.note))
			}
			continue
		}
		if b.ratioMetric != "" {
			secs, okS := r.median(b.secondsMetric)
			ratio, okR := r.median(b.ratioMetric)
			if okS && okR {
				lines = append(lines, verdict(b, secs*1e9, ratio))
			} else if r.status != "" {
				lines = append(lines, fmt.Sprintf("%s: %s (%s)", b.label, r.status, r.note))
			}
			continue
		}
		ns, ok := r.median("ns/op")
		if !ok {
			lines = append(lines, fmt.Sprintf("%s: %s (%s)", b.label, r.status, r.note))
			continue
		}
		lines = append(lines, budgetLine(b, ns, byName[floorBench]))
	}
	printScale(w, byName["LSPScale"])
	if len(lines) == 0 {
		return 0
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "budgets (docs/architecture.md#budgets; ratios against the floor measured in this run):")
	for _, l := range lines {
		if strings.Contains(l, overMark) || strings.Contains(l, ": FAIL (") {
			missed++
		}
		fmt.Fprintln(w, "  "+l)
	}
	return missed
}

// The verdicts at a budget line's end.
const (
	passMark = "✓ PASS"
	overMark = "✗ OVER"
)

// printScale sets the language server on W and on 4W side by side, as
// BenchmarkLSPScale measured them in the same ops.
func printScale(w io.Writer, r *result) {
	if r == nil {
		return
	}
	rows := []struct{ label, w, w4, ratio, unit string }{
		{"initialize → all diagnostics", "W-init-s", "4W-init-s", "init-4W/W", "s"},
		{"keystroke → diagnostics p95", "W-p95-ms", "4W-p95-ms", "p95-4W/W", "ms"},
		{"peak RSS", "W-RSS-MB", "4W-RSS-MB", "", "MB"},
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "language server, W (22,000 files) and 4W (88,000 files) in the same run:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  \tW\t4W\t4W ÷ W")
	for _, row := range rows {
		a, okA := r.median(row.w)
		b, okB := r.median(row.w4)
		if !okA || !okB {
			continue
		}
		ratio := b / a
		if v, ok := r.median(row.ratio); ok {
			ratio = v // the median of each op's ratio
		}
		fmt.Fprintf(tw, "  %s\t%s %s\t%s %s\t%.2f ×\n", row.label,
			strconv.FormatFloat(a, 'g', 4, 64), row.unit, strconv.FormatFloat(b, 'g', 4, 64), row.unit, ratio)
	}
	if v, ok := r.median("4W-JSON-MB"); ok {
		fmt.Fprintf(tw, "  JSON of the workspace\t\t%s MB\t\n", strconv.FormatFloat(v, 'g', 4, 64))
	}
	tw.Flush()
}

func budgetLine(b budget, ns float64, floor *result) string {
	var floorNs float64
	ok := false
	if floor != nil {
		floorNs, ok = floor.median("ns/op")
	}
	if !ok || floorNs == 0 {
		return fmt.Sprintf("%s = %s s; no floor in this run (budget ≤ %g × floor)", b.label, seconds(ns), b.maxRatio)
	}
	return verdict(b, ns, ns/floorNs)
}

func verdict(b budget, ns, ratio float64) string {
	mark := passMark
	if ratio > b.maxRatio {
		mark = overMark
	}
	return fmt.Sprintf("%s = %s s = %.2f × floor (budget ≤ %g)  %s", b.label, seconds(ns), ratio, b.maxRatio, mark)
}

// absoluteLine states a metric against its absolute budget, or alone for a
// comparison line.
func absoluteLine(b budget, v float64) string {
	value := strconv.FormatFloat(v, 'g', 4, 64)
	if b.max == 0 {
		return fmt.Sprintf("%s = %s %s (for comparison; no budget)", b.label, value, b.unit)
	}
	mark := passMark
	if v > b.max {
		mark = overMark
	}
	return fmt.Sprintf("%s = %s %s (budget ≤ %g %s)  %s", b.label, value, b.unit, b.max, b.unit, mark)
}

// seconds formats nanoseconds as seconds with 4 significant digits.
func seconds(ns float64) string { return strconv.FormatFloat(ns/1e9, 'g', 4, 64) }

// size formats a byte count in B, kB or MB.
func size(b float64) string {
	switch {
	case b >= 1e6:
		return fmt.Sprintf("%.1f MB", b/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.1f kB", b/1e3)
	}
	return fmt.Sprintf("%.0f B", b)
}
