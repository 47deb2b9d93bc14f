package store_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/testkit/workspace"
	"github.com/saga-ai/saga-lsp/store"
)

// TestLoadKeepingMatchesLoad: whatever happens on disk between loads — a
// file rewritten in place at the same size, its old modification time set
// back, replaced by a rename, removed, a link or a folder put in its place,
// a story folder added or removed — a load that keeps the unchanged files
// of the last (the epic runner's at each step) is the workspace a fresh
// load reads, and it does keep them.
func TestLoadKeepingMatchesLoad(t *testing.T) {
	p := workspace.Parser(t)
	base := loadFiles(t, p, "../examples/workspace")
	outside := filepath.Join(t.TempDir(), "outside.json")
	writeFile(t, outside, []byte(`{"id": "x", "subject": "s", "description": "", "status": "completed", "blockedBy": []}`))
	long := time.Now().Add(-time.Hour)
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed, 3))
		root := t.TempDir()
		for rel, src := range base {
			writeFile(t, filepath.Join(root, rel), src)
		}
		// A worktree's copy of a story, as a run leaves it.
		for rel, src := range base {
			if s := ".saga/stories/user-auth--api/"; len(rel) > len(s) && rel[:len(s)] == s {
				writeFile(t, filepath.Join(root, ".saga/worktrees/user-auth--api", rel), src)
			}
		}
		var k store.Kept
		for step := range 16 {
			// The files settled (else most are too new to keep), before the
			// changes or after them: then a change is told by its time
			// alone, each step's another.
			if r.IntN(2) == 0 {
				age(t, root, long.Add(time.Duration(2*step)*time.Second))
			}
			rels := storyFiles(t, root)
			for range 1 + r.IntN(3) {
				mutate(t, r, root, rels[r.IntN(len(rels))], outside, step)
			}
			if r.IntN(2) == 0 {
				age(t, root, long.Add(time.Duration(2*step+1)*time.Second))
			}
			got, err := p.LoadKeeping(root, &k)
			if err != nil {
				t.Fatal(err)
			}
			want, err := p.Load(root)
			if err != nil {
				t.Fatal(err)
			}
			if d := differ(got, want); d != "" {
				t.Fatalf("seed %d step %d: the kept load differs from a fresh one: %s", seed, step, d)
			}
		}
		// Nothing changed and everything settled: every story file is
		// taken as it was, none read again.
		age(t, root, long.Add(time.Minute))
		last, err := p.LoadKeeping(root, &k)
		if err != nil {
			t.Fatal(err)
		}
		again, err := p.LoadKeeping(root, &k)
		if err != nil {
			t.Fatal(err)
		}
		kept := 0
		for _, f := range again.Files() {
			if f.Kind == store.KindTask || f.Kind == store.KindStory {
				if prev := last.File(f.Rel); prev == f {
					kept++
				}
			}
		}
		if kept == 0 {
			t.Fatalf("seed %d: no file kept between two loads of an unchanged workspace", seed)
		}
	}
}

// age sets every file's and folder's modification time under root to at.
func age(t *testing.T, root string, at time.Time) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.Type()&os.ModeSymlink != 0 {
			return err
		}
		return os.Chtimes(path, at, at)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// storyFiles is the paths of the files and folders of the story folders
// under root, relative to it, sorted.
func storyFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{".saga/stories/*", ".saga/stories/*/*", ".saga/worktrees/*/.saga/stories/*/*"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
	}
	slices.Sort(out)
	return out
}

// mutate changes the file or folder rel of root one way.
func mutate(t *testing.T, r *rand.Rand, root, rel, outside string, step int) {
	t.Helper()
	abs := filepath.Join(root, filepath.FromSlash(rel))
	src, _ := os.ReadFile(abs)
	flip := func(b []byte) []byte { // same size, other content
		b = slices.Clone(b)
		for i, c := range b {
			if c == '"' && i+1 < len(b) && b[i+1] >= 'a' && b[i+1] <= 'z' {
				b[i+1] = 'a' + (b[i+1]-'a'+1)%26
				break
			}
		}
		return b
	}
	switch r.IntN(7) {
	case 0, 1: // in place, same size
		writeInPlace(t, abs, flip(src))
	case 2: // replaced by a rename
		tmp := abs + ".tmp"
		writeFile(t, tmp, flip(src))
		os.RemoveAll(abs)
		if err := os.Rename(tmp, abs); err != nil {
			t.Fatal(err)
		}
	case 3:
		os.RemoveAll(abs)
	case 4: // a link out, or a folder, in its place
		os.RemoveAll(abs)
		if r.IntN(2) == 0 {
			os.Symlink(outside, abs)
		} else {
			os.MkdirAll(abs, 0o755)
		}
	case 5: // a new task beside it
		writeFile(t, filepath.Join(filepath.Dir(abs), fmt.Sprintf("new-%d.json", step)),
			fmt.Appendf(nil, `{"id": "new-%d", "subject": "s", "description": "", "status": "pending", "blockedBy": []}`, step))
	default: // a new story folder
		id := fmt.Sprintf("fresh-%d", step)
		writeFile(t, filepath.Join(root, ".saga/stories", id, "story.json"), fmt.Appendf(nil, `{"id": %q, "title": "t", "description": ""}`, id))
		writeFile(t, filepath.Join(root, ".saga/stories", id, "t.json"), []byte(`{"id": "t", "subject": "s", "description": "", "status": "pending", "blockedBy": []}`))
	}
}

func writeInPlace(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return // not a regular file (a folder, a link out): nothing written
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
}

// differ says how two workspaces differ in their files and findings; "" when
// they do not.
func differ(a, b *store.Workspace) string {
	fa, fb := a.Files(), b.Files()
	if len(fa) != len(fb) {
		return fmt.Sprintf("%d files against %d", len(fa), len(fb))
	}
	for i := range fa {
		x, y := fa[i], fb[i]
		if x.Rel != y.Rel || string(x.Src) != string(y.Src) || x.ReadErr != y.ReadErr || x.Kind != y.Kind {
			return fmt.Sprintf("%s (%q, %q) against %s (%q, %q)", x.Rel, x.Src, x.ReadErr, y.Rel, y.Src, y.ReadErr)
		}
	}
	if da, db := dumpDiags(a.Diagnostics()), dumpDiags(b.Diagnostics()); da != db {
		return fmt.Sprintf("findings\n%s\nagainst\n%s", da, db)
	}
	return ""
}
