// Package nvim_test drives saga-lsp from a real editor: headless Neovim
// (0.7, Debian's package, as installed in CI with `apt-get install -y neovim`)
// runs harness.lua, which starts the server on a copy of examples/mistakes,
// opens a task file, reads the diagnostics, hovers and follows a blockedBy
// entry, and writes what it saw to a JSON file checked here; and run.lua,
// which runs a story from its code lens and records the live saga/*
// notifications.
package nvim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	taskRel   = ".saga/stories/billing--invoices/send-emails.json"
	targetRel = ".saga/stories/billing--invoices/create-pdf.json"
)

type lspPosition struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type lspRange struct {
	Start lspPosition `json:"start"`
	End   lspPosition `json:"end"`
}

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

// result is what harness.lua writes.
type result struct {
	Error           string       `json:"error"`
	Steps           []string     `json:"steps"`
	NvimVersion     string       `json:"nvim_version"`
	File            string       `json:"file"`
	OffsetEncoding  string       `json:"offset_encoding"`
	Diagnostics     []diagnostic `json:"diagnostics"`
	Position        *lspPosition `json:"position"`
	Hover           string       `json:"hover"`
	HoverError      string       `json:"hover_error"`
	DefinitionError string       `json:"definition_error"`
	Definition      *struct {
		URI   string    `json:"uri"`
		Range *lspRange `json:"range"`
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
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("nvim is not on PATH; install Neovim (Debian: apt-get install -y neovim) to run the editor test")
	}
	harness, err := filepath.Abs("harness.lua")
	if err != nil {
		t.Fatal(err)
	}

	tmp := t.TempDir()
	server := buildServer(t, tmp)

	root := filepath.Join(tmp, "ws")
	if err := os.CopyFS(root, os.DirFS(filepath.Join("..", "..", "examples", "mistakes"))); err != nil {
		t.Fatalf("copy examples/mistakes: %v", err)
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}

	resultFile := filepath.Join(tmp, "result.json")
	serverLog := filepath.Join(tmp, "saga-lsp.log")
	xdg := filepath.Join(tmp, "xdg")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-u", harness)
	cmd.Dir = root
	cmd.Env = append(os.Environ(),
		"SAGA_LSP_SERVER="+server,
		"SAGA_LSP_ROOT="+root,
		"SAGA_LSP_RESULT="+resultFile,
		"SAGA_LSP_LOG="+serverLog,
		// Keep Neovim's state, cache (lsp.log) and shada out of $HOME.
		"XDG_CONFIG_HOME="+filepath.Join(xdg, "config"),
		"XDG_DATA_HOME="+filepath.Join(xdg, "data"),
		"XDG_STATE_HOME="+filepath.Join(xdg, "state"),
		"XDG_CACHE_HOME="+filepath.Join(xdg, "cache"),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second

	start := time.Now()
	runErr := cmd.Run()
	elapsed := time.Since(start)
	t.Logf("nvim ran for %v", elapsed.Round(time.Millisecond))

	// On failure, show everything that may explain it.
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		t.Logf("nvim stdout:\n%s", stdout.String())
		t.Logf("nvim stderr:\n%s", stderr.String())
		for _, f := range []struct{ name, path string }{
			{"saga-lsp log", serverLog},
			{"neovim lsp.log", filepath.Join(xdg, "cache", "nvim", "lsp.log")},
			{"harness result", resultFile},
		} {
			if b, err := os.ReadFile(f.path); err == nil {
				t.Logf("%s (%s):\n%s", f.name, f.path, b)
			}
		}
	})

	if ctx.Err() != nil {
		t.Fatalf("nvim did not finish within 60 s (%v)", runErr)
	}
	if runErr != nil {
		t.Errorf("nvim: %v", runErr)
	}
	raw, err := os.ReadFile(resultFile)
	if err != nil {
		t.Fatalf("harness wrote no result: %v", err)
	}
	var res result
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("decode result %s: %v", raw, err)
	}
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

// buildServer builds cmd/saga-lsp into dir.
func buildServer(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "saga-lsp")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "../../cmd/saga-lsp")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ../../cmd/saga-lsp: %v\n%s", err, out)
	}
	return bin
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
	if got, err := uriPath(res.Definition.URI); err != nil || got != want {
		t.Errorf("definition URI %q, want the file %s (%v)", res.Definition.URI, want, err)
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

// uriPath turns a file:// URI into a path (percent-decoded).
func uriPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	if u.Scheme != "file" {
		return "", errors.New("not a file URI")
	}
	return filepath.FromSlash(u.Path), nil
}

