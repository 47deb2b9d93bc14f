// Package nvim_test drives saga-lsp from a real editor without its plugin:
// headless Neovim (0.7, Debian's package, as installed in CI with `apt-get
// install -y neovim`) runs navigate.lua, which starts the server on a copy of
// examples/mistakes, opens a task file, reads the diagnostics, hovers and
// follows a blockedBy entry; and run.lua, which runs a story from its code
// lens and records the live saga/* notifications. Both run on the shared
// harness (testkit.RunNvim) and write what they saw to a JSON result checked
// here.
package nvim_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/internal/testkit/lspclient"
)

func TestMain(m *testing.M) { testkit.Main(m) }

const (
	taskRel   = ".saga/stories/billing--invoices/send-emails.json"
	targetRel = ".saga/stories/billing--invoices/create-pdf.json"
)

type diagnostic struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Severity int    `json:"severity"`
	Source   string `json:"source"`
	Lnum     int    `json:"lnum"`
	Col      int    `json:"col"` // bytes
	EndLnum  int    `json:"end_lnum"`
	EndCol   int    `json:"end_col"`
}

// result is what navigate.lua writes.
type result struct {
	testkit.NvimResult
	File            string              `json:"file"`
	OffsetEncoding  string              `json:"offset_encoding"`
	Diagnostics     []diagnostic        `json:"diagnostics"`
	Position        *lspclient.Position `json:"position"`
	Hover           string              `json:"hover"`
	HoverError      string              `json:"hover_error"`
	DefinitionError string              `json:"definition_error"`
	Definition      *struct {
		URI   string           `json:"uri"`
		Range *lspclient.Range `json:"range"`
	} `json:"definition"`
	Jump *struct {
		OK     bool   `json:"ok"`
		Buffer string `json:"buffer"`
		Line   int    `json:"line"`
		Col    int    `json:"col"`
	} `json:"jump"`
	// Publications: every publishDiagnostics for the opened file, in order.
	Publications []struct {
		Ms      int    `json:"ms"`
		Version *int   `json:"version"`
		Codes   string `json:"codes"`
	} `json:"publications"`
	ExitCode  *int   `json:"exit_code"`
	StopError string `json:"stop_error"`
}

func TestNeovim(t *testing.T) {
	root := testkit.CopyExample(t, "mistakes")
	serverLog := filepath.Join(t.TempDir(), "saga-lsp.log")
	var res result
	testkit.RunNvim(t, testkit.Nvim{Script: "navigate.lua", Dir: root, Timeout: 60 * time.Second,
		Env:  []string{"SAGA_LSP_SERVER=" + testkit.Binary(t), "SAGA_LSP_ROOT=" + root, "SAGA_LSP_LOG=" + serverLog},
		Logs: map[string]string{"saga-lsp log": serverLog}}, &res)
	t.Logf("Neovim %s, steps %v, offset encoding %s", res.NvimVersion, res.Steps, res.OffsetEncoding)
	if res.Error != "" {
		t.Errorf("harness error: %s", res.Error)
	}

	for i, p := range res.Publications {
		t.Logf("publishDiagnostics #%d for %s at %d ms: %s", i+1, taskRel, p.Ms, p.Codes)
		// Every publication, the first included, comes from the loaded
		// workspace: no sibling may ever look missing.
		if strings.Contains(p.Codes, "missing-story-file") || !strings.Contains(p.Codes, "dependency-cycle") {
			t.Errorf("publication #%d was computed before the workspace loaded: %s", i+1, p.Codes)
		}
	}

	t.Run("diagnostics", func(t *testing.T) { checkDiagnostics(t, root, res) })
	t.Run("hover", func(t *testing.T) { checkHover(t, res) })
	t.Run("definition", func(t *testing.T) { checkDefinition(t, root, res) })
	t.Run("shutdown", func(t *testing.T) {
		if res.StopError != "" {
			t.Error(res.StopError)
		}
		if res.ExitCode == nil {
			t.Error("the harness saw no server exit")
		} else if *res.ExitCode != 0 {
			t.Errorf("saga-lsp exited with %d after shutdown/exit, want 0", *res.ExitCode)
		}
	})
}

