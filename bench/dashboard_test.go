//go:build linux

package bench

// The dashboard's budgets (issue 26; docs/architecture.md#budgets), each
// measured with both sides in one run: `saga-lsp dashboard` as a process
// (bin/saga-lsp, as a user starts it) and Debian's chromium, headless,
// through chromedp, as the browser.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/saga-ai/saga-lsp/internal/filesafe"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// dashProc is `saga-lsp dashboard` running.
type dashProc struct {
	cmd  *exec.Cmd
	url  string // with the token
	base string // http://host:port
}

// startDashboard runs `saga-lsp dashboard root` and reads the URL it
// prints first.
func startDashboard(b *testing.B, bin, root string, env []string) *dashProc {
	b.Helper()
	cmd := exec.Command(bin, "dashboard", root, "--format", "json")
	cmd.Env = env
	ownSession(cmd)
	cmd.Stderr = io.Discard
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
		io.Copy(io.Discard, out)
	}()
	var first struct{ URL string }
	select {
	case s := <-line:
		if err := json.Unmarshal([]byte(s), &first); err != nil || first.URL == "" {
			b.Fatalf("dashboard's first line: %q", s)
		}
	case <-time.After(2 * time.Minute):
		b.Fatal("the dashboard printed no URL")
	}
	base, _, _ := strings.Cut(first.URL, "/?")
	return &dashProc{cmd: cmd, url: first.URL, base: base}
}

// cpuNs is the CPU time the process's threads have used, in ns (0 when
// it cannot be read).
func (d *dashProc) cpuNs() int64 {
	onCPU, _, _ := schedTimes(d.cmd.Process.Pid)
	return onCPU.Nanoseconds()
}

// peakRSSMB is the process's peak resident set (VmHWM) in MiB.
func (d *dashProc) peakRSSMB() float64 {
	return float64(vmHWM(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))) / 1024
}

// chromium is a headless browser with a fresh profile; the benchmark is
// skipped without one.
func chromium(b *testing.B) context.Context {
	b.Helper()
	path := os.Getenv("SAGA_CHROMIUM")
	if path == "" {
		var err error
		if path, err = exec.LookPath("chromium"); err != nil {
			testkit.Needs(b, "chromium is not installed")
		}
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(path), chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(b.TempDir()), chromedp.WindowSize(1280, 900), chromedp.ModifyCmdFunc(browserSession))
	ctx, cancel := chromedp.NewContext(actx)
	b.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		b.Fatalf("start chromium: %v", err)
	}
	return ctx
}

func browse(b *testing.B, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	b.Helper()
	c, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		b.Fatalf("browser: %v", err)
	}
}

func evalIn[T any](b *testing.B, ctx context.Context, expr string) T {
	b.Helper()
	c, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr))
	if err != nil {
		b.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

func waitIn(b *testing.B, ctx context.Context, expr string) {
	b.Helper()
	c, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := chromedp.Run(c, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(time.Minute))); err != nil {
		b.Fatalf("waiting for %s: %v", expr, err)
	}
}

// pageLoad is a page's navigation timing: navigation start → its DOM
// parsed (every server-rendered row in it) and its scripts run.
type pageLoad struct {
	DCL  float64 `json:"dcl"`  // domContentLoadedEventEnd, ms since navigation start
	Rows int     `json:"rows"` // table rows in the DOM
	Want int     `json:"want"` // the rows the server rendered
}

const pageTiming = `(() => { const n = performance.getEntriesByType('navigation')[0];
	const w = document.querySelector('[data-rows]');
	return {dcl: n.domContentLoadedEventEnd, rows: document.querySelectorAll('tr[data-row]').length, want: w ? +w.dataset.rows : -1}; })()`

