//go:build unix

package lsp

import (
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit"
)

// TestNameLimit: a name over 200 bytes would make a file name past what file
// systems allow; rename refuses it, the create commands refuse it, and no
// quick fix offers to create such a task.
func TestNameLimit(t *testing.T) {
	root := testkit.CopyExample(t, "workspace")
	c := startOn(t, root, capsFull)
	const rel = ".saga/stories/add-logout-button/write-tests.json"
	text := c.open(rel)
	long := strings.Repeat("x", 300)

	m := c.call("textDocument/rename", navParams(c, rel, at(t, text, `"write-tests"`, 0, 2), `,"newName":"`+long+`"`))
	if m.Error == nil || m.Error.Code != renameRequestFailed || !strings.Contains(m.Error.Message, "names are at most 200 bytes") {
		t.Fatalf("rename to 300 bytes: %+v", m)
	}
	m = c.call("textDocument/rename", navParams(c, rel, at(t, text, `"write-tests"`, 0, 2), `,"newName":"`+long[:200]+`"`))
	if m.Error != nil {
		t.Fatalf("rename to 200 bytes: %+v", m.Error)
	}

	for _, cmd := range []struct {
		command string
		args    any
	}{
		{"saga.createTask", []any{"add-logout-button", long, "Long"}},
		{"saga.createStory", []any{map[string]any{"name": long, "title": "Long"}}},
		{"saga.createEpic", []any{long, "Long"}},
	} {
		if m := c.execCommand(cmd.command, cmd.args); m.Error == nil || m.Error.Code != codeInvalidParams || !strings.Contains(m.Error.Message, "names are at most 200 bytes") {
			t.Errorf("%s with a 300-byte name: %+v", cmd.command, m.Error)
		}
	}

	// An unknown blockedBy entry of 300 bytes: removing it is offered,
	// creating it is not.
	from := c.mark()
	edited := strings.Replace(text, `"blockedBy": []`, `"blockedBy": ["`+long+`"]`, 1)
	c.didChange(rel, 2, `{"text":`+jsonString(edited)+`}`)
	pd, _ := c.diagnostics(from, rel, func(pd publishedDiagnostics) bool { return pd.Version != nil && *pd.Version == 2 })
	if countCode(pd, "unknown-dependency") != 1 {
		t.Fatalf("diagnostics %v", pd.codes())
	}
	actions := actionTitles(c.codeActions(rel, pd.Diagnostics[len(pd.Diagnostics)-1].Range, nil, ""))
	if !strings.Contains(strings.Join(actions, "\n"), "Remove "+long+" from blockedBy") || strings.Contains(strings.Join(actions, "\n"), "Create task "+long) {
		t.Fatalf("actions %q", actions)
	}
}
