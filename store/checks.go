package store

import (
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/store/jsonc"
)

// A task's checks (docs/format.md#checks): shell commands that must all pass before
// the task may be completed, and how long each may run. This is the one
// reading of the two members, shared by the parser (Task.Checks), the hook
// (which reads a task file as committed, without the schema) and the runner
// of the checks.

// Check timeouts: the default, and the most checkTimeout may say (the
// schema's maximum).
const (
	DefaultCheckTimeout = 600 * time.Second
	MaxCheckTimeout     = 86400 * time.Second
)

// Check is one command of a task's checks, with the JSON string that holds
// it (nil when it came from elsewhere).
type Check struct {
	Command string
	Node    *jsonc.Node
}

// TaskChecks reads the checks of a task document's top-level object: the
// entries of "checks" that are non-blank strings, in order (anything else is
// a schema finding, never a command), and the per-check timeout
// ("checkTimeout" seconds when it is a number in (0, 86400], else
// DefaultCheckTimeout).
func TaskChecks(obj *jsonc.Node) (checks []Check, timeout time.Duration) {
	timeout = DefaultCheckTimeout
	if obj == nil || obj.Kind != jsonc.Object {
		return nil, timeout
	}
	if arr := obj.Get("checks"); arr != nil && arr.Kind == jsonc.Array {
		for _, e := range arr.Elems {
			if e != nil && e.Kind == jsonc.String && strings.TrimSpace(e.Str) != "" {
				checks = append(checks, Check{Command: e.Str, Node: e})
			}
		}
	}
	if n := obj.Get("checkTimeout"); n != nil && n.Kind == jsonc.Number {
		if s, err := strconv.ParseFloat(n.Raw, 64); err == nil && s > 0 && s <= MaxCheckTimeout.Seconds() {
			timeout = time.Duration(s * float64(time.Second))
		}
	}
	return checks, timeout
}

// blankChecks reports the checks entries that hold only white space (an
// empty one is the schema's minLength finding): sh -c runs them
// successfully, so they would check nothing.
func (b *diagBuilder) blankChecks(obj *jsonc.Node) {
	arr := obj.Get("checks")
	if arr == nil || arr.Kind != jsonc.Array {
		return
	}
	for _, e := range arr.Elems {
		if e != nil && e.Kind == jsonc.String && e.Str != "" && strings.TrimSpace(e.Str) == "" {
			b.add(CodeSchema, e.Start, e.End, "a check must be a command, not only white space", nil)
		}
	}
}
