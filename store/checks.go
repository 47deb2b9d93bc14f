package store

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/saga-ai/saga-lsp/store/glob"
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
		for _, e := range arr.Elems() {
			if e != nil && e.Kind == jsonc.String && strings.TrimSpace(e.Str()) != "" {
				checks = append(checks, Check{Command: e.Str(), Node: e})
			}
		}
	}
	if n := obj.Get("checkTimeout"); n != nil && n.Kind == jsonc.Number {
		if s, err := strconv.ParseFloat(n.Raw(), 64); err == nil && s > 0 && s <= MaxCheckTimeout.Seconds() {
			timeout = time.Duration(s * float64(time.Second))
		}
	}
	return checks, timeout
}

// Check limits (docs/format.md#checks): the defaults of a task's
// "checkLimits", and the most processes it may allow (the schema's
// maximum).
const (
	DefaultCheckMemory    = 2 << 30
	DefaultCheckFileSize  = 1 << 30
	DefaultCheckProcesses = 512
	MaxCheckProcesses     = 65536
)

// CheckLimits bound each of a task's checks: the memory its processes hold
// in all, the size of any file it writes, and how many processes it runs at
// once (CPU time is the check's timeout). Zero means the default.
type CheckLimits struct {
	Memory    int64 `json:"memory,omitempty"`   // bytes
	FileSize  int64 `json:"fileSize,omitempty"` // bytes
	Processes int   `json:"processes,omitempty"`
}

// WithDefaults fills the zero limits with the defaults.
func (l CheckLimits) WithDefaults() CheckLimits {
	if l.Memory <= 0 {
		l.Memory = DefaultCheckMemory
	}
	if l.FileSize <= 0 {
		l.FileSize = DefaultCheckFileSize
	}
	if l.Processes <= 0 {
		l.Processes = DefaultCheckProcesses
	}
	return l
}

// TaskCheckLimits reads "checkLimits" of a task document's top-level
// object: "memory" and "fileSize" as sizes ("512MiB", "2GiB": ParseSize),
// "processes" as a whole number in [1, MaxCheckProcesses]. A member that is
// missing or invalid (a schema finding) keeps its default.
func TaskCheckLimits(obj *jsonc.Node) CheckLimits {
	var l CheckLimits
	if obj == nil || obj.Kind != jsonc.Object {
		return l
	}
	lim := obj.Get("checkLimits")
	if lim == nil || lim.Kind != jsonc.Object {
		return l
	}
	for _, m := range []struct {
		name string
		dst  *int64
	}{{"memory", &l.Memory}, {"fileSize", &l.FileSize}} {
		if n := lim.Get(m.name); n != nil && n.Kind == jsonc.String {
			if v, ok := ParseSize(n.Str()); ok {
				*m.dst = v
			}
		}
	}
	if n := lim.Get("processes"); n != nil && n.Kind == jsonc.Number {
		if v, err := strconv.ParseFloat(n.Raw(), 64); err == nil && v == math.Trunc(v) && v >= 1 && v <= MaxCheckProcesses {
			l.Processes = int(v)
		}
	}
	return l
}

// sizeUnits are the units a checkLimits size takes (the schema's pattern).
var sizeUnits = []struct {
	suffix string
	shift  uint
}{{"KiB", 10}, {"MiB", 20}, {"GiB", 30}}

// ParseSize reads a size of checkLimits: a whole number of KiB, MiB or GiB
// ("512MiB"), at most 7 digits.
func ParseSize(s string) (int64, bool) {
	for _, u := range sizeUnits {
		digits, ok := strings.CutSuffix(s, u.suffix)
		if !ok || len(digits) == 0 || len(digits) > 7 || digits[0] == '0' {
			continue
		}
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || n <= 0 {
			return 0, false
		}
		return n << u.shift, true
	}
	return 0, false
}

// FormatSize writes a byte count the way checkLimits spells sizes, in the
// largest unit that divides it ("2GiB", "1536MiB"), else in bytes.
func FormatSize(n int64) string {
	for i := len(sizeUnits) - 1; i >= 0; i-- {
		u := sizeUnits[i]
		if n > 0 && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.suffix)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// blankChecks reports the checks entries that hold only white space (an
// empty one is the schema's minLength finding): sh -c runs them
// successfully, so they would check nothing.
func (b *diagBuilder) blankChecks(obj *jsonc.Node) {
	arr := obj.Get("checks")
	if arr == nil || arr.Kind != jsonc.Array {
		return
	}
	for _, e := range arr.Elems() {
		if e != nil && e.Kind == jsonc.String && e.Str() != "" && strings.TrimSpace(e.Str()) == "" {
			b.add(CodeSchema, e.Start(), e.End(), "a check must be a command, not only white space", nil)
		}
	}
}

// Protection is what a task says about the files its checks are run
// against at the run's reference commit (docs/format.md#protected-files):
// "protect" adds paths to the protected ones, "mayChangeTests" lets the
// story modify or delete protected files — all of them (true) or those
// its globs match.
type Protection struct {
	Protect        []string `json:"protect,omitempty"`
	MayChangeAll   bool     `json:"mayChangeAll,omitempty"`
	MayChangeGlobs []string `json:"mayChange,omitempty"`
}

// TaskProtection reads "protect" and "mayChangeTests" of a task document's
// top-level object: non-blank strings of the arrays (anything else is a
// schema finding, never a glob), and mayChangeTests true or an array.
func TaskProtection(obj *jsonc.Node) Protection {
	var p Protection
	if obj == nil || obj.Kind != jsonc.Object {
		return p
	}
	globs := func(arr *jsonc.Node) []string {
		var out []string
		if arr != nil && arr.Kind == jsonc.Array {
			for _, e := range arr.Elems() {
				if e != nil && e.Kind == jsonc.String && strings.TrimSpace(e.Str()) != "" {
					out = append(out, e.Str())
				}
			}
		}
		return out
	}
	p.Protect = globs(obj.Get("protect"))
	if m := obj.Get("mayChangeTests"); m != nil {
		switch {
		case m.Kind == jsonc.Bool:
			p.MayChangeAll = m.Bool
		case m.Kind == jsonc.Array:
			p.MayChangeGlobs = globs(m)
		}
	}
	return p
}

// Glob is one glob of a task's "paths", with the JSON string that holds it.
type Glob struct {
	Pattern string
	Node    *jsonc.Node
}

// TaskPaths reads "paths" of a task document's top-level object: the
// entries that are globs (glob.Check), each with its JSON string; anything
// else is a schema finding (badPaths), never a glob.
func TaskPaths(obj *jsonc.Node) []Glob {
	if obj == nil || obj.Kind != jsonc.Object {
		return nil
	}
	arr := obj.Get("paths")
	if arr == nil || arr.Kind != jsonc.Array {
		return nil
	}
	var out []Glob
	for _, e := range arr.Elems() {
		if e != nil && e.Kind == jsonc.String && glob.Check(e.Str()) == nil {
			out = append(out, Glob{Pattern: e.Str(), Node: e})
		}
	}
	return out
}

// badPaths reports the "paths" entries that are strings but no glob of a
// repository path (a blank one, an absolute one, one that does not parse):
// the schema cannot say it.
func (b *diagBuilder) badPaths(obj *jsonc.Node) {
	arr := obj.Get("paths")
	if arr == nil || arr.Kind != jsonc.Array {
		return
	}
	for _, e := range arr.Elems() {
		if e != nil && e.Kind == jsonc.String && e.Str() != "" {
			if err := glob.Check(e.Str()); err != nil {
				b.add(CodeSchema, e.Start(), e.End(), err.Error(), nil)
			}
		}
	}
}
