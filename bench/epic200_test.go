//go:build linux

package bench

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/saga-ai/saga-lsp/claudecode"
	"github.com/saga-ai/saga-lsp/fswatch"
	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
	"github.com/saga-ai/saga-lsp/runs"
)

// Issue 36's budget 2 (docs/architecture.md#budgets): a 200-story epic, a
// random DAG drawn from a fixed seed, run by the epic runner with K = 8
// and the stand-in claude taking about a second per story. While it runs,
// `status <epic>` is sampled, the dashboard's epic page is open in
// chromium and a language server follows the workspace; all are measured
// in that one run.

const (
	epic200Stories = 200
	epic200K       = 8
	epic200Seed    = 36
	// epic200Delay is the stand-in's pause before each model turn
	// (agentsim.ScriptSlow): a one-task story takes about 7 turns.
	epic200Delay = "140"
)

// randomEpic draws the 200-story DAG: story i is blocked by up to two of
// the 30 stories before it (none for about one in six), so the graph
// stays wide enough for K = 8 while most stories wait on another.
func randomEpic(id string) [][2]any {
	rng := rand.New(rand.NewPCG(epic200Seed, 2))
	var children [][2]any
	name := func(i int) string { return fmt.Sprintf("%s--s%03d", id, i) }
	for i := range epic200Stories {
		blockers := []string{}
		if i > 0 && rng.IntN(6) != 0 {
			for range 1 + rng.IntN(2) {
				b := name(max(0, i-1-rng.IntN(min(i, 30))))
				if !slices.Contains(blockers, b) {
					blockers = append(blockers, b)
				}
			}
		}
		children = append(children, [2]any{name(i), blockers})
	}
	return children
}

