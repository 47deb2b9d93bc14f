package lsp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store"
)

// The live tests drive the server over pipes while real workers run: the
// saga-lsp binary (worker and hooks) and the stand-in claude
// (testdata/standin/claude), both built once, in a private tmux server per
// test (SAGA_TMUX_SOCKET), on a git copy of examples/workspace. The tests
// without tmux fake a worker: a process whose command line names the story
// and an events file written by the test.

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "saga-lsp-lsp-test")
	if err != nil {
		panic(err)
	}
	// No run of the machine's session dir may show up in a test's lenses.
	os.Setenv("SAGA_SESSION_DIR", filepath.Join(dir, "sessions"))
	os.Setenv("SAGA_TMUX_SOCKET", "saga-lsp-test-unused")
	testkit.Main(m, func() { os.RemoveAll(dir) })
}

// liveFixture is a git workspace, a session dir, a Claude config dir and a
// private tmux server, set in the environment the server (and through
// tmux, the worker) reads.
type liveFixture struct {
	root, sessionDir, config, socket string
}

const demoStory = "add-logout-button"

func newLiveFixture(t *testing.T, script string, delayMS int) *liveFixture {
	t.Helper()
	return newLiveFixtureOf(t, "../examples/workspace", script, delayMS)
}

// newLiveFixtureOf is newLiveFixture on a git copy of src.
func newLiveFixtureOf(t *testing.T, src, script string, delayMS int) *liveFixture {
	t.Helper()
	for _, tool := range []string{"tmux", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	f := &liveFixture{root: testkit.GitRepo(t, src), sessionDir: t.TempDir(), config: t.TempDir(),
		socket: testkit.TmuxServer(t)}
	for k, v := range map[string]string{
		"SAGA_SESSION_DIR":      f.sessionDir,
		"SAGA_TMUX_SOCKET":      f.socket,
		"SAGA_LSP_BIN":          testkit.Binary(t),
		"SAGA_CLAUDE":           testkit.Build(t, "./testdata/standin/claude"),
		"SAGA_GH":               filepath.Join(f.config, "no-gh"),
		"CLAUDE_CONFIG_DIR":     f.config,
		"SAGA_STANDIN_SCRIPT":   script,
		"SAGA_STANDIN_DELAY_MS": strconv.Itoa(delayMS),
		"TMUX":                  "",
		"TMUX_PANE":             "",
	} {
		t.Setenv(k, v)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		// What the workers said, for a failure that depends on them.
		logs, _ := filepath.Glob(filepath.Join(f.sessionDir, "saga-story-*.log"))
		for _, p := range logs {
			data, _ := os.ReadFile(p)
			t.Logf("--- %s:\n%s", filepath.Base(p), data)
		}
	})
	return f
}

// liveCapabilities: progress, showDocument and code lens refresh.
const liveCapabilities = `{"window":{"workDoneProgress":true,"showDocument":{"support":true}},"workspace":{"codeLens":{"refreshSupport":true}}}`

// startLive starts a server that opted in to the saga/* notifications and
// answers showDocument with success.
func startLive(t *testing.T, root string) *client {
	t.Helper()
	c := start(t)
	c.mu.Lock()
	c.onRequest = func(method string, params json.RawMessage) any {
		if method == "window/showDocument" {
			return map[string]bool{"success": true}
		}
		return nil
	}
	c.mu.Unlock()
	c.initializeWith(root, liveCapabilities, `{"sagaNotifications":true}`)
	return c
}

// initializeWith is initialize with initializationOptions.
func (c *client) initializeWith(root, capabilities, options string) {
	c.t.Helper()
	c.root = root
	c.result("initialize", fmt.Sprintf(`{"processId":null,"rootUri":%q,"capabilities":%s,"initializationOptions":%s}`,
		c.uri(""), capabilities, options), nil)
	c.notify("initialized", `{}`)
	c.waitLoaded()
}

