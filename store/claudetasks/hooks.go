package claudetasks

import (
	"bytes"
	"encoding/json"
)

// Hook events saga-lsp handles (claude-code-facts.md, "Hooks").
const (
	EventSessionStart  = "SessionStart"
	EventPreToolUse    = "PreToolUse"
	EventPostToolUse   = "PostToolUse"
	EventTaskCompleted = "TaskCompleted"
)

// HookTimeout is the timeout (seconds) registered with every saga-lsp hook.
const HookTimeout = 30

// HookSpec is one hook registration: an event and its matcher ("" matches
// every tool or source).
type HookSpec struct {
	Event   string
	Matcher string
}

// Hooks are the registrations of `saga-lsp hook`, in this order: the worker
// puts them in each headless run's --settings, `saga-lsp install` merges
// them into settings.json, and the Claude Code plugin's hooks/hooks.json
// declares them (a test checks that file against this table).
var Hooks = []HookSpec{
	{EventSessionStart, ""},
	{EventPreToolUse, "Write|Edit|MultiEdit|NotebookEdit"},
	{EventPostToolUse, "TaskUpdate"},
}

// HookCommandEntry is one command of a hook group, as settings hold it.
type HookCommandEntry struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

// HookGroup is one entry of a hook event's array in settings.
type HookGroup struct {
	Matcher string             `json:"matcher,omitempty"`
	Hooks   []HookCommandEntry `json:"hooks"`
}

// Group is the settings entry registering command for h.
func (h HookSpec) Group(command string) HookGroup {
	return HookGroup{Matcher: h.Matcher, Hooks: []HookCommandEntry{{Type: "command", Command: command, Timeout: HookTimeout}}}
}

// HooksJSON is the settings' "hooks" object registering command for every
// hook, on one line, in Hooks' order.
func HooksJSON(command string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, h := range Hooks {
		if i > 0 {
			b.WriteByte(',')
		}
		ev, _ := json.Marshal(h.Event)
		g, _ := json.Marshal([]HookGroup{h.Group(command)}) // strings and ints always encode
		b.Write(ev)
		b.WriteByte(':')
		b.Write(g)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// HookSettings is a --settings JSON text registering the hooks with
// command, beside extra top-level settings (e.g. "sandbox").
func HookSettings(command string, extra map[string]any) string {
	m := map[string]any{"hooks": json.RawMessage(HooksJSON(command))}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m) // values of settings always encode
	return string(b)
}