// BenchmarkDashboardHome is the budget "navigation start → the home table
// with every row in the DOM ≤ 1 s on W, and ≤ 2× `status --format json`":
// each op runs `saga-lsp status --format json` on W (a process, from its
// start to its exit) and loads the dashboard's home page in chromium
// (navigation start → DOMContentLoaded, every row parsed), alternately. The
// dashboard serves W from one process started before; its load is not
// timed (a user opens the page of a running dashboard). Also timed: the
// home page filtered to list every story of W (2,000 rows), and the peak
// RSS of the dashboard beside a language server's on W in the same run.
func BenchmarkDashboardHome(b *testing.B) {
	bin := builtBinary(b)
	w := workloadW(b)
	env := append(os.Environ(), "SAGA_SESSION_DIR="+b.TempDir())
	ctx := chromium(b)
	d := startDashboard(b, bin, w, env)
	loadRSS := d.peakRSSMB()
	browse(b, ctx, chromedp.Navigate(d.url))
	var statusMs, homeMs, ratios []float64
	rows := 0
	for b.Loop() {
		cmd := exec.Command(bin, "status", "--root", w, "--format", "json")
		cmd.Env, cmd.Stdout = env, io.Discard
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("status: %v", err)
		}
		st := time.Since(t0).Seconds() * 1e3
		browse(b, ctx, chromedp.Navigate(d.base+"/"))
		home := evalIn[pageLoad](b, ctx, pageTiming)
		if home.Rows != home.Want || home.Rows == 0 {
			b.Fatalf("home: %d rows in the DOM, %d rendered", home.Rows, home.Want)
		}
		statusMs, homeMs = append(statusMs, st), append(homeMs, home.DCL)
		ratios = append(ratios, home.DCL/st)
		rows = home.Rows
	}
	homeRSS := d.peakRSSMB()
	b.ReportMetric(median(statusMs), "status-ms")
	b.ReportMetric(median(homeMs), "home-ms")
	b.ReportMetric(median(ratios), "home/status")
	b.ReportMetric(float64(rows), "home-rows")
	// Every story of W in one table (a filter matching all): not budgeted.
	var allMs []float64
	allRows := 0
	for range 3 {
		browse(b, ctx, chromedp.Navigate(d.base+"/?q=--"))
		all := evalIn[pageLoad](b, ctx, pageTiming)
		if all.Rows != all.Want || all.Rows < 2000 {
			b.Fatalf("every story: %d rows in the DOM, %d rendered", all.Rows, all.Want)
		}
		allMs, allRows = append(allMs, all.DCL), all.Rows
	}
	b.ReportMetric(median(allMs), "all-stories-ms")
	b.ReportMetric(float64(allRows), "all-rows")

	// Memory: the dashboard after serving the home pages (and after the
	// 2,000-row pages too), and a language server on W once it published
	// every diagnostic.
	dashRSS := d.peakRSSMB()
	want := expectedFindings(b, bin, w)
	c := startSaga(b, bin)
	defer c.stop()
	if _, err := sagaInitialize(c, w, want, time.Now()); err != nil {
		b.Fatal(err)
	}
	if lspRSS := c.peakRSSMB(); dashRSS > 0 && lspRSS > 0 {
		b.ReportMetric(loadRSS, "dash-load-RSS-MB")
		b.ReportMetric(homeRSS, "dash-RSS-MB")
		b.ReportMetric(dashRSS, "dash-all-RSS-MB")
		b.ReportMetric(lspRSS, "lsp-RSS-MB")
		b.ReportMetric(dashRSS/lspRSS, "dash/lsp-RSS") // its peak: the 2,000-row pages served too
	}
}

// BenchmarkDashboardEpicGraph is the budget "an epic of 200 stories renders
// its graph ≤ 1 s": navigation start → the graph drawn (dagre's layout and
// the SVG of 200 nodes), the epic's run state derived by the server for the
// page. Also reported: dagre's layout alone.
func BenchmarkDashboardEpicGraph(b *testing.B) {
	bin := builtBinary(b)
	var children [][2]any
	for i := range 200 {
		var blockers []string
		if i >= 10 {
			blockers = []string{fmt.Sprintf("big--s%03d", i-10)}
			if i%3 == 0 {
				blockers = append(blockers, fmt.Sprintf("big--s%03d", i-7))
			}
		}
		children = append(children, [2]any{fmt.Sprintf("big--s%03d", i), blockers})
	}
	root := epicRepo(b, "big", children, 3)
	env := append(os.Environ(), "SAGA_SESSION_DIR="+b.TempDir())
	ctx := chromium(b)
	d := startDashboard(b, bin, root, env)
	browse(b, ctx, chromedp.Navigate(d.url))
	page := d.base + "/r/" + filepath.Base(root) + "/epic/big"
	var drawn, layout []float64
	for b.Loop() {
		browse(b, ctx, chromedp.Navigate(page))
		waitIn(b, ctx, `window.sagaDashboard && window.sagaDashboard.graphs > 0`)
		if n := evalIn[int](b, ctx, `document.querySelectorAll('#graph .node').length`); n != 200 {
			b.Fatalf("%d nodes drawn", n)
		}
		drawn = append(drawn, evalIn[float64](b, ctx, `window.sagaDashboard.graphAt`))
		layout = append(layout, evalIn[float64](b, ctx, `window.sagaDashboard.layoutMs`))
	}
	b.ReportMetric(median(drawn), "graph-ms")
	b.ReportMetric(median(layout), "layout-ms")
	whole, sums, size := pageFetches(b, d, page)
	b.ReportMetric(whole, "page-whole-ms")
	b.ReportMetric(sums, "page-by-parts-ms")
	b.ReportMetric(size/1024, "page-KB")
}