// notesOf returns the server's messages of one method from index from on.
func (c *client) notesOf(from int, method string) []message {
	var out []message
	for _, n := range c.lc.Notes(from) {
		if n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

// notesAs decodes the params of the server's notifications of one method
// from index from on.
func notesAs[T any](c *client, from int, method string) []T {
	var out []T
	for _, n := range c.notesOf(from, method) {
		var p T
		if err := json.Unmarshal(n.Params, &p); err != nil {
			c.t.Fatalf("%s %s: %v", method, n.Params, err)
		}
		out = append(out, p)
	}
	return out
}

func progressNotes(c *client, from int) []workerProgressParams {
	return notesAs[workerProgressParams](c, from, "saga/workerProgress")
}

func statusNotes(c *client, from int) []taskStatusParams {
	return notesAs[taskStatusParams](c, from, "saga/taskStatus")
}

// waitProgress waits for a saga/workerProgress matching pred.
func waitProgress(c *client, from int, pred func(workerProgressParams) bool) (workerProgressParams, int) {
	c.t.Helper()
	var got workerProgressParams
	_, i := c.waitFor(from, "saga/workerProgress", func(raw json.RawMessage) bool {
		var p workerProgressParams
		if json.Unmarshal(raw, &p) != nil || !pred(p) {
			return false
		}
		got = p
		return true
	})
	return got, i
}

func ended(p workerProgressParams) bool {
	return p.State != runs.StateStarting && p.State != runs.StateRunning
}

// inFirstRun: the worker runs its agent for the first time.
func inFirstRun(p workerProgressParams) bool {
	return p.State == runs.StateRunning && p.Cycle == 1
}

// runLive starts demoStory from its lens on a live fixture with the
// stand-in's script and delay; from marks the messages before the run.
func runLive(t *testing.T, script string, delayMS int) (f *liveFixture, c *client, from int, res runResult) {
	t.Helper()
	f = newLiveFixture(t, script, delayMS)
	c = startLive(t, f.root)
	from = c.mark()
	return f, c, from, runFromLens(c, demoStory, nil)
}

// execCommand runs workspace/executeCommand and returns the response.
func (c *client) execCommand(command string, args any) message {
	c.t.Helper()
	raw, _ := json.Marshal(map[string]any{"command": command, "arguments": args})
	return c.call("workspace/executeCommand", string(raw))
}

// runFromLens finds the story's "▶ Run story" lens and executes its
// command with its arguments (plus extra fields).
func runFromLens(c *client, story string, extra map[string]any) runResult {
	c.t.Helper()
	var res runResult
	if raw := execLens(c, ".saga/stories/"+story+"/story.json", "▶ Run story", extra); json.Unmarshal(raw, &res) != nil || res.Session == "" {
		c.t.Fatalf("runStory result %s", raw)
	}
	return res
}

// execLens executes the command of rel's lens titled title with its
// arguments (plus extra fields), and returns the command's result.
func execLens(c *client, rel, title string, extra map[string]any) json.RawMessage {
	c.t.Helper()
	var lens *gotCodeLens
	for _, l := range codeLenses(c, rel) {
		if l.Command != nil && l.Command.Title == title {
			lens = &l
			break
		}
	}
	if lens == nil || lens.Command.Command == nil || len(lens.Command.Arguments) != 1 {
		c.t.Fatalf("no %s lens on %s: %q", title, rel, lensTitles(codeLenses(c, rel)))
	}
	arg, _ := lens.Command.Arguments[0].(map[string]any)
	for k, v := range extra {
		arg[k] = v
	}
	m := c.execCommand(*lens.Command.Command, []any{arg})
	if m.Error != nil {
		c.t.Fatalf("%s: error %d %s", *lens.Command.Command, m.Error.Code, m.Error.Message)
	}
	return m.Result
}

func lensTitles(ls []gotCodeLens) []string {
	var out []string
	for _, l := range ls {
		if l.Command != nil {
			out = append(out, l.Command.Title)
		}
	}
	return out
}

func readStatus(t *testing.T, path string) string {
	t.Helper()
	var d struct {
		Status string `json:"status"`
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(data, &d)
	return d.Status
}

func (f *liveFixture) wtTask(task string) string {
	return filepath.Join(f.root, ".saga", "worktrees", demoStory, ".saga", "stories", demoStory, task+".json")
}

func wtTaskRel(task string) string {
	return ".saga/worktrees/" + demoStory + "/.saga/stories/" + demoStory + "/" + task + ".json"
}

// TestRunStoryLive: the "▶ Run story" lens's command starts the real worker
// (with the stand-in claude) in tmux; the editor sees the whole run:
// saga/workerProgress from starting through running (done rising) to
// completed, saga/taskStatus for every task, a cancellable work-done
// progress begin/report/end, code lens refreshes, and the final lenses.
func TestRunStoryLive(t *testing.T) {
	f, c, from, res := runLive(t, "all", 0)
	if res.Story != demoStory || !strings.HasPrefix(res.Session, "saga-story-"+demoStory+"-") ||
		res.OutputFile != filepath.Join(f.sessionDir, res.Session+".log") || !strings.Contains(res.Attach, f.socket) {
		t.Errorf("runStory result %+v", res)
	}
	final, _ := waitProgress(c, from, ended)
	if final.State != "completed" || final.Done != 2 || final.Total != 2 || final.Session != res.Session {
		t.Fatalf("final workerProgress %+v\noutput:\n%s", final, testkit.FileText(res.OutputFile))
	}

	// The sequence: starting first, then running with done never falling,
	// completed last; every notification names the run.
	ps := progressNotes(c, from)
	if len(ps) < 3 || ps[0].State != runs.StateStarting {
		t.Fatalf("workerProgress sequence %+v", ps)
	}
	sawRunning, lastDone, dones := false, 0, []int{}
	for i, p := range ps {
		if p.Story != demoStory || p.Session != res.Session || p.OutputFile != res.OutputFile {
			t.Errorf("workerProgress #%d names another run: %+v", i, p)
		}
		if p.State == runs.StateRunning {
			sawRunning = true
		}
		if p.Done < lastDone {
			t.Errorf("done fell from %d to %d at #%d: %+v", lastDone, p.Done, i, p)
		}
		if p.Done != lastDone || len(dones) == 0 {
			dones = append(dones, p.Done)
		}
		lastDone = p.Done
		if i < len(ps)-1 && ended(p) {
			t.Errorf("workerProgress #%d ended before the last: %+v", i, p)
		}
	}
	// done rises from 0 to 2; a task finished within the watchers' latency
	// may come in the same step as the next (docs/protocol-extensions.md:
	// workerProgress), so 1 is not always seen on its own.
	if !sawRunning || dones[0] != 0 || dones[len(dones)-1] != 2 {
		t.Errorf("want running with done rising from 0 to 2, got %v in %+v", dones, ps)
	}

	// saga/taskStatus: each task pending → in_progress → completed, in order.
	byTask := map[string][]string{}
	for _, s := range statusNotes(c, from) {
		t.Logf("taskStatus %s: %s → %s (%s)", s.Task, s.From, s.To, s.Source)
		if s.Story != demoStory || s.Subject == "" || !slices.Contains([]string{"hook", "claude", "worktree"}, s.Source) {
			t.Errorf("taskStatus %+v", s)
		}
		byTask[s.Task] = append(byTask[s.Task], s.From+"→"+s.To)
	}
	// Each task's notifications form one advancing chain from pending to
	// completed; a step shorter than the watchers' latency may be folded
	// into the next (pending→completed), never skipped back or repeated.
	rank := map[string]int{"pending": 0, "in_progress": 1, "completed": 2}
	for _, task := range []string{"write-tests", "implement-button"} {
		got := byTask[task]
		prev := "pending"
		for _, step := range got {
			from, to, _ := strings.Cut(step, "→")
			if from != prev || rank[to] <= rank[from] {
				t.Errorf("taskStatus of %s: %v is not an advancing chain", task, got)
				break
			}
			prev = to
		}
		if prev != "completed" {
			t.Errorf("taskStatus of %s: %v does not end completed", task, got)
		}
	}

	// Work-done progress: created, begun (cancellable), reported, ended.
	c.waitFor(from, "$/progress", func(p json.RawMessage) bool { return strings.Contains(string(p), `"kind":"end"`) })
	c.waitFor(from, "workspace/codeLens/refresh", nil)
	creates := c.notesOf(from, "window/workDoneProgress/create")
	if len(creates) != 1 {
		t.Fatalf("%d workDoneProgress/create requests, want 1", len(creates))
	}
	var created struct {
		Token string `json:"token"`
	}
	json.Unmarshal(creates[0].Params, &created)
	var kinds []string
	for _, n := range c.notesOf(from, "$/progress") {
		var p struct {
			Token string `json:"token"`
			Value struct {
				Kind        string `json:"kind"`
				Title       string `json:"title"`
				Cancellable bool   `json:"cancellable"`
				Message     string `json:"message"`
			} `json:"value"`
		}
		json.Unmarshal(n.Params, &p)
		if p.Token != created.Token {
			continue
		}
		kinds = append(kinds, p.Value.Kind)
		switch p.Value.Kind {
		case "begin":
			if !p.Value.Cancellable || !strings.Contains(p.Value.Title, demoStory) {
				t.Errorf("progress begin %+v", p.Value)
			}
		case "end":
			if !strings.Contains(p.Value.Message, "completed") || !strings.Contains(p.Value.Message, "2/2 tasks") {
				t.Errorf("progress end %+v", p.Value)
			}
		}
	}
	if len(kinds) < 3 || kinds[0] != "begin" || kinds[len(kinds)-1] != "end" || !slices.Contains(kinds, "report") {
		t.Errorf("progress kinds %v", kinds)
	}

	// Final state: the worktree copy is completed; the lenses say so.
	for _, task := range []string{"write-tests", "implement-button"} {
		if s := readStatus(t, f.wtTask(task)); s != "completed" {
			t.Errorf("worktree %s: %s", task, s)
		}
	}
	storyRel := ".saga/stories/" + demoStory + "/story.json"
	got := lensTitles(codeLenses(c, storyRel))
	if len(got) != 3 || got[0] != "▶ Run story" || got[1] != "Show output" ||
		got[2] != "0/2 tasks done · status: pending · worktree: 2/2 · last run: completed" {
		t.Errorf("story lenses after the run: %q", got)
	}
	if got := lensTitles(codeLenses(c, ".saga/stories/"+demoStory+"/write-tests.json")); len(got) != 1 ||
		got[0] != "status: pending · wave 1/2 · worktree: completed" {
		t.Errorf("task lens after the run: %q", got)
	}

	// Show output: the output file, through window/showDocument.
	mark := c.mark()
	m := c.execCommand("saga.showOutput", []any{demoStory})
	if m.Error != nil || !strings.Contains(string(m.Result), `"shown":true`) {
		t.Fatalf("showOutput: %s %+v", m.Result, m.Error)
	}
	shows := c.notesOf(mark, "window/showDocument")
	if len(shows) != 1 || !strings.Contains(string(shows[0].Params), res.Session+".log") {
		t.Errorf("showDocument requests %+v", shows)
	}
}

// TestStopStoryLive: stopStory in the middle of a run stops the worker,
// which reports stopped; the lens offers ▶ Run again.
func TestStopStoryLive(t *testing.T) {
	_, c, from, res := runLive(t, "slow", 400)
	waitProgress(c, from, inFirstRun)
	storyRel := ".saga/stories/" + demoStory + "/story.json"
	if got := lensTitles(codeLenses(c, storyRel)); len(got) != 3 || got[0] != "■ Stop" || got[1] != "Show output" ||
		!strings.HasPrefix(got[2], "● running · ") {
		t.Errorf("lenses while running: %q", got)
	}
	m := c.execCommand("saga.stopStory", []any{map[string]string{"story": demoStory}})
	if m.Error != nil || !strings.Contains(string(m.Result), `"stopped":true`) {
		t.Fatalf("stopStory: %s %+v", m.Result, m.Error)
	}
	final, _ := waitProgress(c, from, ended)
	if final.State != "stopped" || final.Session != res.Session {
		t.Errorf("final workerProgress %+v", final)
	}
	testkit.WaitUntil(5*time.Second, func() bool { return lensTitles(codeLenses(c, storyRel))[0] == "▶ Run story" })
	if got := lensTitles(codeLenses(c, storyRel)); got[0] != "▶ Run story" || !strings.HasSuffix(got[len(got)-1], "last run: stopped") {
		t.Errorf("lenses after stop: %q", got)
	}
}

// TestCancelProgressStopsWorker: cancelling the worker's work-done progress
// stops the worker.
func TestCancelProgressStopsWorker(t *testing.T) {
	_, c, from, _ := runLive(t, "slow", 400)
	create, _ := c.waitFor(from, "window/workDoneProgress/create", nil)
	var p struct {
		Token string `json:"token"`
	}
	json.Unmarshal(create.Params, &p)
	waitProgress(c, from, inFirstRun)
	c.notify("window/workDoneProgress/cancel", fmt.Sprintf(`{"token":%q}`, p.Token))
	final, _ := waitProgress(c, from, ended)
	if final.State != "stopped" {
		t.Errorf("after cancel: %+v", final)
	}
}

// TestRunStoryCrash: a claude that crashes fails the run.
func TestRunStoryCrash(t *testing.T) {
	f, c, from, res := runLive(t, "crash", 0)
	final, _ := waitProgress(c, from, ended)
	if final.State != "failed" {
		t.Fatalf("final workerProgress %+v\noutput:\n%s", final, testkit.FileText(res.OutputFile))
	}
	// The worker put the crashed task back to pending: no stale task.
	if s := readStatus(t, f.wtTask("write-tests")); s != "pending" {
		t.Errorf("write-tests after the crash: %s", s)
	}
}

// TestWorkerKilledStaleTask: a worker killed with SIGKILL leaves its task
// in_progress in the worktree copy; the server notices the death (failed)
// and publishes stale-task on that file.
func TestWorkerKilledStaleTask(t *testing.T) {
	f, c, from, res := runLive(t, "slow", 600)
	if !testkit.WaitUntil(30*time.Second, func() bool {
		_, err := os.Stat(f.wtTask("write-tests"))
		return err == nil && readStatus(t, f.wtTask("write-tests")) == "in_progress"
	}) {
		t.Fatalf("write-tests never went in_progress:\n%s", testkit.FileText(res.OutputFile))
	}
	workerPID, claudePID := 0, 0
	for line := range strings.Lines(testkit.FileText(res.EventsFile)) {
		var e runs.Event
		if json.Unmarshal([]byte(line), &e) == nil {
			switch e.Event {
			case "worker.start":
				workerPID = e.PID
			case "run.start":
				claudePID = e.PID
			}
		}
	}
	if workerPID == 0 || claudePID == 0 {
		t.Fatalf("pids: worker %d, claude %d", workerPID, claudePID)
	}
	syscall.Kill(workerPID, syscall.SIGKILL)
	syscall.Kill(-claudePID, syscall.SIGKILL) // claude runs in its own process group
	final, _ := waitProgress(c, from, ended)
	if final.State != runs.StatusFailed || !strings.Contains(final.Message, "killed") {
		t.Errorf("after SIGKILL: %+v", final)
	}
	d, _ := c.diagnostics(from, wtTaskRel("write-tests"), func(p publishedDiagnostics) bool {
		return slices.Contains(p.codes(), "stale-task")
	})
	text := testkit.FileText(f.wtTask("write-tests"))
	for _, dg := range d.Diagnostics {
		if dg.Code == "stale-task" {
			if dg.Severity != 2 || dg.Range != spanOf(t, text, `"in_progress"`, 0) {
				t.Errorf("stale-task %+v", dg)
			}
		}
	}
	// The main copy is untouched (pending): no stale-task there.
	if got := lensTitles(codeLenses(c, ".saga/stories/"+demoStory+"/story.json")); got[0] != "▶ Run story" {
		t.Errorf("lenses after the kill: %q", got)
	}
}

// TestDiscoverTerminalWorker: workers started outside the editor (`saga-lsp
// run` in a terminal) are followed too — one started while the server runs
// (seen in the session dir), and by a server started while it runs (found
// by the start-up scan).
func TestDiscoverTerminalWorker(t *testing.T) {
	f := newLiveFixture(t, "slow", 300)
	c := startLive(t, f.root)
	from := c.mark()
	cmd := exec.Command(testkit.Binary(t), "run", demoStory, "--format", "json")
	cmd.Dir = f.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("saga-lsp run: %v\n%s", err, out)
	}
	var st struct{ Session string }
	json.Unmarshal(out, &st)
	p, _ := waitProgress(c, from, func(p workerProgressParams) bool { return p.State == runs.StateRunning })
	if p.Session != st.Session {
		t.Errorf("followed %+v, want session %s", p, st.Session)
	}

	// A second editor, started mid-run, finds it at start-up.
	c2 := startLive(t, f.root)
	p2, _ := waitProgress(c2, 0, func(p workerProgressParams) bool { return p.Session == st.Session })
	if ended(p2) {
		t.Errorf("discovered at start-up: %+v", p2)
	}
	final, _ := waitProgress(c, from, ended)
	final2, _ := waitProgress(c2, 0, ended)
	if final.State != "completed" || final2.State != "completed" {
		t.Errorf("final: %+v / %+v", final, final2)
	}
	begun := false
	for _, n := range c2.notesOf(0, "$/progress") {
		begun = begun || strings.Contains(string(n.Params), `"title":"SAGA `+demoStory+`"`)
	}
	if !begun {
		t.Error("the second editor shows no progress for the discovered worker")
	}
}

// ---------------------------------------------------------------------------
// without tmux: a faked worker

// fakeWorker starts a process that passes for story's worker (its command
// line names "worker" and the story; it works in root) and returns its pid.
func fakeWorker(t *testing.T, root, story string) int {
	t.Helper()
	cmd := fakeWorkerCmd(root, story)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(cmd) })
	return cmd.Process.Pid
}

