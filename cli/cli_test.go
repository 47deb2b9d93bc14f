package cli_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// run runs the built saga-lsp in dir with the test's environment.
func run(t *testing.T, dir string, args ...string) testkit.Result {
	t.Helper()
	return testkit.Run(t, dir, os.Environ(), "", testkit.Binary(t), args...)
}

// exitCode is the exit code a finished command's error carries.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

func examples(t *testing.T, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "examples", name)
}

type checkJSON struct {
	Diagnostics []struct {
		File  string `json:"file"`
		Range struct {
			Start struct{ Line, Character int } `json:"start"`
			End   struct{ Line, Character int } `json:"end"`
		} `json:"range"`
		Severity string `json:"severity"`
		Code     string `json:"code"`
		Message  string `json:"message"`
	} `json:"diagnostics"`
}

func TestCheck(t *testing.T) {
	good, bad := examples(t, "workspace"), examples(t, "mistakes")
	tests := []struct {
		name     string
		dir      string
		args     []string
		code     int
		stdout   []string // substrings
		stderr   []string
		noStdout []string
	}{
		{name: "clean workspace", dir: good, args: []string{"check"}, code: 0, stdout: []string{"no problems found"}},
		{name: "from a subfolder", dir: filepath.Join(good, ".saga", "stories"), args: []string{"check"}, code: 0},
		{name: "--root", dir: t.TempDir(), args: []string{"check", "--root", good}, code: 0},
		{name: "mistakes text", dir: bad, args: []string{"check"}, code: 1, stdout: []string{
			".saga/stories/billing--invoices/send-emails.json:6:31: error: no task \"creat-pdf\" in story \"billing--invoices\"; did you mean \"create-pdf\"? [unknown-dependency]",
			".saga/stories/billing--invoices/archive.json:4:3: error: expected ',' [json-syntax]",
			"[dependency-cycle]", "[orphan-story]", "[epic-prefix]", "[unknown-story]", "[empty-story]",
			"[status-inconsistent]", "[unknown-property]", "[invalid-id]", "[id-mismatch]", "[schema]", "[self-dependency]",
		}},
		{name: "github annotations", dir: bad, args: []string{"check", "--format", "github"}, code: 1, stdout: []string{
			"::error file=.saga/stories/billing--invoices/send-emails.json,line=6,col=31,endLine=6,endColumn=42,title=saga unknown-dependency::no task \"creat-pdf\"",
			"::warning file=.saga/epics/billing.json,line=8,col=13",
		}},
		{name: "only the given file, clean", dir: bad, args: []string{"check", ".saga/stories/reports--monthly/collect-figures.json"}, code: 0,
			stdout: []string{"no problems found"}},
		{name: "only the given folder", dir: bad, args: []string{"check", ".saga/stories/reports--monthly"}, code: 0,
			stdout: []string{"[orphan-story]"}, noStdout: []string{"billing"}},
		{name: "path relative to the working dir", dir: filepath.Join(bad, ".saga", "stories"), args: []string{"check", "billing--invoices/archive.json"}, code: 1,
			stdout: []string{"archive.json:4:3"}, noStdout: []string{"send-emails"}},
		{name: "no .saga", dir: t.TempDir(), args: []string{"check"}, code: 2, stderr: []string{"no .saga/ folder found", "--root"}},
		{name: "--root without .saga", dir: good, args: []string{"check", "--root", t.TempDir()}, code: 2, stderr: []string{"--root"}},
		{name: "bad format", dir: good, args: []string{"check", "--format", "xml"}, code: 2, stderr: []string{"unknown format"}},
		{name: "missing path", dir: good, args: []string{"check", "nope.json"}, code: 2, stderr: []string{"nope.json"}},
		{name: "path outside", dir: good, args: []string{"check", os.TempDir()}, code: 2, stderr: []string{"outside the workspace"}},
		{name: "unknown command", dir: good, args: []string{"frobnicate"}, code: 2, stderr: []string{"unknown command", "usage"}},
		{name: "help", dir: good, args: []string{"help"}, code: 0, stdout: []string{"check", "plan", "new"}},
		{name: "check -h", dir: good, args: []string{"check", "-h"}, code: 0, stdout: []string{"--format"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.dir, tt.args...)
			if r.Code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, tt.code, r.Stdout, r.Stderr)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(r.Stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.Stdout)
				}
			}
			for _, s := range tt.noStdout {
				if strings.Contains(r.Stdout, s) {
					t.Errorf("stdout has %q:\n%s", s, r.Stdout)
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(r.Stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.Stderr)
				}
			}
		})
	}
}