// BenchmarkEpic200 runs the 200-story epic once (the ops after the first
// measure nothing: one run takes minutes) and reports:
//   - the runner's reaction: for every story end after which some story
//     was ready, the time to the next story's start — from the story's
//     worker's worker.end (its end, not when the runner saw it: a runner
//     that looks late is slow to react) to the runner's story.start (its
//     worker holding its lock), max, p95 and p50; and, logged, where the
//     five slowest went (the end seen, the next worker's first event, its
//     lock, the runner's story.start);
//   - the runner's peak RSS and CPU time;
//   - `status <epic> --format json` sampled every 2 s while the run goes
//     on (samples apart, so that they do not load the run): p50, p95, max;
//     and right after each, `version` of the same binary — a new
//     process's floor on the loaded cores — p50;
//   - the dashboard's epic page open in chromium all along: each story's
//     task status written completed in its worktree (seen by inotify) →
//     the graph's node showing it (a MutationObserver in the page), p95;
//     its two halves — the write → the dashboard's change event naming the
//     story (a stream of the benchmark's own), and the fetch that brought
//     it answered → the node showing it — p50 and p95, and, logged, the
//     five slowest; and how many times the page fetched itself again,
//     each fetch's p50, and how many of those brought a changed page;
//   - a language server on the workspace with epic.json open: a keystroke
//     in it → its diagnostics published, and its lenses (a line per
//     story, each story's run state) asked, every second, p95; and the
//     server's time on a core over that keystroke and lens request
//     (whatever else it did meanwhile included), and its threads' time
//     runnable but waiting for a core, summed, p95 (schedTimes); and
//     right after each, the same keystroke and lens request to a process
//     that answers them doing nothing (bench/lspfloor), started the same
//     way — the server's floor on the loaded cores — p95;
//   - the CPU the language server and the dashboard used over the run, and
//     the machine's (every process's, the run's and the faces').
func BenchmarkEpic200(b *testing.B) {
	bin := builtBinary(b)
	standin := testkit.Build(b, "./testdata/standin/claude")
	var m epic200Metrics
	measured := false
	for b.Loop() {
		if !measured {
			measured = true
			b.StopTimer()
			m = runEpic200(b, bin, standin)
			b.StartTimer()
		}
	}
	b.ReportMetric(slices.Max(m.reaction), "reaction-max-ms")
	b.ReportMetric(percentile(m.reaction, 95), "reaction-p95-ms")
	b.ReportMetric(percentile(m.reaction, 50), "reaction-p50-ms")
	b.ReportMetric(percentile(m.detect, 50), "end-seen-p50-ms")
	b.ReportMetric(percentile(m.detect, 100), "end-seen-max-ms")
	b.ReportMetric(m.rssMB, "runner-peak-RSS-MB")
	b.ReportMetric(m.anonMB, "runner-peak-anon-MB")
	b.ReportMetric(m.fileMB, "runner-file-at-anon-peak-MB")
	b.ReportMetric(m.cpu.Seconds(), "runner-cpu-s")
	b.ReportMetric(percentile(m.status, 50), "status-p50-ms")
	b.ReportMetric(percentile(m.status, 95), "status-p95-ms")
	b.ReportMetric(percentile(m.status, 100), "status-max-ms")
	b.ReportMetric(percentile(m.statusCPU, 50), "status-cpu-p50-ms")
	b.ReportMetric(float64(len(m.status)), "status-samples")
	b.ReportMetric(percentile(m.noop, 50), "noop-p50-ms")
	b.ReportMetric(percentile(m.graph, 50), "graph-p50-ms")
	b.ReportMetric(percentile(m.graph, 95), "graph-p95-ms")
	b.ReportMetric(percentile(m.graph, 100), "graph-max-ms")
	b.ReportMetric(float64(len(m.graph)), "graph-samples")
	b.ReportMetric(percentile(m.graphTold, 50), "graph-told-p50-ms")
	b.ReportMetric(percentile(m.graphTold, 95), "graph-told-p95-ms")
	b.ReportMetric(percentile(m.graphApply, 50), "graph-apply-p50-ms")
	b.ReportMetric(percentile(m.graphApply, 95), "graph-apply-p95-ms")
	b.ReportMetric(float64(len(m.pageLong)), "page-long-tasks")
	b.ReportMetric(percentile(m.pageLong, 100), "page-long-task-max-ms")
	b.ReportMetric(func() (s float64) {
		for _, l := range m.pageLong {
			s += l
		}
		return s / 1000
	}(), "page-long-task-s")
	b.ReportMetric(m.frameScripts, "page-long-frame-scripts-s")
	b.ReportMetric(m.frameForced, "page-long-frame-forced-layout-s")
	b.ReportMetric(m.frameRender, "page-long-frame-render-s")
	b.ReportMetric(float64(len(m.refetch)), "page-fetches")
	b.ReportMetric(percentile(m.refetch, 50), "page-fetch-p50-ms")
	b.ReportMetric(m.applied, "page-fetches-applied")
	b.ReportMetric(percentile(m.keystroke, 95), "keystroke-p95-ms")
	b.ReportMetric(percentile(m.keystroke, 100), "keystroke-max-ms")
	b.ReportMetric(percentile(m.lens, 95), "lens-p95-ms")
	b.ReportMetric(percentile(m.lens, 100), "lens-max-ms")
	b.ReportMetric(percentile(m.floorKeystroke, 95), "floor-keystroke-p95-ms")
	b.ReportMetric(percentile(m.floorLens, 95), "floor-lens-p95-ms")
	b.ReportMetric(percentile(m.keystroke, 95)-percentile(m.floorKeystroke, 95), "keystroke-over-floor-p95-ms")
	b.ReportMetric(percentile(m.lens, 95)-percentile(m.floorLens, 95), "lens-over-floor-p95-ms")
	b.ReportMetric(percentile(m.lspCPU, 95), "lsp-cpu-p95-ms")
	b.ReportMetric(percentile(m.lspWait, 95), "lsp-wait-p95-ms")
	b.ReportMetric(float64(len(m.lens)), "lsp-samples")
	b.ReportMetric(m.lspRunCPU.Seconds(), "lsp-run-cpu-s")
	b.ReportMetric(m.dashRunCPU.Seconds(), "dashboard-run-cpu-s")
	b.ReportMetric(m.busy.Seconds(), "machine-busy-s")
	b.ReportMetric(m.wall.Seconds(), "run-s")
	b.ReportMetric(percentile(m.agent, 50), "agent-p50-s")
}