// fakeWorkerCmd is `sh -c 'sleep 60; :' worker <story>` in root, in its own
// process group (killGroup ends the shell and its sleep).
func fakeWorkerCmd(root, story string) *exec.Cmd {
	cmd := exec.Command("sh", "-c", "sleep 60; :", "worker", story)
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

func killGroup(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
}

// eventsWriter appends lines to a fake run's events file.
type eventsWriter struct {
	t       *testing.T
	path    string
	session string
	story   string
}

func newEventsWriter(t *testing.T, dir, story string) *eventsWriter {
	session := fmt.Sprintf("saga-story-%s-%d", story, time.Now().UnixMilli())
	return &eventsWriter{t: t, path: filepath.Join(dir, session+".log.events.jsonl"), session: session, story: story}
}

func (w *eventsWriter) raw(line string) {
	w.t.Helper()
	fh, err := os.OpenFile(w.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		w.t.Fatal(err)
	}
	defer fh.Close()
	fh.WriteString(line)
}

func (w *eventsWriter) event(fields string) { w.raw(w.line(fields)) }

// line is an event line of the run with fields.
func (w *eventsWriter) line(fields string) string {
	return fmt.Sprintf(`{"time":"2026-11-21T10:00:00Z","story":%q,"session":%q,%s}`+"\n", w.story, w.session, fields)
}

func liveTestdata(t *testing.T) string {
	t.Helper()
	return copyTestdata(t, "live")
}

// liveSessions is liveTestdata with a session dir of its own for the
// server to find workers in.
func liveSessions(t *testing.T) (root, sessions string) {
	t.Helper()
	sessions = t.TempDir()
	t.Setenv("SAGA_SESSION_DIR", sessions)
	return liveTestdata(t), sessions
}

// TestLiveEventsRobust: a worker found in the session dir is followed from
// its events file; garbage lines, a half-written line and an overlong one
// are skipped, and the server keeps answering; worker.end ends it.
func TestLiveEventsRobust(t *testing.T) {
	root, sessions := liveSessions(t)
	pid := fakeWorker(t, root, "ship-it")
	w := newEventsWriter(t, sessions, "ship-it")
	w.event(fmt.Sprintf(`"event":"worker.start","pid":%d,"outputFile":%q`, pid, strings.TrimSuffix(w.path, ".events.jsonl")))
	w.event(`"event":"step","step":"lock","message":"holding the worker lock for ship-it"`)

	c := startLive(t, root)
	p, _ := waitProgress(c, 0, func(p workerProgressParams) bool { return p.State == runs.StateRunning })
	if p.Story != "ship-it" || p.Session != w.session || p.Total != 2 || p.Done != 0 {
		t.Errorf("discovered %+v", p)
	}
	from := c.mark()
	w.raw("not json at all\n{\"event\": 12}\n[1,2,3]\n")
	w.raw(`{"story":"ship-it","event":"step","step":"hydr` + strings.Repeat("x", 2<<20) + "\n")
	// run.start and half a line in one write: once the server has read the
	// run.start it has read the half line too, and the rest comes later.
	w.raw(w.line(`"event":"run.start","cycle":1,"pid":1`) +
		`{"time":"2026-11-21T10:00:00Z","story":"ship-it","session":"` + w.session + `","event":"task.status","task":"build","from":"pending",`)
	waitProgress(c, from, func(p workerProgressParams) bool { return p.Cycle == 1 })
	w.raw(`"to":"completed","source":"claude"}` + "\n")
	s, _ := c.waitFor(from, "saga/taskStatus", nil)
	var ts taskStatusParams
	json.Unmarshal(s.Params, &ts)
	if ts != (taskStatusParams{Story: "ship-it", Task: "build", Subject: "Build the release", From: "pending", To: "completed", Source: "claude"}) {
		t.Errorf("taskStatus %+v", ts)
	}
	p, _ = waitProgress(c, from, func(p workerProgressParams) bool { return p.Done == 1 })
	if p.Cycle != 1 || p.State != runs.StateRunning {
		t.Errorf("after the task: %+v", p)
	}
	// The server still answers.
	if got := lensTitles(codeLenses(c, ".saga/stories/ship-it/story.json")); len(got) == 0 || got[0] != "■ Stop" {
		t.Errorf("lenses: %q", got)
	}
	w.event(`"event":"worker.end","status":"completed","exitCode":0,"done":2,"total":2`)
	final, _ := waitProgress(c, from, ended)
	if final.State != "completed" {
		t.Errorf("final %+v", final)
	}
}

// TestLiveWorkerDies: a followed worker that dies without a worker.end is
// failed; an in_progress task of its worktree copy becomes stale-task, and
// a client that did not opt in gets no saga/* notifications.
func TestLiveWorkerDies(t *testing.T) {
	root, sessions := liveSessions(t)
	// The worktree copy, with build in progress.
	wt := filepath.Join(root, ".saga", "worktrees", "ship-it", ".saga", "stories", "ship-it")
	testkit.CopyInto(t, filepath.Join(root, ".saga", "stories", "ship-it"), wt)
	os.Remove(filepath.Join(wt, "journal.md"))
	setStatus(t, filepath.Join(wt, "build.json"), "pending", "in_progress")

	cmd := fakeWorkerCmd(root, "ship-it")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	w := newEventsWriter(t, sessions, "ship-it")
	w.event(fmt.Sprintf(`"event":"worker.start","pid":%d`, cmd.Process.Pid))
	w.event(`"event":"step","step":"lock","message":"holding the worker lock for ship-it"`)

	c := startLive(t, root)
	quiet := start(t)
	quiet.initialize(root, liveCapabilities)
	waitProgress(c, 0, func(p workerProgressParams) bool { return p.State == runs.StateRunning })
	rel := ".saga/worktrees/ship-it/.saga/stories/ship-it/build.json"
	from := c.mark()
	// While it lives, no stale-task.
	c.open(rel)
	d, _ := c.diagnostics(from, rel, nil)
	if slices.Contains(d.codes(), "stale-task") || d.Version == nil {
		t.Errorf("while the worker lives: %+v", d)
	}
	killGroup(cmd)
	p, _ := waitProgress(c, from, ended)
	if p.State != runs.StatusFailed {
		t.Errorf("after the death: %+v", p)
	}
	d, _ = c.diagnostics(from, rel, func(p publishedDiagnostics) bool { return slices.Contains(p.codes(), "stale-task") })
	if d.Version == nil || *d.Version != 1 {
		t.Errorf("the open worktree file's publication has no version: %+v", d)
	}
	if n := len(quiet.notesOf(0, "saga/workerProgress")) + len(quiet.notesOf(0, "saga/taskStatus")); n != 0 {
		t.Errorf("a client that did not opt in got %d saga/* notifications", n)
	}
	// The quiet client still gets the diagnostic (it is not opt-in).
	quiet.diagnostics(0, rel, func(p publishedDiagnostics) bool { return slices.Contains(p.codes(), "stale-task") })
}

// TestWorktreeStatusChange: a status written into a worktree copy (as the
// PostToolUse hook does) is announced as saga/taskStatus; with a live
// worker its source is hook, and the worker's progress counts it.
func TestWorktreeStatusChange(t *testing.T) {
	root, sessions := liveSessions(t)
	c := startLive(t, root)
	// A worktree copy appears (the worker's worktree step) …
	wt := filepath.Join(root, ".saga", "worktrees", "ship-it", ".saga", "stories", "ship-it")
	pid := fakeWorker(t, root, "ship-it")
	w := newEventsWriter(t, sessions, "ship-it")
	w.event(fmt.Sprintf(`"event":"worker.start","pid":%d`, pid))
	w.event(`"event":"step","step":"lock","message":"holding the worker lock for ship-it"`)
	waitProgress(c, 0, func(p workerProgressParams) bool { return p.State == runs.StateRunning })
	// The copy appears whole (renamed into place), so whenever the server
	// reads it, it finds every task: the status written next is a change
	// from what it showed, seen at once or on the following read.
	staged := filepath.Join(t.TempDir(), "ship-it")
	testkit.CopyInto(t, filepath.Join(root, ".saga", "stories", "ship-it"), filepath.Join(staged, ".saga", "stories", "ship-it"))
	if err := os.MkdirAll(filepath.Join(root, ".saga", "worktrees"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(staged, filepath.Join(root, ".saga", "worktrees", "ship-it")); err != nil {
		t.Fatal(err)
	}
	from := c.mark()
	// … and the hook writes a status into it.
	setStatus(t, filepath.Join(wt, "build.json"), "pending", "in_progress")
	s, _ := c.waitFor(from, "saga/taskStatus", nil)
	var ts taskStatusParams
	json.Unmarshal(s.Params, &ts)
	if ts != (taskStatusParams{Story: "ship-it", Task: "build", Subject: "Build the release", From: "pending", To: "in_progress", Source: "hook"}) {
		t.Errorf("taskStatus %+v", ts)
	}
	setStatus(t, filepath.Join(wt, "build.json"), "in_progress", "completed")
	p, _ := waitProgress(c, from, func(p workerProgressParams) bool { return p.Done == 1 })
	if p.Total != 2 {
		t.Errorf("progress %+v", p)
	}
	if got := lensTitles(codeLenses(c, ".saga/stories/ship-it/build.json")); len(got) != 1 || got[0] != "status: pending · wave 1/2 · worktree: completed" {
		t.Errorf("task lens %q", got)
	}
}

// TestStoryBlocked: story-blocked (info) on story.json's id while the live
// journal ends in an unresolved blocker — the main copy's, or the worktree
// copy's once there is one; a resolution clears it.
func TestStoryBlocked(t *testing.T) {
	root := liveTestdata(t)
	c := startOn(t, root, "")
	rel := ".saga/stories/ship-it/story.json"
	text := testkit.FileText(filepath.Join(root, rel))
	d, _ := c.diagnostics(0, rel, func(p publishedDiagnostics) bool { return slices.Contains(p.codes(), "story-blocked") })
	if len(d.Diagnostics) != 1 || d.Diagnostics[0].Severity != 3 || d.Diagnostics[0].Range != spanOf(t, text, `"ship-it"`, 0) ||
		!strings.Contains(d.Diagnostics[0].Message, "Production credentials are missing") {
		t.Errorf("story-blocked %+v", d.Diagnostics)
	}
	from := c.mark()
	journal := filepath.Join(root, ".saga", "stories", "ship-it", "journal.md")
	appendFile(t, journal, "\n## 2026-11-20T12:00:00Z resolution\nCredentials added.\n")
	c.diagnostics(from, rel, func(p publishedDiagnostics) bool { return len(p.Diagnostics) == 0 })

	// A worktree copy whose journal is blocked: both story.json files say so.
	from = c.mark()
	wt := filepath.Join(root, ".saga", "worktrees", "ship-it", ".saga", "stories", "ship-it")
	testkit.CopyInto(t, filepath.Join(root, ".saga", "stories", "ship-it"), wt)
	appendFile(t, filepath.Join(wt, "journal.md"), "\n## 2026-11-21T09:00:00Z blocker\nThe deploy key expired.\n")
	wtRel := ".saga/worktrees/ship-it/.saga/stories/ship-it/story.json"
	d, _ = c.diagnostics(from, wtRel, func(p publishedDiagnostics) bool { return slices.Contains(p.codes(), "story-blocked") })
	if !strings.Contains(d.Diagnostics[0].Message, "The deploy key expired") || !strings.Contains(d.Diagnostics[0].Message, "worktree") {
		t.Errorf("worktree story-blocked %+v", d.Diagnostics)
	}
	d, _ = c.diagnostics(from, rel, func(p publishedDiagnostics) bool { return slices.Contains(p.codes(), "story-blocked") })
	if !strings.Contains(d.Diagnostics[0].Message, "The deploy key expired") {
		t.Errorf("main story-blocked from the worktree journal %+v", d.Diagnostics)
	}
}

// TestStaleTaskMainCopy: a task in_progress in the main checkout with no
// worker alive is stale-task (warning) on its status value.
func TestStaleTaskMainCopy(t *testing.T) {
	c := start(t)
	c.initialize(testkit.CopyExample(t, "workspace"), "")
	rel := ".saga/stories/user-auth--api/signup-endpoint.json"
	d, _ := c.diagnostics(0, rel, nil)
	text := testkit.FileText(filepath.Join(c.root, rel))
	if len(d.Diagnostics) != 1 || d.Diagnostics[0].Code != "stale-task" || d.Diagnostics[0].Severity != 2 ||
		d.Diagnostics[0].Range != spanOf(t, text, `"in_progress"`, 0) {
		t.Errorf("signup-endpoint: %+v", d.Diagnostics)
	}
	// Editing it to completed clears it (status-inconsistent may appear:
	// its blockers are not done).
	from := c.mark()
	c.openText(rel, strings.Replace(text, `"in_progress"`, `"pending"`, 1), 1)
	c.diagnostics(from, rel, func(p publishedDiagnostics) bool {
		return p.Version != nil && !slices.Contains(p.codes(), "stale-task")
	})
}

// TestExecuteCommandCreate: createStory, createTask and createEpic write
// valid files through package commands, take object or positional
// arguments, and ask the client to show the new file.
func TestExecuteCommandCreate(t *testing.T) {
	root := liveTestdata(t)
	c := startLive(t, root)
	cases := []struct {
		command string
		args    any
		want    string // the created file
	}{
		{"saga.createEpic", []any{"billing", "Billing"}, ".saga/epics/billing/epic.json"},
		{"saga.createStory", []any{map[string]any{"name": "invoices", "epic": "billing", "title": "Send invoices"}}, ".saga/stories/billing--invoices/story.json"},
		{"saga.createStory", []any{"standalone-fix"}, ".saga/stories/standalone-fix/story.json"},
		{"saga.createTask", []any{"billing--invoices", "render-pdf", "Render the PDF"}, ".saga/stories/billing--invoices/render-pdf.json"},
		{"saga.createTask", []any{map[string]any{"story": "billing--invoices", "id": "email-it", "blockedBy": []string{"render-pdf"}, "priority": "high"}}, ".saga/stories/billing--invoices/email-it.json"},
	}
	for _, tc := range cases {
		from := c.mark()
		m := c.execCommand(tc.command, tc.args)
		if m.Error != nil {
			t.Fatalf("%s %v: %d %s", tc.command, tc.args, m.Error.Code, m.Error.Message)
		}
		var res createResult
		json.Unmarshal(m.Result, &res)
		if len(res.Created) != 1 || res.Created[0] != tc.want || res.URI != c.uri(tc.want) {
			t.Errorf("%s: %s", tc.command, m.Result)
		}
		show, _ := c.waitFor(from, "window/showDocument", nil)
		if !strings.Contains(string(show.Params), c.uri(tc.want)) {
			t.Errorf("%s: showDocument %s", tc.command, show.Params)
		}
		// The new file is in the snapshot at once (lenses come from it).
		if !strings.HasSuffix(tc.want, "epic.json") && len(codeLenses(c, tc.want)) == 0 {
			t.Errorf("%s: no lens on the new %s", tc.command, tc.want)
		}
	}
	if got := lensTitles(codeLenses(c, ".saga/epics/billing/epic.json")); len(got) != 4 || got[1] != "0/1 stories done" || got[2] != "○ ready" {
		t.Errorf("the epic's lenses after the creates: %q", got)
	}
	// Valid files: no error-severity finding in the whole workspace.
	ws := workspace.Load(t, root)
	for _, d := range ws.Diagnostics() {
		if d.Severity == store.SeverityError {
			t.Errorf("after the creates: %s: %s [%s]", d.File, d.Message, d.Code)
		}
	}
	if !strings.Contains(testkit.FileText(filepath.Join(root, ".saga/epics/billing/epic.json")), `"billing--invoices"`) {
		t.Error("the epic does not list its new story")
	}
	if !strings.Contains(testkit.FileText(filepath.Join(root, ".saga/stories/standalone-fix/story.json")), `"Standalone fix"`) {
		t.Error("createStory without a title did not derive one")
	}
	// Mistakes are -32602 with what to do; failures -32803.
	for _, tc := range []struct {
		command string
		args    any
		code    int
		want    string
	}{
		{"saga.noSuchCommand", []any{}, codeInvalidParams, "unknown command"},
		{"saga.createTask", []any{}, codeInvalidParams, "missing arguments"},
		{"saga.createTask", []any{"ship-it", "Bad Id"}, codeInvalidParams, "invalid task id"},
		{"saga.createEpic", []any{"billing"}, codeRequestFailed, "already exists"},
		{"saga.runStory", []any{"No Such"}, codeInvalidParams, "invalid story name"},
		{"saga.runStory", []any{42}, codeInvalidParams, "must be a string"},
		{"saga.showPlan", []any{"nothing-here"}, codeInvalidParams, "nothing-here"},
		{"saga.showOutput", []any{"ship-it"}, codeRequestFailed, "no worker output"},
	} {
		m := c.execCommand(tc.command, tc.args)
		if m.Error == nil || m.Error.Code != tc.code || !strings.Contains(m.Error.Message, tc.want) {
			t.Errorf("%s %v: %+v, want code %d with %q", tc.command, tc.args, m.Error, tc.code, tc.want)
		}
	}
}

// TestExecuteCommandShowPlan: the plan of a story (from open buffers) is
// returned and shown with window/showMessage.
func TestExecuteCommandShowPlan(t *testing.T) {
	c := start(t)
	c.initialize(liveTestdata(t), "")
	from := c.mark()
	m := c.execCommand("saga.showPlan", []any{map[string]any{"story": "ship-it"}})
	if m.Error != nil {
		t.Fatal(m.Error.Message)
	}
	var res struct {
		Name, Title, Kind, Text string
		Plan                    struct {
			Waves     [][]string `json:"waves"`
			Completed []string   `json:"completed"`
		} `json:"plan"`
	}
	json.Unmarshal(m.Result, &res)
	if res.Name != "ship-it" || res.Kind != "story" || !slices.EqualFunc(res.Plan.Waves, [][]string{{"build"}, {"deploy"}}, slices.Equal) ||
		res.Plan.Completed == nil || !strings.Contains(res.Text, "build") {
		t.Errorf("showPlan %s", m.Result)
	}
	msg, _ := c.waitFor(from, "window/showMessage", nil)
	if !strings.Contains(string(msg.Params), "deploy") {
		t.Errorf("showMessage %s", msg.Params)
	}
}

// TestCommandPrefix: the commands and the lenses follow the client's prefix.
func TestCommandPrefix(t *testing.T) {
	c := start(t)
	c.t.Helper()
	c.root = liveTestdata(t)
	var res struct {
		Capabilities struct {
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
		} `json:"capabilities"`
	}
	c.result("initialize", fmt.Sprintf(`{"processId":null,"rootUri":%q,"capabilities":{},"initializationOptions":{"commandPrefix":"w2.saga."}}`, c.uri("")), &res)
	c.notify("initialized", `{}`)
	c.waitLoaded()
	want := []string{"w2.saga.runStory", "w2.saga.stopStory", "w2.saga.createStory", "w2.saga.createTask", "w2.saga.createEpic", "w2.saga.showPlan", "w2.saga.showOutput",
		"w2.saga.runEpic", "w2.saga.stopEpic", "w2.saga.reviewStory"}
	if !slices.Equal(res.Capabilities.ExecuteCommandProvider.Commands, want) {
		t.Errorf("commands %v", res.Capabilities.ExecuteCommandProvider.Commands)
	}
	ls := codeLenses(c, ".saga/stories/ship-it/story.json")
	if len(ls) == 0 || ls[0].Command == nil || ls[0].Command.Command == nil || *ls[0].Command.Command != "w2.saga.runStory" {
		t.Errorf("lens %+v", ls)
	}
	if m := c.execCommand("saga.showPlan", []any{"ship-it"}); m.Error == nil {
		t.Error("the default prefix still runs a command")
	}
	if m := c.execCommand("w2.saga.showPlan", []any{"ship-it"}); m.Error != nil {
		t.Error(m.Error.Message)
	}
}

// ---------------------------------------------------------------------------

func setStatus(t *testing.T, path, from, to string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := fmt.Sprintf(`"status": %q`, from)
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s has no %s", path, old)
	}
	data = bytes.Replace(data, []byte(old), []byte(fmt.Sprintf(`"status": %q`, to)), 1)
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	fh.WriteString(text)
}

// serverGoroutines counts the goroutines of servers and their test
// clients: those running a method of the package or of its run watcher,
// Serve, the JSON-RPC connection or a file watcher.
func serverGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "saga-lsp/lsp.(*") || strings.Contains(g, "saga-lsp/lsp.Serve") || strings.Contains(g, "saga-lsp/runs/watch.(*") ||
			strings.Contains(g, "sourcegraph/jsonrpc2") || strings.Contains(g, "fsnotify") {
			count++
		}
	}
	return count
}

