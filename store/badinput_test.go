//go:build unix

package store_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/store"
)

// TestBadInput: whatever is on disk, loading gives a diagnostic or a clear
// error naming the file and what to do — never a panic or a hang.
func TestBadInput(t *testing.T) {
	const good = `{"id": "t", "subject": "s", "description": "", "status": "pending", "blockedBy": []}`
	tests := []struct {
		name  string
		task  string                           // the text of t.json, when there is no setup
		setup func(t *testing.T, story string) // story: the story folder's path
		file  string                           // file the diagnostic must be on
		code  store.Code
		says  string // part of the message
	}{
		{
			name: "unreadable",
			setup: func(t *testing.T, story string) {
				if os.Geteuid() == 0 {
					t.Skip("as root: root reads any file")
				}
				write(t, filepath.Join(story, "t.json"), good)
				os.Chmod(filepath.Join(story, "t.json"), 0)
			},
			file: ".saga/stories/s/t.json", code: store.CodeUnreadableFile, says: "chmod",
		},
		{name: "binary", task: "\x7fELF\x00\x00\x01\x02",
			file: ".saga/stories/s/t.json", code: store.CodeUnreadableFile, says: "binary"},
		{name: "invalid UTF-8", task: `{"id": "t", "subject": "caf` + "\xe9" + `", "description": "", "status": "pending", "blockedBy": []}`,
			file: ".saga/stories/s/t.json", code: store.CodeJSONSyntax, says: "UTF-8"},
		{
			name: "50 MB file",
			setup: func(t *testing.T, story string) {
				f, err := os.Create(filepath.Join(story, "t.json"))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if err := f.Truncate(50 << 20); err != nil { // sparse: cheap to make
					t.Fatal(err)
				}
			},
			file: ".saga/stories/s/t.json", code: store.CodeUnreadableFile, says: "50.0 MB",
		},
		{
			name: "symlink loop",
			setup: func(t *testing.T, story string) {
				os.Symlink("loop.json", filepath.Join(story, "loop.json"))
			},
			file: ".saga/stories/s/loop.json", code: store.CodeUnreadableFile, says: "link loop",
		},
		{
			name: "broken link",
			setup: func(t *testing.T, story string) {
				os.Symlink("nowhere.json", filepath.Join(story, "t.json"))
			},
			file: ".saga/stories/s/t.json", code: store.CodeUnreadableFile, says: "broken link",
		},
		{
			name: "symlinked story folder loop",
			setup: func(t *testing.T, story string) {
				os.Symlink("x", filepath.Join(filepath.Dir(story), "x"))
			},
			file: ".saga/stories/x", code: store.CodeUnreadableFile, says: "link loop",
		},
		{
			name: "FIFO named like a task (no writer: an open would block)",
			setup: func(t *testing.T, story string) {
				if err := syscall.Mkfifo(filepath.Join(story, "t.json"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			file: ".saga/stories/s/t.json", code: store.CodeUnreadableFile, says: "not a regular file",
		},
		{
			name: "folder named like a task",
			setup: func(t *testing.T, story string) {
				os.Mkdir(filepath.Join(story, "t.json"), 0o755)
			},
			file: ".saga/stories/s/t.json", code: store.CodeUnreadableFile, says: "is a folder",
		},
		{
			name: "link to a folder named like a task",
			setup: func(t *testing.T, story string) {
				os.Mkdir(filepath.Join(story, "notes"), 0o755)
				os.Symlink("notes", filepath.Join(story, "t.json"))
			},
			file: ".saga/stories/s/t.json", code: store.CodeUnreadableFile, says: "is a folder",
		},
		{
			name: "unreadable folder named like a task",
			setup: func(t *testing.T, story string) {
				if os.Geteuid() == 0 {
					t.Skip("as root: root opens any folder")
				}
				os.Mkdir(filepath.Join(story, "t.json"), 0)
			},
			file: ".saga/stories/s/t.json", code: store.CodeUnreadableFile, says: "is a folder",
		},
		{name: "empty file", task: "",
			file: ".saga/stories/s/t.json", code: store.CodeJSONSyntax, says: "empty"},
		{name: "not an object", task: `["t"]`,
			file: ".saga/stories/s/t.json", code: store.CodeSchema, says: "object"},
		{name: "deep nesting", task: strings.Repeat("[", 100000),
			file: ".saga/stories/s/t.json", code: store.CodeJSONSyntax, says: ""},
		{
			name: "non-JSON files are ignored",
			setup: func(t *testing.T, story string) {
				write(t, filepath.Join(story, "t.json"), good)
				write(t, filepath.Join(story, "notes.txt"), "\x00\x01 binary junk")
				write(t, filepath.Join(story, "image.png"), "\x89PNG\r\n")
				write(t, filepath.Join(story, ".t.json.tmp-1234"), "{half")
			},
		},
	}
	p := workspace.Parser(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			story := filepath.Join(root, ".saga", "stories", "s")
			write(t, filepath.Join(story, "story.json"), `{"id": "s", "title": "S", "description": ""}`)
			if tt.setup != nil {
				tt.setup(t, story)
			} else {
				write(t, filepath.Join(story, "t.json"), tt.task)
			}
			ws, err := p.Load(root)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			var found bool
			for _, d := range ws.Diagnostics() {
				if d.Code == store.CodeUnreadableFile || d.Code == store.CodeJSONSyntax || d.Code == store.CodeSchema {
					if tt.code == "" {
						t.Errorf("unexpected %s on %s: %s", d.Code, d.File, d.Message)
					}
					if d.File == tt.file && d.Code == tt.code && strings.Contains(d.Message, tt.says) {
						found = true
					}
				}
			}
			if tt.code != "" && !found {
				t.Errorf("want %s on %s saying %q; got:\n%s", tt.code, tt.file, tt.says, dump(ws))
			}
		})
	}
}

func TestLoadWithoutSaga(t *testing.T) {
	p := workspace.Parser(t)
	_, err := p.Load(t.TempDir())
	if !errors.Is(err, store.ErrNoWorkspace) || !strings.Contains(err.Error(), "--root") {
		t.Fatalf("want ErrNoWorkspace saying what to do, got %v", err)
	}
	_, err = store.FindRoot(t.TempDir())
	if !errors.Is(err, store.ErrNoWorkspace) {
		t.Fatalf("FindRoot: want ErrNoWorkspace, got %v", err)
	}
}

func TestFindRootFromSubfolder(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, ".saga", "stories", "s")
	write(t, filepath.Join(sub, "story.json"), "{}")
	got, err := store.FindRoot(sub)
	if err != nil || got != root {
		t.Fatalf("FindRoot(%s) = %q, %v; want %q", sub, got, err, root)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	writeFile(t, path, bytes.Clone([]byte(data)))
}
