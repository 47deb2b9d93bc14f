// Package nvim_test drives the Neovim plugin (editors/nvim) in headless
// Neovim (0.7, Debian's package, which CI installs with apt-get install -y
// neovim; newer versions take the plugin's 0.8+/0.10+ paths), on the shared
// harness (testkit.RunNvim):
//
//   - TestPluginUnit runs test/unit.lua: the plugin's pure parts (argument
//     splitting, :SagaNew arguments, roots, the statusline and notifications
//     fed with synthetic saga/* notifications), no server;
//   - TestPlugin copies examples/mistakes and examples/workspace (made a git
//     repository: runStory needs git, and tmux on a private socket), and runs
//     test/plugin.lua, which uses the plugin as a user would — setup(),
//     :edit, :SagaPlan, :SagaNew, :SagaRun!, :checkhealth saga — and writes
//     what it saw to a JSON result checked here.
//
// Both skip only when nvim is not installed.
package nvim_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// plugin is this folder, absolute.
func plugin(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// --- unit ---------------------------------------------------------------

type unitResult struct {
	Error  string `json:"error"`
	Checks []struct {
		Name string `json:"name"`
		OK   bool   `json:"ok"`
		Got  string `json:"got"`
		Want string `json:"want"`
	} `json:"checks"`
}

func TestPluginUnit(t *testing.T) {
	var res unitResult
	testkit.RunNvim(t, testkit.Nvim{Script: filepath.Join("test", "unit.lua"), Dir: t.TempDir(), Timeout: 30 * time.Second,
		Env: []string{"SAGA_NVIM_PLUGIN=" + plugin(t)}}, &res)
	if res.Error != "" {
		t.Errorf("unit.lua: %s", res.Error)
	}
	if len(res.Checks) == 0 {
		t.Fatal("unit.lua made no checks")
	}
	for _, c := range res.Checks {
		if !c.OK {
			t.Errorf("%s: got %s, want %s", c.Name, c.Got, c.Want)
		}
	}
	t.Logf("%d checks", len(res.Checks))
}

// --- with the server ------------------------------------------------------

type notification struct {
	Ms         int    `json:"ms"`
	Msg        string `json:"msg"`
	Level      int    `json:"level"`
	Statusline string `json:"statusline"`
}

type progress struct {
	Ms         int    `json:"ms"`
	Story      string `json:"story"`
	State      string `json:"state"`
	Step       string `json:"step"`
	Done       *int   `json:"done"`
	Total      *int   `json:"total"`
	Message    string `json:"message"`
	OutputFile string `json:"output_file"`
	Statusline string `json:"statusline"`
}

// pluginResult is what test/plugin.lua writes.
// scriptResult is what every test script against the server writes.
type scriptResult struct {
	testkit.NvimResult
	Errors        map[string]string `json:"errors"`
	Notifications []notification    `json:"notifications"`
}

func (r *scriptResult) common() *scriptResult { return r }

// runScript runs test/<script> with the plugin against the real server, in
// the workspace ws: the server's log, a private tmux server, temporary
// session and Claude dirs and no gh for the workers it starts, env on top.
// It stops the test on a harness error, logs the messages the script
// captured, and returns partErr, which stops a subtest whose part of the
// script failed.
func runScript(t *testing.T, script, ws string, timeout time.Duration, env []string, res interface{ common() *scriptResult }) (partErr func(t *testing.T, name string)) {
	t.Helper()
	tmp := t.TempDir()
	server := testkit.Binary(t)
	serverLog := filepath.Join(tmp, "saga-lsp.log")
	sessionDir := filepath.Join(tmp, "sessions")
	claudeDir := filepath.Join(tmp, "claude")
	for _, d := range []string{sessionDir, claudeDir} {
		if err := os.MkdirAll(d, 0o700); err != nil { // a session dir must be the user's alone
			t.Fatal(err)
		}
	}
	testkit.RunNvim(t, testkit.Nvim{Script: filepath.Join("test", script), Dir: ws, Timeout: timeout,
		Env: append([]string{
			"SAGA_NVIM_PLUGIN=" + plugin(t),
			"SAGA_LSP_SERVER=" + server,
			"SAGA_LSP_LOG=" + serverLog,
			"SAGA_WS=" + ws,
			// What the workers use: this binary, a private tmux server,
			// temporary session and Claude dirs, no gh.
			"SAGA_LSP_BIN=" + server,
			"SAGA_TMUX_SOCKET=" + testkit.TmuxServer(t),
			"SAGA_SESSION_DIR=" + sessionDir,
			"CLAUDE_CONFIG_DIR=" + claudeDir,
			"SAGA_GH=" + filepath.Join(tmp, "no-gh"),
			"PATH=" + filepath.Dir(server) + string(os.PathListSeparator) + os.Getenv("PATH"),
		}, env...),
		Logs: map[string]string{"saga-lsp log": serverLog}}, res)
	r := res.common()
	t.Logf("Neovim %s, steps %v", r.NvimVersion, r.Steps)
	if r.Error != "" {
		t.Fatalf("harness error: %s", r.Error)
	}
	for _, n := range r.Notifications {
		t.Logf("notify @%dms [%d] %s | statusline %q", n.Ms, n.Level, n.Msg, n.Statusline)
	}
	return func(t *testing.T, name string) {
		t.Helper()
		if e := r.Errors[name]; e != "" {
			t.Fatalf("harness part %q failed: %s", name, e)
		}
	}
}

type pluginResult struct {
	scriptResult
	CommandsBeforeSetup bool       `json:"commands_before_setup"`
	Progress            []progress `json:"progress"`
	Mistakes            *struct {
		ClientID    int             `json:"client_id"`
		Root        string          `json:"root"`
		InitOptions json.RawMessage `json:"init_options"`
		Diagnostics []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Lnum    int    `json:"lnum"`
			Source  string `json:"source"`
		} `json:"diagnostics"`
	} `json:"mistakes"`
	Workspace *struct {
		ClientID           int    `json:"client_id"`
		Root               string `json:"root"`
		SecondFileClientID int    `json:"second_file_client_id"`
		StoryOfBuffer      string `json:"story_of_buffer"`
		SagaClients        int    `json:"saga_clients"`
	} `json:"workspace"`
	Codelens                 []string `json:"codelens"`
	CodelensRefreshHandler   bool     `json:"codelens_refresh_handler"`
	CodelensRefreshSupported bool     `json:"codelens_refresh_supported"`
	Dashboard                *struct {
		Message string `json:"message"`
		Again   *struct {
			URL     string `json:"url"`
			Started bool   `json:"started"`
		} `json:"again"`
	} `json:"dashboard"`
	Plan *struct {
		Buffer  string   `json:"buffer"`
		Lines   []string `json:"lines"`
		Current bool     `json:"current"`
		Float   bool     `json:"float"`
		Buftype string   `json:"buftype"`
	} `json:"plan"`
	New *struct {
		File        string `json:"file"`
		Exists      bool   `json:"exists"`
		Buffer      string `json:"buffer"`
		Content     string `json:"content"`
		Attached    bool   `json:"attached"`
		StoryFile   string `json:"story_file"`
		StoryExists bool   `json:"story_exists"`
		StoryBuffer string `json:"story_buffer"`
		EpicFile    string `json:"epic_file"`
		EpicBuffer  string `json:"epic_buffer"`
		EpicContent string `json:"epic_content"`
	} `json:"new"`
	CodelensRefreshes int      `json:"codelens_refreshes"`
	ShowMessages      []string `json:"show_messages"`
	Run               *struct {
		Completed       bool           `json:"completed"`
		StatuslineAfter string         `json:"statusline_after"`
		Notifications   []notification `json:"notifications"`
		OutputFile      string         `json:"output_file"`
		Lenses          []string       `json:"lenses"`
		LensAfter       string         `json:"lens_after"`
		OutputBuffer    string         `json:"output_buffer"`
		StopMessage     string         `json:"stop_message"`
	} `json:"run"`
	Health []string `json:"health"`
	Server *struct {
		WantLog      string   `json:"want_log"`
		Info         []string `json:"info"`
		InfoBuffer   string   `json:"info_buffer"`
		LogBuffer    string   `json:"log_buffer"`
		ClientBefore int      `json:"client_before"`
		ClientAfter  int      `json:"client_after"`
		OldStopped   bool     `json:"old_stopped"`
		Restarted    int      `json:"restarted"`
	} `json:"server"`
	Stopped bool `json:"stopped"`
}