// pageFetches times the server's answer to a live page fetching itself
// (docs/architecture.md#a-live-page-in-parts), alternated, twenty each:
// the page whole, and the page by parts when nothing changed — made and
// summed, nothing sent. It answers their medians and the page's size.
func pageFetches(b *testing.B, d *dashProc, page string) (whole, byParts, size float64) {
	b.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: time.Minute}
	get := func(held string) (string, float64) {
		req, _ := http.NewRequest("GET", page, nil)
		req.Header.Set("X-Dashboard-Refresh", "1")
		if held != "" {
			req.Header.Set("X-Dashboard-Parts", held)
		}
		t0 := time.Now()
		res, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("GET %s: %s", page, res.Status)
		}
		return string(body), float64(time.Since(t0).Microseconds()) / 1000
	}
	if res, err := c.Get(d.url); err != nil {
		b.Fatal(err)
	} else {
		res.Body.Close()
	}
	html, _ := get("")
	m := regexp.MustCompile(`data-parts="([^"]*)"`).FindStringSubmatch(html)
	if m == nil {
		b.Fatal("the epic's page carries no sums")
	}
	var w, p []float64
	for range 20 {
		body, ms := get("")
		w = append(w, ms)
		size = float64(len(body))
		body, ms = get(m[1])
		if !strings.HasPrefix(body, "{") {
			b.Fatalf("the page by parts, nothing changed: %.200s", body)
		}
		p = append(p, ms)
	}
	return median(w), median(p), size
}

// liveWorkerRepo is BenchmarkLiveTaskStatus's set-up: a story of liveTasks
// tasks with its worktree copy, and an events file whose worker.start
// names a live process that passes for the worker. It returns the root,
// the worktree copy's folder and the session dir. Without running: the
// story alone, no worktree, no run.
func liveWorkerRepo(b *testing.B, story string, running bool) (root, wtDir, sessions string) {
	b.Helper()
	root, sessions = b.TempDir(), b.TempDir()
	mainDir := filepath.Join(root, ".saga", "stories", story)
	wtDir = filepath.Join(root, ".saga", "worktrees", story, ".saga", "stories", story)
	for _, dir := range []string{mainDir, wtDir} {
		must(b, os.MkdirAll(dir, 0o755))
		must(b, os.WriteFile(filepath.Join(dir, "story.json"), []byte(fmt.Sprintf("{\n  \"id\": %q,\n  \"title\": \"Benchmark story\",\n  \"description\": \"\"\n}\n", story)), 0o644))
		for i := range liveTasks {
			must(b, os.WriteFile(filepath.Join(dir, liveTaskName(i)+".json"), []byte(liveTaskJSON(i, "pending")), 0o644))
		}
	}
	if !running {
		must(b, os.RemoveAll(filepath.Join(root, ".saga", "worktrees")))
		return root, "", sessions
	}
	worker := exec.Command("sh", "-c", "sleep 3600; :", "worker", story)
	worker.Dir = root
	worker.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(b, worker.Start())
	b.Cleanup(func() {
		syscall.Kill(-worker.Process.Pid, syscall.SIGKILL)
		worker.Wait()
	})
	session := fmt.Sprintf("saga-story-%s-%d", story, time.Now().UnixMilli())
	events := fmt.Sprintf(`{"time":"2026-01-01T00:00:00Z","story":%q,"session":%q,"event":"worker.start","pid":%d}`+"\n"+
		`{"time":"2026-01-01T00:00:00Z","story":%q,"session":%q,"event":"step","step":"lock","message":"holding the worker lock"}`+"\n",
		story, session, worker.Process.Pid, story, session)
	must(b, os.WriteFile(filepath.Join(sessions, session+".log.events.jsonl"), []byte(events), 0o644))
	return root, wtDir, sessions
}

