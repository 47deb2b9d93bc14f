package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestEveryCommandDescribed: completion and the man page see every
// command's flags, as --help lists them.
func TestEveryCommandDescribed(t *testing.T) {
	for _, d := range describeCommands() {
		var help bytes.Buffer
		d.run(&Env{Stdout: &help, Stderr: &help, Stdin: strings.NewReader(""), Dir: "/", Getenv: func(string) string { return "" }}, []string{"--help"})
		for _, line := range strings.Split(help.String(), "\n") {
			name, ok := strings.CutPrefix(line, "  --")
			if !ok {
				continue
			}
			name, _, _ = strings.Cut(name, " ")
			found := false
			for _, f := range d.flags {
				found = found || f.name == name
			}
			if !found {
				t.Errorf("%s: --%s is in --help but not described", d.name, name)
			}
		}
	}
}

// completionWorkspace is a workspace with two stories and an epic, and a
// PATH whose saga-lsp is the built binary (the scripts call it for ids).
func completionWorkspace(t *testing.T, shell string) (dir, script string, env []string) {
	dir = t.TempDir()
	testkit.WriteFiles(t, dir, map[string]string{
		".saga/stories/login-page/story.json": `{"id": "login-page", "title": "Login", "description": ""}`,
		".saga/stories/logout/story.json":     `{"id": "logout", "title": "Logout", "description": ""}`,
		".saga/epics/auth.json":               `{"id": "auth", "title": "Auth", "description": "", "children": []}`,
	})
	bin := testkit.Binary(t)
	out, err := exec.Command(bin, "completion", shell).Output()
	if err != nil {
		t.Fatalf("completion %s: %v", shell, err)
	}
	script = filepath.Join(t.TempDir(), "saga-lsp."+shell)
	if err := os.WriteFile(script, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, script, append(testkit.CleanEnv(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
}

func shellOut(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

func TestCompletionBash(t *testing.T) {
	dir, script, env := completionWorkspace(t, "bash")
	complete := func(words ...string) string {
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + w + "'"
		}
		return strings.TrimSpace(shellOut(t, dir, env, "bash", "-c", `source "$0"; COMP_WORDS=(`+strings.Join(quoted, " ")+`); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _saga_lsp; echo "${COMPREPLY[*]}"`, script))
	}
	for _, c := range []struct {
		words []string
		want  string
	}{
		{[]string{"saga-lsp", "pl"}, "plan"},
		{[]string{"saga-lsp", "plan", "--format", ""}, "text json mermaid dot"},
		{[]string{"saga-lsp", "check", "--format", ""}, "text json github"},
		{[]string{"saga-lsp", "run", "--dry"}, "--dry-run"},
		{[]string{"saga-lsp", "run", "lo"}, "login-page logout"},
		{[]string{"saga-lsp", "status", "a"}, "auth"},
		{[]string{"saga-lsp", "completion", ""}, "bash zsh fish"},
		{[]string{"saga-lsp", "schema", "t"}, "task"},
		{[]string{"saga-lsp", "schema", "task", ""}, ""},
		{[]string{"saga-lsp", "help", "ver"}, "verify version"},
	} {
		if got := complete(c.words...); got != c.want {
			t.Errorf("%q: got %q, want %q", c.words, got, c.want)
		}
	}
}

func TestCompletionFish(t *testing.T) {
	testkit.NeedsTool(t, "fish", "apt-get install fish")
	dir, script, env := completionWorkspace(t, "fish")
	complete := func(line string) []string {
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(shellOut(t, dir, env, "fish", "-c", "source $argv[1]; complete -C $argv[2]", script, line)), "\n") {
			got = append(got, strings.Split(l, "\t")[0])
		}
		return got
	}
	if got := complete("saga-lsp plan --format "); strings.Join(got, " ") != "dot json mermaid text" {
		t.Errorf("plan --format: %q", got)
	}
	if got := complete("saga-lsp run lo"); strings.Join(got, " ") != "login-page logout" {
		t.Errorf("run lo: %q", got)
	}
	if got := complete("saga-lsp ver"); strings.Join(got, " ") != "verify version" {
		t.Errorf("ver: %q", got)
	}
}

// TestCompletionZsh loads the script as zsh's completion system does;
// driving zsh's completion needs a terminal, so the menus themselves are
// untested here (docs/commands.md#completion).
func TestCompletionZsh(t *testing.T) {
	testkit.NeedsTool(t, "zsh", "apt-get install zsh")
	dir, script, env := completionWorkspace(t, "zsh")
	fpath := t.TempDir()
	if err := os.Rename(script, filepath.Join(fpath, "_saga-lsp")); err != nil {
		t.Fatal(err)
	}
	out := shellOut(t, dir, env, "zsh", "-f", "-c", `fpath=("$0" $fpath); autoload -U compinit; compinit -u -d "$0/.zcompdump"; autoload -U +X _saga-lsp; print -r -- $_comps[saga-lsp] $+functions[_saga-lsp]`, fpath)
	if strings.TrimSpace(out) != "_saga-lsp 1" {
		t.Fatalf("zsh did not register the completion: %q", out)
	}
}

// TestManpage: saga-lsp(1) formats without warnings and lists every
// command and flag.
func TestManpage(t *testing.T) {
	var page bytes.Buffer
	cmds := describeCommands()
	manpage(&page, cmds, "v1.2.3")
	for _, c := range cmds {
		if !strings.Contains(page.String(), ".B saga\\-lsp "+roff(c.name)) {
			t.Errorf("no %s in the page", c.name)
		}
		for _, f := range c.flags {
			if !strings.Contains(page.String(), ".B \\-\\-"+roff(f.name)) {
				t.Errorf("no --%s of %s in the page", f.name, c.name)
			}
		}
	}
	testkit.NeedsTool(t, "groff", "apt-get install groff-base")
	cmd := exec.Command("groff", "-man", "-Tutf8", "-ww", "-Wbreak", "-z")
	cmd.Stdin = &page
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("groff: %v\n%s", err, out)
	}
}
