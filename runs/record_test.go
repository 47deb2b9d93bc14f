package runs

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/saga-ai/saga-lsp/internal/filesafe"
)

// Run records decide which stories an epic runs: they are read and written
// only in a folder of the user's that no one else may write. (No story's
// agent can write it: it is in the git dir its sandbox is denied.)
func TestRecordsOnlyInAPrivateFolder(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	rec := Record{Story: "a", Status: StatusCompleted, Base: "main", Reference: strings.Repeat("a", 40)}
	if err := WriteRecord(root, rec); err != nil {
		t.Fatal(err)
	}
	if got, ok := ReadRecord(root, "a"); !ok || got.Reference != rec.Reference {
		t.Fatalf("ReadRecord = %+v, %v", got, ok)
	}
	dir := filepath.Join(root, ".git", "saga-lsp", "runs")
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, ok := ReadRecord(root, "a"); ok {
		t.Error("a record in a folder anyone may write was read")
	}
	if err := WriteRecord(root, rec); err == nil || !strings.Contains(err.Error(), "chmod 700 "+dir) {
		t.Errorf("WriteRecord in a folder anyone may write: %v", err)
	}
}

// TestSpentNeverLowered: a negative (or NaN) cost a run reported counts
// nothing — in an epic it could otherwise lower the spend held against
// --max-cost (issue 32).
func TestSpentNeverLowered(t *testing.T) {
	for _, c := range []struct {
		rec     Record
		haveRec bool
		last    *Run
		want    float64
	}{
		{Record{}, false, &Run{Cost: -50}, 0},
		{Record{Spent: 2, Session: "a"}, true, &Run{Session: "b", Cost: -50}, 2},
		{Record{Spent: -5, Cost: -5}, true, nil, 0},
		{Record{Spent: math.NaN()}, true, &Run{Cost: 1}, 1},
	} {
		if got := Spent(c.rec, c.haveRec, c.last); got != c.want {
			t.Errorf("Spent(%+v, %v, %+v) = %v, want %v", c.rec, c.haveRec, c.last, got, c.want)
		}
	}
}

// A record read through a RunCache is the record on disk: each
// replacement (WriteRecord's rename), and a rewrite of the same size in
// place, is read anew — the cache only saves decoding a record that did
// not change since the last look.
func TestRecordCacheRereadsChanges(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	var c RunCache
	for i, ref := range []string{strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)} {
		if err := WriteRecord(root, Record{Story: "s", Status: StatusCompleted, Reference: ref}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if got, ok := c.OpenRecords(root).Read("s"); !ok || got.Reference != ref {
				t.Fatalf("write %d: cached read = %+v, %v; want reference %s", i, got, ok, ref)
			}
		}
	}
	// The same size, the same file, a later time: read anew.
	file := filepath.Join(root, ".git", "saga-lsp", "runs", "s.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	changed := []byte(strings.Replace(string(data), strings.Repeat("c", 40), strings.Repeat("d", 40), 1))
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(changed, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	later := time.Now().Add(time.Minute)
	os.Chtimes(file, later, later)
	if got, ok := c.OpenRecords(root).Read("s"); !ok || got.Reference != strings.Repeat("d", 40) {
		t.Fatalf("rewritten in place: cached read = %+v, %v", got, ok)
	}
	// Gone: no record, as without the cache.
	os.Remove(file)
	if got, ok := c.OpenRecords(root).Read("s"); ok {
		t.Fatalf("removed: cached read = %+v", got)
	}
}

// Records.Listed reads what its listing found, through the same checks, and
// a record written after it is the next listing's.
func TestListedRecords(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	var c RunCache
	if _, ok := c.OpenRecords(root).Listed().Read("a"); ok {
		t.Error("a record read before any was written")
	}
	for _, rec := range []Record{{Story: "a", Status: StatusCompleted}, {Story: "b", Status: StatusCompleted, DryRun: true}} {
		if err := WriteRecord(root, rec); err != nil {
			t.Fatal(err)
		}
	}
	listed := c.OpenRecords(root).Listed()
	if err := WriteRecord(root, Record{Story: "c", Status: StatusFailed}); err != nil {
		t.Fatal(err)
	}
	if r, ok := listed.Read("a"); !ok || r.Status != StatusCompleted {
		t.Errorf("a: %+v %v", r, ok)
	}
	if r, ok := listed.ReadDry("b"); !ok || !r.DryRun {
		t.Errorf("b's dry record: %+v %v", r, ok)
	}
	if _, ok := listed.Read("b"); ok {
		t.Error("b's dry record read as its record")
	}
	if _, ok := listed.Read("c"); ok {
		t.Error("c, written after the listing, read from it")
	}
	if r, ok := c.OpenRecords(root).Listed().Read("c"); !ok || r.Status != StatusFailed {
		t.Errorf("c, listed again: %+v %v", r, ok)
	}
	// A folder anyone may write is refused listed too.
	if err := os.Chmod(filepath.Join(root, ".git", "saga-lsp", "runs"), 0o777); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.OpenRecords(root).Listed().Read("a"); ok {
		t.Error("a record in a folder anyone may write was read")
	}
}

// Outside git each workspace keeps its own run records and read cache:
// they were kept in the user's folder of every such workspace, a record
// named by its story alone, and one workspace's record was another's —
// a test writing one changed what the next test's status said.
func TestRecordsOutsideGitAreTheWorkspaces(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, root := range []string{a, b} {
		state, err := filesafe.StateDir(root)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(state) }) // outside the temp dirs
	}
	if err := WriteRecord(a, Record{Story: "s", Status: StatusCompleted, Ended: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if got, ok := ReadRecord(a, "s"); !ok || got.Status != StatusCompleted {
		t.Fatalf("a's own record: %+v, %v", got, ok)
	}
	if got, ok := ReadRecord(b, "s"); ok {
		t.Errorf("another workspace reads a's record: %+v", got)
	}
	ca, errA := ReadCacheDir(a)
	cb, errB := ReadCacheDir(b)
	if errA != nil || errB != nil || ca == cb {
		t.Errorf("read caches %q and %q (%v, %v): want one each", ca, cb, errA, errB)
	}
}

// Outside git, saga-lsp's folders are below the user's own folder in the
// shared temp folder (filesafe.TempLockRoot): a record written before any
// lock makes it private, and one someone else could write is refused, not
// written into.
func TestRecordsOutsideGitInAPrivateFolder(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a Windows temp folder is the user's own already (filesafe.userTag)")
	}
	t.Setenv("TMPDIR", t.TempDir()) // a TempLockRoot of this test's own
	root := t.TempDir()
	top := filesafe.TempLockRoot()
	if err := WriteRecord(root, Record{Story: "s", Status: StatusCompleted, Ended: time.Now()}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(top)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Fatalf("%s after the first record: %v; want a folder of mode 0700", top, fi.Mode())
	}

	// Made by someone else, open to all (as another user of the machine
	// could make it before the user's first run).
	if err := os.RemoveAll(top); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(top, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(top, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	err = WriteRecord(root, Record{Story: "s", Status: StatusCompleted, Ended: time.Now()})
	if err == nil || !strings.Contains(err.Error(), top) || !strings.Contains(err.Error(), "may be written by other users") {
		t.Fatalf("a record in %s, open to all: %v", top, err)
	}
	if des, _ := os.ReadDir(top); len(des) != 0 {
		t.Errorf("written into %s, open to all: %v", top, des)
	}
}
