package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/store"
)

const (
	renameSetup  = ".saga/stories/demo/setup.json"
	renameBuild  = ".saga/stories/demo/build.json"
	renameDeploy = ".saga/stories/demo/deploy.json"
)

func textPositionParams(c *client, rel, pos string) string {
	return fmt.Sprintf(`{"textDocument":{"uri":%q},"position":%s}`, c.uri(rel), pos)
}

func renameParams(c *client, rel, pos, newName string) string {
	return fmt.Sprintf(`{"textDocument":{"uri":%q},"position":%s,"newName":%q}`, c.uri(rel), pos, newName)
}

func TestPrepareRename(t *testing.T) {
	root := copyTestdata(t, "rename")
	c := startOn(t, root, capsFull)
	e := newEditSession(t, c, root)
	deploy := e.openFile(renameDeploy)
	setup := e.openFile(renameSetup)
	// A buffer naming a task that does not exist.
	build := strings.Replace(e.get(renameBuild), `["setup"]`, `["setup", "nowhere"]`, 1)
	from := c.mark()
	c.openText(renameBuild, build, 1)
	c.diagnostics(from, renameBuild, func(p publishedDiagnostics) bool { return slices.Contains(p.codes(), "unknown-dependency") })

	tests := []struct {
		name        string
		rel, text   string
		needle      string
		n, offset   int
		placeholder string // "" → an error is expected
		wantRange   string // the text the range covers
	}{
		{"task id value", renameSetup, setup, `"setup"`, 0, 3, "setup", "setup"},
		{"task id value at its start", renameSetup, setup, `"setup"`, 0, 1, "setup", "setup"},
		{"blockedBy entry", renameDeploy, deploy, `"setup"`, 0, 2, "setup", "setup"},
		{"second blockedBy entry", renameDeploy, deploy, `"build"`, 0, 4, "build", "build"},
		{"blockedBy entry of a missing task", renameBuild, build, `"nowhere"`, 0, 2, "", ""},
		{"subject value", renameSetup, setup, `"Set up"`, 0, 2, "", ""},
		{"property key", renameDeploy, deploy, `"blockedBy"`, 0, 2, "", ""},
		{"outside any value", renameDeploy, deploy, `{`, 0, 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := c.call("textDocument/prepareRename", textPositionParams(c, tt.rel, at(t, tt.text, tt.needle, tt.n, tt.offset)))
			if tt.placeholder == "" {
				if m.Error == nil && string(m.Result) != "null" {
					t.Fatalf("prepareRename = %s, want an error or null", m.Result)
				}
				if m.Error != nil && !strings.Contains(m.Error.Message, "rename") {
					t.Errorf("error message %q does not say what can be renamed", m.Error.Message)
				}
				return
			}
			if m.Error != nil {
				t.Fatalf("prepareRename: %s", m.Error.Message)
			}
			var res struct {
				Range       lspRange `json:"range"`
				Placeholder string   `json:"placeholder"`
			}
			if err := json.Unmarshal(m.Result, &res); err != nil {
				t.Fatal(err)
			}
			if res.Placeholder != tt.placeholder {
				t.Errorf("placeholder %q, want %q", res.Placeholder, tt.placeholder)
			}
			got := tt.text[lspOffset(tt.text, res.Range.Start):lspOffset(tt.text, res.Range.End)]
			if got != tt.wantRange {
				t.Errorf("range covers %q, want %q (inside the quotes)", got, tt.wantRange)
			}
		})
	}
}