func TestPlugin(t *testing.T) {
	ws := testkit.CopyExample(t, "workspace")
	testkit.InitRepo(t, ws)
	mistakes := testkit.CopyExample(t, "mistakes")
	var res pluginResult
	partErr := runScript(t, "plugin.lua", ws, 120*time.Second, []string{"SAGA_MISTAKES=" + mistakes,
		"SAGA_TEST_CLAUDE=" + testkit.Build(t, "./testdata/standin/claude"), "SAGA_TEST_GH=" + testkit.Build(t, "./testdata/standin/gh")}, &res)

	t.Run("attach", func(t *testing.T) {
		if !res.CommandsBeforeSetup {
			t.Error("plugin/saga.lua did not define :SagaRun before setup()")
		}
		partErr(t, "mistakes")
		partErr(t, "workspace")
		m, w := res.Mistakes, res.Workspace
		if m.Root != mistakes {
			t.Errorf("client root for examples/mistakes %q, want %q", m.Root, mistakes)
		}
		var io struct {
			SagaNotifications bool   `json:"sagaNotifications"`
			CommandPrefix     string `json:"commandPrefix"`
		}
		if err := json.Unmarshal(m.InitOptions, &io); err != nil || !io.SagaNotifications || io.CommandPrefix != "saga." {
			t.Errorf("init_options %s, want sagaNotifications true and commandPrefix saga. (%v)", m.InitOptions, err)
		}
		if w.Root != ws {
			t.Errorf("client root for examples/workspace %q, want %q", w.Root, ws)
		}
		if w.ClientID == m.ClientID {
			t.Error("one client for two workspace roots")
		}
		if w.SecondFileClientID != w.ClientID {
			t.Errorf("a second file of the workspace got client %d, want the root's client %d", w.SecondFileClientID, w.ClientID)
		}
		if w.SagaClients != 2 {
			t.Errorf("%d saga-lsp clients, want 2 (one per root)", w.SagaClients)
		}
		if w.StoryOfBuffer != "user-auth--api" {
			t.Errorf("story of story.json %q, want user-auth--api", w.StoryOfBuffer)
		}
	})

	t.Run("diagnostics", func(t *testing.T) {
		partErr(t, "mistakes")
		found := false
		for _, d := range res.Mistakes.Diagnostics {
			t.Logf("diagnostic %s line %d: %s", d.Code, d.Lnum+1, d.Message)
			if d.Code == "unknown-dependency" && strings.Contains(d.Message, "creat-pdf") {
				found = true
			}
		}
		if !found {
			t.Error("no unknown-dependency diagnostic naming creat-pdf in send-emails.json")
		}
	})

	t.Run("codelens", func(t *testing.T) {
		partErr(t, "codelens")
		if len(res.Codelens) == 0 {
			t.Fatal("no code lens in user-auth--api/story.json")
		}
		t.Logf("lenses %q", res.Codelens)
		// The lens asked for while the server loaded is replaced once it has
		// loaded: user-auth--api has 5 tasks, one completed.
		if !slicesContain(res.Codelens, "1/5 tasks done") || !slicesContain(res.Codelens, "▶ Run story") {
			t.Errorf("story.json lenses %q, want \"1/5 tasks done …\" and \"▶ Run story\"", res.Codelens)
		}
		if !res.CodelensRefreshHandler || !res.CodelensRefreshSupported {
			t.Errorf("workspace/codeLens/refresh: handler %v, capability %v", res.CodelensRefreshHandler, res.CodelensRefreshSupported)
		}
	})

	t.Run("dashboard", func(t *testing.T) {
		partErr(t, "dashboard")
		d := res.Dashboard
		if d == nil || !regexp.MustCompile(`^saga: dashboard http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{48}$`).MatchString(d.Message) {
			t.Fatalf(":SagaDashboard! showed %+v", d)
		}
		if d.Again == nil || d.Again.Started || !strings.HasSuffix(d.Message, d.Again.URL) {
			t.Errorf("a second call: %+v, want the same URL, not started again", d.Again)
		}
	})

	t.Run("plan", func(t *testing.T) {
		partErr(t, "plan")
		p := res.Plan
		if p == nil || p.Buffer == "" {
			t.Fatalf(":SagaPlan user-auth opened no saga://plan/user-auth buffer (notifications above)")
		}
		text := strings.Join(p.Lines, "\n")
		t.Logf("plan buffer %s (float %v):\n%s", p.Buffer, p.Float, text)
		if !strings.Contains(text, "EXECUTION PLAN") || !strings.Contains(text, "user-auth--api") {
			t.Errorf("the plan buffer lacks EXECUTION PLAN and user-auth--api")
		}
		for _, m := range res.ShowMessages {
			if strings.Contains(m, "EXECUTION PLAN") {
				t.Errorf("the plan also reached Neovim's window/showMessage handler (a hit-enter prompt): %q", m)
			}
		}
		if !p.Current || !p.Float || p.Buftype != "nofile" {
			t.Errorf("plan buffer: current %v, float %v, buftype %q; want a current nofile float", p.Current, p.Float, p.Buftype)
		}
	})

	t.Run("new", func(t *testing.T) {
		partErr(t, "new")
		n := res.New
		if !n.Exists {
			t.Fatalf(":SagaNew task created no %s", n.File)
		}
		var task struct {
			ID, Subject, Status, Priority string
			BlockedBy                     []string
		}
		if err := json.Unmarshal([]byte(n.Content), &task); err != nil {
			t.Fatalf("the new task is not JSON: %v\n%s", err, n.Content)
		}
		if task.ID != "rate-limit" || task.Subject != "Rate-limit the login endpoint" || task.Priority != "high" ||
			len(task.BlockedBy) != 1 || task.BlockedBy[0] != "login-endpoint" {
			t.Errorf("new task %+v, want id rate-limit, the quoted subject, priority high, blockedBy [login-endpoint]", task)
		}
		if n.Buffer != n.File {
			t.Errorf("after :SagaNew the current buffer is %q, want the new file", n.Buffer)
		}
		if !n.Attached {
			t.Error("saga-lsp is not attached to the new task's buffer")
		}
		if !n.StoryExists || n.StoryBuffer != n.StoryFile {
			t.Errorf(":SagaNew story audit --epic user-auth: file %s exists %v, current buffer %q", n.StoryFile, n.StoryExists, n.StoryBuffer)
		}
		var epic struct{ ID, Title string }
		if err := json.Unmarshal([]byte(n.EpicContent), &epic); err != nil || epic.ID != "billing" || epic.Title == "" {
			t.Errorf(":SagaNew epic billing wrote %q (%v), want id billing and a title made by the server", n.EpicContent, err)
		}
		if n.EpicBuffer != n.EpicFile {
			t.Errorf("after :SagaNew epic the current buffer is %q, want %s", n.EpicBuffer, n.EpicFile)
		}
	})

	t.Run("run", func(t *testing.T) {
		partErr(t, "run")
		run := res.Run
		var states []string
		for _, p := range res.Progress {
			states = append(states, p.State)
			t.Logf("workerProgress @%dms %s %s step=%s %v/%v statusline %q", p.Ms, p.Story, p.State, p.Step, deref(p.Done), deref(p.Total), p.Statusline)
		}
		if !run.Completed {
			t.Fatalf("no final saga/workerProgress for user-auth--api after :SagaRun! (states %v)", states)
		}
		last := res.Progress[len(res.Progress)-1]
		if last.State != "completed" {
			t.Errorf("last worker state %q, want completed (states %v)", last.State, states)
		}
		// The statusline shows the worker while it runs, and nothing after.
		running := regexp.MustCompile(`^SAGA user-auth--api (\d+/\d+ )?(starting|running)$`)
		sawRunning := false
		for _, p := range res.Progress {
			if running.MatchString(p.Statusline) {
				sawRunning = true
			}
		}
		for _, n := range run.Notifications {
			if running.MatchString(n.Statusline) {
				sawRunning = true
			}
		}
		if !sawRunning {
			t.Errorf("the statusline never showed the running worker (want e.g. \"SAGA user-auth--api 3/5 running\")")
		}
		if run.StatuslineAfter != "" {
			t.Errorf("statusline after completion %q, want empty", run.StatuslineAfter)
		}
		// The notifications reach vim.notify, through to completed.
		sawCompleted := false
		for _, n := range run.Notifications {
			if strings.Contains(n.Msg, "user-auth--api") && strings.Contains(n.Msg, "completed") {
				sawCompleted = true
			}
		}
		if !sawCompleted {
			t.Error("no vim.notify message saying user-auth--api completed")
		}
		// saga/taskStatus: a dry run's statuses are the simulated agent's,
		// in its own worktree, never the story's (docs/worker.md#dry-runs):
		// none is announced, and the lens says it was a dry run.
		taskDone := regexp.MustCompile(`^saga: user-auth--api #[a-z-]+ .*→ completed \((claude|hook|worktree)\)$`)
		for _, n := range run.Notifications {
			if taskDone.MatchString(n.Msg) {
				t.Errorf("a dry run's task status was announced as the story's: %s", n.Msg)
			}
		}
		if !strings.Contains(run.LensAfter, "last dry run: completed") {
			t.Errorf("the lens after a dry run: %s", run.LensAfter)
		}
		// Lenses follow the run (the server's workspace/codeLens/refresh).
		t.Logf("story.json lenses after the run: %s", run.LensAfter)
		for i, l := range run.Lenses {
			t.Logf("story.json lenses #%d: %s", i+1, l)
		}
		if res.CodelensRefreshes == 0 {
			t.Error("the server sent no workspace/codeLens/refresh during the run")
		}
		if !strings.Contains(run.LensAfter, "▶ Run story") || !strings.Contains(run.LensAfter, "Show output") {
			t.Errorf("after the run story.json lenses are %q, want \"▶ Run story\" and \"Show output\"", run.LensAfter)
		}
		// Running that lens opens the output (client-side command → showOutput → window/showDocument).
		if run.OutputFile != "" && run.OutputBuffer != run.OutputFile {
			t.Errorf("after running the Show output lens the current buffer is %q, want %s", run.OutputBuffer, run.OutputFile)
		}
		// :SagaStop after the run: an error (nothing runs) or, when the
		// worker's tmux session had not closed yet, "stopped"; a message either way.
		if !strings.HasPrefix(run.StopMessage, "saga: stop user-auth--api: ") && !strings.HasPrefix(run.StopMessage, "saga: stopped user-auth--api") {
			t.Errorf(":SagaStop after the run: message %q, want one about user-auth--api", run.StopMessage)
		}
		if run.OutputFile == "" {
			t.Error("no outputFile in the worker's progress")
		} else if _, err := os.Stat(run.OutputFile); err != nil {
			t.Errorf("output file: %v", err)
		}
	})

	t.Run("checkhealth", func(t *testing.T) {
		partErr(t, "health")
		text := strings.Join(res.Health, "\n")
		if len(res.Health) == 0 {
			t.Fatal(":checkhealth saga printed nothing")
		}
		for _, want := range []string{"saga-lsp: " + testkit.Binary(t), "tmux", "workspace root: " + ws, "client"} {
			if !healthOK(res.Health, want) {
				t.Errorf("no OK line containing %q in :checkhealth saga:\n%s", want, text)
			}
		}
		// The session dir as the server named it (runScript's).
		if !healthOK(res.Health, "session dir /") || !strings.Contains(text, string(filepath.Separator)+"sessions") {
			t.Errorf("no session dir in :checkhealth saga:\n%s", text)
		}
		// What a run needs is saga-lsp doctor's report (the same checks as
		// run's preflight): claude new enough and logged in, gh installed
		// but logged out — a warning, never "OK" (issue 33) — and no error
		// but the sandbox's where this machine has none.
		sandboxMissing := false
		for _, p := range []string{"bwrap", "socat"} {
			if _, err := exec.LookPath(p); err != nil {
				sandboxMissing = true
			}
		}
		for _, l := range res.Health {
			if strings.Contains(l, "ERROR") && !(sandboxMissing && (strings.Contains(l, "sandbox:") || strings.Contains(l, "socat:"))) {
				t.Errorf(":checkhealth saga reports an error: %s\n%s", l, text)
			}
		}
		for _, want := range []string{"claude: Claude Code 2.1.330", "claude login: logged in", "gh: ", "tmux: ", "git: git "} {
			if !healthOK(res.Health, want) {
				t.Errorf("no OK line containing %q in :checkhealth saga:\n%s", want, text)
			}
		}
		if !healthLine(res.Health, "WARN", "gh login: gh is not logged in to GitHub") || healthOK(res.Health, "gh login") {
			t.Errorf("gh logged out is not a warning in :checkhealth saga:\n%s", text)
		}
		if !sandboxMissing && (!healthOK(res.Health, "sandbox: ") || !healthOK(res.Health, "socat: ")) {
			t.Errorf("no OK line for the sandbox and socat in :checkhealth saga:\n%s", text)
		}
	})

	t.Run("info, log, restart", func(t *testing.T) {
		partErr(t, "server")
		s := res.Server
		info := strings.Join(s.Info, "\n")
		t.Logf(":SagaInfo (%s):\n%s", s.InfoBuffer, info)
		for _, want := range []string{"root " + ws, "command      " + testkit.Binary(t) + " serve --log-file", "session dir  /", "buffers      ", "log          " + s.WantLog} {
			if !strings.Contains(info, want) {
				t.Errorf(":SagaInfo lacks %q", want)
			}
		}
		if s.LogBuffer != s.WantLog {
			t.Errorf(":SagaLog opened %q, want the server's log %s", s.LogBuffer, s.WantLog)
		}
		if s.ClientAfter == 0 || s.ClientAfter == s.ClientBefore || !s.OldStopped || s.Restarted == 0 {
			t.Errorf(":SagaRestart: client %d → %d, old stopped %v, %d restarted; want a new initialized client for the buffer", s.ClientBefore, s.ClientAfter, s.OldStopped, s.Restarted)
		}
	})

	t.Run("shutdown", func(t *testing.T) {
		partErr(t, "stop")
		if !res.Stopped {
			t.Error("the saga-lsp clients did not stop within 5 s")
		}
	})
}

// healthOK: a line of :checkhealth output that is OK and contains want
// ("- OK: …" on 0.7–0.9, "- ✅ OK …" on 0.10+).
func healthOK(lines []string, want string) bool {
	for _, l := range lines {
		if strings.Contains(l, "OK") && strings.Contains(l, want) {
			return true
		}
	}
	return false
}

// healthLine: a line of :checkhealth output at that level (OK, WARN, ERROR) containing want.
func healthLine(lines []string, level, want string) bool {
	for _, l := range lines {
		if strings.Contains(l, level) && strings.Contains(l, want) {
			return true
		}
	}
	return false
}

func slicesContain(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func deref(p *int) any {
	if p == nil {
		return "-"
	}
	return *p
}
