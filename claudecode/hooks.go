package claudecode

import (
	"bytes"
	"encoding/json"
)

// Hook events saga-lsp handles (docs/claude-code.md#hooks).
const (
	EventSessionStart  = "SessionStart"
	EventPreToolUse    = "PreToolUse"
	EventPostToolUse   = "PostToolUse"
	EventTaskCompleted = "TaskCompleted"
)

// HookTimeout is the timeout (seconds) registered with saga-lsp's hooks,
// but TaskCompleted's.
const HookTimeout = 30

// TaskCompletedTimeout is the TaskCompleted hook's registered timeout
// (seconds) where nothing better is known (`saga-lsp install`, the plugin):
// it runs the task's checks, which may take minutes. A worker registers the
// hook with a timeout covering its story's longest checks instead, and tells
// the hook (runs.EnvChecksTimeout).
const TaskCompletedTimeout = 3600

// HookSpec is one hook registration: an event, its matcher ("" matches
// every tool or source), its timeout in seconds (0: HookTimeout), and
// whether a headless run of the worker registers it failing closed.
type HookSpec struct {
	Event   string
	Matcher string
	timeout int
	// FailClosed: in a worker's headless run (HookSettings) the hook is
	// registered with "onFailure": "block", so that Claude Code blocks the
	// action when the hook crashes, hangs past its timeout or is killed,
	// instead of letting it through (docs/hooks.md#failing-closed).
	// `install` and the plugin never set it: their settings reach every
	// session, a collaborator's without saga-lsp too.
	FailClosed bool
}

// Timeout is the registration's timeout in seconds.
func (h HookSpec) Timeout() int {
	if h.timeout > 0 {
		return h.timeout
	}
	return HookTimeout
}

// Hooks are the registrations of `saga-lsp hook`, in this order: the worker
// puts them in each headless run's --settings, `saga-lsp install` merges
// them into settings.json, and the Claude Code plugin's hooks/hooks.json
// declares them (a test checks that file against this table).
//
// Only the write scope fails closed: a failed SessionStart costs context
// the worker gives anyway, a failed PostToolUse sync is redone from the
// stream and the task list, and Claude Code ignores onFailure on
// TaskCompleted — the worker closes that gate itself, counting a
// completion only with the hook's passing verdict (docs/worker.md#verified-completion).
var Hooks = []HookSpec{
	{EventSessionStart, "", 0, false},
	{EventPreToolUse, "Write|Edit|MultiEdit|NotebookEdit", 0, true},
	{EventPostToolUse, "TaskUpdate", 0, false},
	{EventTaskCompleted, "", TaskCompletedTimeout, false},
}

// OnFailureBlock is the value of a command hook's "onFailure" that makes
// its failure count as exit 2 (Claude Code MinVersion and newer).
const OnFailureBlock = "block"

// HookCommandEntry is one command of a hook group, as settings hold it.
type HookCommandEntry struct {
	Type      string `json:"type"`
	Command   string `json:"command"`
	Timeout   int    `json:"timeout"`
	OnFailure string `json:"onFailure,omitempty"`
}

// HookGroup is one entry of a hook event's array in settings.
type HookGroup struct {
	Matcher string             `json:"matcher,omitempty"`
	Hooks   []HookCommandEntry `json:"hooks"`
}

// Group is the settings entry registering command for h.
func (h HookSpec) Group(command string) HookGroup {
	return HookGroup{Matcher: h.Matcher, Hooks: []HookCommandEntry{{Type: "command", Command: command, Timeout: h.Timeout()}}}
}

// HooksJSON is the settings' "hooks" object registering command for every
// hook, on one line, in Hooks' order. taskCompleted, when positive,
// replaces TaskCompleted's timeout; failClosed registers the hooks the
// table says with "onFailure": "block" (a worker's headless run only).
func HooksJSON(command string, taskCompleted int, failClosed bool) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, h := range Hooks {
		if i > 0 {
			b.WriteByte(',')
		}
		if h.Event == EventTaskCompleted && taskCompleted > 0 {
			h.timeout = taskCompleted
		}
		ev, _ := json.Marshal(h.Event)
		group := h.Group(command)
		if failClosed && h.FailClosed {
			group.Hooks[0].OnFailure = OnFailureBlock
		}
		g, _ := json.Marshal([]HookGroup{group}) // strings and ints always encode
		b.Write(ev)
		b.WriteByte(':')
		b.Write(g)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// HookSettings is a worker's headless run's --settings JSON text
// registering the hooks with command (TaskCompleted with the given
// timeout, see HooksJSON), failing closed where the table says, beside
// extra top-level settings (e.g. "sandbox").
func HookSettings(command string, taskCompleted int, extra map[string]any) string {
	m := map[string]any{"hooks": json.RawMessage(HooksJSON(command, taskCompleted, true))}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m) // values of settings always encode
	return string(b)
}