// runResult is what run.lua writes.
type runResult struct {
	Error         string            `json:"error"`
	Steps         []string          `json:"steps"`
	NvimVersion   string            `json:"nvim_version"`
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
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("nvim is not on PATH; install Neovim (Debian: apt-get install -y neovim) to run the editor test")
	}
	for _, tool := range []string{"tmux", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	harness, err := filepath.Abs("run.lua")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	server := buildServer(t, tmp)
	root := filepath.Join(tmp, "ws")
	if err := os.CopyFS(root, os.DirFS(filepath.Join("..", "..", "examples", "workspace"))); err != nil {
		t.Fatalf("copy examples/workspace: %v", err)
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.email=test@example.invalid", "-c", "user.name=Test", "add", "-A"},
		{"-c", "user.email=test@example.invalid", "-c", "user.name=Test", "commit", "-q", "-m", "workspace"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	const story = "add-logout-button"
	socket := fmt.Sprintf("saga-nvim-test-%d", os.Getpid())
	sessions := filepath.Join(tmp, "sessions")
	t.Cleanup(func() {
		out, _ := exec.Command("tmux", "-L", socket, "list-panes", "-a", "-F", "#{pane_pid}").Output()
		exec.Command("tmux", "-L", socket, "kill-server").Run()
		tmpdir := os.Getenv("TMUX_TMPDIR")
		if tmpdir == "" {
			tmpdir = "/tmp"
		}
		os.Remove(filepath.Join(tmpdir, fmt.Sprintf("tmux-%d", os.Getuid()), socket))
		for _, p := range strings.Fields(string(out)) {
			pid, _ := strconv.Atoi(p)
			for i := 0; i < 250 && syscall.Kill(pid, 0) == nil; i++ {
				time.Sleep(20 * time.Millisecond)
			}
		}
	})

	resultFile := filepath.Join(tmp, "run-result.json")
	serverLog := filepath.Join(tmp, "saga-lsp.log")
	xdg := filepath.Join(tmp, "xdg")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-u", harness)
	cmd.Dir = root
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SAGA_") || strings.HasPrefix(k, "CLAUDE") || k == "TMUX" || k == "TMUX_PANE" {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = append(env,
		"SAGA_LSP_SERVER="+server,
		"SAGA_LSP_ROOT="+root,
		"SAGA_LSP_STORY="+story,
		"SAGA_LSP_RESULT="+resultFile,
		"SAGA_LSP_LOG="+serverLog,
		// The server and the worker it starts.
		"SAGA_SESSION_DIR="+sessions,
		"SAGA_TMUX_SOCKET="+socket,
		"SAGA_LSP_BIN="+server,
		"CLAUDE_CONFIG_DIR="+filepath.Join(tmp, "claude"),
		"SAGA_GH="+filepath.Join(tmp, "no-gh"),
		"XDG_CONFIG_HOME="+filepath.Join(xdg, "config"),
		"XDG_DATA_HOME="+filepath.Join(xdg, "data"),
		"XDG_STATE_HOME="+filepath.Join(xdg, "state"),
		"XDG_CACHE_HOME="+filepath.Join(xdg, "cache"),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	runErr := cmd.Run()
	t.Logf("nvim ran for %v", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		t.Logf("nvim stdout:\n%s\nnvim stderr:\n%s", stdout.String(), stderr.String())
		for _, f := range []struct{ name, path string }{
			{"saga-lsp log", serverLog},
			{"neovim lsp.log", filepath.Join(xdg, "cache", "nvim", "lsp.log")},
			{"harness result", resultFile},
		} {
			if b, err := os.ReadFile(f.path); err == nil {
				t.Logf("%s (%s):\n%s", f.name, f.path, b)
			}
		}
	})
	if ctx.Err() != nil {
		t.Fatalf("nvim did not finish within 150 s (%v)", runErr)
	}
	if runErr != nil {
		t.Errorf("nvim: %v", runErr)
	}
	raw, err := os.ReadFile(resultFile)
	if err != nil {
		t.Fatalf("run.lua wrote no result: %v", err)
	}
	var res runResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("decode result %s: %v", raw, err)
	}
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
