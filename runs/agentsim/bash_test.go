package agentsim

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestBash runs every testdata/bash/*.txtar case. Files: "flags" (claude
// flags, one or two words a line, after -p and the stream-json flags; the
// Task tools are always allowed), "settings.json" (passed as --settings),
// "env" (KEY=value lines), "setup" (a shell script run in the project
// first), "project/…" (files of the project), "commands" (a command line,
// then "=> ok|error|denied: <what the model saw>" with \n for newlines; a
// command prefixed "unsandboxed: " asks for dangerouslyDisableSandbox),
// "stderr" (exact) and "after" ("exists PATH" / "absent PATH" lines).
// {root}, {cwd}, {home} and {tmp} (the sandbox's TMPDIR) are replaced
// everywhere. The model runs the commands through SIMAGENT directives.
func TestBash(t *testing.T) {
	cases, err := filepath.Glob("testdata/bash/*.txtar")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(c), ".txtar"), func(t *testing.T) {
			files := testkit.ReadArchive(t, c)
			f := newFixture(t)
			base := os.Getenv("TMPDIR")
			if base == "" {
				base = "/tmp"
			}
			expand := strings.NewReplacer("{root}", f.root, "{cwd}", f.project, "{home}", f.env["HOME"],
				"{tmp}", filepath.Join(base, "claude-"+strconv.Itoa(os.Getuid()))).Replace
			if strings.Contains(files["settings.json"], `"enabled":true`) && files["env"] == "" {
				needSandbox(t)
			}
			for name, content := range files {
				if rel, ok := strings.CutPrefix(name, "project/"); ok {
					f.write(filepath.Join("project", rel), expand(content))
				}
			}
			var extraEnv []string
			for _, kv := range strings.Split(strings.TrimSpace(expand(files["env"])), "\n") {
				if kv != "" {
					extraEnv = append(extraEnv, kv)
				}
			}
			if setup := files["setup"]; setup != "" {
				cmd := exec.Command("/bin/sh", "-c", expand(setup))
				cmd.Dir = f.project
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("setup: %v\n%s", err, out)
				}
			}
			var commands, want []string
			var prompt strings.Builder
			prompt.WriteString("Run the commands.\n")
			for _, line := range strings.Split(strings.TrimSpace(expand(files["commands"])), "\n") {
				if w, ok := strings.CutPrefix(line, "=> "); ok {
					want = append(want, w)
					continue
				}
				commands = append(commands, line)
				if cmd, ok := strings.CutPrefix(line, "unsandboxed: "); ok {
					prompt.WriteString("SIMAGENT bash-unsandboxed " + cmd + "\n")
				} else {
					prompt.WriteString("SIMAGENT bash " + line + "\n")
				}
			}
			args := []string{"-p", prompt.String(), "--output-format", "stream-json", "--verbose",
				"--allowedTools", "TaskList TaskGet TaskUpdate TaskCreate"}
			for _, line := range strings.Split(strings.TrimSpace(files["flags"]), "\n") {
				args = append(args, strings.Fields(line)...)
			}
			if s := files["settings.json"]; s != "" {
				args = append(args, "--settings", strings.TrimSpace(expand(s)))
			}
			r := f.run("idle", args, extraEnv...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if s, ok := files["stderr"]; ok && r.stderr != expand(s) {
				t.Errorf("stderr %q\nwant %q", r.stderr, expand(s))
			}
			denied := map[string]bool{}
			for _, l := range r.lines {
				if l["subtype"] == "permission_denied" && l["tool_name"] == "Bash" {
					denied[l["tool_use_id"].(string)] = true
				}
			}
			var got []string
			for _, call := range checkShapes(t, r, true) {
				if call.name != "Bash" {
					continue
				}
				kind := "ok"
				switch {
				case denied[call.id]:
					kind = "denied"
				case call.isError:
					kind = "error"
				}
				got = append(got, kind+": "+strings.ReplaceAll(call.content, "\n", `\n`))
			}
			if len(got) != len(want) {
				t.Fatalf("%d Bash calls, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("$ %s\n got %s\nwant %s", commands[i], got[i], want[i])
				}
			}
			for _, line := range strings.Split(strings.TrimSpace(expand(files["after"])), "\n") {
				what, p, _ := strings.Cut(line, " ")
				_, err := os.Lstat(p)
				if (what == "exists") != (err == nil) {
					t.Errorf("after the run: %s %s (stat: %v)", what, p, err)
				}
			}
		})
	}
}

// needSandbox skips a test where the Bash sandbox cannot work: bwrap or
// socat missing (Debian: bubblewrap, socat), or bwrap unable to create its
// namespaces here.
func needSandbox(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bwrap", "socat"} {
		testkit.NeedsTool(t, tool, "the sandbox needs it; Debian: bubblewrap, socat")
	}
	if out, err := exec.Command("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true").CombinedOutput(); err != nil {
		testkit.Needs(t, fmt.Sprintf("bwrap does not work here: %v %s", err, out))
	}
}

// In the sandbox `go test ./...` passes once the build cache is writable
// (an allowWrite path; here the machine's warm cache), and fails with the
// default one under $HOME/.cache, read-only there — as with Claude Code
// 2.1.330; a write outside the working directory fails inside the command.
func TestSandboxedGoTest(t *testing.T) {
	needSandbox(t)
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	gocache := strings.TrimSpace(string(out))
	for _, writable := range []bool{true, false} {
		f := newFixture(t)
		f.write("project/go.mod", "module example.com/m\n\ngo 1.21\n")
		f.write("project/m_test.go", "package m\n\nimport \"testing\"\n\nfunc TestOK(t *testing.T) {}\n")
		allow := `"` + f.root + `/allowed"`
		if writable {
			allow += `,"` + gocache + `"`
		} else {
			gocache = filepath.Join(f.env["HOME"], ".cache", "go-build")
		}
		settings := `{"sandbox":{"enabled":true,"autoAllowBashIfSandboxed":true,"allowUnsandboxedCommands":false,"filesystem":{"allowWrite":[` + allow + `]}}}`
		prompt := "Test it.\nSIMAGENT bash go test ./...\nSIMAGENT bash echo x > " + f.root + "/outside.txt\n"
		r := f.run("idle", []string{"-p", prompt, "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits",
			"--setting-sources", "user", "--settings", settings, "--allowedTools", "TaskList TaskGet TaskUpdate"},
			"GOCACHE="+gocache, "GOFLAGS=-count=1", "GOTOOLCHAIN=local")
		var bash []toolCall
		for _, c := range checkShapes(t, r, true) {
			if c.name == "Bash" {
				bash = append(bash, c)
			}
		}
		if len(bash) != 2 {
			t.Fatalf("Bash calls %v", bash)
		}
		if writable && (bash[0].isError || !strings.HasPrefix(bash[0].content, "ok  \texample.com/m\t")) {
			t.Errorf("go test with a writable cache: %q", bash[0].content)
		}
		if !writable && (!bash[0].isError || !strings.Contains(bash[0].content, "read-only file system")) {
			t.Errorf("go test with the read-only cache: %q", bash[0].content)
		}
		if want := "Exit code 1\n/bin/bash: line 1: " + f.root + "/outside.txt: Read-only file system"; bash[1].content != want {
			t.Errorf("write outside: %q", bash[1].content)
		}
		if res := resultLine(t, r)["result"].(string); !strings.Contains(res, "Bash results:\n$ go test ./...\n") {
			t.Errorf("the model's report: %q", res)
		}
	}
}

// --disallowedTools Bash removes Bash: the model cannot run its commands.
func TestDisallowedBash(t *testing.T) {
	f := newFixture(t)
	r := f.run("idle", []string{"-p", "SIMAGENT bash echo hi > out.txt", "--output-format", "stream-json", "--verbose",
		"--permission-mode", "acceptEdits", "--disallowedTools", "Bash"})
	for _, c := range checkShapes(t, r, true) {
		if c.name == "Bash" {
			t.Errorf("Bash called: %v", c)
		}
	}
	if res := resultLine(t, r)["result"].(string); !strings.HasSuffix(res, "Bash results:\n$ echo hi > out.txt\nnot run: the Bash tool is not available") {
		t.Errorf("result %q", res)
	}
	s, _ := testSession(t, f, "--disallowedTools", "Bash")
	if _, res := callJSON(t, s, "Bash", `{"command":"echo hi"}`); res.text != "<tool_use_error>Error: No such tool available: Bash</tool_use_error>" {
		t.Errorf("Bash call: %q", res.text)
	}
}
