package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/saga-ai/saga-lsp/store"
)

// A usageError is a mistake in the command line. It is reported as its
// message on the first line of stderr, then the command's synopsis; exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// cmdLine is one command's flags, synopsis and summary: it parses the
// arguments and reports help and usage errors the same way for every
// command.
type cmdLine struct {
	*flag.FlagSet
	name     string // as typed after saga-lsp: "plan", "new story"
	synopsis string // after "saga-lsp "; more lines for more forms
	summary  string
	shows    func(flagName string) bool // the flags help lists; nil: all
}

// newCmdLine makes the command line of a command of the table.
func newCmdLine(name string) *cmdLine {
	c := lookupCommand(name)
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse reports every error itself
	return &cmdLine{FlagSet: fs, name: name, synopsis: c.synopsis, summary: c.summary}
}

// narrow is the command line of one form of a command (`new story`): the
// same flags, its own synopsis, and help that lists only the flags shows
// keeps.
func (c *cmdLine) narrow(name, synopsis string, shows func(flagName string) bool) *cmdLine {
	n := *c
	n.name, n.synopsis, n.shows = name, synopsis, shows
	return &n
}

// parse reads flags wherever they stand among the positional arguments
// (`plan my-story --format json` works) up to "--", and returns the
// positional ones. Flags are `--name`, `-name`, `--name=value` or
// `--name value`; a boolean takes `=false` to turn off. -h and --help
// return flag.ErrHelp, which wins over any other error.
func (c *cmdLine) parse(args []string) ([]string, error) {
	var pos []string
	var err error
	help := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if name == "h" || name == "help" {
			help = true
			continue
		}
		if err != nil {
			continue // only the first mistake is reported; keep looking for --help
		}
		fl := c.Lookup(name)
		if fl == nil {
			err = c.unknownFlag(name)
			continue
		}
		if isBool(fl) {
			if !hasValue {
				value = "true"
			}
		} else if !hasValue {
			if i+1 == len(args) {
				err = usagef("--%s needs a value: --%s %s", name, name, valueName(fl))
				continue
			}
			i++
			value = args[i]
		}
		if e := c.Set(name, value); e != nil {
			err = invalidValue(fl, value)
		}
	}
	if help {
		return pos, flag.ErrHelp
	}
	return pos, err
}

// unknownFlag names the flag and, when one is close, the flag meant among
// the command's, --help and the extra ones.
func (c *cmdLine) unknownFlag(name string, extra ...string) error {
	names := append([]string{"help"}, extra...)
	c.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if near := nearest(name, names); near != "" {
		return usagef("unknown flag --%s; did you mean --%s?", name, near)
	}
	return usagef("unknown flag --%s", name)
}

func invalidValue(fl *flag.Flag, value string) error {
	if g, ok := fl.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case int:
			return usagef("--%s wants a whole number, got %q", fl.Name, value)
		case float64:
			return usagef("--%s wants a number, got %q", fl.Name, value)
		case bool:
			return usagef("--%s is on or off (--%s or --%s=false), got %q", fl.Name, fl.Name, fl.Name, value)
		}
	}
	return usagef("invalid --%s %q", fl.Name, value)
}