// TestLiveShutdownNoLeak: a server following a worker leaves no goroutine
// behind after shutdown and exit (the watcher, the live loop, the lens
// refresher, the progress reporting all end).
func TestLiveShutdownNoLeak(t *testing.T) {
	root, sessions := liveSessions(t)
	pid := fakeWorker(t, root, "ship-it")
	w := newEventsWriter(t, sessions, "ship-it")
	w.event(fmt.Sprintf(`"event":"worker.start","pid":%d`, pid))
	w.event(`"event":"step","step":"lock","message":"holding the worker lock for ship-it"`)
	// Earlier tests' servers wind down first.
	if !testkit.WaitUntil(10*time.Second, func() bool { return serverGoroutines() == 0 }) {
		t.Logf("goroutines of earlier servers still run")
	}
	before := runtime.NumGoroutine()

	c := startLive(t, root)
	waitProgress(c, 0, func(p workerProgressParams) bool { return p.State == runs.StateRunning })
	c.open(".saga/stories/ship-it/story.json")
	codeLenses(c, ".saga/stories/ship-it/story.json")
	c.result("shutdown", `null`, nil)
	c.notify("exit", `null`)
	select {
	case code := <-c.exit:
		c.exit <- code
	case <-time.After(10 * time.Second):
		t.Fatal("no exit")
	}
	c.in.Close()
	if !testkit.WaitUntil(5*time.Second, func() bool { return runtime.NumGoroutine() <= before }) {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after exit, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
	}
}
