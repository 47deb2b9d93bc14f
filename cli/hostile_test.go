//go:build unix

package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit"
	"github.com/saga-ai/saga-lsp/runs"
)

// hostileText is a subject, title or name meant for the user's terminal:
// a window title (OSC), a cleared screen, a carriage return, a C1 CSI, a
// right-to-left override.
const hostileText = "Write tests\x1b]0;pwned\x07\x1b[2J\rhidden\u009b31m\u202eevil"

// Attack 16: repository and model text (subjects, titles, file names, the
// ids and messages of a run) reaches every terminal output escaped —
// status, plan, check, follow — while JSON keeps it exact.
func TestHostileTextEscaped(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	setField(t, filepath.Join(root, ".saga/stories/add-logout-button/write-tests.json"), "subject", hostileText)
	setField(t, filepath.Join(root, ".saga/stories/add-logout-button/story.json"), "title", hostileText)
	setField(t, filepath.Join(root, ".saga/epics/user-auth/epic.json"), "title", hostileText)
	// A file name `check` and `status` name.
	bad := filepath.Join(root, ".saga/stories/add-logout-button", "bad\x1b[2Jname.json")
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A finished run whose task ids and messages came from the model.
	sessions := t.TempDir()
	session := runs.StorySessionPrefix + "add-logout-button-" + "1700000000000"
	var lines []string
	for _, e := range []map[string]any{
		{"event": "worker.start", "outputFile": runs.OutputFile(sessions, session)},
		{"event": "task.status", "task": "t\x1b]0;pwned\x07", "from": "pending", "to": "in_progress"},
		{"event": "task.status", "task": "t\x1b]0;pwned\x07", "from": "in_progress", "to": "completed"},
		{"event": "worker.end", "status": "completed", "exitCode": 0, "message": "done\x1b[2J\rfake"},
	} {
		e["time"], e["story"], e["session"] = time.Now().UTC().Format(time.RFC3339Nano), "add-logout-button", session
		b, _ := json.Marshal(e)
		lines = append(lines, string(b))
	}
	events := runs.EventsFile(runs.OutputFile(sessions, session))
	if err := os.WriteFile(events, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), runs.EnvSessionDir+"="+sessions, "NO_COLOR=1")
	for _, args := range [][]string{
		{"status"}, {"status", "--tasks"}, {"status", "add-logout-button"}, {"status", "user-auth"},
		{"plan", "add-logout-button"}, {"plan", "user-auth"},
		{"plan", "add-logout-button", "--format", "mermaid"}, {"plan", "add-logout-button", "--format", "dot"},
		{"check"}, {"check", "--format", "github"},
	} {
		r := testkit.Run(t, root, env, "", testkit.Binary(t), args...)
		out := r.Stdout + r.Stderr
		noControls(t, strings.Join(args, " "), out)
		if !strings.Contains(out, `\x1b`) {
			t.Errorf("%s shows nothing of the hostile text, escaped:\n%s", strings.Join(args, " "), out)
		}
	}
	// On a terminal, follow draws with its own escape sequences only.
	out, code := onTerminal(t, root, []string{runs.EnvSessionDir + "=" + sessions, "TERM=xterm"}, "follow", "add-logout-button")
	if code != 0 {
		t.Errorf("follow: exit %d\n%s", code, out)
	}
	noControls(t, "follow", strings.ReplaceAll(out, "\x1b[1A\x1b[2K", ""))
	for _, want := range []string{`✓ t\x1b]0;pwned\x07`, `done\x1b[2J\rfake`} {
		if !strings.Contains(out, want) {
			t.Errorf("follow does not show %q:\n%q", want, out)
		}
	}
	// JSON stays exact.
	r := testkit.Run(t, root, env, "", testkit.Binary(t), "status", "add-logout-button", "--format", "json")
	var st struct {
		Stories []struct {
			Title string                     `json:"title"`
			Tasks []struct{ Subject string } `json:"tasks"`
		} `json:"stories"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || len(st.Stories) != 1 || st.Stories[0].Title != hostileText {
		t.Fatalf("status --format json: %v\n%s", err, r.Stdout)
	}
	if subjects := fmt.Sprint(st.Stories[0].Tasks); !strings.Contains(subjects, hostileText) {
		t.Errorf("status --format json changed the subject: %q", subjects)
	}
}

// noControls fails the test when out holds a character a terminal acts on
// (a newline aside).
func noControls(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if (r < 0x20 && r != '\n') || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			t.Errorf("%s prints %U at %d: %q", what, r, i, out[max(0, i-40):min(len(out), i+40)])
			return
		}
	}
}

// setField sets a string member of a JSON file.
func setField(t *testing.T, path, key, value string) {
	t.Helper()
	var m map[string]any
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m[key] = value
	data, _ = json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
