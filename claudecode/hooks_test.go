package claudecode

import (
	"encoding/json"
	"strings"
	"testing"
)

// A worker's headless run registers the write scope failing closed and
// nothing else (Claude Code ignores onFailure on TaskCompleted; a failed
// SessionStart or PostToolUse lets nothing through); `install`'s hooks
// object fails open everywhere (docs/hooks.md#failing-closed).
func TestHookSettingsFailClosed(t *testing.T) {
	var s struct {
		Hooks map[string][]HookGroup `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(HookSettings("saga-lsp-hook hook", 120, nil)), &s); err != nil {
		t.Fatal(err)
	}
	for _, h := range Hooks {
		g := s.Hooks[h.Event]
		if len(g) != 1 || len(g[0].Hooks) != 1 {
			t.Fatalf("%s: %+v", h.Event, g)
		}
		want := ""
		if h.Event == EventPreToolUse {
			want = OnFailureBlock
		}
		if got := g[0].Hooks[0].OnFailure; got != want {
			t.Errorf("%s: onFailure %q, want %q", h.Event, got, want)
		}
	}
	if j := string(HooksJSON("saga-lsp hook", 0, false)); strings.Contains(j, "onFailure") {
		t.Errorf("install's hooks fail closed: %s", j)
	}
}