// checkDiagnostics: unknown-dependency on the "creat-pdf" entry, and nothing
// on the real sibling "create-pdf".
func checkDiagnostics(t *testing.T, root string, res result) {
	if len(res.Diagnostics) == 0 {
		t.Fatal("no diagnostics in the buffer")
	}
	src, err := os.ReadFile(filepath.Join(root, taskRel))
	if err != nil {
		t.Fatal(err)
	}
	const line = 5 // 0-based: `"blockedBy": ["create-pdf", "creat-pdf"],`
	text := strings.Split(string(src), "\n")[line]
	bad := strings.Index(text, `"creat-pdf"`)
	good := strings.Index(text, `"create-pdf"`)
	if bad < 0 || good < 0 {
		t.Fatalf("fixture changed: line %d is %q", line+1, text)
	}
	badEnd := bad + len(`"creat-pdf"`)
	goodEnd := good + len(`"create-pdf"`)

	found := false
	for _, d := range res.Diagnostics {
		if d.Code != "unknown-dependency" || d.Lnum != line {
			continue
		}
		// Columns are bytes; the range is the string, with or without quotes.
		if d.Col < goodEnd && d.EndCol > good {
			t.Errorf("unknown-dependency on the valid entry create-pdf: %+v", d)
			continue
		}
		if d.Col >= bad && d.Col <= bad+1 && d.EndCol >= badEnd-1 && d.EndCol <= badEnd {
			found = true
			if !strings.Contains(d.Message, "creat-pdf") {
				t.Errorf("message does not name the entry: %q", d.Message)
			}
		}
	}
	if !found {
		t.Errorf("no unknown-dependency diagnostic on \"creat-pdf\" (line %d, bytes %d–%d); got:", line+1, bad, badEnd)
		for _, d := range res.Diagnostics {
			t.Logf("  %s %d:%d-%d:%d %q", d.Code, d.Lnum, d.Col, d.EndLnum, d.EndCol, d.Message)
		}
	}
}

func checkHover(t *testing.T, res result) {
	if res.HoverError != "" {
		t.Fatalf("hover at %+v: %s", res.Position, res.HoverError)
	}
	if res.Hover == "" {
		t.Fatalf("no hover at %+v (the blockedBy entry \"create-pdf\")", res.Position)
	}
	if !strings.Contains(res.Hover, "Render invoices as PDF") {
		t.Errorf("hover does not show create-pdf's subject %q:\n%s", "Render invoices as PDF", res.Hover)
	}
}

func checkDefinition(t *testing.T, root string, res result) {
	if res.DefinitionError != "" {
		t.Fatalf("definition at %+v: %s", res.Position, res.DefinitionError)
	}
	if res.Definition == nil {
		t.Fatalf("no definition at %+v (the blockedBy entry \"create-pdf\")", res.Position)
	}
	want := filepath.Join(root, filepath.FromSlash(targetRel))
	if got := lspclient.URIPath(res.Definition.URI); got != want {
		t.Errorf("definition URI %q, want the file %s", res.Definition.URI, want)
	}
	if res.Jump == nil {
		t.Fatal("the harness did not jump")
	}
	if !res.Jump.OK {
		t.Error("jump_to_location returned false")
	}
	if res.Jump.Buffer != want {
		t.Errorf("after the jump the current buffer is %q, want %q", res.Jump.Buffer, want)
	}
	if r := res.Definition.Range; r != nil && res.Jump.Line != r.Start.Line {
		t.Errorf("after the jump the cursor is on line %d, want %d", res.Jump.Line, r.Start.Line)
	}
	t.Logf("definition %s %+v; cursor after the jump %d:%d", res.Definition.URI, res.Definition.Range, res.Jump.Line, res.Jump.Col)
}

