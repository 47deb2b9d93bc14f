package filesafe_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
)

// TestStampTrustedOnceSettled: a file's stamp is trusted only once its time
// is older than the clock's grain, and tells a rewrite — in place, by a
// rename — from the file as it was; a link or a folder has none.
func TestStampTrustedOnceSettled(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.json")
	if err := os.WriteFile(path, []byte(`{"a": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	folder, _, err := filesafe.OpenFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer filesafe.CloseFolder(folder)
	now := time.Now()
	if _, ok := filesafe.StampAt(folder, "t.json", now); ok {
		t.Fatal("a file written just now has a trusted stamp: a rewrite in the same tick of the clock could keep it")
	}
	old := now.Add(-time.Hour).Truncate(time.Second).Add(123 * time.Millisecond)
	os.Chtimes(path, old, old)
	was, ok := filesafe.StampAt(folder, "t.json", now)
	if !ok {
		t.Fatal("a file an hour old has no trusted stamp")
	}
	if s, _ := filesafe.StampAt(folder, "t.json", now); !s.Same(was) {
		t.Fatal("the stamp of an unchanged file changed")
	}
	for _, change := range []func(){
		func() {
			os.WriteFile(path, []byte(`{"a": 2}`), 0o644)
			os.Chtimes(path, old.Add(time.Second), old.Add(time.Second))
		},
		func() { // a rename: another file, the same size and time
			os.WriteFile(path+".tmp", []byte(`{"a": 3}`), 0o644)
			os.Chtimes(path+".tmp", old, old)
			os.Rename(path+".tmp", path)
		},
	} {
		change()
		if s, _ := filesafe.StampAt(folder, "t.json", now); s.Same(was) {
			t.Fatal("a changed file has its old stamp")
		}
		was, _ = filesafe.StampAt(folder, "t.json", now)
	}
	os.Symlink(path, filepath.Join(dir, "link.json"))
	os.Mkdir(filepath.Join(dir, "d.json"), 0o755)
	for _, name := range []string{"link.json", "d.json", "missing.json"} {
		if _, ok := filesafe.StampAt(folder, name, now); ok {
			t.Fatalf("%s has a trusted stamp", name)
		}
	}

	at := time.Date(2026, 1, 1, 0, 0, 10, 500_000_000, time.UTC)
	for _, c := range []struct {
		changed time.Time
		want    bool
	}{
		{at.Add(-50 * time.Millisecond), false},
		{at.Add(-150 * time.Millisecond), true},
		{at.Add(time.Second), false},                         // in the future: a clock set back
		{time.Date(2026, 1, 1, 0, 0, 9, 0, time.UTC), false}, // a file system stamping by the second
		{time.Date(2026, 1, 1, 0, 0, 8, 0, time.UTC), true},
	} {
		if got := filesafe.Settled(at, c.changed); got != c.want {
			t.Errorf("Settled(%s, %s) = %v, want %v", at.Format(time.StampMilli), c.changed.Format(time.StampMilli), got, c.want)
		}
	}
}