func TestRename(t *testing.T) {
	tests := []struct {
		name string
		caps string
		// from: the file and needle the rename starts at.
		rel, needle string
		// renamesFile: a RenameFile is expected (and the result is clean).
		renamesFile     bool
		documentChanges bool
	}{
		{"resource operations, from a blockedBy entry", capsFull, renameDeploy, `"setup"`, true, true},
		{"resource operations, from the id", capsFull, renameSetup, `"setup"`, true, true},
		{"documentChanges without rename", `{"workspace":{"workspaceEdit":{"documentChanges":true,"resourceOperations":["create"]},"didChangeWatchedFiles":{"dynamicRegistration":true}}}`,
			renameDeploy, `"setup"`, false, true},
		{"plain changes", capsPlain, renameDeploy, `"setup"`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := copyTestdata(t, "rename")
			c := startOn(t, root, tt.caps)
			e := newEditSession(t, c, root)
			from := c.mark()
			text := e.openFile(tt.rel)
			c.diagnostics(from, tt.rel, nil)
			otherBefore, _ := os.ReadFile(filepath.Join(root, ".saga/stories/other/ship.json"))

			var raw json.RawMessage
			c.result("textDocument/rename", renameParams(c, tt.rel, at(t, text, tt.needle, 0, 2), "prepare"), &raw)
			var we wsEditJSON
			if err := json.Unmarshal(raw, &we); err != nil {
				t.Fatal(err)
			}
			if tt.documentChanges {
				if len(we.Changes) != 0 {
					t.Fatalf("changes alongside documentChanges: %s", raw)
				}
				var edited []string
				renames := 0
				for i, dc := range we.DocumentChanges {
					switch {
					case dc.Kind == "rename":
						renames++
						if i != len(we.DocumentChanges)-1 {
							t.Errorf("RenameFile at %d of %d: text edits to the old URI must come first", i, len(we.DocumentChanges))
						}
						if e.relOf(dc.OldURI) != renameSetup || e.relOf(dc.NewURI) != ".saga/stories/demo/prepare.json" {
							t.Errorf("RenameFile %s → %s", dc.OldURI, dc.NewURI)
						}
					case dc.TextDocument != nil:
						rel := e.relOf(dc.TextDocument.URI)
						edited = append(edited, rel)
						// Versioned for the open buffer, null for files on disk.
						if rel == tt.rel {
							if dc.TextDocument.Version == nil || *dc.TextDocument.Version != 1 {
								t.Errorf("edit of the open %s without its version", rel)
							}
						} else if dc.TextDocument.Version != nil {
							t.Errorf("edit of %s (not open) with version %d", rel, *dc.TextDocument.Version)
						}
					default:
						t.Errorf("unexpected document change %+v", dc)
					}
				}
				slices.Sort(edited)
				if want := []string{renameBuild, renameDeploy, renameSetup}; !slices.Equal(edited, want) {
					t.Errorf("edited %q, want %q", edited, want)
				}
				if want := boolCount(tt.renamesFile); renames != want {
					t.Errorf("%d RenameFile operations, want %d", renames, want)
				}
			} else {
				if len(we.DocumentChanges) != 0 {
					t.Fatalf("documentChanges for a client without support: %s", raw)
				}
				var edited []string
				for u := range we.Changes {
					edited = append(edited, e.relOf(u))
				}
				slices.Sort(edited)
				if want := []string{renameBuild, renameDeploy, renameSetup}; !slices.Equal(edited, want) {
					t.Errorf("edited %q, want %q", edited, want)
				}
			}

			e.apply(raw)
			e.commit()
			newRel := renameSetup
			if tt.renamesFile {
				newRel = ".saga/stories/demo/prepare.json"
			}
			for rel, want := range map[string]string{
				newRel:       `"id": "prepare"`,
				renameBuild:  `"blockedBy": ["prepare"]`,
				renameDeploy: "\"prepare\",\n    \"build\"",
			} {
				b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
				if err != nil || !strings.Contains(string(b), want) {
					t.Errorf("%s lacks %q:\n%s", rel, want, b)
				}
			}
			// The other story's task of the same name is left alone.
			if after, _ := os.ReadFile(filepath.Join(root, ".saga/stories/other/ship.json")); string(after) != string(otherBefore) {
				t.Errorf("other story edited:\n%s", after)
			}
			if _, err := os.Stat(filepath.Join(root, ".saga/stories/other/setup.json")); err != nil {
				t.Error(err)
			}
			if !tt.renamesFile {
				return // the id no longer matches the file name: the client could not rename it
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(renameSetup))); !os.IsNotExist(err) {
				t.Errorf("%s still exists after the rename", renameSetup)
			}
			if ds := diskDiagnostics(t, root); len(ds) != 0 {
				t.Errorf("diagnostics after the rename: %+v", ds)
			}
			// The server agrees: the open buffer has no problems at its new version.
			openRel := tt.rel
			if openRel == renameSetup {
				openRel = newRel
			}
			c.diagnostics(from, openRel, func(p publishedDiagnostics) bool {
				return p.Version != nil && *p.Version == 2 && len(p.Diagnostics) == 0
			})
			waitStoryHasTask(t, c, e, "prepare")
		})
	}
}

// waitStoryHasTask waits until the server resolves a blockedBy entry
// naming id (prepareRename succeeds on it).
func waitStoryHasTask(t *testing.T, c *client, e *editSession, id string) {
	t.Helper()
	text := e.text[renameBuild]
	for range 200 {
		m := c.call("textDocument/prepareRename", textPositionParams(c, renameBuild, at(t, text, `"`+id+`"`, 0, 2)))
		if m.Error == nil && string(m.Result) != "null" {
			return
		}
		waitShort()
	}
	t.Fatalf("the server never saw task %s", id)
}

func boolCount(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestRenameErrors(t *testing.T) {
	root := copyTestdata(t, "rename")
	c := startOn(t, root, capsFull)
	e := newEditSession(t, c, root)
	from := c.mark()
	deploy := e.openFile(renameDeploy)
	c.diagnostics(from, renameDeploy, nil)
	tests := []struct {
		name, needle, newName, wantMsg string
	}{
		{"collision", `"setup"`, "build", `already has a task "build"`},
		{"invalid characters", `"setup"`, "Set Up", "not a valid task id"},
		{"hierarchy separator", `"setup"`, "set--up", "not a valid task id"},
		{"empty", `"setup"`, "", "not a valid task id"},
		{"not a task id", `"Deploy"`, "x", "only task ids can be renamed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := c.call("textDocument/rename", renameParams(c, renameDeploy, at(t, deploy, tt.needle, 0, 2), tt.newName))
			if m.Error == nil {
				t.Fatalf("rename to %q = %s, want an error", tt.newName, m.Result)
			}
			if !strings.Contains(m.Error.Message, tt.wantMsg) {
				t.Errorf("error %q, want it to contain %q", m.Error.Message, tt.wantMsg)
			}
		})
	}
	// Renaming to the same name changes nothing.
	var raw json.RawMessage
	c.result("textDocument/rename", renameParams(c, renameDeploy, at(t, deploy, `"setup"`, 0, 2), "setup"), &raw)
	var we wsEditJSON
	if err := json.Unmarshal(raw, &we); err != nil || len(we.Changes)+len(we.DocumentChanges) != 0 {
		t.Errorf("rename to the same name = %s", raw)
	}
	// Nothing was touched on disk.
	if ds := diskDiagnostics(t, root); len(ds) != 0 {
		t.Errorf("diagnostics: %+v", ds)
	}
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(store.TaskFileRel("demo", "setup")))); err != nil {
		t.Error(err)
	}
}
