package dashboard

import (
	"os"
	"path/filepath"
	"testing"
)

// within: a path a reset just removed (the snapshot still names it) is
// judged by its nearest existing folder — the story page answered 404 "no
// story" while a reset removed its worktree copy (BenchmarkFacesFollow) —
// and a link out, or a dangling link, is still refused.
func TestWithinRemovedAndLinked(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".saga", "worktrees"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "nowhere"), filepath.Join(root, ".saga", "dangling")); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{
		".saga/worktrees":                   true,
		".saga/worktrees/s/.saga/stories/s": true, // removed: its nearest folder is inside
		"out":                               false,
		"out/gone/story":                    false, // removed below a link out
		".saga/dangling":                    false,
		".saga/dangling/s":                  false,
	} {
		if got := within(root, filepath.Join(root, filepath.FromSlash(rel))); got != want {
			t.Errorf("within(%s) = %v, want %v", rel, got, want)
		}
	}
}
