//go:build linux

package bench

// Issue 31's budgets: both faces — the language server (bin/saga-lsp serve,
// over stdio) and the dashboard (bin/saga-lsp dashboard, over HTTP and its
// event stream) — follow a `reset`, a `clean` and a branch switch of 500
// files within 250 ms p95, and answer requests during that switch within
// 50 ms. Both run on the same repository in the same run.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
)

const (
	switchStories = 50 // × switchTasks: the task files a branch switch changes
	switchTasks   = 10
	faceTimeout   = 60 * time.Second // a hang guard, not a budget
)

// facesRepo is the benchmark's repository: story s (one task) that the
// worker runs, and switchStories stories of switchTasks pending tasks each
// on main; branch "other" changes every one of those task files (completed,
// and blocked by a task that does not exist: a finding in each). It
// returns the root and the environment the commands and faces run in.
func facesRepo(b *testing.B) (root string, env []string) {
	b.Helper()
	base := b.TempDir()
	root = filepath.Join(base, "repo")
	files := map[string]string{
		".saga/stories/s/story.json": `{"id": "s", "title": "S", "description": "One small task."}` + "\n",
		".saga/stories/s/t.json":     `{"id": "t", "subject": "T", "description": "Do it.", "status": "pending", "blockedBy": []}` + "\n",
	}
	for i := range switchStories {
		id := switchStory(i)
		files[".saga/stories/"+id+"/story.json"] = fmt.Sprintf(`{"id": %q, "title": "Bulk %d", "description": ""}`+"\n", id, i)
		for t := range switchTasks {
			files[switchTaskRel(i, t)] = switchTaskJSON(t, false)
		}
	}
	testkit.WriteFiles(b, root, files)
	testkit.InitRepo(b, root)
	env = append(testkit.CleanEnv(), "SAGA_CLAUDE="+testkit.Build(b, "./testdata/standin/claude"),
		"SAGA_SESSION_DIR="+filepath.Join(base, "sessions"), "CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude-config"),
		"SAGA_GH="+filepath.Join(base, "no-gh"), "XDG_CACHE_HOME="+filepath.Join(base, "cache"))
	git(b, root, env, "checkout", "-q", "-b", "other")
	for i := range switchStories {
		for t := range switchTasks {
			must(b, os.WriteFile(filepath.Join(root, switchTaskRel(i, t)), []byte(switchTaskJSON(t, true)), 0o644))
		}
	}
	git(b, root, env, "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-am", "every task changed")
	git(b, root, env, "checkout", "-q", "main")
	return root, env
}

func switchStory(i int) string { return fmt.Sprintf("bulk-%02d", i) }
func switchTaskRel(i, t int) string {
	return fmt.Sprintf(".saga/stories/%s/t%d.json", switchStory(i), t)
}
func switchTaskJSON(t int, other bool) string {
	status, blocked := "pending", "[]"
	if other {
		status, blocked = "completed", `["gone"]`
	}
	return fmt.Sprintf(`{"id": "t%d", "subject": "Task %d", "description": "", "status": %q, "blockedBy": %s}`+"\n", t, t, status, blocked)
}

