package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The rename archive (its prepareRename and rename cases) and the files of
// its workspace TestRename edits.
const (
	renameArchive = "testdata/rename/rename.txtar"
	renameSetup   = ".saga/stories/demo/setup.json"
	renameBuild   = ".saga/stories/demo/build.json"
	renameDeploy  = ".saga/stories/demo/deploy.json"
)

func renameParams(c *client, rel, pos, newName string) string {
	return navParams(c, rel, pos, `,"newName":`+jsonString(newName))
}

// TestPrepareRenameMissingTask: a blockedBy entry of an unsaved buffer naming
// a task that does not exist cannot be renamed.
func TestPrepareRenameMissingTask(t *testing.T) {
	c := startArchive(t, renameArchive).c
	build := strings.Replace(navDisk(t, c, renameBuild), `["setup"]`, `["setup", "nowhere"]`, 1)
	from := c.mark()
	c.openText(renameBuild, build, 1)
	c.diagnostics(from, renameBuild, func(p publishedDiagnostics) bool { return slices.Contains(p.codes(), "unknown-dependency") })
	checkRenameRefused(t, c.call("textDocument/prepareRename", navParams(c, renameBuild, at(t, build, `"nowhere"`, 0, 2), "")))
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
			root := archiveWorkspace(t, renameArchive)
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
						// Said, not left to the client's defaults: never over a file.
						if o := dc.Options; o == nil || o.Overwrite == nil || *o.Overwrite || o.IgnoreIfExists == nil || *o.IgnoreIfExists {
							t.Errorf("RenameFile options %+v, want overwrite: false, ignoreIfExists: false", o)
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
			assertStoryHasTask(t, c, e, "prepare")
		})
	}
}

// TestRenameNeverOverwrites: a file that appeared on disk behind the
// server's back (no watcher told it yet) still refuses a rename to its
// name — a RenameFile would land on it.
func TestRenameNeverOverwrites(t *testing.T) {
	root := archiveWorkspace(t, renameArchive)
	c := startOn(t, root, capsFull)
	e := newEditSession(t, c, root)
	from := c.mark()
	text := e.openFile(renameSetup)
	c.diagnostics(from, renameSetup, nil)
	taken := filepath.Join(root, ".saga/stories/demo/notes.json")
	if err := os.WriteFile(taken, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := c.call("textDocument/rename", renameParams(c, renameSetup, at(t, text, `"setup"`, 0, 2), "notes"))
	if m.Error == nil || !strings.Contains(m.Error.Message, "notes.json already exists; a rename never replaces a file") {
		t.Fatalf("rename onto an existing file: %+v", m)
	}
	if b, _ := os.ReadFile(taken); string(b) != "keep me" {
		t.Errorf("notes.json: %q", b)
	}
}

// assertStoryHasTask checks that the server resolves a blockedBy entry
// naming id (prepareRename succeeds on it) — at once: the edits before it
// were notifications, applied in order before this request.
func assertStoryHasTask(t *testing.T, c *client, e *editSession, id string) {
	t.Helper()
	m := c.call("textDocument/prepareRename", navParams(c, renameBuild, at(t, e.text[renameBuild], `"`+id+`"`, 0, 2), ""))
	if m.Error != nil || string(m.Result) == "null" {
		t.Fatalf("the server does not resolve task %s: %+v", id, m)
	}
}

func boolCount(b bool) int {
	if b {
		return 1
	}
	return 0
}