type epic200Metrics struct {
	reaction, detect, status, statusCPU, noop, agent, graph, keystroke, lens, refetch []float64
	// graphTold: a write → the dashboard's change event naming its story;
	// graphApply: the fetch that brought it answered → the page showing it.
	graphTold, graphApply []float64
	// frameScripts, frameRender: the page's long animation frames, their
	// scripts' seconds (frameForced: of them, style and layout the scripts
	// forced) and their style, layout and paint's after them.
	frameScripts, frameForced, frameRender float64
	pageLong                               []float64 // the page's long tasks (50 ms or more), each one's length
	applied                                float64   // the page's fetches that brought a changed page, applied
	// lspCPU and lspWait: the server's time on a core, and runnable
	// waiting for one, from before a keystroke to its lenses answered.
	lspCPU, lspWait []float64
	// floorKeystroke and floorLens: the same on the server's floor
	// (bench/lspfloor), sampled right after.
	floorKeystroke, floorLens []float64
	rssMB                     float64
	anonMB, fileMB            float64 // the runner's most anonymous memory in a sample, and its file pages then
	wall, cpu                 time.Duration
	// lspRunCPU and dashRunCPU: the faces' servers' CPU over the whole run.
	lspRunCPU, dashRunCPU time.Duration
	busy                  time.Duration // the machine's, every process's
}