// git runs git in dir and fails the benchmark when it fails.
func git(b *testing.B, dir string, env []string, args ...string) {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// face is one face as the benchmark watches it: its client's messages
// (mark counts them, await waits for one after from, or until deadline),
// on each of which an editor or a page asks again.
type face struct {
	name string
	mark func() int
	// await waits for the face's next message after from and returns the
	// mark to wait from next; woke is false when deadline came first.
	await func(from int, deadline time.Time) (next int, woke bool, err error)
}

// answer is what a face showed, and when it arrived.
type answer struct {
	ok bool
	at time.Time
}

// viewer is an editor's or a page's view of a face while a command runs:
// asked once at the start and again on each of the face's messages, as the
// editor (a codeLens/refresh, pushed diagnostics) or the page (a change
// event) does, never on a timer.
type viewer struct {
	f    face
	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	answers []answer
	err     error
	changed chan struct{}
}

// view starts viewing f; probe asks it whether it shows what is awaited.
func (f face) view(probe func() (bool, time.Time, error)) *viewer {
	v := &viewer{f: f, stop: make(chan struct{}), done: make(chan struct{}), changed: make(chan struct{})}
	go func() {
		defer close(v.done)
		deadline := time.Now().Add(faceTimeout)
		from := f.mark()
		for {
			ok, at, err := probe()
			v.mu.Lock()
			v.answers, v.err = append(v.answers, answer{ok, at}), err
			close(v.changed)
			v.changed = make(chan struct{})
			v.mu.Unlock()
			if err != nil {
				return
			}
			for woke := false; !woke; {
				select {
				case <-v.stop:
					return
				default:
				}
				if time.Now().After(deadline) {
					v.fail(fmt.Errorf("%s: nothing it sent within %s showed it", f.name, faceTimeout))
					return
				}
				// A short wait only to notice stop; the face's message ends it.
				wake := time.Now().Add(100 * time.Millisecond)
				if wake.After(deadline) {
					wake = deadline
				}
				if from, woke, err = f.await(from, wake); err != nil {
					v.fail(fmt.Errorf("%s: %w", f.name, err))
					return
				}
			}
		}
	}()
	return v
}

func (v *viewer) fail(err error) {
	v.mu.Lock()
	v.err = err
	close(v.changed)
	v.changed = make(chan struct{})
	v.mu.Unlock()
}

// shown waits until the view shows what is awaited and stays so, and
// returns the time from t0 (the command's end) to the answer that first
// showed it, in ms: 0 when the view showed it before the command ended.
func (v *viewer) shown(t0 time.Time) (float64, error) {
	defer func() {
		close(v.stop)
		<-v.done
	}()
	for {
		v.mu.Lock()
		as, err, ch := v.answers, v.err, v.changed
		v.mu.Unlock()
		if n := len(as); n > 0 && as[n-1].ok {
			first := as[n-1].at
			for i := n - 1; i >= 0 && as[i].ok; i-- {
				first = as[i].at
			}
			return max(float64(first.Sub(t0).Microseconds())/1e3, 0), nil
		}
		if err != nil {
			return 0, err
		}
		<-ch
	}
}

// lspFace is the language server with its client.
type lspFace struct {
	c        *lspclient.Client
	pid      int // the server's
	root     string
	lastLens string // the lenses last probed, for a failure's message
}

func startLSPFace(b *testing.B, bin, root string, env []string) *lspFace {
	b.Helper()
	l := startFace(b, exec.Command(bin, "serve"), root, env)
	if _, _, err := l.c.Next(0, time.Now().Add(lspTimeout), func(m lspclient.Message) bool {
		return m.Method == "window/logMessage" && strings.Contains(string(m.Params), "saga-lsp: loaded")
	}); err != nil {
		b.Fatalf("the server never said it loaded: %v\n%s", err, l.c.Stderr())
	}
	return l
}

// startLSPFloor starts the language server's floor (bench/lspfloor) as
// startLSPFace starts the server: what the same cores make of an
// editor-facing process that does no work.
func startLSPFloor(b *testing.B, root string, env []string) *lspFace {
	b.Helper()
	return startFace(b, exec.Command(testkit.Build(b, "./bench/lspfloor")), root, env)
}

// startFace starts cmd in root as an editor starts its language server, in
// a session of its own, and initializes it.
func startFace(b *testing.B, cmd *exec.Cmd, root string, env []string) *lspFace {
	b.Helper()
	cmd.Dir, cmd.Env = root, env
	ownSession(cmd)
	c, err := lspclient.Start(cmd, lspclient.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Stop(5 * time.Second) })
	// The client does not watch files, so the server watches .saga/ itself
	// (as for an editor without didChangeWatchedFiles); it refreshes lenses
	// and takes the saga/* notifications.
	caps := json.RawMessage(`{"workspace": {"codeLens": {"refreshSupport": true}},
		"textDocument": {"publishDiagnostics": {"versionSupport": true}}}`)
	if _, err := c.Call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": lspclient.FileURI(root),
		"capabilities": caps, "initializationOptions": map[string]any{"sagaNotifications": true}}, lspTimeout); err != nil {
		b.Fatal(err)
	}
	must(b, c.Notify("initialized", struct{}{}))
	return &lspFace{c: c, pid: cmd.Process.Pid, root: root}
}