// runResult is what run.lua writes.
type runResult struct {
	testkit.NvimResult
	Commands      []string          `json:"commands"`
	Lenses        []string          `json:"lenses"`
	LensCommand   string            `json:"lens_command"`
	LensArguments []json.RawMessage `json:"lens_arguments"`
	Run           *struct {
		Story      string `json:"story"`
		Session    string `json:"session"`
		OutputFile string `json:"outputFile"`
	} `json:"run"`
	Progress []struct {
		Story   string `json:"story"`
		Session string `json:"session"`
		State   string `json:"state"`
		Step    string `json:"step"`
		Cycle   int    `json:"cycle"`
		Done    int    `json:"done"`
		Total   int    `json:"total"`
		Ms      int    `json:"ms"`
	} `json:"progress"`
	Status []struct {
		Story  string `json:"story"`
		Task   string `json:"task"`
		From   string `json:"from"`
		To     string `json:"to"`
		Source string `json:"source"`
	} `json:"status"`
	ExitCode  *int   `json:"exit_code"`
	StopError string `json:"stop_error"`
}

// TestNeovimRunStory runs a story from Neovim: the "▶ Run story" lens's
// command (with dryRun: the worker's built-in agent) starts the worker in a
// private tmux server, and the saga/workerProgress and saga/taskStatus
// notifications the client opted into arrive until the worker completes.
func TestNeovimRunStory(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	testkit.InitRepo(t, root)
	const story = "add-logout-button"
	tmp := t.TempDir()
	server := testkit.Binary(t)
	serverLog := filepath.Join(tmp, "saga-lsp.log")
	var res runResult
	testkit.RunNvim(t, testkit.Nvim{Script: "run.lua", Dir: root, Timeout: 150 * time.Second,
		Env: []string{
			"SAGA_LSP_SERVER=" + server,
			"SAGA_LSP_ROOT=" + root,
			"SAGA_LSP_STORY=" + story,
			"SAGA_LSP_LOG=" + serverLog,
			// The server and the worker it starts.
			"SAGA_SESSION_DIR=" + filepath.Join(tmp, "sessions"),
			"SAGA_TMUX_SOCKET=" + testkit.TmuxServer(t),
			"SAGA_LSP_BIN=" + server,
			"CLAUDE_CONFIG_DIR=" + filepath.Join(tmp, "claude"),
			"SAGA_GH=" + filepath.Join(tmp, "no-gh"),
			"SAGA_CLAUDE=" + testkit.Build(t, "./testdata/standin/claude"),
		},
		Logs: map[string]string{"saga-lsp log": serverLog}}, &res)
	t.Logf("Neovim %s, steps %v, lenses %q", res.NvimVersion, res.Steps, res.Lenses)
	if res.Error != "" {
		t.Fatalf("harness error: %s", res.Error)
	}
	var lensArg map[string]any
	if len(res.LensArguments) == 1 {
		json.Unmarshal(res.LensArguments[0], &lensArg)
	}
	if res.LensCommand != "saga.runStory" || len(lensArg) != 1 || lensArg["story"] != story {
		t.Errorf("lens command %q arguments %s", res.LensCommand, res.LensArguments)
	}
	if res.Run == nil || res.Run.Story != story || !strings.HasPrefix(res.Run.Session, "saga-story-"+story+"-") {
		t.Fatalf("executeCommand result %+v", res.Run)
	}
	if len(res.Progress) < 3 {
		t.Fatalf("saga/workerProgress: %+v", res.Progress)
	}
	first, last := res.Progress[0], res.Progress[len(res.Progress)-1]
	if first.State != "starting" || last.State != "completed" || last.Done != 2 || last.Total != 2 {
		t.Errorf("workerProgress from %+v to %+v", first, last)
	}
	prev := 0
	for i, p := range res.Progress {
		t.Logf("workerProgress #%d at %d ms: %s %s cycle %d %d/%d", i, p.Ms, p.State, p.Step, p.Cycle, p.Done, p.Total)
		if p.Session != res.Run.Session || p.Done < prev {
			t.Errorf("workerProgress #%d: %+v", i, p)
		}
		prev = p.Done
	}
	final := map[string]string{}
	for _, s := range res.Status {
		t.Logf("taskStatus %s: %s → %s (%s)", s.Task, s.From, s.To, s.Source)
		final[s.Task] = s.To
	}
	if final["write-tests"] != "completed" || final["implement-button"] != "completed" {
		t.Errorf("saga/taskStatus did not bring both tasks to completed: %v", final)
	}
	if res.ExitCode == nil || *res.ExitCode != 0 || res.StopError != "" {
		t.Errorf("server exit %v %s", res.ExitCode, res.StopError)
	}
}