func runEpic200(b *testing.B, bin, standin string) epic200Metrics {
	const epic = "big"
	children := randomEpic(epic)
	root := epicRepo(b, epic, children, 1)
	base := b.TempDir()
	sessionDir := filepath.Join(base, "sessions")
	tmux := testkit.TmuxServer(b)
	// The workers at their default priority (docs/worker.md#priority).
	env := append(testkit.CleanEnv(), runs.EnvWorkerNice+"=", "SAGA_TMUX_SOCKET="+tmux, "SAGA_SESSION_DIR="+sessionDir, "SAGA_LSP_BIN="+bin,
		"CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"), "SAGA_CLAUDE="+standin, "SAGA_GH="+filepath.Join(base, "no-gh"),
		"SAGA_STANDIN_SCRIPT=slow", "SAGA_STANDIN_DELAY_MS="+epic200Delay)
	session := runs.KindSessionName(runs.KindEpic, epic, time.Now())
	out := runs.OutputFile(sessionDir, session)
	cmd := exec.Command(bin, "epic-runner", epic, "--max-parallel", fmt.Sprint(epic200K), "--output-file", out, "--session", session)
	cmd.Dir, cmd.Env = root, env
	ownSession(cmd) // as `epic run` starts it, in tmux
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout

	// The faces, open before the run starts.
	writes := watchTaskWrites(b, root, filepath.Join(base, "claude"))
	browser := chromium(b)
	d := startDashboard(b, bin, root, env)
	browse(b, browser, chromedp.Navigate(d.url), chromedp.Navigate(d.base+"/r/"+filepath.Base(root)+"/epic/"+epic))
	waitIn(b, browser, `window.sagaDashboard.connected && window.sagaDashboard.graphs > 0`)
	evalIn[bool](b, browser, `(() => {
		window.__done = {};
		performance.setResourceTimingBufferSize(100000); // every fetch of the page, not the first 250
		const seen = () => {
			const now = performance.timeOrigin + performance.now();
			for (const n of document.querySelectorAll('#graph .node')) {
				const m = / (\d+) of (\d+) tasks/.exec(n.getAttribute('aria-label') || '');
				if (m && +m[1] > 0 && !(n.dataset.id in window.__done)) window.__done[n.dataset.id] = now;
			}
		};
		new MutationObserver(seen).observe(document.getElementById('main'), {childList: true, subtree: true, attributes: true, attributeFilter: ['aria-label']});
		// When the dashboard told of each story's changes (a stream of the
		// benchmark's own beside the page's): where the slowest went.
		window.__long = []; // the page's main thread busy 50 ms or more at a time
		new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push([performance.timeOrigin + e.startTime, e.duration]); }).observe({type: 'longtask'});
		// The long frames' time, halved: its scripts, and the browser's
		// style, layout and paint after them.
		window.__frames = {scripts: 0, forced: 0, render: 0, by: {}};
		new PerformanceObserver((l) => {
			for (const e of l.getEntries()) {
				const end = e.startTime + e.duration;
				for (const sc of e.scripts) {
					window.__frames.scripts += sc.duration;
					window.__frames.forced += sc.forcedStyleAndLayoutDuration || 0;
					const k = sc.invoker + ' ' + (sc.sourceFunctionName || '') + ' ' + (sc.sourceURL || '').replace(/.*\//, '').replace(/\?.*/, '') + ':' + sc.sourceCharPosition;
					window.__frames.by[k] = (window.__frames.by[k] || 0) + sc.duration;
				}
				window.__frames.render += end - (e.styleAndLayoutStart || end);
			}
		}).observe({type: 'long-animation-frame'});
		window.__noticed = {};
		new EventSource('/events').addEventListener('change', (e) => {
			const now = performance.timeOrigin + performance.now();
			for (const ids of Object.values(JSON.parse(e.data).stories)) for (const id of ids) (window.__noticed[id] ||= []).push(now);
		});
		return true; })()`)
	stopProfile := pageProfile(b, browser)
	lsp := startLSPFace(b, bin, root, env)
	epicDoc := openEpic(b, lsp, epic)
	floor := startLSPFloor(b, root, env)
	floorDoc := openEpic(b, floor, epic)

	var m epic200Metrics
	done := make(chan struct{})
	var wg sync.WaitGroup
	every := func(period time.Duration, sample func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				case <-time.After(period):
				}
				if err := sample(); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	every(2*time.Second, func() error { // status, one after another
		st := exec.Command(bin, "status", epic, "--format", "json")
		st.Dir, st.Env = root, env
		ownSession(st) // a terminal's
		t0 := time.Now()
		outb, err := st.Output()
		d := time.Since(t0)
		var s struct{ Epic struct{ Total int } }
		if err != nil || json.Unmarshal(outb, &s) != nil || s.Epic.Total != epic200Stories {
			return fmt.Errorf("status during the run: %v\n%s", err, outb)
		}
		m.status = append(m.status, float64(d.Microseconds())/1e3)
		// Its CPU and its git processes' (waited for, so counted in its
		// own usage): what a share of the loaded cores stretches into the wall.
		m.statusCPU = append(m.statusCPU, float64((st.ProcessState.UserTime()+st.ProcessState.SystemTime()).Microseconds())/1e3)
		// The floor beside it: the same binary started the same way,
		// doing nothing (`version`) — what the loaded cores make of a
		// new process before status does anything.
		nop := exec.Command(bin, "version")
		nop.Dir, nop.Env = root, env
		ownSession(nop)
		t0 = time.Now()
		if out, err := nop.Output(); err != nil {
			return fmt.Errorf("version during the run: %v\n%s", err, out)
		}
		m.noop = append(m.noop, float64(time.Since(t0).Microseconds())/1e3)
		return nil
	})
	every(time.Second, func() error { // the language server
		cpu0, wait0, err := schedTimes(lsp.pid)
		if err != nil {
			return err
		}
		k, err := epicDoc.keystroke()
		if err != nil {
			return err
		}
		t0 := time.Now()
		lm, err := lsp.call("textDocument/codeLens", map[string]any{"textDocument": map[string]any{"uri": epicDoc.uri}})
		if err != nil {
			return err
		}
		if n := bytes.Count(lm.Result, []byte(`"range"`)); n < 2*epic200Stories {
			return fmt.Errorf("%d lenses on epic.json, want one per story and its action: %s", n, lm.Result)
		}
		m.keystroke, m.lens = append(m.keystroke, k.Seconds()*1e3), append(m.lens, lm.At.Sub(t0).Seconds()*1e3)
		cpu1, wait1, err := schedTimes(lsp.pid)
		if err != nil {
			return err
		}
		m.lspCPU, m.lspWait = append(m.lspCPU, (cpu1-cpu0).Seconds()*1e3), append(m.lspWait, (wait1-wait0).Seconds()*1e3)
		// The same two on the floor, right after.
		if k, err = floorDoc.keystroke(); err != nil {
			return fmt.Errorf("the floor: %w", err)
		}
		t0 = time.Now()
		if lm, err = floor.call("textDocument/codeLens", map[string]any{"textDocument": map[string]any{"uri": floorDoc.uri}}); err != nil {
			return fmt.Errorf("the floor: %w", err)
		}
		m.floorKeystroke, m.floorLens = append(m.floorKeystroke, k.Seconds()*1e3), append(m.floorLens, lm.At.Sub(t0).Seconds()*1e3)
		return nil
	})
	lspCPU0, _, lspErr := schedTimes(lsp.pid)
	dashCPU0 := d.cpuNs()
	busy0, busyErr := machineBusy()
	t0 := time.Now()
	peak, err := runPeakRSS(cmd)
	m.wall = time.Since(t0)
	close(done)
	wg.Wait()
	busy1, busyErr1 := machineBusy()
	if busyErr != nil || busyErr1 != nil {
		b.Fatalf("%v, %v", busyErr, busyErr1)
	}
	m.busy = busy1 - busy0
	lspCPU1, _, lspErr1 := schedTimes(lsp.pid)
	if lspErr != nil || lspErr1 != nil {
		b.Fatalf("the language server's CPU: %v, %v", lspErr, lspErr1)
	}
	m.lspRunCPU, m.dashRunCPU = lspCPU1-lspCPU0, time.Duration(d.cpuNs()-dashCPU0)
	if err != nil {
		b.Fatalf("epic-runner: %v\n%s", err, stdout.Bytes())
	}
	m.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	m.rssMB, m.anonMB, m.fileMB = float64(peak.KB)/1024, float64(peak.AnonKB)/1024, float64(peak.FileKB)/1024
	var w workerMarks
	m.agent, m.detect, w = workerTimes(b, sessionDir, runs.EventsFile(out))
	m.reaction = epicReactions(b, runs.EventsFile(out), children, w)
	// The page shows what the last worker wrote, then the marks are read.
	waitIn(b, browser, fmt.Sprintf(`Object.keys(window.__done).length >= %d`, epic200Stories))
	shown := evalIn[map[string]float64](b, browser, `window.__done`)
	// The page's own fetches of itself (one per change event it acted
	// on, at most one at a time): how long each took, and how many.
	m.applied = evalIn[float64](b, browser, `window.sagaDashboard.refreshes`)
	fetches := evalIn[[][2]float64](b, browser, `performance.getEntriesByType('resource').filter(e => e.initiatorType === 'fetch' && e.name === location.href).map(e => [performance.timeOrigin + e.startTime, performance.timeOrigin + e.responseEnd])`)
	for _, f := range fetches {
		m.refetch = append(m.refetch, f[1]-f[0])
	}
	type late struct {
		story          string
		written, shown float64
	}
	var graphs []late
	for id, at := range writes() {
		if s, ok := shown[id]; ok {
			w := float64(at.UnixNano()) / 1e6
			m.graph = append(m.graph, s-w)
			graphs = append(graphs, late{id, w, s})
		}
	}
	// Where the slowest went: the dashboard's first change event for the
	// story after the write; the fetch that brought it (the last answered
	// before it was shown): when it started and was answered; and the
	// fetch before it, which did not.
	stopProfile()
	noticed := evalIn[map[string][]float64](b, browser, `window.__noticed`)
	for _, g := range graphs {
		if at := slices.IndexFunc(noticed[g.story], func(at float64) bool { return at >= g.written }); at >= 0 {
			m.graphTold = append(m.graphTold, noticed[g.story][at]-g.written)
		}
		if i := sort.Search(len(fetches), func(i int) bool { return fetches[i][1] > g.shown }) - 1; i >= 0 {
			m.graphApply = append(m.graphApply, g.shown-fetches[i][1])
		}
	}
	frames := evalIn[struct {
		Scripts, Forced, Render float64
		By                      map[string]float64
	}](b, browser, `window.__frames`)
	m.frameScripts, m.frameForced, m.frameRender = frames.Scripts/1000, frames.Forced/1000, frames.Render/1000
	for i, k := range slices.SortedFunc(maps.Keys(frames.By), func(x, y string) int { return cmp.Compare(frames.By[y], frames.By[x]) }) {
		if i < 8 {
			b.Logf("long frames' scripts: %6.1f s  %s", frames.By[k]/1000, k)
		}
	}
	long := evalIn[[][2]float64](b, browser, `window.__long`)
	for _, l := range long {
		m.pageLong = append(m.pageLong, l[1])
	}
	// busy is how long the page's main thread spent in long tasks between
	// from and to.
	busy := func(from, to float64) (sum float64) {
		for _, l := range long {
			sum += max(0, min(to, l[0]+l[1])-max(from, l[0]))
		}
		return sum
	}
	sort.Slice(graphs, func(i, j int) bool { return graphs[i].shown-graphs[i].written > graphs[j].shown-graphs[j].written })
	for _, g := range graphs[:min(5, len(graphs))] {
		told := -1.0
		for _, at := range noticed[g.story] {
			if at >= g.written {
				told = at - g.written
				break
			}
		}
		i := sort.Search(len(fetches), func(i int) bool { return fetches[i][1] > g.shown }) - 1
		if i < 1 {
			continue
		}
		f, before := fetches[i], fetches[i-1]
		b.Logf("graph %.0f ms: %s written → told +%.0f ms; the fetch that brought it started +%.0f ms, answered +%.0f ms; the one before it started %+.0f ms, answered %+.0f ms; the page's long tasks meanwhile %.0f ms",
			g.shown-g.written, g.story, told, f[0]-g.written, f[1]-g.written, before[0]-g.written, before[1]-g.written, busy(g.written, g.shown))
	}
	if len(m.graph) < epic200Stories {
		b.Fatalf("%d task completions both written and shown, want %d", len(m.graph), epic200Stories)
	}
	return m
}