// face is the server as an editor sees it, asking again on each message
// that match accepts.
func (l *lspFace) face(match func(lspclient.Message) bool) face {
	return face{name: "language server", mark: l.c.Mark, await: func(from int, deadline time.Time) (int, bool, error) {
		_, i, err := l.c.Next(from, deadline, match)
		switch {
		case err == nil:
			return i + 1, true, nil
		case l.c.Err() == nil:
			return i, false, nil // the deadline
		}
		return from, false, err
	}}
}

func isMethod(method string) func(lspclient.Message) bool {
	return func(m lspclient.Message) bool { return m.Method == method }
}

func (l *lspFace) uri(rel string) string {
	return lspclient.FileURI(filepath.Join(l.root, filepath.FromSlash(rel)))
}

// call is a request and the time its answer arrived.
func (l *lspFace) call(method string, params any) (lspclient.Message, error) {
	m, err := l.c.Call(method, params, lspTimeout)
	if err != nil {
		return m, fmt.Errorf("%s: %w", method, err)
	}
	return m, nil
}

// lspProbe asks the server whether it shows what is awaited, again on
// each message on accepts.
type lspProbe struct {
	on  func(lspclient.Message) bool
	ask func() (bool, time.Time, error)
}

// lens probes the lenses on story s's story.json for a text, asked again
// on each workspace/codeLens/refresh, as an editor does.
func (l *lspFace) lens(want func(string) bool) lspProbe {
	return lspProbe{on: isMethod("workspace/codeLens/refresh"), ask: func() (bool, time.Time, error) {
		m, err := l.call("textDocument/codeLens", map[string]any{"textDocument": map[string]any{"uri": l.uri(".saga/stories/s/story.json")}})
		l.lastLens = string(m.Result)
		return err == nil && want(l.lastLens), m.At, err
	}}
}

// published probes the diagnostics published since from: every task file
// of the switch published last with findings (other) or without (main).
func (l *lspFace) published(from int, other bool) lspProbe {
	last := map[string]bool{} // uri → its last publication had findings
	want := map[string]bool{}
	for i := range switchStories {
		for t := range switchTasks {
			want[l.uri(switchTaskRel(i, t))] = true
		}
	}
	right := 0
	var at time.Time
	return lspProbe{on: isMethod("textDocument/publishDiagnostics"), ask: func() (bool, time.Time, error) {
		for _, m := range l.c.Notes(from) {
			from++
			if m.Method != "textDocument/publishDiagnostics" {
				continue
			}
			var p publication
			if err := json.Unmarshal(m.Params, &p); err != nil {
				return false, at, err
			}
			if !want[p.URI] {
				continue
			}
			was, seen := last[p.URI]
			has := len(p.Diagnostics) > 0
			if seen && was == other {
				right--
			}
			last[p.URI] = has
			if has == other {
				right++
			}
			at = m.At
		}
		return right == len(want), at, nil
	}}
}

// dashFace is the dashboard: an HTTP client with its cookie, and the
// event stream a page listens to.
type dashFace struct {
	d      *dashProc
	client *http.Client
	story  string // story s's page
	last   string // the page last probed, for a failure's message

	mu      sync.Mutex
	events  int // change events received
	refused int // story pages refused while a command ran
	changed chan struct{}
	ended   error
}

func startDashFace(b *testing.B, bin, root string, env []string) *dashFace {
	b.Helper()
	d := startDashboard(b, bin, root, env)
	jar, _ := cookiejar.New(nil)
	f := &dashFace{d: d, client: &http.Client{Jar: jar, Timeout: faceTimeout}, changed: make(chan struct{}),
		story: d.base + "/r/" + filepath.Base(root) + "/story/s"}
	if _, _, err := f.get(d.url); err != nil { // sets the cookie
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", d.base+"/events", nil)
	resp, err := (&http.Client{Jar: jar}).Do(req)
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b.Fatalf("GET /events: %s", resp.Status)
	}
	hello := make(chan struct{})
	go f.read(resp.Body, hello)
	<-hello
	return f
}