func TestCheckJSON(t *testing.T) {
	r := run(t, examples(t, "mistakes"), "check", "--format", "json")
	if r.Code != 1 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	var out checkJSON
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.Stdout)
	}
	var codes []string
	for _, d := range out.Diagnostics {
		codes = append(codes, d.Code)
		if d.File == "" || d.Message == "" || !slices.Contains([]string{"error", "warning", "info", "hint"}, d.Severity) {
			t.Errorf("incomplete diagnostic %+v", d)
		}
		// 0-based positions in JSON: the unknown dependency "creat-pdf" is on line 6, column 31 (1-based).
		if d.Code == "unknown-dependency" && strings.HasSuffix(d.File, "send-emails.json") {
			if d.Range.Start.Line != 5 || d.Range.Start.Character != 30 || d.Range.End.Character != 41 {
				t.Errorf("range %+v, want 5:30-5:41", d.Range)
			}
		}
	}
	for _, c := range []string{"json-syntax", "schema", "unknown-property", "invalid-id", "id-mismatch", "unknown-dependency",
		"self-dependency", "dependency-cycle", "unknown-story", "epic-prefix", "orphan-story", "empty-story", "status-inconsistent"} {
		if !slices.Contains(codes, c) {
			t.Errorf("mistakes example lacks %s", c)
		}
	}
	// A clean workspace prints an empty list, not null.
	r = run(t, examples(t, "workspace"), "check", "--format", "json")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"diagnostics": []`) {
		t.Errorf("clean workspace: exit %d, %s", r.Code, r.Stdout)
	}
}

func TestCheckUnreadableIsExit2(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	if err := os.WriteFile(filepath.Join(root, ".saga/stories/add-logout-button/junk.json"), []byte("\x00\x01\x02"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, root, "check")
	if r.Code != 2 || !strings.Contains(r.Stdout, "junk.json") || !strings.Contains(r.Stdout, "[unreadable-file]") {
		t.Fatalf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// A story folder that is a link out of the workspace (attack 17: the
// repository holds .saga/stories/x -> /, or a link to a folder of JSON
// files) is reported, exit 2, and nothing behind it is parsed.
func TestCheckNeverReadsThroughLinksOut(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	out := t.TempDir()
	testkit.WriteFiles(t, out, map[string]string{
		"story.json": `{"id": "evil", "title": "SECRET", "description": "", "unknown": 1}`,
		"t.json":     `{"id": "SECRET"`,
	})
	for name, target := range map[string]string{"x": "/", "evil": out} {
		if err := os.Symlink(target, filepath.Join(root, ".saga/stories", name)); err != nil {
			t.Fatal(err)
		}
	}
	r := run(t, root, "check")
	for _, want := range []string{".saga/stories/x:1:1: error: .saga/stories/x is a symbolic link to /, outside the workspace",
		".saga/stories/evil is a symbolic link to " + out, "[unreadable-file]"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("check lacks %q:\n%s", want, r.Stdout)
		}
	}
	if r.Code != 2 || strings.Contains(r.Stdout, "SECRET") || strings.Contains(r.Stdout, "stories/x/") {
		t.Errorf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestPlan(t *testing.T) {
	good, bad := examples(t, "workspace"), examples(t, "mistakes")
	r := run(t, good, "plan", "user-auth--api", "--format", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	var p struct {
		Waves     [][]string
		Completed []string
		Blocked   []struct{ ID string }
		Cycles    [][]string
	}
	if err := json.Unmarshal([]byte(r.Stdout), &p); err != nil {
		t.Fatal(err)
	}
	// login-endpoint and signup-endpoint are both high; login unblocks two tasks, signup one.
	want := [][]string{{"login-endpoint", "signup-endpoint"}, {"session-middleware", "logout-endpoint"}}
	if !slices.EqualFunc(p.Waves, want, slices.Equal) || !slices.Equal(p.Completed, []string{"hash-passwords"}) {
		t.Errorf("plan = %+v, want waves %v and completed [hash-passwords]", p, want)
	}

	r = run(t, good, "plan", "--max-parallel", "1", "user-auth--api")
	for _, s := range []string{"EXECUTION PLAN — Authentication API", "WAVE 1a", "WAVE 1b", "[login-endpoint]",
		"[logout-endpoint] Add POST /logout -- after [login-endpoint]", "COMPLETED"} {
		if !strings.Contains(r.Stdout, s) {
			t.Errorf("text plan lacks %q:\n%s", s, r.Stdout)
		}
	}

	r = run(t, good, "plan", "user-auth")
	if r.Code != 0 || !strings.Contains(r.Stdout, "Stories to execute: 2") || !strings.Contains(r.Stdout, "1 already completed: user-auth--setup-db") {
		t.Errorf("epic plan: exit %d\n%s", r.Code, r.Stdout)
	}

	r = run(t, bad, "plan", "billing--invoices")
	if r.Code != 1 || !strings.Contains(r.Stdout, "create-pdf → load-line-items → send-emails → create-pdf") ||
		!strings.Contains(r.Stdout, "weakest link: create-pdf → load-line-items") {
		t.Errorf("cycle plan: exit %d\n%s", r.Code, r.Stdout)
	}

	r = run(t, good, "plan", "user-auth--apj")
	if r.Code != 2 || !strings.Contains(r.Stderr, `did you mean "user-auth--api"`) {
		t.Errorf("unknown name: exit %d %s", r.Code, r.Stderr)
	}
	if r := run(t, good, "plan"); r.Code != 2 {
		t.Errorf("no name: exit %d", r.Code)
	}
}

func TestNew(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	epicPath := filepath.Join(root, ".saga/epics/user-auth/epic.json")
	epicBefore, _ := os.ReadFile(epicPath)

	steps := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"new", "epic", "billing", "--title", "Billing"}, 0, "created .saga/epics/billing/epic.json", ""},
		{[]string{"new", "epic", "billing", "--title", "Again"}, 2, "", "already exists"},
		{[]string{"new", "epic", "Bad_Epic", "--title", "x"}, 2, "", "invalid epic id"},
		{[]string{"new", "story", "invoices", "--epic", "billing", "--title", "Invoices", "--description", "Monthly invoices"}, 0,
			"created .saga/stories/billing--invoices/story.json\nupdated .saga/epics/billing/epic.json", ""},
		{[]string{"new", "story", "billing--refunds", "--epic", "billing", "--title", "Refunds", "--blocked-by", "billing--invoices"}, 0, "", ""},
		{[]string{"new", "story", "sso", "--epic", "user-auth", "--title", "Single sign-on"}, 0, "updated .saga/epics/user-auth/epic.json", ""},
		{[]string{"new", "story", "x", "--epic", "ghost", "--title", "X"}, 2, "", "no epic \"ghost\""},
		{[]string{"new", "story", "add-logout-button", "--title", "Dup"}, 2, "", "already exists"},
		{[]string{"new", "story", "a---b", "--title", "X"}, 2, "", "invalid story name"},
		{[]string{"new", "story", "no-title"}, 2, "", "needs a title"},
		{[]string{"new", "task", "billing--invoices", "render-pdf", "--subject", "Render PDFs", "--priority", "high"}, 0, "created", ""},
		{[]string{"new", "task", "billing--invoices", "send", "--subject", "Send", "--blocked-by", "render-pdf"}, 0, "created", ""},
		{[]string{"new", "task", "billing--invoices", "send", "--subject", "Send again"}, 2, "", "already exists"},
		{[]string{"new", "task", "billing--invoices", "x", "--subject", "X", "--blocked-by", "nope"}, 2, "", "no task \"nope\""},
		{[]string{"new", "task", "billing--invoices", "y", "--subject", "Y", "--priority", "urgent"}, 2, "", "invalid priority"},
		{[]string{"new", "task", "nope", "z", "--subject", "Z"}, 2, "", "no story \"nope\""},
		{[]string{"new", "task", "billing--invoices", "a--b", "--subject", "Z"}, 2, "", "invalid task id"},
		// The format's own file names are never a task's (one list with rename
		// and the server's Create task fixes).
		{[]string{"new", "task", "billing--invoices", "story", "--subject", "S"}, 2, "", `task id "story" is reserved`},
		{[]string{"new", "task", "billing--invoices", "epic", "--subject", "E"}, 2, "", `task id "epic" is reserved`},
		{[]string{"new", "task", "billing--invoices", "journal", "--subject", "J"}, 2, "", `task id "journal" is reserved`},
		{[]string{"new", "task", "billing--refunds", "refund", "--subject", "Refund", "--format", "json"}, 0,
			`"created": [` + "\n" + `    ".saga/stories/billing--refunds/refund.json"`, ""},
		{[]string{"new", "task", "user-auth--sso", "oidc", "--subject", "OIDC login"}, 0, "created", ""},
		{[]string{"new", "widget", "x"}, 2, "", "usage"},
		// Names become file names: over 200 bytes is refused everywhere.
		{[]string{"new", "task", "billing--invoices", strings.Repeat("t", 201), "--subject", "Long"}, 2, "", "names are at most 200 bytes"},
		{[]string{"new", "task", "billing--invoices", strings.Repeat("t", 200), "--subject", "Long"}, 0, "created", ""},
		{[]string{"new", "story", strings.Repeat("s", 195), "--epic", "billing", "--title", "Long"}, 2, "", "story name \"billing--ssss"},
		{[]string{"new", "epic", strings.Repeat("e", 300), "--title", "Long"}, 2, "", "is 300 bytes long"},
	}
	for _, s := range steps {
		r := run(t, root, s.args...)
		if r.Code != s.code || !strings.Contains(r.Stdout, s.stdout) || !strings.Contains(r.Stderr, s.stderr) {
			t.Errorf("%v: exit %d (want %d)\nstdout: %s\nstderr: %s", s.args, r.Code, s.code, r.Stdout, r.Stderr)
		}
	}
	// Everything created is valid and consistent.
	if r := run(t, root, "check"); r.Code != 0 {
		t.Errorf("check after new: exit %d\n%s", r.Code, r.Stdout)
	}
	// The epic edit appended one child and kept everything else byte for byte.
	epicAfter, _ := os.ReadFile(epicPath)
	wantEpic := strings.Replace(string(epicBefore),
		`{ "id": "user-auth--login-page", "blockedBy": ["user-auth--api"] }`,
		`{ "id": "user-auth--login-page", "blockedBy": ["user-auth--api"] },`+"\n    "+`{
      "id": "user-auth--sso",
      "blockedBy": []
    }`, 1)
	if string(epicAfter) != wantEpic {
		t.Errorf("epic.json after new story:\n%s\nwant:\n%s", epicAfter, wantEpic)
	}
	r := run(t, root, "plan", "billing", "--format", "json")
	if !strings.Contains(r.Stdout, `"billing--invoices"`) || !strings.Contains(r.Stdout, `"billing--refunds"`) {
		t.Errorf("new epic's plan: %s", r.Stdout)
	}
}

func TestNewCreatesWorkspace(t *testing.T) {
	dir := t.TempDir()
	if r := run(t, dir, "new", "story", "hello", "--title", "Hello"); r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	r := run(t, dir, "check")
	if r.Code != 0 || !strings.Contains(r.Stdout, "[empty-story]") {
		t.Fatalf("check: exit %d\n%s", r.Code, r.Stdout)
	}
}

func TestSchemaAndVersion(t *testing.T) {
	for _, k := range []string{"story", "epic", "task"} {
		r := run(t, t.TempDir(), "schema", k)
		var v map[string]any
		if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &v) != nil || v["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("schema %s: exit %d\n%s", k, r.Code, r.Stdout)
		}
	}
	if r := run(t, t.TempDir(), "schema", "widget"); r.Code != 2 {
		t.Errorf("schema widget: exit %d", r.Code)
	}
	if r := run(t, t.TempDir(), "version"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "saga-lsp ") {
		t.Errorf("version: %d %q", r.Code, r.Stdout)
	}
}

// Every command of `saga-lsp --help` answers --help, -h and `help <command>`
// on stdout with its synopsis and flags, exit 0.
func TestHelpOfEveryCommand(t *testing.T) {
	dir := t.TempDir()
	top := run(t, dir, "--help")
	_, list, ok := strings.Cut(top.Stdout, "\ncommands:\n")
	if top.Code != 0 || !ok {
		t.Fatalf("--help: exit %d\n%s", top.Code, top.Stdout)
	}
	var names []string
	for line := range strings.SplitSeq(list, "\n") {
		if !strings.HasPrefix(line, "  ") {
			break
		}
		names = append(names, strings.Fields(line)[0])
	}
	if len(names) < 12 {
		t.Fatalf("commands listed: %v", names)
	}
	for _, name := range names {
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}} {
			r := run(t, dir, args...)
			if r.Code != 0 || r.Stderr != "" || !strings.HasPrefix(r.Stdout, "usage: saga-lsp "+name) {
				t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.Code, r.Stdout, r.Stderr)
			}
			// Every flag the synopsis shows is explained.
			synopsis, _, _ := strings.Cut(r.Stdout, "\n\n")
			for _, f := range strings.Fields(synopsis) {
				f = strings.Trim(f, "[]")
				if strings.HasPrefix(f, "--") && !strings.Contains(r.Stdout, "\n  "+f) {
					t.Errorf("%v: flag %s of the synopsis is not listed:\n%s", args, f, r.Stdout)
				}
			}
		}
	}
}