// BenchmarkDashboardLiveTaskStatus is the budget "a task status written on
// disk reaches an open page p95 ≤ 250 ms": the story page of a running
// worker is open; each change writes one task file of its worktree copy
// atomically (as the PostToolUse hook does) and is timed from the write
// until the page's DOM shows the new status (a MutationObserver in the
// page notes the wall-clock time it saw it).
func BenchmarkDashboardLiveTaskStatus(b *testing.B) {
	bin := builtBinary(b)
	const story = "bench-live"
	root, wtDir, sessions := liveWorkerRepo(b, story, true)
	env := append(os.Environ(), "SAGA_SESSION_DIR="+sessions, "CLAUDE_CONFIG_DIR="+b.TempDir())
	ctx := chromium(b)
	d := startDashboard(b, bin, root, env)
	browse(b, ctx, chromedp.Navigate(d.url), chromedp.Navigate(d.base+"/r/"+filepath.Base(root)+"/story/"+story))
	waitIn(b, ctx, `window.sagaDashboard.connected && document.querySelector('#story-facts').dataset.state === 'running'`)
	evalIn[bool](b, ctx, `(() => {
		window.__hit = {};
		const seen = () => {
			const w = window.__want;
			if (!w || window.__hit[w.n]) return;
			const li = document.querySelector('#task-' + CSS.escape(w.task));
			if (li && li.dataset.status === w.status) window.__hit[w.n] = performance.timeOrigin + performance.now();
		};
		new MutationObserver(seen).observe(document.getElementById('main'), {childList: true, subtree: true, attributes: true});
		return true; })()`)
	cycle := []string{"pending", "in_progress", "completed"}
	status := make([]int, liveTasks)
	var lat []float64
	n := 0
	for b.Loop() {
		for range liveChangesPerOp {
			i := n % liveTasks
			n++
			status[i] = (status[i] + 1) % len(cycle)
			to := cycle[status[i]]
			evalIn[bool](b, ctx, fmt.Sprintf(`(window.__want = {n: %d, task: %q, status: %q}, true)`, n, liveTaskName(i), to))
			t0 := float64(time.Now().UnixNano()) / 1e6
			must(b, filesafe.WriteFileAtomic(filepath.Join(wtDir, liveTaskName(i)+".json"), []byte(liveTaskJSON(i, to)), 0o644))
			waitIn(b, ctx, fmt.Sprintf(`window.__hit[%d]`, n))
			lat = append(lat, evalIn[float64](b, ctx, fmt.Sprintf(`window.__hit[%d]`, n))-t0)
		}
	}
	if len(lat) > 0 {
		b.ReportMetric(percentile(lat, 50), "p50-ms")
		b.ReportMetric(percentile(lat, 95), "p95-ms")
		b.ReportMetric(percentile(lat, 100), "max-ms")
	}
}

// BenchmarkDashboardIdle is the budget "one open page and no change for 30
// s costs under 50 ms of CPU and no gh or tmux call": a story page is open
// in chromium and nothing changes; the dashboard's CPU time over 30 s is
// read from /proc, and gh and tmux are stand-ins first on PATH that note
// each call. Measured twice: with no run anywhere (the budget), and while
// a worker runs — one that writes nothing (the watcher probes its liveness
// and the locks at its busy pace). Measured once; the ops after the first
// measure nothing.
func BenchmarkDashboardIdle(b *testing.B) {
	bin := builtBinary(b)
	stubs := b.TempDir()
	calls := filepath.Join(stubs, "calls.log")
	for _, name := range []string{"gh", "tmux"} {
		script := fmt.Sprintf("#!/bin/sh\necho %s \"$@\" >> %q\nexit 1\n", name, calls)
		must(b, os.WriteFile(filepath.Join(stubs, name), []byte(script), 0o755))
	}
	ctx := chromium(b)
	idle := func(running bool) float64 {
		story := "bench-idle"
		root, _, sessions := liveWorkerRepo(b, story, running)
		env := append(os.Environ(), "SAGA_SESSION_DIR="+sessions, "CLAUDE_CONFIG_DIR="+b.TempDir(),
			"PATH="+stubs+string(os.PathListSeparator)+os.Getenv("PATH"), "SAGA_GH=", "SAGA_TMUX_SOCKET=")
		d := startDashboard(b, bin, root, env)
		want := "pending"
		if running {
			want = "running"
		}
		browse(b, ctx, chromedp.Navigate(d.url), chromedp.Navigate(d.base+"/r/"+filepath.Base(root)+"/story/"+story))
		waitIn(b, ctx, `window.sagaDashboard.connected && document.querySelector('#story-facts').dataset.state === '`+want+`'`)
		before := d.cpuNs()
		time.Sleep(30 * time.Second) // the measure is what happens while nothing does
		return float64(d.cpuNs()-before) / 1e6
	}
	var quiet, busy float64
	measured := false
	for b.Loop() {
		if !measured {
			measured = true
			quiet, busy = idle(false), idle(true)
		}
	}
	data, _ := os.ReadFile(calls)
	n := 0
	if len(strings.TrimSpace(string(data))) > 0 {
		n = len(strings.Split(strings.TrimSpace(string(data)), "\n"))
	}
	b.ReportMetric(quiet, "idle-cpu-ms")
	b.ReportMetric(busy, "idle-running-cpu-ms")
	b.ReportMetric(float64(n), "gh+tmux-calls")
}