// read counts the stream's change events.
func (f *dashFace) read(body io.ReadCloser, hello chan struct{}) {
	defer body.Close()
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		line := sc.Text()
		if hello != nil && line == "event: hello" {
			close(hello)
			hello = nil
		}
		if line == "event: change" {
			f.mu.Lock()
			f.events++
			close(f.changed)
			f.changed = make(chan struct{})
			f.mu.Unlock()
		}
	}
	f.mu.Lock()
	f.ended = fmt.Errorf("the event stream ended: %v", sc.Err())
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

func (f *dashFace) face() face {
	return face{name: "dashboard", mark: func() int {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.events
	}, await: func(from int, deadline time.Time) (int, bool, error) {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		for {
			f.mu.Lock()
			n, ch, ended := f.events, f.changed, f.ended
			f.mu.Unlock()
			if n > from {
				return n, true, nil
			}
			if ended != nil {
				return from, false, ended
			}
			select {
			case <-ch:
			case <-t.C:
				return from, false, nil
			}
		}
	}}
}

// get reads a page whole and notes when its last byte arrived.
func (f *dashFace) get(u string) (string, time.Time, error) {
	resp, err := f.client.Get(u)
	if err != nil {
		return "", time.Time{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	at := time.Now()
	if err == nil && resp.StatusCode != 200 {
		err = refusal{u, resp.Status}
	}
	return string(body), at, err
}

// refusal is a page the dashboard answered with an error status.
type refusal struct{ url, status string }

func (r refusal) Error() string { return "GET " + r.url + ": " + r.status }

var storyFacts = regexp.MustCompile(`id="story-facts" data-state="([^"]*)"`)

// storyPage probes story s's page.
func (f *dashFace) storyPage(want func(state, page string) bool) func() (bool, time.Time, error) {
	return func() (bool, time.Time, error) {
		page, at, err := f.get(f.story)
		var refused refusal
		if errors.As(err, &refused) {
			// A page the dashboard refused while the command ran (a
			// reset's story page: 404 "no story"): not shown, counted.
			f.mu.Lock()
			f.refused++
			f.mu.Unlock()
			f.last = refused.Error()
			return false, at, nil
		}
		if err != nil {
			return false, at, err
		}
		m := storyFacts.FindStringSubmatch(page)
		f.last = strings.Join(m, " ")
		return m != nil && want(m[1], page), at, nil
	}
}

var bulkProgress = regexp.MustCompile(`<tr data-row data-id="bulk-\d+"[^\n]*?class="progress" data-done="(\d+)"`)

// bulkDone probes the home page, filtered to the switch's stories: each
// of them listed with every task done (other) or none (main).
func (f *dashFace) bulkDone(other bool) func() (bool, time.Time, error) {
	return func() (bool, time.Time, error) {
		page, at, err := f.get(f.d.base + "/?q=bulk")
		if err != nil {
			return false, at, err
		}
		rows := bulkProgress.FindAllStringSubmatch(page, -1)
		want := "0"
		if other {
			want = fmt.Sprint(switchTasks)
		}
		for _, r := range rows {
			if r[1] != want {
				return false, at, nil
			}
		}
		return len(rows) == switchStories, at, nil
	}
}

// both views the two faces while a command runs — each asked with its
// probe — and adds to lsp and dash the time from the command's end until
// each showed its result.
func both(b *testing.B, what string, l *lspFace, d *dashFace, lprobe lspProbe, dprobe func() (bool, time.Time, error),
	command func(), lsp, dash *[]float64) {
	b.Helper()
	lv, dv := l.face(lprobe.on).view(lprobe.ask), d.face().view(dprobe)
	command()
	t0 := time.Now()
	lms, lerr := lv.shown(t0)
	dms, derr := dv.shown(t0)
	if lerr != nil || derr != nil {
		b.Fatalf("%s: language server: %v (its lenses on s: %s); dashboard: %v (s's page: %s)", what, lerr, l.lastLens, derr, d.last)
	}
	if lsp != nil {
		*lsp = append(*lsp, lms)
	}
	if dash != nil {
		*dash = append(*dash, dms)
	}
}

// requests issues one request after another until stop is closed, and
// returns each one's time to its answer, in ms.
func requests(stop <-chan struct{}, do func(i int) (time.Time, time.Time, error)) ([]float64, error) {
	var ms []float64
	for i := 0; ; i++ {
		select {
		case <-stop:
			return ms, nil
		default:
		}
		sent, answered, err := do(i)
		if err != nil {
			return ms, err
		}
		ms = append(ms, float64(answered.Sub(sent).Microseconds())/1e3)
	}
}

// request is one of the requests an editor makes while a branch switch
// goes on: hover, codeLens and documentSymbol in turn, on the switch's
// files.
func (l *lspFace) request(i int) (time.Time, time.Time, error) {
	doc := map[string]any{"uri": l.uri(switchTaskRel(i%switchStories, 0))}
	var m lspclient.Message
	var err error
	t := time.Now()
	switch i % 3 {
	case 0:
		m, err = l.call("textDocument/hover", map[string]any{"textDocument": doc, "position": map[string]int{"line": 0, "character": 3}})
	case 1:
		m, err = l.call("textDocument/codeLens", map[string]any{"textDocument": map[string]any{"uri": l.uri(".saga/stories/" + switchStory(i%switchStories) + "/story.json")}})
	default:
		m, err = l.call("textDocument/documentSymbol", map[string]any{"textDocument": doc})
	}
	return t, m.At, err
}

// request is a page of the dashboard: story s's, the home page, in turn.
func (d *dashFace) request(i int) (time.Time, time.Time, error) {
	u := d.story
	if i%2 == 1 {
		u = d.d.base + "/"
	}
	t := time.Now()
	_, at, err := d.get(u)
	return t, at, err
}

// BenchmarkFacesFollow is issue 31's budgets. The language server and the
// dashboard run as processes on one repository (facesRepo), each viewed as
// an editor or an open page views it (viewer): the server's lenses asked
// again on each workspace/codeLens/refresh, its pushed diagnostics, the
// dashboard's page fetched again on each change event of its stream. Each
// time runs from the command's exit to the first answer showing its
// result (0 when the view showed it before the command ended). Each op:
//
//   - twice: `saga-lsp worker s` with the stand-in claude crashing (both
//     faces show the failed run), then `reset s --yes` timed until the lens
//     on s's story.json says neither "last run: failed" nor "● running"
//     and s's page says pending; the worker again, to completion (the lens
//     says "status: completed (on story/s)"), story/s merged into main,
//     and `clean --yes` (which then removes the worktree, the branch and the
//     run files) timed until the lens's next step says its work is in the
//     checkout (no branch left to review) and the page shows s from the
//     main copy, completed;
//   - `git checkout` of branch other and back to main, 500 task files
//     changed each way, timed until the server published the new
//     diagnostics of all 500 (findings on other, none on main) and the home
//     page lists the 50 stories with every task done (other) or none
//     (main); then the same again while both faces answer requests one
//     after another (the server hover, codeLens and documentSymbol; the
//     dashboard s's page and the home page), each one's time to its answer.
//
// Reports p95 and max in ms per face, and the story pages the dashboard
// refused while a command ran.
func BenchmarkFacesFollow(b *testing.B) {
	bin := builtBinary(b)
	testkit.NeedsTool(b, "git", "")
	root, env := facesRepo(b)
	l := startLSPFace(b, bin, root, env)
	d := startDashFace(b, bin, root, env)
	crash := append(append([]string{}, env...), "SAGA_STANDIN_SCRIPT=crash")
	saga := func(env []string, args ...string) int {
		return testkit.Run(b, root, env, "", bin, args...).Code
	}
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	must(b, err)
	base := strings.TrimSpace(string(out))
	contains := func(s string, yes bool) func(string) bool {
		return func(lens string) bool { return strings.Contains(lens, s) == yes }
	}
	// The run's end, gone after reset and clean, and no worker shown running.
	gone := func(s string) func(string) bool {
		return func(lens string) bool { return !strings.Contains(lens, s) && !strings.Contains(lens, "● running") }
	}
	state := func(want string) func(string, string) bool {
		return func(st, _ string) bool { return st == want }
	}
	var resetL, resetD, cleanL, cleanD, switchL, switchD, loadedL, loadedD, reqL, reqD []float64
	run := func(env []string, want int, args ...string) func() {
		return func() {
			if code := saga(env, args...); (code == 0) != (want == 0) {
				b.Fatalf("%s: exit %d", strings.Join(args, " "), code)
			}
		}
	}
	for b.Loop() {
		l.c.Discard(l.c.Mark())
		for range 2 { // reset and clean twice an op: as many times as the switch
			both(b, "the failed run", l, d, l.lens(contains("last run: failed", true)), d.storyPage(state("failed")),
				run(crash, 1, "worker", "s"), nil, nil)
			both(b, "reset", l, d, l.lens(gone("last run: failed")), d.storyPage(state("pending")),
				run(env, 0, "reset", "s", "--yes"), &resetL, &resetD)

			both(b, "the completed run", l, d, l.lens(contains("status: completed (on story/s)", true)), d.storyPage(func(st, page string) bool {
				return st == "completed" && strings.Contains(page, "(the worktree")
			}), run(env, 0, "worker", "s"), nil, nil)
			git(b, root, env, "merge", "-q", "--ff-only", "story/s")
			both(b, "clean", l, d, l.lens(contains("its work is in the checkout", true)), d.storyPage(func(st, page string) bool {
				return st == "completed" && !strings.Contains(page, "(the worktree") && !strings.Contains(page, "worktree <code>")
			}), run(env, 0, "clean", "--yes"), &cleanL, &cleanD)
			// Back to the start: main as before the merge, and the run record
			// clean keeps gone. Not awaited: no face hears of a run record
			// alone (nothing watches .git/saga-lsp/runs), and the next op's
			// worker run is seen by both.
			git(b, root, env, "reset", "-q", "--hard", base)
			run(env, 0, "reset", "s", "--yes")()
		}

		// The switch alone, then again with requests one after another.
		for _, branch := range []string{"other", "main"} {
			both(b, "checkout "+branch, l, d, l.published(l.c.Mark(), branch == "other"), d.bulkDone(branch == "other"),
				func() { git(b, root, env, "checkout", "-q", branch) }, &switchL, &switchD)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var lreq, dreq []float64
		var lerr, derr error
		wg.Go(func() { lreq, lerr = requests(stop, l.request) })
		wg.Go(func() { dreq, derr = requests(stop, d.request) })
		for _, branch := range []string{"other", "main"} {
			both(b, "checkout "+branch+" with requests", l, d, l.published(l.c.Mark(), branch == "other"), d.bulkDone(branch == "other"),
				func() { git(b, root, env, "checkout", "-q", branch) }, &loadedL, &loadedD)
		}
		close(stop)
		wg.Wait()
		if lerr != nil || derr != nil {
			b.Fatalf("requests during the switch: language server: %v; dashboard: %v", lerr, derr)
		}
		reqL, reqD = append(reqL, lreq...), append(reqD, dreq...)
	}
	for _, m := range []struct {
		name string
		ms   []float64
	}{{"lsp-reset", resetL}, {"lsp-clean", cleanL}, {"lsp-switch", switchL}, {"lsp-switch-loaded", loadedL}, {"lsp-request", reqL},
		{"dash-reset", resetD}, {"dash-clean", cleanD}, {"dash-switch", switchD}, {"dash-switch-loaded", loadedD}, {"dash-request", reqD}} {
		if len(m.ms) > 0 {
			b.ReportMetric(percentile(m.ms, 95), m.name+"-p95-ms")
			b.ReportMetric(percentile(m.ms, 100), m.name+"-max-ms")
		}
	}
	b.ReportMetric(float64(d.refused), "dash-refused-pages")
	b.ReportMetric(float64(len(reqL)), "lsp-requests")
	b.ReportMetric(float64(len(reqD)), "dash-requests")
}
