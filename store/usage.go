package store

import "fmt"

// UsageError marks a request the workspace cannot satisfy as asked (an
// invalid name, a missing story): the CLI exits 2 and the language server
// answers InvalidParams.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef is a UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// CheckName refuses an invalid name as a UsageError: a story's (canonical:
// ids joined by "--"), or a task's or an epic's id; with example, the
// message proposes a valid name made from it.
func CheckName(what, name string, canonical, example bool) error {
	valid, rule := ValidID(name), "use lowercase letters, digits and single dashes"
	if canonical {
		valid, rule = ValidCanonical(name), `use lowercase ids of letters, digits and single dashes, joined by "--"`
	}
	switch {
	case valid:
		return nil
	case example:
		return Usagef("invalid %s %q: %s (e.g. %s)", what, name, rule, ExampleName(name, canonical))
	}
	return Usagef("invalid %s %q: %s", what, name, rule)
}

// ExampleName is a valid name made from s, for messages that propose one.
func ExampleName(s string, canonical bool) string {
	if ex := Slugify(s, canonical); ex != "" {
		return ex
	}
	return "write-tests"
}
