package scaffold_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/saga-ai/saga-lsp/scaffold"
	"github.com/saga-ai/saga-lsp/store"
)

// A repository can carry links (git stores them): `new` never writes
// through one that leads out of the workspace — a .saga/stories made a
// link to a folder elsewhere (absolute, relative, a link to a link) makes
// creating a story or a task fail, and nothing there changes.
func TestCreateNeverWritesThroughALinkOut(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need a privilege on Windows")
	}
	p, err := store.NewParser()
	if err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"absolute", "relative", "link to a link"} {
		t.Run(how, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			os.MkdirAll(filepath.Join(outside, "st"), 0o755)
			os.WriteFile(filepath.Join(outside, "st", "story.json"), []byte(`{"id":"st","title":"S","description":""}`+"\n"), 0o644)
			os.MkdirAll(filepath.Join(root, ".saga"), 0o755)
			at := filepath.Join(root, ".saga", "stories")
			target := outside
			switch how {
			case "relative":
				target, _ = filepath.Rel(filepath.Dir(at), outside)
			case "link to a link":
				os.Symlink(outside, filepath.Join(root, "hop"))
				target = filepath.Join("..", "hop")
			}
			if err := os.Symlink(target, at); err != nil {
				t.Fatal(err)
			}
			before := tree(outside)
			_, serr := scaffold.CreateStory(context.Background(), p, root, scaffold.NewStory{Name: "new-story", Title: "T"})
			_, terr := scaffold.CreateTask(context.Background(), p, root, scaffold.NewTask{Story: "st", ID: "t1", Subject: "x"})
			if after := tree(outside); after != before {
				t.Fatalf("written outside the workspace (%v, %v):\n%s", serr, terr, after)
			}
			if serr == nil || terr == nil {
				t.Fatalf("CreateStory = %v, CreateTask = %v; want both refused", serr, terr)
			}
		})
	}
}

func tree(dir string) string {
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			r, _ := filepath.Rel(dir, p)
			b.WriteString(r + " " + d.Type().String() + "\n")
		}
		return nil
	})
	return b.String()
}