// watchTaskWrites notes when each story's task was first written
// completed where a face reads it: the agent's task list
// (<configDir>/tasks/saga__<s>__<ms>/, Claude Code's own file, which the
// live view follows) or the story's copy in its worktree
// (.saga/worktrees/<s>/.saga/stories/<s>/, where the hook syncs it),
// whichever came first. The time is the file's modification time, which
// the kernel stamps as it is written (before its rename into place: the
// figure errs long), never when this goroutine reads the event: on the
// cores the run keeps busy it read them late. Measured from the worktree
// copy alone, as inotify delivered it, the page showed half the
// completions before they were "written" (graph p50 −155 ms, and −128 ms
// from that copy's modification time): the live view had them from the
// task list, a hook's sync earlier. The returned func stops watching and
// gives story → the time.
func watchTaskWrites(b *testing.B, root, configDir string) func() map[string]time.Time {
	b.Helper()
	w, err := fswatch.New(fswatch.Options{})
	must(b, err)
	wts := filepath.Join(root, ".saga", "worktrees")
	lists := filepath.Join(configDir, "tasks")
	must(b, os.MkdirAll(wts, 0o755))
	must(b, os.MkdirAll(lists, 0o700))
	// storyOf is the story whose task files dir holds, if it is a folder
	// that is followed (or holds such folders: "" and true).
	storyOf := func(dir string) (story string, follow bool) {
		if rel, err := filepath.Rel(lists, dir); err == nil && !strings.HasPrefix(rel, "..") {
			if rel == "." {
				return "", true
			}
			s, ok := claudecode.StoryOfList(rel)
			return s, ok && !strings.Contains(rel, string(filepath.Separator))
		}
		rel, err := filepath.Rel(wts, dir)
		if err != nil || strings.HasPrefix(rel, "..") {
			return "", false
		}
		// <s>, <s>/.saga, <s>/.saga/stories, <s>/.saga/stories/<s>.
		p := strings.Split(rel, string(filepath.Separator))
		switch len(p) {
		case 1:
			return "", rel == "." || !strings.Contains(p[0], ".")
		case 2:
			return "", p[1] == ".saga"
		case 3:
			return "", p[1] == ".saga" && p[2] == "stories"
		case 4:
			return p[0], p[1] == ".saga" && p[2] == "stories" && p[3] == p[0]
		}
		return "", false
	}
	seen := map[string]time.Time{}
	// note records a task file seen completed, written at at, if it is the
	// story's first.
	note := func(path string, at time.Time) {
		dir, name := filepath.Split(path)
		story, follow := storyOf(filepath.Clean(dir))
		if !strings.HasSuffix(name, ".json") || name == "story.json" || !follow || story == "" ||
			(!seen[story].IsZero() && !at.Before(seen[story])) {
			return
		}
		var t struct{ Status string }
		if data, err := os.ReadFile(path); err == nil && json.Unmarshal(data, &t) == nil && t.Status == "completed" {
			seen[story] = at
		}
	}
	var add func(dir string)
	add = func(dir string) {
		if err := w.Add(dir); err != nil {
			return // gone meanwhile
		}
		des, _ := os.ReadDir(dir)
		for _, de := range des {
			sub := filepath.Join(dir, de.Name())
			if de.IsDir() {
				if _, follow := storyOf(sub); follow {
					add(sub)
				}
			} else if fi, err := de.Info(); err == nil && fi.Mode().IsRegular() {
				note(sub, fi.ModTime()) // written before its folder was watched
			}
		}
	}
	add(wts)
	add(lists)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for ev := range w.Events() {
			fi, err := os.Stat(ev.Path)
			if err != nil {
				continue // replaced again meanwhile: its next event names it
			}
			if fi.IsDir() {
				if _, follow := storyOf(ev.Path); follow {
					add(ev.Path)
				}
				continue
			}
			note(ev.Path, fi.ModTime())
		}
	}()
	go func() {
		for range w.Errors() {
		}
	}()
	return func() map[string]time.Time {
		w.Close()
		<-stopped
		return seen
	}
}