// isSet tells whether the command line gave the flag.
func (c *cmdLine) isSet(name string) bool {
	set := false
	c.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// fail reports how a command ended before doing its work: help goes to
// stdout (exit 0); a usage error, or a *control.UsageError (a bad name
// or reference), is its message then the synopsis on stderr (exit 2);
// anything else is an I/O problem, its message on stderr (exit 2).
func (c *cmdLine) fail(env *Env, err error) int {
	var ue *usageError
	var ce *store.UsageError
	switch {
	case errors.Is(err, flag.ErrHelp) && env.describe != nil:
		env.describe(c)
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		c.help(env.Stdout)
		return exitOK
	case errors.As(err, &ue), errors.As(err, &ce):
		fmt.Fprintf(env.Stderr, "saga-lsp %s: %v\n", c.name, err)
		c.printSynopsis(env.Stderr)
		fmt.Fprintf(env.Stderr, "Run `saga-lsp %s --help` for its flags.\n", c.name)
	default:
		fmt.Fprintf(env.Stderr, "saga-lsp %s: %v\n", c.name, err)
	}
	return exitUsage
}

func (c *cmdLine) printSynopsis(w io.Writer) {
	for i, line := range strings.Split(c.synopsis, "\n") {
		if i == 0 {
			fmt.Fprintf(w, "usage: saga-lsp %s\n", line)
		} else {
			fmt.Fprintf(w, "       saga-lsp %s\n", line)
		}
	}
}

// help prints the synopsis, the summary and every flag, as `--name VALUE`
// then its usage and default: both from the flag's definition (flagHelp),
// as the man page and the completions have them (describe.go).
func (c *cmdLine) help(w io.Writer) {
	c.printSynopsis(w)
	fmt.Fprintf(w, "\n%s.\n", capitalize(c.summary))
	first := true
	c.VisitAll(func(f *flag.Flag) {
		if c.shows != nil && !c.shows(f.Name) {
			return
		}
		if first {
			fmt.Fprintln(w, "\nflags:")
			first = false
		}
		value, text := flagHelp(f)
		line := "  --" + f.Name
		if value != "" {
			line += " " + value
		}
		fmt.Fprintf(w, "%s\n      %s\n", line, text)
	})
}

// isBool tells whether a flag is on or off: it takes no value.
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// flagHelp is a flag's placeholder and its text, read from its
// definition — the one source of --help, the man page and the completions.
// A flag with a value: the `quoted` word of its usage (unquoted there)
// upper-cased, or its type, and its default when not zero. A boolean takes
// no value, so it has no placeholder, and its usage stays as written (its
// `quotes` are code, as `clean` is).
func flagHelp(f *flag.Flag) (value, text string) {
	if isBool(f) {
		return "", f.Usage
	}
	name, text := flag.UnquoteUsage(f)
	value = strings.ToUpper(name)
	if f.DefValue != "" && f.DefValue != "0" {
		text += " (default " + f.DefValue + ")"
	}
	return value, text
}

// valueName is the placeholder shown after a flag (flagHelp).
func valueName(f *flag.Flag) string {
	v, _ := flagHelp(f)
	return v
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// wantArgs checks the positional arguments against the names of the ones
// the command takes: the first missing one, or the first extra one, is a
// usage error.
func wantArgs(pos []string, names ...string) error {
	switch {
	case len(pos) < len(names):
		return usagef("missing %s", names[len(pos)])
	case len(pos) > len(names):
		return usagef("unexpected argument %q", pos[len(names)])
	}
	return nil
}

// oneOf checks a value against its choices: `unknown format "mermaid"
// (text, json)`, with the choice meant when one is close.
func oneOf(what, got string, choices ...string) error {
	if slices.Contains(choices, got) {
		return nil
	}
	msg := fmt.Sprintf("unknown %s %q (%s)", what, got, strings.Join(choices, ", "))
	if near := nearest(got, choices); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return usagef("%s", msg)
}

// atLeast checks a number flag's lower bound.
func atLeast(flagName string, got, low int) error {
	if got < low {
		return usagef("--%s must be ≥ %d, got %d", flagName, low, got)
	}
	return nil
}

// setAtLeast is atLeast for a flag the user set (an unset one keeps its
// default, which may be decided later).
func setAtLeast(c *cmdLine, flagName string, got, low int) error {
	if !c.isSet(flagName) {
		return nil
	}
	return atLeast(flagName, got, low)
}

// nearest is the candidate a mistyped word most likely meant: one it is a
// prefix of, else the closest within two edits (and fewer edits than the
// word has letters), or "" when none is close. Ties go to the earlier
// candidate.
func nearest(word string, candidates []string) string {
	w := strings.ToLower(word)
	if len(w) >= 2 {
		var prefixed []string
		for _, c := range candidates {
			if strings.HasPrefix(c, w) {
				prefixed = append(prefixed, c)
			}
		}
		if len(prefixed) == 1 {
			return prefixed[0]
		}
	}
	best, bestD := "", min(3, len(w))
	for _, c := range candidates {
		if d := levenshtein.ComputeDistance(w, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}
