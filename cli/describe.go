package cli

import (
	"flag"
	"io"
	"regexp"
	"strings"
)

// A described command is a command of the table with its flags, as --help
// knows them: the source of the shell completions and the man page, so
// neither can drift from the command line.
type described struct {
	command
	flags []describedFlag
	ids   bool     // its arguments are story or epic ids
	words []string // its first argument is one of these: schema story|epic|task
}

type describedFlag struct {
	name, value, usage string
	choices            []string // from the synopsis: --format text|json
	path               bool     // its value is a file or folder
}

// choicesPattern finds "--flag a|b|c" in a synopsis.
const choicesPattern = `--([a-z][a-z0-9.-]*) ([a-z]+(?:\|[a-z]+)+)`

// describeCommands reads every command's flags by running it with --help
// and an Env whose describe takes its command line (cmdLine.fail).
func describeCommands() []described {
	choices := regexp.MustCompile(choicesPattern)
	var out []described
	for _, c := range commandTable() {
		var cl *cmdLine
		env := &Env{Stdout: io.Discard, Stderr: io.Discard, Stdin: strings.NewReader(""), Dir: "/",
			Getenv: func(string) string { return "" }, describe: func(l *cmdLine) { cl = l }}
		c.run(env, []string{"--help"})
		d := described{command: c, ids: strings.Contains(c.synopsis, "<story") || strings.Contains(c.synopsis, "<epic")}
		if m := regexp.MustCompile(`^` + regexp.QuoteMeta(c.name) + ` ([a-z]+(?:\|[a-z]+)+)`).FindStringSubmatch(c.synopsis); m != nil {
			d.words = strings.Split(m[1], "|")
		}
		enum := map[string][]string{}
		for _, m := range choices.FindAllStringSubmatch(c.synopsis, -1) {
			enum[m[1]] = strings.Split(m[2], "|")
		}
		if cl != nil {
			cl.VisitAll(func(f *flag.Flag) {
				v, usage := flagHelp(f)
				d.flags = append(d.flags, describedFlag{name: f.Name, value: v, usage: usage, choices: enum[f.Name],
					path: v == "FILE" || v == "DIR" || v == "PATH"})
			})
		}
		out = append(out, d)
	}
	return out
}

// firstSentence shortens a usage for a completion menu.
func firstSentence(s string) string {
	if i := strings.Index(s, "; "); i > 0 {
		s = s[:i]
	}
	if i := strings.Index(s, " ("); i > 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ": "); i > 0 && i < len(s)-2 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