// epicDoc is epic.json open in the language server.
type epicDoc struct {
	l       *lspFace
	uri     string
	version int
	col     int  // where the description's value starts
	typed   bool // the description holds the typed character
}

// openEpic opens the epic's epic.json and waits for its first diagnostics.
func openEpic(b *testing.B, l *lspFace, epic string) *epicDoc {
	b.Helper()
	rel := ".saga/epics/" + epic + "/epic.json"
	text := testkit.ReadFile(b, filepath.Join(l.root, filepath.FromSlash(rel)))
	first, _, _ := strings.Cut(text, "\n")
	col := strings.Index(first, `"description": "`)
	if col < 0 {
		b.Fatalf("no description on the first line of %s", rel)
	}
	d := &epicDoc{l: l, uri: l.uri(rel), version: 1, col: col + len(`"description": "`)}
	mark := l.c.Mark()
	must(b, l.c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": d.uri, "languageId": "json", "version": d.version, "text": text}}))
	if _, err := d.published(mark, time.Now()); err != nil {
		b.Fatal(err)
	}
	return d
}

// keystroke types or deletes one character of the description and waits
// for the new version's diagnostics.
func (d *epicDoc) keystroke() (time.Duration, error) {
	d.version++
	pos := map[string]int{"line": 0, "character": d.col}
	end := pos
	text := "x"
	if d.typed {
		end, text = map[string]int{"line": 0, "character": d.col + 1}, ""
	}
	d.typed = !d.typed
	mark := d.l.c.Mark()
	t0 := time.Now()
	err := d.l.c.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": d.uri, "version": d.version},
		"contentChanges": []any{map[string]any{"range": map[string]any{"start": pos, "end": end}, "text": text}}})
	if err != nil {
		return 0, err
	}
	return d.published(mark, t0)
}

