package claudecode

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// prompts reads the request log: the first user message of each headless
// run (what the prompt told the model), in order.
func prompts(t *testing.T, log string) []string {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var req struct {
			Body struct {
				Tools    []json.RawMessage `json:"tools"`
				Messages []struct {
					Role    string          `json:"role"`
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			} `json:"body"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || len(req.Body.Tools) == 0 || len(req.Body.Messages) == 0 {
			continue // a side request (title, quota): no tools
		}
		m := req.Body.Messages[0]
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var blocks []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			json.Unmarshal(m.Content, &blocks)
			for _, b := range blocks {
				if b.Type == "text" {
					text += b.Text + "\n"
				}
			}
		}
		if !seen[text] {
			seen[text] = true
			out = append(out, text)
		}
	}
	return out
}

// The life of a failing story with the real Claude Code, in an epic run:
// core's `go test ./...` check fails (the bug is on main, where the model
// cannot fix it), so each run's completion is refused; the next run's
// prompt carries the refusal — the command and go test's output — and the
// task is taken again; after --max-check-failures runs the story fails,
// its dependent mul is held, and the epic exits 1 with the check's output
// in the story's end and in status. The bug fixed on main, the epic run
// again takes the fix in (the run's reference commit), core completes and
// mul then runs to completion.
func TestFailingCheckFixedOnMainWithRealClaudeCode(t *testing.T) {
	t.Parallel()
	claude := claudeOffline(t)
	testkit.Bwrap(t)
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	check := "go test ./..."
	task := func(id string) string {
		return `{"id": "` + id + `", "subject": "Do ` + id + `", "description": "Make it work.", "status": "pending", "blockedBy": [], "checks": [` + jsonc.Quote(check) + `]}` + "\n"
	}
	testkit.WriteFiles(t, root, map[string]string{
		"go.mod":       "module example.com/calc\n\ngo 1.22\n",
		"calc.go":      "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n",
		".saga/epics/calc/epic.json": `{"id": "calc", "title": "Calculator", "description": "", "children": [
    {"id": "calc--core", "blockedBy": []}, {"id": "calc--mul", "blockedBy": ["calc--core"]}]}` + "\n",
		".saga/stories/calc--core/story.json": `{"id": "calc--core", "title": "Core", "description": "Addition."}` + "\n",
		".saga/stories/calc--core/add.json":   task("add"),
		".saga/stories/calc--mul/story.json":  `{"id": "calc--mul", "title": "Mul", "description": "Multiplication."}` + "\n",
		".saga/stories/calc--mul/mul.json":    task("mul"),
	})
	testkit.InitRepo(t, root)
	log := filepath.Join(base, "api.jsonl")
	sessions := filepath.Join(base, "sessions")
	env := append(testkit.CleanEnv(), "SAGA_CLAUDE="+claude, "CLAUDE_OFFLINE_LOG="+log,
		"CLAUDE_CONFIG_DIR="+filepath.Join(base, "claude"), "SAGA_SESSION_DIR="+sessions,
		"SAGA_GH="+filepath.Join(base, "no-gh"), "SAGA_TMUX_SOCKET="+testkit.TmuxServer(t), "SAGA_LSP_BIN="+testkit.Binary(t))
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(sessions, "saga-story-*.log"))
			for _, l := range logs {
				data, _ := os.ReadFile(l)
				t.Logf("--- %s:\n%s", filepath.Base(l), data)
			}
		}
	})
	saga := func(args ...string) testkit.Result {
		return testkit.Run(t, root, env, "", testkit.Binary(t), args...)
	}
	// follow, once the epic run has ended: each story's first go test
	// compiles with a cold cache, which takes minutes on a loaded machine.
	follow := func() testkit.Result {
		t.Helper()
		testkit.WaitUntil(15*time.Minute, func() bool {
			r := runs.Latest(sessions, runs.KindEpic, "calc")
			return r != nil && r.Ended
		})
		return saga("follow", "calc", "--format", "json")
	}
	if r := saga("run", "calc", "--max-check-failures", "2", "--max-cycles", "4"); r.Code != 0 {
		t.Fatalf("run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	fr := follow()
	if fr.Code != runs.ExitFailed {
		t.Fatalf("follow: exit %d, want %d (a story failed)\n%s%s", fr.Code, runs.ExitFailed, fr.Stdout, fr.Stderr)
	}
	var coreEnd, mulHeld string
	for line := range strings.Lines(fr.Stdout) {
		var e runs.Event
		json.Unmarshal([]byte(line), &e)
		switch {
		case e.Event == runs.KindStoryEnd && e.Story == "calc--core":
			coreEnd = e.Status + ": " + e.Message
		case e.Event == runs.KindStoryHeld && e.Story == "calc--mul":
			mulHeld = e.Message
		}
	}
	for _, want := range []string{"failed: ", "task add: its check refused the completion in 2 runs in a row", "`go test ./...` — exit status 1", "Add(2, 3) = -1, want 5", "then `saga-lsp run calc`"} {
		if !strings.Contains(coreEnd, want) {
			t.Errorf("core's end lacks %q: %s", want, coreEnd)
		}
	}
	if !strings.Contains(mulHeld, "`saga-lsp status calc--core` says why") {
		t.Errorf("mul's hold: %q", mulHeld)
	}
	if st := saga("status", "calc--core"); !strings.Contains(st.Stdout, "why:      worker failed") || !strings.Contains(st.Stdout, "Add(2, 3) = -1, want 5") {
		t.Errorf("status calc--core:\n%s", st.Stdout)
	}
	ps := prompts(t, log)
	if len(ps) != 2 {
		t.Fatalf("%d runs' prompts, want core's 2:\n%s", len(ps), strings.Join(ps, "\n---\n"))
	}
	if strings.Contains(ps[0], "refused") {
		t.Errorf("the first run's prompt speaks of a refusal:\n%s", ps[0])
	}
	for _, want := range []string{"The last run's completion of these tasks was refused by their checks", "- task add (refused in 1 run(s) in a row; the story stops after 2): check `go test ./...` — exit status 1",
		"Add(2, 3) = -1, want 5"} {
		if !strings.Contains(ps[1], want) {
			t.Errorf("the second run's prompt lacks %q:\n%s", want, ps[1])
		}
	}

	// The fix, on main.
	if err := os.WriteFile(filepath.Join(root, "calc.go"), []byte("package calc\n\nfunc Add(a, b int) int { return a + b }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.Git(t, root, "commit", "-qam", "fix Add")
	if r := saga("run", "calc", "--max-check-failures", "2", "--max-cycles", "4"); r.Code != 0 {
		t.Fatalf("run again: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if fr := follow(); fr.Code != 0 {
		t.Fatalf("follow the second run: exit %d\n%s%s", fr.Code, fr.Stdout, fr.Stderr)
	}
	st := saga("status", "calc")
	if !strings.Contains(st.Stdout, "2/2 stories") {
		t.Errorf("status calc after the fix:\n%s", st.Stdout)
	}
	for _, story := range []string{"calc--core", "calc--mul"} {
		if got := testkit.Git(t, root, "show", "story/"+story+":calc.go"); !strings.Contains(got, "a + b") {
			t.Errorf("story/%s lacks the fix from main:\n%s", story, got)
		}
		if got := testkit.Git(t, root, "ls-tree", "-r", "--name-only", "story/"+story); !strings.Contains(got, "saga-out/") {
			t.Errorf("story/%s lacks the agent's work:\n%s", story, got)
		}
	}
}
