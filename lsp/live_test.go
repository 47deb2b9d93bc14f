//go:build unix

package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
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
		testkit.NeedsTool(t, tool, "")
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

// waitProgress waits for a saga/workerProgress matching pred: at most
// runBound, as it may be the run's end.
func waitProgress(c *client, from int, pred func(workerProgressParams) bool) (workerProgressParams, int) {
	c.t.Helper()
	var got workerProgressParams
	_, i := c.waitForWithin(runBound, from, "saga/workerProgress", func(raw json.RawMessage) bool {
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

	// Final state: the worktree copy is completed; the lenses say so, as
	// status does (the read model: readmodel.Evidence), with its next step:
	// its PR, which its worker could not open (no gh here), opened by a run.
	for _, task := range []string{"write-tests", "implement-button"} {
		if s := readStatus(t, f.wtTask(task)); s != "completed" {
			t.Errorf("worktree %s: %s", task, s)
		}
	}
	storyRel := ".saga/stories/" + demoStory + "/story.json"
	got := lensTitles(codeLenses(c, storyRel))
	if len(got) != 2 || got[0] != "▶ Open PR" ||
		got[1] != "2/2 tasks done · status: completed (on story/"+demoStory+") · next: install gh and log in (`gh auth login`); then `saga-lsp run "+demoStory+"` opens it, without running the agent again" {
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
	testkit.WaitUntil(20*time.Second, func() bool { return lensTitles(codeLenses(c, storyRel))[0] == "▶ Run story" })
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

// TestRunStoryLiveClientWatchMissesWorktree: a client that watches .saga
// for the server (dynamic registration) but reports only the worktree's
// creation, none of its later writes — VS Code's watcher dropped them in a
// CI run, and a user may exclude .saga/worktrees (a checkout per story)
// from it — still sees the story's lens follow the run to 2/2: what the
// run watcher reads of the worktree copy reaches the snapshot too
// (docs/architecture.md#one-funnel-for-disk-changes).
func TestRunStoryLiveClientWatchMissesWorktree(t *testing.T) {
	f := newLiveFixture(t, "all", 300)
	c := start(t)
	c.initializeWith(f.root, `{"window":{"workDoneProgress":true},"workspace":{"codeLens":{"refreshSupport":true},"didChangeWatchedFiles":{"dynamicRegistration":true}}}`,
		`{"sagaNotifications":true}`)
	from := c.mark()
	runFromLens(c, demoStory, nil)
	waitProgress(c, from, inFirstRun)
	c.notify("workspace/didChangeWatchedFiles", fmt.Sprintf(`{"changes":[{"uri":%q,"type":1}]}`, c.uri(".saga/worktrees/"+demoStory)))
	final, _ := waitProgress(c, from, ended)
	if final.State != "completed" || final.Done != 2 {
		t.Fatalf("final workerProgress %+v", final)
	}
	storyRel := ".saga/stories/" + demoStory + "/story.json"
	want := "2/2 tasks done · status: completed (on story/" + demoStory + ")"
	// Each refresh is the server's word that lenses changed: ask again
	// after each until they say the run's end (or no refresh comes).
	for mark := from; ; {
		got := lensTitles(codeLenses(c, storyRel))
		if len(got) == 2 && strings.HasPrefix(got[1], want) {
			return
		}
		_, i, err := c.lc.Next(mark, time.Now().Add(20*time.Second), func(m message) bool { return m.Method == "workspace/codeLens/refresh" })
		if err != nil {
			t.Fatalf("the story's lenses stay %q, not %q…", got, want)
		}
		mark = i + 1
	}
}