// published waits for the diagnostics of the document's version, from
// mark on, and forgets the messages before them.
func (d *epicDoc) published(mark int, t0 time.Time) (time.Duration, error) {
	m, i, err := d.l.c.Next(mark, t0.Add(lspTimeout), func(m lspclient.Message) bool {
		if m.Method != "textDocument/publishDiagnostics" {
			return false
		}
		var p publication
		return json.Unmarshal(m.Params, &p) == nil && p.URI == d.uri && p.Version != nil && *p.Version == d.version
	})
	if err != nil {
		return 0, fmt.Errorf("epic.json version %d: %w", d.version, err)
	}
	var p publication
	json.Unmarshal(m.Params, &p)
	if len(p.Diagnostics) > 0 {
		return 0, fmt.Errorf("epic.json version %d has findings: %+v", d.version, p.Diagnostics)
	}
	d.l.c.Discard(i + 1)
	return m.At.Sub(t0), nil
}

// epicReactions reads an epic run's events: for every story.end after
// which a story was ready (each blocker ended by then, itself not
// started), the time to the next story.start, in ms. Every story must
// have completed.
func epicReactions(b *testing.B, events string, children [][2]any, w workerMarks) []float64 {
	b.Helper()
	type ev struct {
		at    time.Time
		start bool
		story string
	}
	var evs []ev
	ended := map[string]time.Time{}
	seenEnd := map[string]time.Time{}
	tl := runs.Tail{Path: events}
	tl.Read(func(e runs.Event) {
		switch e.Event {
		case runs.KindStoryStart:
			evs = append(evs, ev{e.Time, true, e.Story})
		case runs.KindStoryEnd:
			seenEnd[e.Story] = e.Time
			if e.Status != runs.StatusCompleted {
				b.Fatalf("%s ended %s: %s", e.Story, e.Status, e.Message)
			}
			// The story's end is its worker's: the runner's story.end
			// comes when it saw it, and a late look is the runner's delay too.
			at := e.Time
			if t, ok := w.end[e.Story]; ok {
				at = t
			}
			evs = append(evs, ev{at, false, e.Story})
			ended[e.Story] = at
		}
	})
	if len(ended) != len(children) {
		b.Fatalf("%d of %d stories ended (events %s)", len(ended), len(children), events)
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at.Before(evs[j].at) })
	started := map[string]bool{}
	var out []float64
	type slow struct {
		ms        float64
		end, next string
	}
	var slowest []slow
	for i, e := range evs {
		if e.start {
			started[e.story] = true
			continue
		}
		ready := slices.ContainsFunc(children, func(c [2]any) bool {
			id := c[0].(string)
			if started[id] {
				return false
			}
			for _, bl := range c[1].([]string) {
				if t, ok := ended[bl]; !ok || t.After(e.at) {
					return false
				}
			}
			return true
		})
		if !ready {
			continue
		}
		for _, n := range evs[i+1:] {
			if n.start {
				out = append(out, float64(n.at.Sub(e.at).Microseconds())/1e3)
				slowest = append(slowest, slow{out[len(out)-1], e.story, n.story})
				break
			}
		}
	}
	if len(out) == 0 {
		b.Fatal("no story end found a story ready")
	}
	// Where the slowest reactions went: the end seen by the runner, the
	// next worker's first event, its lock, the runner's story.start.
	sort.Slice(slowest, func(i, j int) bool { return slowest[i].ms > slowest[j].ms })
	ms := func(a, b time.Time) float64 { return float64(b.Sub(a).Microseconds()) / 1e3 }
	for _, s := range slowest[:min(5, len(slowest))] {
		var at time.Time
		for _, e := range evs {
			if e.start && e.story == s.next {
				at = e.at
			}
		}
		b.Logf("reaction %.0f ms: %s ended → seen %+.0f ms; %s: worker.start %+.0f ms, locked %+.0f ms, story.start %+.0f ms",
			s.ms, s.end, ms(w.end[s.end], seenEnd[s.end]), s.next, ms(w.end[s.end], w.start[s.next]), ms(w.end[s.end], w.locked[s.next]), ms(w.end[s.end], at))
	}
	return out
}

