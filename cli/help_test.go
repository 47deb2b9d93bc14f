package cli

import (
	"flag"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestHelpFromDefinitions walks every command's flags, as defined, and
// checks what the built binary prints of them: a boolean never has a
// placeholder (in --help, in the man page of `saga-lsp man`, in the
// synopsis), a flag with a value always has one, and --help and the man
// page give each flag the same placeholder and text. The synopsis names
// only flags the command has, each with its placeholder, its choices
// (`--format text|json`) or one of them (`--on github`).
func TestHelpFromDefinitions(t *testing.T) {
	bin := testkit.Binary(t)
	out, err := exec.Command(bin, "man").Output()
	if err != nil {
		t.Fatalf("saga-lsp man: %v", err)
	}
	man := manFlags(t, string(out))
	for _, c := range commandTable() {
		var cl *cmdLine
		c.run(&Env{Stdout: io.Discard, Stderr: io.Discard, Stdin: strings.NewReader(""), Dir: "/",
			Getenv: func(string) string { return "" }, describe: func(l *cmdLine) { cl = l }}, []string{"--help"})
		if cl == nil {
			continue // no flags (hook)
		}
		helpOut, err := exec.Command(bin, c.name, "--help").Output()
		if err != nil {
			t.Errorf("saga-lsp %s --help: %v", c.name, err)
			continue
		}
		help := helpFlags(string(helpOut))
		cl.VisitAll(func(f *flag.Flag) {
			h, ok := help[f.Name]
			if !ok {
				t.Errorf("%s --help lacks --%s", c.name, f.Name)
				return
			}
			m, ok := man[c.name][f.Name]
			if !ok {
				t.Errorf("the man page lacks --%s of %s", f.Name, c.name)
				return
			}
			switch {
			case isBool(f) && h.value != "":
				t.Errorf("%s --help: boolean --%s has a placeholder %q", c.name, f.Name, h.value)
			case isBool(f) && m.value != "":
				t.Errorf("man page, %s: boolean --%s has a placeholder %q", c.name, f.Name, m.value)
			case !isBool(f) && (h.value == "" || h.value != strings.ToUpper(h.value)):
				t.Errorf("%s --help: --%s takes a value but shows placeholder %q", c.name, f.Name, h.value)
			}
			if h != m {
				t.Errorf("%s --%s: --help and the man page differ:\n help: %q %q\n  man: %q %q", c.name, f.Name, h.value, h.text, m.value, m.text)
			}
		})
		for _, m := range regexp.MustCompile(`--([a-z][a-z0-9.-]*)( [^ \]|]+(?:\|[^ \]|]+)*)?`).FindAllStringSubmatch(c.synopsis, -1) {
			name, arg := m[1], strings.TrimSpace(m[2])
			f := cl.Lookup(name)
			if f == nil {
				t.Errorf("%s's synopsis names --%s, which it does not have", c.name, name)
				continue
			}
			if strings.HasPrefix(arg, "<") || strings.HasPrefix(arg, "[") || strings.HasPrefix(arg, "(") || arg == "the" {
				arg = "" // an argument, the next flag or a remark, not the flag's value
			}
			switch {
			case isBool(f) && arg != "":
				t.Errorf("%s's synopsis: boolean --%s followed by %q", c.name, name, arg)
			case !isBool(f) && arg != valueName(f) && !regexp.MustCompile(`^[a-z]+(\|[a-z]+)*$`).MatchString(arg):
				t.Errorf("%s's synopsis: --%s %s, but its placeholder is %s", c.name, name, arg, valueName(f))
			}
		}
	}
}

type flagDoc struct{ value, text string }

// helpFlags reads --help's flag list: "  --name VALUE" then its text.
func helpFlags(help string) map[string]flagDoc {
	docs := map[string]flagDoc{}
	lines := strings.Split(help, "\n")
	for i, line := range lines {
		rest, ok := strings.CutPrefix(line, "  --")
		if !ok || i+1 == len(lines) {
			continue
		}
		name, value, _ := strings.Cut(rest, " ")
		docs[name] = flagDoc{value, strings.TrimPrefix(lines[i+1], "      ")}
	}
	return docs
}

// manFlags reads the man page's flags per command: ".B saga\-lsp <command>
// …" starts a command, ".B \-\-name \fIVALUE\fR" a flag, its text the next
// line.
func manFlags(t *testing.T, page string) map[string]map[string]flagDoc {
	docs := map[string]map[string]flagDoc{}
	cmd := ""
	lines := strings.Split(page, "\n")
	for i, line := range lines {
		if rest, ok := strings.CutPrefix(line, `.B saga\-lsp `); ok {
			cmd = ""
			for _, c := range commandTable() {
				if unroff(t, rest) == c.name || strings.HasPrefix(unroff(t, rest), c.name+" ") {
					cmd = c.name
				}
			}
			continue
		}
		rest, ok := strings.CutPrefix(line, `.B \-\-`)
		if !ok || cmd == "" || i+1 == len(lines) {
			continue
		}
		name, value, _ := strings.Cut(rest, " ")
		value = strings.TrimSuffix(strings.TrimPrefix(value, `\fI`), `\fR`)
		if docs[cmd] == nil {
			docs[cmd] = map[string]flagDoc{}
		}
		docs[cmd][unroff(t, name)] = flagDoc{unroff(t, value), unroff(t, lines[i+1])}
	}
	return docs
}

// unroff undoes roff().
func unroff(t *testing.T, s string) string {
	s = strings.TrimPrefix(s, `\&`)
	return regexp.MustCompile(`\\-|\\e|\\\[u[0-9A-F]{4,}\]`).ReplaceAllStringFunc(s, func(esc string) string {
		switch esc {
		case `\-`:
			return "-"
		case `\e`:
			return `\`
		}
		r, err := strconv.ParseUint(esc[3:len(esc)-1], 16, 32)
		if err != nil {
			t.Fatalf("unroff %q: %v", esc, err)
		}
		return fmt.Sprintf("%c", rune(r))
	})
}
