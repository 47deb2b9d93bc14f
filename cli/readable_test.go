//go:build unix

package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
)

// goTestOutput is what a failing `go test ./...` prints, tab-separated,
// with a window-title escape (OSC) and a carriage return of the kind a
// hostile test could print.
const goTestOutput = "ok  \texample.com/shop/cart\t(cached)\n" +
	"--- FAIL: TestCheckout (0.00s)\n" +
	"FAIL\texample.com/shop/checkout\t0.004s \x1b]0;pwned\x07over\rwrite\n" +
	"FAIL\n"

// Issue 33 point 1: a check's output keeps its lines and tabs wherever a
// person reads it — `run --follow` (in a pipe: text, not JSON), `follow`
// (in a pipe and on a terminal), `status`, `verify` and the worker's log —
// and its control characters stay escaped.
func TestCheckOutputKeepsItsLinesAndTabs(t *testing.T) {
	testkit.Bwrap(t)
	root := testkit.GitRepo(t, "")
	testkit.WriteFiles(t, root, map[string]string{
		".saga/stories/shop/story.json": `{"id": "shop", "title": "Shop", "description": "Sell things."}` + "\n",
		".saga/stories/shop/build.json": `{"id": "build", "subject": "Build it", "description": "Build.", "status": "pending", "blockedBy": [], ` +
			`"checks": ["cat test-output.txt; exit 1"]}` + "\n",
		"test-output.txt": goTestOutput,
	})
	testkit.Git(t, root, "add", "-A")
	testkit.Git(t, root, "commit", "-qm", "a story whose check fails")
	sessions, cfg := t.TempDir(), t.TempDir()
	env := append(testkit.CleanEnv(), "SAGA_TMUX_SOCKET="+testkit.TmuxServer(t), runs.EnvSessionDir+"="+sessions,
		"CLAUDE_CONFIG_DIR="+cfg, "SAGA_GH="+filepath.Join(cfg, "no-gh"), "NO_COLOR=1")
	saga := func(args ...string) string {
		t.Helper()
		r := testkit.Run(t, root, env, "", testkit.Binary(t), args...)
		return r.Stdout + r.Stderr
	}
	outputs := map[string]string{}
	outputs["run --dry-run --follow"] = saga("run", "shop", "--dry-run", "--max-check-failures", "1", "--follow")
	outputs["follow"] = saga("follow", "shop")
	outputs["status"] = saga("status", "shop")
	outputs["verify"] = saga("verify", "shop")
	var log string
	if files, _ := filepath.Glob(filepath.Join(sessions, runs.StorySessionPrefix+"shop-*.log")); len(files) == 1 {
		log = testkit.ReadFile(t, files[0])
	}
	outputs["the worker's log"] = log
	term, _ := onTerminal(t, root, append(env[:len(env):len(env)], "TERM=xterm"), "follow", "shop")
	outputs["follow on a terminal"] = strings.ReplaceAll(term, "\x1b[1A\x1b[2K", "")

	// Issue 33 point 11: reset lists what goes and says once, in one line
	// without nested parentheses, how to remove it.
	reset := saga("reset", "shop")
	if n := strings.Count(reset, "run again with --yes"); n != 1 || !strings.Contains(reset, "would remove branch saga-dry/shop (dry run: its local branch, never pushed)") {
		t.Errorf("reset says %d times to run again with --yes:\n%s", n, reset)
	}
	// The shared check results' folder is every story's: a line names whose.
	if clean := saga("clean"); !strings.Contains(clean, "would remove shared check results of shop in ") {
		t.Errorf("clean does not say whose shared check results go:\n%s", clean)
	}
	for line := range strings.Lines(reset) {
		if nestedParens(line) {
			t.Errorf("reset nests parentheses: %s", line)
		}
	}

	for what, out := range outputs {
		if strings.Contains(out, `"event":`) {
			t.Errorf("%s prints JSON events as its text form:\n%s", what, out)
		}
		if strings.Contains(out, `\t`) {
			t.Errorf("%s shows a tab as \\t:\n%s", what, out)
		}
		for line := range strings.Lines(out) {
			// A tool call's input is JSON, its \n JSON's own.
			if strings.Contains(line, `\n`) && !strings.Contains(line, "] tool: ") {
				t.Errorf("%s shows a newline as \\n: %s", what, line)
			}
		}
		if !strings.Contains(out, "ok  \texample.com/shop/cart\t(cached)\n") || !strings.Contains(out, " FAIL\texample.com/shop/checkout\t0.004s ") {
			t.Errorf("%s does not show the check's output as lines with their tabs:\n%s", what, out)
		}
		if !strings.Contains(out, `0.004s \x1b]0;pwned\x07over\rwrite`) {
			t.Errorf("%s does not show the control characters escaped:\n%s", what, out)
		}
		noControls(t, what, strings.ReplaceAll(out, "\t", " "))
	}
}

// nestedParens says whether a line holds a parenthesis inside another.
func nestedParens(line string) bool {
	depth := 0
	for _, r := range line {
		switch r {
		case '(':
			if depth++; depth > 1 {
				return true
			}
		case ')':
			depth = max(0, depth-1)
		}
	}
	return false
}