// workerMarks are each story's worker's times: its first event, its
// lock held, its end.
type workerMarks struct{ start, locked, end map[string]time.Time }

// workerTimes reads the workers' events: each headless run's length
// (run.start → run.end), in seconds — the stand-in's time per story — and
// how long the runner took to see each worker's end (its story.end minus
// the worker's worker.end), in ms; and each story's worker.end.
func workerTimes(b *testing.B, sessionDir, runnerEvents string) (agent, detect []float64, w workerMarks) {
	b.Helper()
	seen := map[string]time.Time{}
	w = workerMarks{start: map[string]time.Time{}, locked: map[string]time.Time{}, end: map[string]time.Time{}}
	tl := runs.Tail{Path: runnerEvents}
	tl.Read(func(e runs.Event) {
		if e.Event == runs.KindStoryEnd {
			seen[e.Story] = e.Time
		}
	})
	for id, files := range runs.ListRuns(sessionDir, runs.KindStory) {
		for _, f := range files {
			var start time.Time
			tl := runs.Tail{Path: f.EventsFile}
			tl.Read(func(e runs.Event) {
				switch e.Event {
				case runs.KindWorkerStart:
					w.start[id] = e.Time
				case runs.KindStep:
					if e.Step == runs.StepLock && e.Level == "" {
						w.locked[id] = e.Time
					}
				case runs.KindRunStart:
					start = e.Time
				case runs.KindRunEnd:
					if !start.IsZero() {
						agent = append(agent, e.Time.Sub(start).Seconds())
					}
				case runs.KindWorkerEnd:
					w.end[id] = e.Time
					if t, ok := seen[id]; ok {
						detect = append(detect, float64(t.Sub(e.Time).Microseconds())/1e3)
					}
				}
			})
		}
	}
	if len(agent) == 0 || len(detect) == 0 {
		b.Fatal("no headless run or worker end in the workers' events")
	}
	return agent, detect, w
}
